// OpenCL error reporting: every failure carries the error name and the call that failed.
#pragma once

#include "cl_include.h"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace torch_ocl::rt {

// "CL_OUT_OF_RESOURCES" for -5, "CL_UNKNOWN_ERROR(-1234)" for codes we do not know.
std::string clErrorName(cl_int code);

class ClError : public std::runtime_error {
 public:
  ClError(cl_int code, const std::string& call, const char* file, int line);
  cl_int code() const noexcept { return code_; }
  const std::string& call() const noexcept { return call_; }

 private:
  cl_int code_;
  std::string call_;
};

// Raised when a program does not build; what() holds the build log.
class BuildError : public std::runtime_error {
 public:
  BuildError(const std::string& program_name, const std::string& options, const std::string& log);
  const std::string& log() const noexcept { return log_; }

 private:
  std::string log_;
};

// Raised by the device allocator when memory is exhausted after the cache was freed and the
// allocation retried. The integration layer turns it into torch.OutOfMemoryError.
class OutOfMemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raised when the OpenCL runtime cannot be used at all (no platform, no device).
class NoDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace torch_ocl::rt

#define OCL_CHECK(call)                                                          \
  do {                                                                           \
    cl_int ocl_check_err_ = (call);                                              \
    if (ocl_check_err_ != CL_SUCCESS)                                            \
      throw ::torch_ocl::rt::ClError(ocl_check_err_, #call, __FILE__, __LINE__); \
  } while (0)

// For calls that return an object and report through an out parameter.
#define OCL_CHECK_ERR(err, what)                                                                \
  do {                                                                                          \
    if ((err) != CL_SUCCESS) throw ::torch_ocl::rt::ClError((err), (what), __FILE__, __LINE__); \
  } while (0)
