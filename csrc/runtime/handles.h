// RAII ownership of OpenCL objects. Copies retain, destruction releases.
#pragma once

#include "cl_include.h"

#include <utility>

namespace torch_ocl::rt {

template <typename T, cl_int (*Retain)(T), cl_int (*Release)(T)>
class ClHandle {
 public:
  ClHandle() = default;
  // Takes ownership of a reference the caller already holds (as returned by clCreate*).
  explicit ClHandle(T h) : h_(h) {}
  ClHandle(const ClHandle& o) : h_(o.h_) {
    if (h_) Retain(h_);
  }
  ClHandle(ClHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  ClHandle& operator=(ClHandle o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  ~ClHandle() { reset(); }

  // Shares an object someone else owns: retains it.
  static ClHandle retained(T h) {
    if (h) Retain(h);
    return ClHandle(h);
  }
  void reset() noexcept {
    if (h_) Release(h_);
    h_ = nullptr;
  }
  T get() const noexcept { return h_; }
  T* out() noexcept {
    reset();
    return &h_;
  }
  explicit operator bool() const noexcept { return h_ != nullptr; }

 private:
  T h_ = nullptr;
};

using Context = ClHandle<cl_context, clRetainContext, clReleaseContext>;
using Queue = ClHandle<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>;
using Mem = ClHandle<cl_mem, clRetainMemObject, clReleaseMemObject>;
using Program = ClHandle<cl_program, clRetainProgram, clReleaseProgram>;
using Kernel = ClHandle<cl_kernel, clRetainKernel, clReleaseKernel>;
using ClEvent = ClHandle<cl_event, clRetainEvent, clReleaseEvent>;

}  // namespace torch_ocl::rt
