#include "integration/state.h"

#include "integration/autograd_thread.h"

#include <pthread.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace torch_ocl {
namespace {

std::atomic<bool> g_initialized{false};
std::atomic<bool> g_driver_loaded{false};
std::atomic<bool> g_in_bad_fork{false};
std::once_flag g_init_once;

struct PerDevice {
  std::unique_ptr<rt::DeviceAllocator> allocator;
  std::unique_ptr<rt::ProgramCache> programs;
};
// Never destroyed (tensors may be freed during interpreter shutdown); see rt::Runtime.
std::vector<PerDevice>& perDevice() {
  static auto* v = new std::vector<PerDevice>();  // NOLINT: intentionally leaked
  return *v;
}

// OpenCL drivers do not survive fork(): PoCL, for one, starts its worker threads when the platform
// is first queried, so a child of a process that only asked for the device count would hang on
// its first command. Such a child gets a clear error instead.
void forkChild() {
  if (g_driver_loaded.load() || g_initialized.load()) g_in_bad_fork.store(true);
}

// Called before anything that may query OpenCL.
void loadDriver() {
  if (g_driver_loaded.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork(nullptr, nullptr, &forkChild);
    g_driver_loaded.store(true, std::memory_order_release);
  });
}

// Hot-path view of the per-device objects, published once by initOnce(): device(), allocator()
// and programs() of a valid index in a process that is not a bad fork child read these with
// no call_once, no runtime lookup and no string work (every launch calls them several times).
struct Ready {
  int count = 0;
  rt::Device* devices[64] = {};
  rt::DeviceAllocator* allocators[64] = {};
  rt::ProgramCache* programs[64] = {};
};
Ready g_ready;
std::atomic<bool> g_ready_published{false};

void initOnce() {
  std::call_once(g_init_once, [] {
    auto& rt = rt::Runtime::get();
    int n = rt.deviceCount();
    auto& pd = perDevice();
    pd.resize(n);
    for (int i = 0; i < n; ++i) {
      rt::Device& dev = rt.device(i);
      pd[i].allocator = std::make_unique<rt::DeviceAllocator>(dev);
      pd[i].programs =
          std::make_unique<rt::ProgramCache>(dev, rt::DiskCache::fromEnvironment(dev.info()));
    }
    g_initialized.store(true);
    int cpu_devices = 0;
    for (int i = 0; i < n; ++i) cpu_devices += (rt.device(i).info().type & CL_DEVICE_TYPE_CPU) != 0;
    autograd_thread::applyOnInit(n, cpu_devices);
    if (n <= 64) {
      g_ready.count = n;
      for (int i = 0; i < n; ++i) {
        g_ready.devices[i] = &rt.device(i);
        g_ready.allocators[i] = pd[i].allocator.get();
        g_ready.programs[i] = pd[i].programs.get();
      }
      g_ready_published.store(true, std::memory_order_release);
    }
  });
}

// True when index can take the fast path (initialised, valid, not a bad fork child).
inline bool ready(c10::DeviceIndex index) {
  return g_ready_published.load(std::memory_order_acquire) &&
         !g_in_bad_fork.load(std::memory_order_relaxed) &&
         static_cast<unsigned>(index) < static_cast<unsigned>(g_ready.count);
}

thread_local c10::DeviceIndex t_current_device = 0;
constexpr int kMaxDevices = 64;
thread_local std::array<int8_t, kMaxDevices> t_current_stream{};

}  // namespace

c10::DeviceIndex deviceCount() noexcept {
  try {
    loadDriver();
    return static_cast<c10::DeviceIndex>(rt::Runtime::get().deviceCount());
  } catch (...) {
    return 0;
  }
}

bool isInitialized() {
  return g_initialized.load();
}
bool isInBadFork() {
  return g_in_bad_fork.load();
}

void checkIndex(c10::DeviceIndex index) {
  TORCH_CHECK(!g_in_bad_fork.load(),
              "Cannot re-initialize the OpenCL (ocl) device in a forked subprocess: the parent "
              "process had already loaded the OpenCL driver (using the device, or even asking "
              "torch.ocl.is_available() or device_count(), does), and OpenCL drivers do not "
              "survive fork(). Use the 'spawn' or 'forkserver' start method of "
              "multiprocessing to use ocl in child processes.");
  c10::DeviceIndex n = deviceCount();
  TORCH_CHECK(n > 0, "torch-ocl: ", rt::Runtime::get().discoveryError());
  TORCH_CHECK_INDEX(index >= 0 && index < n, "Invalid ocl device index ", static_cast<int>(index),
                    ": ", static_cast<int>(n), " ocl device(s) are available (valid indices 0..",
                    static_cast<int>(n - 1), ")");
}

rt::Device& device(c10::DeviceIndex index) {
  if (ready(index)) return *g_ready.devices[index];
  checkIndex(index);
  initOnce();
  return rt::Runtime::get().device(index);
}

rt::DeviceAllocator& allocator(c10::DeviceIndex index) {
  if (ready(index)) return *g_ready.allocators[index];
  checkIndex(index);
  initOnce();
  return *perDevice()[index].allocator;
}

rt::ProgramCache& programs(c10::DeviceIndex index) {
  if (ready(index)) return *g_ready.programs[index];
  checkIndex(index);
  initOnce();
  return *perDevice()[index].programs;
}

rt::DeviceAllocator* allocatorOwning(const void* ptr) {
  if (g_ready_published.load(std::memory_order_acquire)) {
    for (int i = 0; i < g_ready.count; ++i)
      if (g_ready.allocators[i]->owns(ptr)) return g_ready.allocators[i];
    return nullptr;
  }
  if (!g_initialized.load()) return nullptr;
  for (auto& pd : perDevice())
    if (pd.allocator && pd.allocator->owns(ptr)) return pd.allocator.get();
  return nullptr;
}

c10::DeviceIndex currentDevice() {
  return t_current_device;
}

void setCurrentDevice(c10::DeviceIndex index) {
  if (!ready(index)) checkIndex(index);
  t_current_device = index;
}

c10::Stream currentStream(c10::DeviceIndex index) {
  if (index < 0) index = t_current_device;
  TORCH_CHECK(index < kMaxDevices, "ocl device index ", static_cast<int>(index), " too large");
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kOcl, index), t_current_stream[index]);
}

c10::Stream defaultStream(c10::DeviceIndex index) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kOcl, index), 0);
}

void setCurrentStream(const c10::Stream& stream) {
  TORCH_CHECK(stream.device_type() == kOcl, "expected an ocl stream, got one on ", stream.device());
  if (!ready(stream.device_index())) checkIndex(stream.device_index());
  TORCH_CHECK(stream.id() >= 0 && stream.id() < rt::kStreamsPerDevice, "invalid ocl stream id ",
              stream.id());
  t_current_stream[stream.device_index()] = static_cast<int8_t>(stream.id());
}

cl_command_queue queueOf(const c10::Stream& stream) {
  rt::Device& dev = device(stream.device_index());
  OCL_TRY
  return dev.queue(static_cast<int>(stream.id()));
  OCL_CATCH
}

void rethrowAsTorch(const std::exception& e) {
  if (dynamic_cast<const rt::OutOfMemoryError*>(&e))
    TORCH_CHECK_WITH(OutOfMemoryError, false, e.what());
  if (dynamic_cast<const std::out_of_range*>(&e)) TORCH_CHECK_INDEX(false, e.what());
  if (dynamic_cast<const std::invalid_argument*>(&e)) TORCH_CHECK_VALUE(false, e.what());
  TORCH_CHECK(false, e.what());
}

}  // namespace torch_ocl
