// resize_ and the set_ family. Growing a storage allocates a new block and copies the old bytes
// on the device (never through the host).
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>

#include "aten/launch.h"
#include "aten/ops.h"
#include "integration/allocator.h"

namespace torch_ocl {

void resizeStorageBytes(const c10::Storage& storage, size_t newsize) {
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  const size_t old = storage.nbytes();
  if (newsize == old) return;
  c10::DeviceGuard guard(storage.device());
  at::DataPtr fresh = storage.allocator()->allocate(newsize);
  const size_t keep = std::min(old, newsize);
  if (keep > 0 && storage.data() != nullptr) {
    rt::BufferRef d = resolvePtr(fresh.get()), s = resolvePtr(storage.data());
    OCL_TRY
    aten::enqueueCopyBuffer(currentQueue(storage.device().index()), s, d, keep);
    OCL_CATCH
  }
  // The old block goes back to the cache; stream-ordered reuse keeps the copy above safe.
  const_cast<c10::Storage&>(storage).set_data_ptr_noswap(std::move(fresh));
  const_cast<c10::Storage&>(storage).set_nbytes(newsize);
}

namespace aten {
namespace {

void maybeResizeStorage(const at::Tensor& self, int64_t needed_bytes) {
  if (needed_bytes == 0) return;
  const c10::Storage& storage = self.unsafeGetTensorImpl()->unsafe_storage();
  if (!storage) {
    TORCH_CHECK(false, "torch-ocl: cannot resize a tensor without storage");
  }
  if (static_cast<size_t>(needed_bytes) > storage.nbytes())
    resizeStorageBytes(storage, static_cast<size_t>(needed_bytes));
}

}  // namespace

const at::Tensor& resize(const at::Tensor& self, c10::SymIntArrayRef size_sym,
                         std::optional<c10::MemoryFormat> memory_format) {
  at::IntArrayRef size = C10_AS_INTARRAYREF_SLOW(size_sym);
  auto* impl = self.unsafeGetTensorImpl();
  if (impl->sizes() == size && !memory_format.has_value()) return self;
  impl->set_sizes_contiguous(size);
  const int64_t needed = at::detail::computeStorageNbytesContiguous(size, self.dtype().itemsize(),
                                                                    impl->storage_offset());
  maybeResizeStorage(self, needed);
  if (memory_format.has_value()) {
    TORCH_CHECK(*memory_format != c10::MemoryFormat::Preserve, "Unsupported memory format",
                *memory_format);
    impl->empty_tensor_restride(*memory_format);
  }
  return self;
}

at::Tensor& setStorage(at::Tensor& self, at::Storage source, c10::SymInt storage_offset_sym,
                       c10::SymIntArrayRef size_sym, c10::SymIntArrayRef stride_sym) {
  const int64_t storage_offset = storage_offset_sym.expect_int();
  at::IntArrayRef size = C10_AS_INTARRAYREF_SLOW(size_sym);
  at::IntArrayRef stride = C10_AS_INTARRAYREF_SLOW(stride_sym);
  at::native::checkSetStorage(self, source, storage_offset, size, stride);
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(storage_offset);
  std::optional<at::IntArrayRef> stride_opt =
      stride.data() != nullptr ? std::optional<at::IntArrayRef>(stride) : std::nullopt;
  if (stride_opt) {
    impl->set_sizes_and_strides(size, *stride_opt);
  } else {
    impl->set_sizes_contiguous(size);
  }
  const int64_t needed = stride_opt
                             ? at::detail::computeStorageNbytes(
                                   size, *stride_opt, self.dtype().itemsize(), storage_offset)
                             : at::detail::computeStorageNbytesContiguous(
                                   size, self.dtype().itemsize(), storage_offset);
  maybeResizeStorage(self, needed);
  return self;
}

at::Tensor& setSourceStorage(at::Tensor& self, at::Storage source) {
  const int64_t n = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  std::vector<c10::SymInt> size{c10::SymInt(n)};
  std::vector<c10::SymInt> stride{c10::SymInt(1)};
  return setStorage(self, std::move(source), 0, size, stride);
}

at::Tensor& setSourceTensor(at::Tensor& self, const at::Tensor& source) {
  if (self.unsafeGetTensorImpl() == source.unsafeGetTensorImpl()) return self;
  return setStorage(self, source.storage(), source.sym_storage_offset(), source.sym_sizes(),
                    source.sym_strides());
}

at::Tensor& setEmpty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, deviceAllocator(), true);
  std::vector<c10::SymInt> size{c10::SymInt(0)};
  std::vector<c10::SymInt> stride{c10::SymInt(1)};
  return setStorage(self, std::move(storage), 0, size, stride);
}

bool hasCompatibleShallowCopyType(const at::Tensor& self, const at::Tensor& from) {
  if (self.key_set() == from.key_set()) return true;
  auto denseHere = [](const at::Tensor& t) {
    const auto type = t.device().type();
    return t.layout() == c10::kStrided && !t.is_nested() &&
           (type == c10::DeviceType::CPU || type == c10::DeviceType::PrivateUse1) &&
           t.key_set().has(c10::DispatchKey::Dense);
  };
  return denseHere(self) && denseHere(from);
}

}  // namespace aten
}  // namespace torch_ocl
