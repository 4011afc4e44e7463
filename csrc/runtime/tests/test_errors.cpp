// Tests of OpenCL error naming and of the OCL_CHECK macros.
#include "runtime/cl_error.h"

#include <gtest/gtest.h>

#include <string>

namespace torch_ocl::rt {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ClErrorTest, NamesKnownCodes) {
  EXPECT_EQ(clErrorName(CL_SUCCESS), "CL_SUCCESS");
  EXPECT_EQ(clErrorName(CL_DEVICE_NOT_FOUND), "CL_DEVICE_NOT_FOUND");
  EXPECT_EQ(clErrorName(-4), "CL_MEM_OBJECT_ALLOCATION_FAILURE");
  EXPECT_EQ(clErrorName(-5), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(clErrorName(-6), "CL_OUT_OF_HOST_MEMORY");
  EXPECT_EQ(clErrorName(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(clErrorName(-30), "CL_INVALID_VALUE");
  EXPECT_EQ(clErrorName(CL_INVALID_KERNEL_ARGS), "CL_INVALID_KERNEL_ARGS");
  EXPECT_EQ(clErrorName(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_EQ(clErrorName(CL_INVALID_BUFFER_SIZE), "CL_INVALID_BUFFER_SIZE");
  EXPECT_EQ(clErrorName(CL_INVALID_DEVICE_PARTITION_COUNT), "CL_INVALID_DEVICE_PARTITION_COUNT");
  EXPECT_EQ(clErrorName(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
}

TEST(ClErrorTest, NamesUnknownCodesWithTheNumber) {
  EXPECT_EQ(clErrorName(-1234), "CL_UNKNOWN_ERROR(-1234)");
  EXPECT_EQ(clErrorName(7), "CL_UNKNOWN_ERROR(7)");
}

TEST(ClErrorTest, MessageHasNameCodeCallAndLocation) {
  ClError e(CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel(add)", "some_file.cpp", 42);
  const std::string msg = e.what();
  EXPECT_TRUE(contains(msg, "CL_OUT_OF_RESOURCES")) << msg;
  EXPECT_TRUE(contains(msg, "(-5)")) << msg;
  EXPECT_TRUE(contains(msg, "clEnqueueNDRangeKernel(add)")) << msg;
  EXPECT_TRUE(contains(msg, "some_file.cpp:42")) << msg;
  EXPECT_EQ(e.code(), CL_OUT_OF_RESOURCES);
  EXPECT_EQ(e.call(), "clEnqueueNDRangeKernel(add)");
  const std::runtime_error& base = e;  // catchable as std::runtime_error
  EXPECT_EQ(std::string(base.what()), msg);
}

cl_int fails(int* calls) {
  ++*calls;
  return CL_INVALID_VALUE;
}

cl_int succeeds(int* calls) {
  ++*calls;
  return CL_SUCCESS;
}

TEST(ClErrorTest, OclCheckThrowsOnFailureOnly) {
  int calls = 0;
  EXPECT_NO_THROW(OCL_CHECK(succeeds(&calls)));
  EXPECT_EQ(calls, 1);  // evaluated once
  try {
    OCL_CHECK(fails(&calls));
    FAIL() << "OCL_CHECK must throw";
  } catch (const ClError& e) {
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(e.code(), CL_INVALID_VALUE);
    EXPECT_EQ(e.call(), "fails(&calls)");
    EXPECT_TRUE(contains(e.what(), "CL_INVALID_VALUE")) << e.what();
    EXPECT_TRUE(contains(e.what(), "test_errors.cpp")) << e.what();
  }
}

TEST(ClErrorTest, OclCheckWithRealApiCall) {
  // Both arguments null is CL_INVALID_VALUE per the specification.
  try {
    OCL_CHECK(clGetPlatformIDs(0, nullptr, nullptr));
    FAIL() << "clGetPlatformIDs(0, nullptr, nullptr) must fail";
  } catch (const ClError& e) {
    EXPECT_EQ(e.code(), CL_INVALID_VALUE);
    EXPECT_TRUE(contains(e.what(), "clGetPlatformIDs")) << e.what();
  }
  try {
    OCL_CHECK(clReleaseMemObject(nullptr));
    FAIL() << "clReleaseMemObject(nullptr) must fail";
  } catch (const ClError& e) {
    EXPECT_EQ(e.code(), CL_INVALID_MEM_OBJECT);
    EXPECT_TRUE(contains(e.what(), "CL_INVALID_MEM_OBJECT")) << e.what();
  }
}

TEST(ClErrorTest, OclCheckErr) {
  cl_int err = CL_SUCCESS;
  EXPECT_NO_THROW(OCL_CHECK_ERR(err, "clCreateBuffer"));
  err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
  try {
    OCL_CHECK_ERR(err, std::string("clCreateBuffer(") + "1024)");
    FAIL() << "OCL_CHECK_ERR must throw";
  } catch (const ClError& e) {
    EXPECT_EQ(e.code(), CL_MEM_OBJECT_ALLOCATION_FAILURE);
    EXPECT_EQ(e.call(), "clCreateBuffer(1024)");
    EXPECT_TRUE(contains(e.what(), "CL_MEM_OBJECT_ALLOCATION_FAILURE")) << e.what();
  }
}

TEST(ClErrorTest, OtherErrorTypes) {
  BuildError b("copy<float,half>", "-cl-std=CL1.2", "error: expected ';'");
  const std::string msg = b.what();
  EXPECT_TRUE(contains(msg, "copy<float,half>")) << msg;
  EXPECT_TRUE(contains(msg, "-cl-std=CL1.2")) << msg;
  EXPECT_TRUE(contains(msg, "error: expected ';'")) << msg;
  EXPECT_EQ(b.log(), "error: expected ';'");
  OutOfMemoryError oom("OpenCL out of memory. Tried to allocate 2.00 GiB.");
  EXPECT_TRUE(contains(static_cast<const std::runtime_error&>(oom).what(), "Tried to allocate"));
  NoDeviceError nd("no OpenCL platform found");
  EXPECT_EQ(std::string(nd.what()), "no OpenCL platform found");
}

}  // namespace
}  // namespace torch_ocl::rt
