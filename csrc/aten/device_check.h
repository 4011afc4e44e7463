// Device-side index checks, like CUDA's device-side assert but recoverable: each device has one
// small error record (a cl buffer) that index kernels write atomically when an index is out of
// range (first error wins). Kernels never sync; the host reads and clears the record at
// synchronisation points (synchronize, stream/event synchronize, copies to the CPU, .item()) and
// raises there.
#pragma once

#include <c10/core/Device.h>

#include "runtime/allocator.h"
#include "runtime/cl_include.h"

#include <string>

namespace torch_ocl::aten {

// Which op recorded an error (the code the kernels write).
enum class CheckedOp : int {
  kIndexSelect = 1,
  kGather,
  kScatter,
  kScatterAdd,
  kScatterReduce,
  kIndex,
  kIndexPut,
  kEmbedding,
  kIndexAdd,
  kEmbeddingBackward,
  kEmbeddingBag,
  kNllLoss,
  kNllLoss2d,
  kBinaryCrossEntropy,  // an input outside [0, 1] (index: the element, bound: numel)
};

// The record kernels take as a (cl_mem, offset) pair; marks the device as having pending checks.
rt::BufferRef deviceErrorRecord(c10::DeviceIndex idx);

// OpenCL C for kernels that take the record: ocl_checked_index(i, size, wrap, rec, op, dim)
// returns the (wrapped) index or -1 after recording an out-of-range one;
// ocl_record_error(rec, op, dim, index, bound) records any other failed check.
const char* deviceCheckSource();

// Reads the record through `queue` (which the caller has just finished or is about to finish);
// on an error, clears it and throws. Costs nothing when no checked kernel ran on the device.
// `whole_device`: every queue of the device is known to be finished, so a clean record ends the
// pending state.
void checkDeviceErrors(c10::DeviceIndex idx, cl_command_queue queue, bool whole_device);
// For synchronisation points that do not know their device (event synchronize).
void checkAllDeviceErrors();

}  // namespace torch_ocl::aten
