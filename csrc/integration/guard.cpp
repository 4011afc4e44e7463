// Device guard with streams and events, registered for PrivateUse1. torch.Stream, torch.Event,
// torch.accelerator and autograd's stream handling all come through here.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "aten/cl_types.h"
#include "aten/device_check.h"
#include "integration/allocator.h"
#include "integration/state.h"

#include <chrono>
#include <memory>
#include <thread>

namespace torch_ocl {
namespace {

rt::Event* asEvent(void* e) {
  return static_cast<rt::Event*>(e);
}

// torch.Stream(device="ocl") and friends pass a device without an index: the current device.
c10::Device withIndex(c10::Device d) {
  return d.has_index() ? d : c10::Device(kOcl, currentDevice());
}

struct OclGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kOcl; }

  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kOcl);
    c10::Device old(kOcl, currentDevice());
    if (old.index() != d.index()) setCurrentDevice(d.index());
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kOcl, currentDevice()); }
  void setDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kOcl);
    setCurrentDevice(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    try {
      setCurrentDevice(d.index());
    } catch (...) {
    }
  }

  c10::Stream getStream(c10::Device d) const override {
    return currentStream(withIndex(d).index());
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return defaultStream(withIndex(d).index());
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*high_priority*/) const override {
    d = withIndex(d);
    rt::Device& dev = device(d.index());
    return c10::Stream(c10::Stream::UNSAFE, d, dev.nextPoolStream());
  }
  c10::Stream getNewStream(c10::Device d, int /*priority*/) const override {
    return getStreamFromGlobalPool(d, false);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    c10::Stream old = currentStream(s.device_index());
    setCurrentStream(s);
    return old;
  }
  void* getStreamNativeHandle(const c10::Stream s) const override { return queueOf(s); }

  c10::DeviceIndex deviceCount() const noexcept override { return torch_ocl::deviceCount(); }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag /*flag*/) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "Event device index ",
                static_cast<int>(device_index), " does not match recording stream's device index ",
                static_cast<int>(stream.device_index()), ".");
    rt::Device& dev = device(stream.device_index());
    if (!*event) *event = std::make_unique<rt::Event>().release();
    OCL_TRY
    asEvent(*event)->record(dev, static_cast<int>(stream.id()));
    OCL_CATCH
  }
  void block(void* event, const c10::Stream& stream) const override {
    if (!event) return;
    rt::Device& dev = device(stream.device_index());
    OCL_TRY
    asEvent(event)->wait(dev, static_cast<int>(stream.id()));
    OCL_CATCH
  }
  bool queryEvent(void* event) const override {
    if (!event) return true;
    OCL_TRY
    return asEvent(event)->query();
    OCL_CATCH
  }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    std::unique_ptr<rt::Event> owned(asEvent(event));
  }
  void synchronizeEvent(void* event) const override {
    if (!event) return;
    OCL_TRY
    asEvent(event)->synchronize();
    OCL_CATCH
    aten::checkAllDeviceErrors();
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start && end, "Both events must be recorded before calculating elapsed time.");
    OCL_TRY
    return asEvent(start)->elapsedMs(*asEvent(end));
    OCL_CATCH
  }

  bool queryStream(const c10::Stream& stream) const override {
    // An in-order queue is idle when a marker enqueued now completes. The driver still has to
    // process that marker (PoCL's worker threads take up to milliseconds on a loaded host), so
    // an idle queue gets a short grace period: without it query() is False right after
    // synchronize(). A busy queue answers False after at most kQueryGrace.
    constexpr auto kQueryGrace = std::chrono::milliseconds(5);
    rt::Event probe;
    OCL_TRY
    probe.record(device(stream.device_index()), static_cast<int>(stream.id()));
    const auto deadline = std::chrono::steady_clock::now() + kQueryGrace;
    while (!probe.query()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::yield();
    }
    return true;
    OCL_CATCH
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    OCL_TRY
    OCL_CHECK(clFinish(queueOf(stream)));
    OCL_CATCH
    aten::checkDeviceErrors(stream.device_index(), queueOf(stream), /*whole_device=*/false);
  }
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    rt::Device& dev = device(index < 0 ? currentDevice() : index);
    OCL_TRY
    dev.synchronize();
    OCL_CATCH
    aten::checkDeviceErrors(index < 0 ? currentDevice() : index, dev.queue(0),
                            /*whole_device=*/true);
  }
  // torch.accelerator.get_device_capability(): the dtypes the device can hold.
  c10::DeviceCapability getDeviceCapability(c10::Device d) const override {
    const c10::DeviceIndex index = withIndex(d).index();
    c10::DeviceCapability cap;
    cap.capability_data.capability_bits = 0;
#define TORCH_OCL_SET_CAPABILITY(_1, n)                \
  cap.capability_data.supported_scalar_types.has_##n = \
      aten::isDtypeSupported(c10::ScalarType::n, index);
    AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(TORCH_OCL_SET_CAPABILITY)
#undef TORCH_OCL_SET_CAPABILITY
    return cap;
  }
  void recordDataPtrOnStream(const c10::DataPtr& data_ptr,
                             const c10::Stream& stream) const override {
    recordStreamForPtr(data_ptr.get(), stream);
  }
};

}  // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, OclGuardImpl);

}  // namespace torch_ocl
