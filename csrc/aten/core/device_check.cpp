#include "aten/device_check.h"

#include <c10/util/Exception.h>

#include "integration/state.h"
#include "runtime/handles.h"

#include <array>
#include <atomic>
#include <mutex>

namespace torch_ocl::aten {
namespace {

// Layout shared with deviceCheckSource(): written once by the first failing work item.
struct alignas(8) ErrorRecord {
  cl_int flag;
  cl_int op;
  cl_int dim;
  cl_int pad;
  cl_long index;
  cl_long bound;
};

struct Slot {
  std::mutex mu;
  rt::Mem mem;
  std::atomic<bool> pending{false};
};

constexpr int kMaxDevices = 64;
std::array<Slot, kMaxDevices> g_slots;

const char* opName(int op) {
  switch (static_cast<CheckedOp>(op)) {
    case CheckedOp::kIndexSelect:
      return "index_select";
    case CheckedOp::kGather:
      return "gather";
    case CheckedOp::kScatter:
      return "scatter";
    case CheckedOp::kScatterAdd:
      return "scatter_add";
    case CheckedOp::kScatterReduce:
      return "scatter_reduce";
    case CheckedOp::kIndex:
      return "index";
    case CheckedOp::kIndexPut:
      return "index_put_";
    case CheckedOp::kEmbedding:
      return "embedding";
    case CheckedOp::kIndexAdd:
      return "index_add_";
    case CheckedOp::kEmbeddingBackward:
      return "embedding_dense_backward";
    case CheckedOp::kEmbeddingBag:
      return "embedding_bag";
    case CheckedOp::kNllLoss:
      return "nll_loss";
    case CheckedOp::kNllLoss2d:
      return "nll_loss2d";
    case CheckedOp::kBinaryCrossEntropy:
      return "binary_cross_entropy";
  }
  return "unknown op";
}

void checkSlot(c10::DeviceIndex idx, cl_command_queue queue, bool whole_device) {
  Slot& slot = g_slots[idx];
  if (!slot.pending.load()) return;
  std::lock_guard<std::mutex> lock(slot.mu);
  if (!slot.mem) return;
  ErrorRecord rec{};
  OCL_TRY
  OCL_CHECK(clEnqueueReadBuffer(queue, slot.mem.get(), CL_TRUE, 0, sizeof(rec), &rec, 0, nullptr,
                                nullptr));
  if (rec.flag == 0) {
    if (whole_device) slot.pending.store(false);
    return;
  }
  const ErrorRecord zero{};
  OCL_CHECK(clEnqueueWriteBuffer(queue, slot.mem.get(), CL_TRUE, 0, sizeof(zero), &zero, 0, nullptr,
                                 nullptr));
  OCL_CATCH
  const auto op = static_cast<CheckedOp>(rec.op);
  // CPU's wording for binary_cross_entropy's range check, with the first element that failed.
  TORCH_CHECK(op != CheckedOp::kBinaryCrossEntropy,
              "ocl device-side check failed: all elements of input should be between 0 and 1 "
              "(binary_cross_entropy: element ",
              rec.index, " of ", rec.bound,
              "). The op's results are undefined; the device stays usable.");
  // Class targets read as CPU's IndexError does ("Target 7 is out of bounds."), with the op.
  TORCH_CHECK(op != CheckedOp::kNllLoss && op != CheckedOp::kNllLoss2d,
              "ocl device-side check failed: Target ", rec.index, " is out of bounds (",
              opName(rec.op), ", ", rec.bound,
              " classes). The op's results are undefined; the device stays usable.");
  TORCH_CHECK(false, "ocl device-side check failed: index ", rec.index,
              " is out of bounds for dimension ", rec.dim, " with size ", rec.bound, " (",
              opName(rec.op), "). The op's results are undefined; the device stays usable.");
}

}  // namespace

rt::BufferRef deviceErrorRecord(c10::DeviceIndex idx) {
  TORCH_CHECK(idx >= 0 && idx < kMaxDevices, "ocl device index ", static_cast<int>(idx),
              " too large");
  Slot& slot = g_slots[idx];
  std::lock_guard<std::mutex> lock(slot.mu);
  if (!slot.mem) {
    const ErrorRecord zero{};
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(device(idx).context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              sizeof(zero), const_cast<ErrorRecord*>(&zero), &err);
    OCL_TRY
    OCL_CHECK(err);
    OCL_CATCH
    slot.mem = rt::Mem(m);
  }
  slot.pending.store(true);
  return {slot.mem.get(), 0};
}

const char* deviceCheckSource() {
  return R"CLC(
// The device's error record (device_check.cpp): the first failing work item wins the flag.
inline void ocl_record_error(__global int* rec, int op, int dim, long index, long bound) {
  if (atomic_cmpxchg((volatile __global int*)rec, 0, 1) == 0) {
    rec[1] = op;
    rec[2] = dim;
    ((__global long*)rec)[2] = index;
    ((__global long*)rec)[3] = bound;
  }
}
inline long ocl_checked_index(long i, long size, int wrap, __global int* rec, int op, int dim) {
  const long w = (wrap && i < 0) ? i + size : i;
  if (w >= 0 && w < size) return w;
  ocl_record_error(rec, op, dim, i, size);
  return -1;
}
)CLC";
}

void checkDeviceErrors(c10::DeviceIndex idx, cl_command_queue queue, bool whole_device) {
  if (idx < 0 || idx >= kMaxDevices) return;
  checkSlot(idx, queue, whole_device);
}

void checkAllDeviceErrors() {
  for (int i = 0; i < kMaxDevices; ++i) {
    if (!g_slots[i].pending.load()) continue;
    const auto idx = static_cast<c10::DeviceIndex>(i);
    checkSlot(idx, currentQueue(idx), false);
  }
}

}  // namespace torch_ocl::aten
