// VkFFT (header-only, Debian libvkfft-dev) through its OpenCL back end. Chosen over clFFT: it
// handles every length (Bluestein for large primes; clFFT 2.12 only 2,3,5,7,11,13-smooth ones),
// bakes plans 4-30x faster on PoCL and is maintained. The whole header is compiled here only.
#include "aten/fft/vkfft_plan.h"

#include <ATen/ATen.h>

#include "aten/launch.h"
#include "integration/state.h"
#include "runtime/cl_include.h"

#include <algorithm>
#include <clocale>
#include <string>

namespace {
// What VkFFT learns of the device, capped at a GPU-like 64 KiB of local memory and 1024 work
// items: PoCL reports 2 MiB and 4096, and VkFFT 1.2.26's single-upload kernels for such budgets
// (e.g. a 2^17-point c2c) crash in PoCL. VkFFT has no setting for these, so its calls are routed
// here (this file is the only one that includes vkFFT.h).
cl_int vkfftDeviceInfo(cl_device_id device, cl_device_info param, size_t size, void* value,
                       size_t* size_ret) {
  const cl_int r = clGetDeviceInfo(device, param, size, value, size_ret);
  if (r != CL_SUCCESS || value == nullptr) return r;
  constexpr cl_ulong kLocalMem = 64 << 10;
  constexpr size_t kWorkItems = 1024;
  if (param == CL_DEVICE_LOCAL_MEM_SIZE) {
    auto* v = static_cast<cl_ulong*>(value);
    *v = std::min(*v, kLocalMem);
  } else if (param == CL_DEVICE_MAX_WORK_GROUP_SIZE) {
    auto* v = static_cast<size_t*>(value);
    *v = std::min(*v, kWorkItems);
  } else if (param == CL_DEVICE_MAX_WORK_ITEM_SIZES) {
    auto* v = static_cast<size_t*>(value);
    for (size_t i = 0; i < size / sizeof(size_t); ++i) v[i] = std::min(v[i], kWorkItems);
  }
  return r;
}
}  // namespace

#define VKFFT_BACKEND 3
#define clGetDeviceInfo vkfftDeviceInfo
#include <vkFFT.h>
#undef clGetDeviceInfo

#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace torch_ocl::aten::fft {
namespace {

const char* vkfftErrorName(VkFFTResult r) {
  switch (r) {
    case VKFFT_ERROR_MALLOC_FAILED:
      return "VKFFT_ERROR_MALLOC_FAILED";
    case VKFFT_ERROR_INSUFFICIENT_CODE_BUFFER:
      return "VKFFT_ERROR_INSUFFICIENT_CODE_BUFFER";
    case VKFFT_ERROR_UNSUPPORTED_RADIX:
      return "VKFFT_ERROR_UNSUPPORTED_RADIX";
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH:
      return "VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH";
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C:
      return "VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C";
    case VKFFT_ERROR_FAILED_TO_ALLOCATE:
      return "VKFFT_ERROR_FAILED_TO_ALLOCATE";
    case VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM:
      return "VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM";
    case VKFFT_ERROR_FAILED_TO_CREATE_PROGRAM:
      return "VKFFT_ERROR_FAILED_TO_CREATE_PROGRAM";
    case VKFFT_ERROR_FAILED_TO_SET_KERNEL_ARG:
      return "VKFFT_ERROR_FAILED_TO_SET_KERNEL_ARG";
    case VKFFT_ERROR_FAILED_TO_LAUNCH_KERNEL:
      return "VKFFT_ERROR_FAILED_TO_LAUNCH_KERNEL";
    case VKFFT_ERROR_EMPTY_tempBuffer:
      return "VKFFT_ERROR_EMPTY_tempBuffer";
    default:
      return "VkFFT error";
  }
}

void checkVkFFT(VkFFTResult r, const char* call, const PlanKey& key) {
  if (r == VKFFT_SUCCESS) return;
  TORCH_CHECK(false, call, " failed with ", vkfftErrorName(r), " (", static_cast<int>(r),
              ") for a ",
              key.kind == Kind::kC2C   ? "c2c"
              : key.kind == Kind::kR2C ? "r2c"
                                       : "c2r",
              " FFT of sizes [", key.sizes[0], ", ", key.sizes[1], ", ", key.sizes[2], "] (rank ",
              int(key.rank), ", batch ", key.batch, ")");
}

struct KeyHash {
  size_t operator()(const PlanKey& k) const {
    uint64_t h = (uint64_t(k.device) << 8) ^ (uint64_t(k.kind) << 4) ^ (uint64_t(k.inverse) << 2) ^
                 (uint64_t(k.fp64) << 1) ^ (uint64_t(k.rank) << 12);
    for (uint64_t v : {k.sizes[0], k.sizes[1], k.sizes[2], k.batch})
      h = (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h);
  }
};

at::Tensor scratch(c10::DeviceIndex idx, uint64_t bytes) {
  return at::empty({static_cast<int64_t>(bytes)},
                   at::TensorOptions().dtype(at::kByte).device(kOcl, idx));
}

// One VkFFT application. VkFFT keeps pointers to the cl_mem handles it was given and reads them
// at every launch, so they live in the plan (stable addresses), set under mutex_ before a launch;
// the mutex also keeps the plan's cl_kernels from being set by two threads at once.
class Plan {
 public:
  explicit Plan(const PlanKey& key) : key_(key) {
    rt::Device& dev = device(key.device);
    device_ = dev.id();
    context_ = dev.context();
    const uint64_t complexSize = key.fp64 ? 16 : 8, realSize = complexSize / 2;
    uint64_t signals = key.batch, realSignals = key.batch;
    for (int i = 0; i < 3; ++i) {
      const uint64_t n = i < key.rank ? key.sizes[i] : 1;
      signals *= (i == 0 && key.kind != Kind::kC2C) ? n / 2 + 1 : n;
      realSignals *= n;
    }
    bufferBytes_ = signals * complexSize;
    realBytes_ = realSignals * realSize;
    tempBytes_ = bufferBytes_;

    VkFFTConfiguration c = {};
    c.FFTdim = key.rank;
    for (int i = 0; i < key.rank; ++i) c.size[i] = key.sizes[i];
    c.numberBatches = key.batch;
    c.device = &device_;
    c.context = &context_;
    c.doublePrecision = key.fp64 ? 1 : 0;
    c.specifyOffsetsAtLaunch = 1;
    // 32-bit indices unless an index or a launch offset (elements into a slab) could overflow.
    const uint64_t largest = std::max<uint64_t>(dev.info().max_mem_alloc_size, bufferBytes_);
    c.useUint64 = largest / realSize > 0x7fffffffull ? 1 : 0;
    c.userTempBuffer = 1;
    c.tempBufferSize = &tempBytes_;
    c.bufferSize = &bufferBytes_;
    if (key.kind == Kind::kC2C) {
      (key.inverse ? c.makeInversePlanOnly : c.makeForwardPlanOnly) = 1;
    } else {
      c.performR2C = 1;
      c.isInputFormatted = 1;  // the real side is unpadded, in its own buffer
      c.inverseReturnToInputBuffer = 1;
      // VkFFT 1.2.26 merges pairs of real sequences into one complex FFT; out of place, its C2R
      // side of that is wrong for even signal counts (tests/test_fft.py catches it).
      if (key.kind == Kind::kC2R) c.disableMergeSequencesR2C = 1;
      c.inputBufferSize = &realBytes_;
      // Both sides dense: VkFFT's default real stride is the in-place padded one (n + 2).
      uint64_t real = 1, half = 1;
      for (int i = 0; i < 3; ++i) {
        const uint64_t n = i < key.rank ? key.sizes[i] : 1;
        real *= n;
        half *= i == 0 ? n / 2 + 1 : n;
        c.inputBufferStride[i] = real;
        c.outputBufferStride[i] = real;
        c.bufferStride[i] = half;
      }
      (key.kind == Kind::kC2R ? c.makeInversePlanOnly : c.makeForwardPlanOnly) = 1;
    }
    // Buffers for the plan's set-up; every launch passes its own.
    at::Tensor data = scratch(key.device, bufferBytes_), temp = scratch(key.device, tempBytes_);
    at::Tensor real = key.kind == Kind::kC2C ? at::Tensor() : scratch(key.device, realBytes_);
    bind(bufferOf(data), real.defined() ? bufferOf(real) : rt::BufferRef{}, bufferOf(temp));
    c.buffer = &buffer_;
    c.tempBuffer = &temp_;
    if (key.kind != Kind::kC2C) c.inputBuffer = &input_;
    // VkFFT's code generator switches the process to the "C" locale and means to restore the old
    // one, but keeps setlocale()'s returned pointer, which the switch itself overwrites: it leaves
    // "C" behind (Python's open() then reads ASCII, and torch.compile's first import after an ocl
    // FFT failed on Inductor's UTF-8 templates). Restore a copy of the locale ourselves.
    const char* locale_now = std::setlocale(LC_ALL, nullptr);
    const std::string old_locale = locale_now ? locale_now : "";
    const VkFFTResult r = initializeVkFFT(&app_, c);
    if (!old_locale.empty()) std::setlocale(LC_ALL, old_locale.c_str());
    if (r == VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C) {
      supported_ = false;
      return;
    }
    checkVkFFT(r, "initializeVkFFT", key);
    initialized_ = true;
    const VkFFTPlan* plan = key.kind == Kind::kC2R || (key.kind == Kind::kC2C && key.inverse)
                                ? app_.localFFTPlan_inverse
                                : app_.localFFTPlan;
    for (int i = 0; i < key.rank; ++i) {
      if ((plan && plan->numAxisUploads[i] > 1) || app_.useBluesteinFFT[i]) needsTemp_ = true;
      if (key.kind == Kind::kC2R && plan && plan->numAxisUploads[i] > 1) supported_ = false;
    }
  }
  bool supported() const { return supported_; }
  ~Plan() {
    if (initialized_) deleteVkFFT(&app_);
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  void run(rt::BufferRef data, rt::BufferRef real) {
    const c10::DeviceIndex idx = key_.device;
    at::Tensor temp;  // stream-ordered: freed once enqueued, reused only behind this work
    rt::BufferRef tempRef{};
    if (needsTemp_) {
      temp = scratch(idx, tempBytes_);
      tempRef = bufferOf(temp);
    }
    cl_command_queue queue = currentQueue(idx);
    refuseCapture(queue, "a VkFFT transform (it enqueues by itself)");
    std::lock_guard<std::mutex> lock(mutex_);
    bind(data, real, tempRef);
    queue_ = queue;
    VkFFTLaunchParams lp = {};
    lp.commandQueue = &queue_;
    lp.buffer = &buffer_;
    lp.bufferOffset = data.offset;
    if (needsTemp_) {
      lp.tempBuffer = &temp_;
      lp.tempBufferOffset = tempRef.offset;
    }
    if (key_.kind != Kind::kC2C) {
      lp.inputBuffer = &input_;
      lp.inputBufferOffset = real.offset;
    }
    const int direction =
        key_.kind == Kind::kC2R || (key_.kind == Kind::kC2C && key_.inverse) ? 1 : -1;
    checkVkFFT(VkFFTAppend(&app_, direction, &lp), "VkFFTAppend", key_);
    afterLaunch(queue);
  }

 private:
  void bind(rt::BufferRef data, rt::BufferRef real, rt::BufferRef temp) {
    buffer_ = data.mem;
    input_ = real.mem;
    // A plan without temp needs still gets a valid handle: VkFFT binds it to unused slots.
    temp_ = temp.mem ? temp.mem : data.mem;
  }

  PlanKey key_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  uint64_t bufferBytes_ = 0, realBytes_ = 0, tempBytes_ = 0;
  cl_mem buffer_ = nullptr, input_ = nullptr, temp_ = nullptr;
  cl_command_queue queue_ = nullptr;
  VkFFTApplication app_ = {};
  bool initialized_ = false;
  bool needsTemp_ = false;
  bool supported_ = true;
  std::mutex mutex_;
};

// LRU of plans; shared_ptr so an evicted plan stays alive while a launch uses it. Plans are built
// outside the lock (a build takes 0.1-3 s on PoCL).
class PlanCache {
 public:
  static constexpr size_t kCapacity = 128;

  std::shared_ptr<Plan> get(const PlanKey& key) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
    }
    auto plan = std::make_shared<Plan>(key);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second->second;  // another thread built it meanwhile
    lru_.emplace_front(key, plan);
    map_[key] = lru_.begin();
    while (lru_.size() > kCapacity) {
      map_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return plan;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lru_.size();
  }
  void clear() {
    std::list<std::pair<PlanKey, std::shared_ptr<Plan>>> old;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      map_.clear();
      old.swap(lru_);
    }
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<PlanKey, std::shared_ptr<Plan>>> lru_;
  std::unordered_map<PlanKey, decltype(lru_)::iterator, KeyHash> map_;
};

PlanCache& cache() {
  // First used after the devices exist, so destroyed before them at exit.
  static PlanCache c;
  return c;
}

}  // namespace

bool execute(const PlanKey& key, rt::BufferRef data, rt::BufferRef real) {
  OCL_TRY
  std::shared_ptr<Plan> plan = cache().get(key);
  if (!plan->supported()) return false;
  plan->run(data, real);
  return true;
  OCL_CATCH
}

size_t planCacheSize() {
  return cache().size();
}
size_t planCacheCapacity() {
  return PlanCache::kCapacity;
}
void clearPlanCache() {
  cache().clear();
}

}  // namespace torch_ocl::aten::fft
