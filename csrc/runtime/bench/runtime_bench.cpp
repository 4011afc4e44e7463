// Runtime-level benchmark without PyTorch: copies and fills through blocks of our caching
// allocator against the same commands on plain cl_mem buffers, and the allocator fast path.
// Runs on any OpenCL device (used for the NVIDIA check, where PyTorch 2.13 is not installed).
//   runtime_bench [device_index] [MiB] [reps]
#include "runtime/allocator.h"
#include "runtime/device.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using namespace torch_ocl::rt;
using Clock = std::chrono::steady_clock;

static double medianSeconds(int reps, const std::function<void()>& fn) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const int index = argc > 1 ? std::atoi(argv[1]) : 0;
  const size_t nbytes = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256) << 20;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 9;
  Runtime& rt = Runtime::get();
  if (rt.deviceCount() == 0) {
    std::fprintf(stderr, "no OpenCL device: %s\n", rt.discoveryError().c_str());
    return 1;
  }
  Device& dev = rt.device(index);
  std::printf("device: %s | %s | driver %s | %s\n", dev.info().name.c_str(),
              dev.info().platform_name.c_str(), dev.info().driver_version.c_str(),
              dev.info().opencl_c_version.c_str());
  cl_command_queue q = dev.queue(0);
  cl_int err = CL_SUCCESS;
  Mem ra(clCreateBuffer(dev.context(), CL_MEM_READ_WRITE, nbytes, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  Mem rb(clCreateBuffer(dev.context(), CL_MEM_READ_WRITE, nbytes, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  DeviceAllocator alloc(dev);
  void* pa = alloc.allocate(nbytes, 0);
  void* pb = alloc.allocate(nbytes, 0);
  BufferRef a = alloc.resolve(pa), b = alloc.resolve(pb);
  std::vector<char> host(nbytes, 1);
  for (cl_mem m : {ra.get(), rb.get(), a.mem, b.mem})
    OCL_CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, std::min(nbytes, size_t(1) << 20), host.data(),
                                   0, nullptr, nullptr));
  OCL_CHECK(
      clEnqueueWriteBuffer(q, a.mem, CL_TRUE, a.offset, nbytes, host.data(), 0, nullptr, nullptr));
  OCL_CHECK(
      clEnqueueWriteBuffer(q, ra.get(), CL_TRUE, 0, nbytes, host.data(), 0, nullptr, nullptr));
  const float pattern = 0.f;
  struct Row {
    const char* name;
    double raw, ours;
  };
  std::vector<Row> rows;
  rows.push_back({"host->device",
                  medianSeconds(reps,
                                [&] {
                                  OCL_CHECK(clEnqueueWriteBuffer(q, ra.get(), CL_TRUE, 0, nbytes,
                                                                 host.data(), 0, nullptr, nullptr));
                                }),
                  medianSeconds(reps, [&] {
                    OCL_CHECK(clEnqueueWriteBuffer(q, a.mem, CL_TRUE, a.offset, nbytes, host.data(),
                                                   0, nullptr, nullptr));
                  })});
  rows.push_back({"device->host",
                  medianSeconds(reps,
                                [&] {
                                  OCL_CHECK(clEnqueueReadBuffer(q, ra.get(), CL_TRUE, 0, nbytes,
                                                                host.data(), 0, nullptr, nullptr));
                                }),
                  medianSeconds(reps, [&] {
                    OCL_CHECK(clEnqueueReadBuffer(q, a.mem, CL_TRUE, a.offset, nbytes, host.data(),
                                                  0, nullptr, nullptr));
                  })});
  rows.push_back({"device->device",
                  medianSeconds(reps,
                                [&] {
                                  OCL_CHECK(clEnqueueCopyBuffer(q, ra.get(), rb.get(), 0, 0, nbytes,
                                                                0, nullptr, nullptr));
                                  OCL_CHECK(clFinish(q));
                                }),
                  medianSeconds(reps, [&] {
                    OCL_CHECK(clEnqueueCopyBuffer(q, a.mem, b.mem, a.offset, b.offset, nbytes, 0,
                                                  nullptr, nullptr));
                    OCL_CHECK(clFinish(q));
                  })});
  rows.push_back({"fill",
                  medianSeconds(reps,
                                [&] {
                                  OCL_CHECK(clEnqueueFillBuffer(q, ra.get(), &pattern, 4, 0, nbytes,
                                                                0, nullptr, nullptr));
                                  OCL_CHECK(clFinish(q));
                                }),
                  medianSeconds(reps, [&] {
                    OCL_CHECK(clEnqueueFillBuffer(q, a.mem, &pattern, 4, a.offset, nbytes, 0,
                                                  nullptr, nullptr));
                    OCL_CHECK(clFinish(q));
                  })});
  std::printf("%zu MiB, median of %d\n%-16s %10s %10s %7s\n", nbytes >> 20, reps, "", "raw GB/s",
              "ours GB/s", "ratio");
  for (const Row& r : rows)
    std::printf("%-16s %10.2f %10.2f %7.2f\n", r.name, nbytes / r.raw / 1e9, nbytes / r.ours / 1e9,
                r.raw / r.ours);
  alloc.free(alloc.allocate(1 << 20, 0));
  const int n = 200000;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) alloc.free(alloc.allocate(1 << 20, 0));
  std::printf("allocator fast path (1 MiB alloc+free): %.3f us\n",
              std::chrono::duration<double>(Clock::now() - t0).count() / n * 1e6);
  alloc.free(pa);
  alloc.free(pb);
  return 0;
}
