// Multi-tensor launches for the foreach and fused optimizer kernels. OpenCL (without SVM) has no
// pointer arrays that span cl_mem objects, so a launch covers a chunk of tensors whose storage
// lies in at most kMaxBuffers distinct buffers (the caching allocator carves many tensors out of
// one slab, so a chunk usually holds hundreds of tensors). Each chunk has a table of longs
// (csrc/kernels/foreach_common.cl): running element counts, then per list and tensor a location
// (buffer slot << 56 | byte offset), then the caller's extra columns, and after them the block
// table: work-group b of a launch takes one block (tensor, stretch of its elements), as CUDA's
// multi_tensor_apply does, so no work item searches for its tensor. The tables of all chunks of
// one call go to the device in one non-blocking write from pinned memory.
#pragma once

#include <ATen/core/Tensor.h>

#include "aten/launch.h"

#include <functional>
#include <string>
#include <vector>

namespace torch_ocl::aten::mt {

constexpr int kMaxBuffers = 16;            // buffer parameters of every multi-tensor kernel
constexpr size_t kMaxChunkTensors = 1024;  // bounds the table (and the binary search)

struct Chunk {
  std::vector<size_t> index;   // positions in the lists of the tensors in this chunk
  std::vector<cl_mem> mems;    // buffer of each slot
  std::vector<int64_t> table;  // ends, then locations (list-major), then extra columns
  int64_t total = 0;           // work items (elements of list 0) in this chunk
  size_t table_offset = 0;     // byte offset of this chunk's table in the uploaded buffer
  size_t blocks_offset = 0;    // byte offset of its block table (block size, then entries)
  int64_t blocks = 0;          // work-groups of a launch over this chunk
};

class Plan {
 public:
  // lists[0][i].numel() is the work of tensor i; all lists have the same length. Tensors with no
  // elements are left out unless keep_empty (then their locations are 0 and never read).
  Plan(const std::vector<at::TensorList>& lists, bool keep_empty);
  // Appends one column: f(i) for each tensor position i of each chunk (call before upload).
  void addColumn(const std::function<int64_t(size_t)>& f);
  // Sends every chunk's table to the device in one write.
  void upload(c10::DeviceIndex idx);
  const std::vector<Chunk>& chunks() const { return chunks_; }
  // Sets (table, byte offset), m, the block table and the kMaxBuffers buffers; returns the next
  // argument index.
  cl_uint setCommonArgs(cl_kernel k, size_t chunk) const;
  // Launches k over chunk's blocks, one work-group each (kernels written with FE_BLOCK). With
  // `vector`, work-groups of one item (kernels whose item walks its block in 16-wide vectors,
  // FE_VEC16_LOOP: on CPU drivers 2.5-5x faster than 16 items that PoCL vectorises across).
  void launchBlocks(cl_kernel k, size_t chunk, bool vector = false) const;

 private:
  std::vector<Chunk> chunks_;
  at::Tensor device_table_;
  c10::DeviceIndex device_ = 0;
  size_t local_ = 1;  // work-group size of launchBlocks
};

// The shared OpenCL helpers (fe_find, FE_PTR, FE_BUF_PARAMS) after the prelude.
std::string kernelHeader();

// Whether the multi-tensor kernels of device idx walk their blocks in float16 vectors (CPU
// drivers, float32 tensors): one item per block of 2048 elements, vload16/vstore16 and float16
// math, the block's last elements one by one.
bool vectorBlocks(c10::DeviceIndex idx);

// True when every tensor of every list is a defined, contiguous tensor on device dev; tensor i of
// each list has the sizes of lists[0][i]; and (if dtype given) has that dtype.
bool allDense(const std::vector<at::TensorList>& lists, const c10::Device& dev,
              std::optional<c10::ScalarType> dtype);

// A float or double scalar kernel argument for compute type double or not.
void setRealArg(cl_kernel k, cl_uint& i, bool dbl, double v);

}  // namespace torch_ocl::aten::mt
