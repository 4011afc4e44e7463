#include "aten/device_check.h"

#include <c10/util/Exception.h>

#include "integration/state.h"
#include "runtime/handles.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
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

struct FreeHost {
  void operator()(void* p) const noexcept { std::free(p); }
};

struct Slot {
  std::mutex mu;
  // On host-unified devices the record is our own page (CL_MEM_USE_HOST_PTR), used in place when
  // a probe showed the driver does (zero_copy): a check after the queue finished then reads
  // memory instead of enqueueing a blocking read, which on PoCL costs a worker wake-up and
  // ~20 us per synchronisation point. Declared before mem so that the buffer goes first.
  std::unique_ptr<void, FreeHost> host;
  rt::Mem mem;
  bool zero_copy = false;
  std::atomic<bool> pending{false};
};

// Creates slot.mem (slot.mu held). Host-unified devices get a buffer over our own page, kept
// only as zero-copy when a kernel-side write and a host-side write are both seen by the other
// side; otherwise (and on other devices) a plain buffer read through the queue.
void createRecord(Slot& slot, c10::DeviceIndex idx) {
  const ErrorRecord zero{};
  rt::Device& dev = device(idx);
  cl_int err = CL_SUCCESS;
  if (dev.info().host_unified_memory) {
    void* page = nullptr;
    if (posix_memalign(&page, 4096, 4096) == 0) {
      std::memset(page, 0, 4096);
      std::unique_ptr<void, FreeHost> host(page);
      cl_mem m = clCreateBuffer(dev.context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                                sizeof(ErrorRecord), page, &err);
      if (err == CL_SUCCESS) {
        rt::Mem mem(m);
        cl_command_queue q = dev.queue(0);
        // Host write seen by the device, then a device write (fill) seen by the host.
        auto* rec = static_cast<volatile cl_int*>(page);
        rec[0] = 0x5a5a5a5a;
        cl_int seen = 0;
        const cl_int zero_int = 0;
        bool ok = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof(seen), &seen, 0, nullptr, nullptr) ==
                      CL_SUCCESS &&
                  seen == 0x5a5a5a5a;
        ok = clEnqueueFillBuffer(q, m, &zero_int, sizeof(zero_int), 0, sizeof(ErrorRecord), 0,
                                 nullptr, nullptr) == CL_SUCCESS &&
             clFinish(q) == CL_SUCCESS && ok && rec[0] == 0;
        if (!ok) {  // not shared after all: clear it through the queue and read it that way
          rec[0] = 0;
          OCL_TRY
          OCL_CHECK(
              clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof(zero), &zero, 0, nullptr, nullptr));
          OCL_CATCH
        }
        slot.host = std::move(host);
        slot.mem = std::move(mem);
        slot.zero_copy = ok;
        return;
      }
    }
  }
  cl_mem m = clCreateBuffer(dev.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zero),
                            const_cast<ErrorRecord*>(&zero), &err);
  OCL_TRY
  OCL_CHECK(err);
  OCL_CATCH
  slot.mem = rt::Mem(m);
}

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
  const ErrorRecord zero{};
  OCL_TRY
  if (slot.zero_copy) {
    // The queue has finished (callers read after a finish; clFinish of an idle queue enqueues
    // nothing), so the kernels' writes are in our page.
    OCL_CHECK(clFinish(queue));
    std::atomic_thread_fence(std::memory_order_acquire);
    std::memcpy(&rec, slot.host.get(), sizeof(rec));
  } else {
    OCL_CHECK(clEnqueueReadBuffer(queue, slot.mem.get(), CL_TRUE, 0, sizeof(rec), &rec, 0, nullptr,
                                  nullptr));
  }
  if (rec.flag == 0) {
    if (whole_device) slot.pending.store(false);
    return;
  }
  if (slot.zero_copy) {
    std::memcpy(slot.host.get(), &zero, sizeof(zero));
    std::atomic_thread_fence(std::memory_order_release);
  } else {
    OCL_CHECK(clEnqueueWriteBuffer(queue, slot.mem.get(), CL_TRUE, 0, sizeof(zero), &zero, 0,
                                   nullptr, nullptr));
  }
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
  if (!slot.mem) createRecord(slot, idx);
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
