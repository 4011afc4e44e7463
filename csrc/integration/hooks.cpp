// PrivateUse1 hooks: availability, device count and selection, generators, pinned memory.
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "integration/allocator.h"
#include "integration/generator.h"
#include "integration/state.h"
#include "runtime/allocator.h"

namespace torch_ocl {
namespace {

struct OclHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return deviceCount() > 0; }
  void init() const override {
    if (deviceCount() > 0) device(currentDevice());
  }
  bool hasPrimaryContext(c10::DeviceIndex index) const override {
    return isInitialized() && index >= 0 && index < deviceCount();
  }
  c10::DeviceIndex deviceCount() const override { return torch_ocl::deviceCount(); }
  void setCurrentDevice(c10::DeviceIndex index) const override {
    torch_ocl::setCurrentDevice(index);
  }
  c10::DeviceIndex getCurrentDevice() const override { return currentDevice(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    c10::DeviceIndex old = currentDevice();
    if (index != old) torch_ocl::setCurrentDevice(index);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override {
    return exchangeDevice(index);
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    return defaultGenerator(index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    return newGenerator(index);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    for (c10::DeviceIndex i = 0; i < deviceCount(); ++i)
      if (isInitialized() && allocator(i).owns(data)) return at::Device(kOcl, i);
    TORCH_CHECK(false, "torch-ocl: pointer ", data, " is not ocl device memory");
  }
  bool isPinnedPtr(const void* data) const override { return rt::PinnedHostMemory::isPinned(data); }
  at::Allocator* getPinnedMemoryAllocator() const override { return hostAllocator(); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override;
};

}  // namespace

// Defined in aten/resize.cpp; storage resizing needs a device copy.
void resizeStorageBytes(const c10::Storage& storage, size_t newsize);

void OclHooks::resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const {
  resizeStorageBytes(storage, newsize);
}

void registerHooks() {
  static OclHooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
}

}  // namespace torch_ocl
