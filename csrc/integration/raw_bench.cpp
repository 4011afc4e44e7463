// Raw OpenCL reference figures for benchmarks/runtime.py: the same transfers and kernels that
// torch-ocl performs, issued directly against OpenCL with no framework in between, so that the
// benchmark can print our figures as ratios of the device's own limits measured in one run.
#include <torch/extension.h>

#include "runtime/cl_include.h"  // before CLBlast: pins the OpenCL API level (1.2)

#include <clblast_c.h>

#include "aten/launch.h"
#include "aten/linalg.h"
#include "integration/state.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace py = pybind11;

namespace torch_ocl {
namespace {

using Clock = std::chrono::steady_clock;

const char* kRawFillSource = R"CLC(
__kernel void raw_fill(__global float* p, float v, long n) {
  long i = get_global_id(0);
  if (i < n) p[i] = v;
}
__kernel void raw_add(__global float* x, __global const float* y, long n) {
  long i = get_global_id(0);
  if (i < n) x[i] = x[i] + y[i];
}
__kernel void raw_copy(__global const float* src, __global float* dst, long n) {
  long i = get_global_id(0);
  if (i < n) dst[i] = src[i];
}
)CLC";

struct RawFill {
  rt::Program program;
  rt::Kernel kernel;
};

RawFill buildRawFill(rt::Device& dev, const char* name = "raw_fill") {
  RawFill r;
  cl_int err = CL_SUCCESS;
  cl_context ctx = dev.context();
  r.program = rt::Program(clCreateProgramWithSource(ctx, 1, &kRawFillSource, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateProgramWithSource");
  cl_device_id id = dev.id();
  OCL_CHECK(clBuildProgram(r.program.get(), 1, &id, "", nullptr, nullptr));
  r.kernel = rt::Kernel(clCreateKernel(r.program.get(), name, &err));
  OCL_CHECK_ERR(err, "clCreateKernel");
  return r;
}

void launchRawFill(rt::Device& dev, cl_command_queue q, RawFill& f, cl_mem buf, cl_long n) {
  float v = 1.5f;
  OCL_CHECK(clSetKernelArg(f.kernel.get(), 0, sizeof(cl_mem), &buf));
  OCL_CHECK(clSetKernelArg(f.kernel.get(), 1, sizeof(float), &v));
  OCL_CHECK(clSetKernelArg(f.kernel.get(), 2, sizeof(cl_long), &n));
  const size_t local = std::min<size_t>(256, dev.info().max_work_group_size);
  size_t global = (static_cast<size_t>(n) + local - 1) / local * local;
  OCL_CHECK(
      clEnqueueNDRangeKernel(q, f.kernel.get(), 1, nullptr, &global, &local, 0, nullptr, nullptr));
}

// A plain float copy kernel, one work item per element: the bandwidth an OpenCL kernel reaches on
// this device (CPU drivers run clEnqueueCopyBuffer as a memcpy, which kernels cannot match).
void launchRawCopy(rt::Device& dev, cl_command_queue q, RawFill& f, cl_mem src, cl_mem dst,
                   cl_long n) {
  OCL_CHECK(clSetKernelArg(f.kernel.get(), 0, sizeof(cl_mem), &src));
  OCL_CHECK(clSetKernelArg(f.kernel.get(), 1, sizeof(cl_mem), &dst));
  OCL_CHECK(clSetKernelArg(f.kernel.get(), 2, sizeof(cl_long), &n));
  const size_t local = std::min<size_t>(256, dev.info().max_work_group_size);
  size_t global = (static_cast<size_t>(n) + local - 1) / local * local;
  OCL_CHECK(
      clEnqueueNDRangeKernel(q, f.kernel.get(), 1, nullptr, &global, &local, 0, nullptr, nullptr));
}

// Seconds per repetition of `kind` on `nbytes`: h2d, d2h, d2d (clEnqueueCopyBuffer),
// copy_kernel (a plain float copy kernel), fill_kernel (a plain float fill kernel), fill_buffer
// (clEnqueueFillBuffer).
std::vector<double> rawTransfer(int index, const std::string& kind, size_t nbytes, int reps) {
  rt::Device& dev = device(static_cast<c10::DeviceIndex>(index));
  std::vector<double> times;
  OCL_TRY
  cl_int err = CL_SUCCESS;
  cl_context ctx = dev.context();
  cl_command_queue q = dev.queue(0);
  rt::Mem a(clCreateBuffer(ctx, CL_MEM_READ_WRITE, nbytes, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  rt::Mem b(clCreateBuffer(ctx, CL_MEM_READ_WRITE, nbytes, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  std::vector<char> host(nbytes, 1);
  RawFill fill;
  if (kind == "fill_kernel") fill = buildRawFill(dev);
  if (kind == "copy_kernel") fill = buildRawFill(dev, "raw_copy");
  const float pattern = 0.f;
  auto once = [&] {
    if (kind == "h2d") {
      OCL_CHECK(
          clEnqueueWriteBuffer(q, a.get(), CL_TRUE, 0, nbytes, host.data(), 0, nullptr, nullptr));
    } else if (kind == "d2h") {
      OCL_CHECK(
          clEnqueueReadBuffer(q, a.get(), CL_TRUE, 0, nbytes, host.data(), 0, nullptr, nullptr));
    } else if (kind == "d2d") {
      OCL_CHECK(clEnqueueCopyBuffer(q, a.get(), b.get(), 0, 0, nbytes, 0, nullptr, nullptr));
      OCL_CHECK(clFinish(q));
    } else if (kind == "copy_kernel") {
      launchRawCopy(dev, q, fill, a.get(), b.get(), static_cast<cl_long>(nbytes / 4));
      OCL_CHECK(clFinish(q));
    } else if (kind == "fill_kernel") {
      launchRawFill(dev, q, fill, a.get(), static_cast<cl_long>(nbytes / 4));
      OCL_CHECK(clFinish(q));
    } else if (kind == "fill_buffer") {
      OCL_CHECK(clEnqueueFillBuffer(q, a.get(), &pattern, 4, 0, nbytes, 0, nullptr, nullptr));
      OCL_CHECK(clFinish(q));
    } else {
      TORCH_CHECK_VALUE(false, "unknown raw benchmark kind '", kind, "'");
    }
  };
  // Fill both buffers first: reading never-written memory can hit the zero page on CPU drivers
  // and would inflate the raw figure.
  OCL_CHECK(clEnqueueWriteBuffer(q, a.get(), CL_TRUE, 0, nbytes, host.data(), 0, nullptr, nullptr));
  OCL_CHECK(clEnqueueWriteBuffer(q, b.get(), CL_TRUE, 0, nbytes, host.data(), 0, nullptr, nullptr));
  once();  // warm up: kernel compile at first enqueue
  OCL_CHECK(clFinish(q));
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    once();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  OCL_CATCH
  return times;
}

// Seconds per one-element fill, enqueued back to back then finished: kind "kernel" launches a
// fill kernel, "fill_buffer" issues clEnqueueFillBuffer (what fill_ uses on contiguous tensors).
double rawSmallFill(int index, const std::string& kind, int launches) {
  rt::Device& dev = device(static_cast<c10::DeviceIndex>(index));
  double per = 0;
  OCL_TRY
  cl_int err = CL_SUCCESS;
  rt::Mem a(clCreateBuffer(dev.context(), CL_MEM_READ_WRITE, 4096, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  RawFill fill = buildRawFill(dev);
  cl_command_queue q = dev.queue(0);
  const float pattern = 1.f;
  auto once = [&] {
    if (kind == "kernel") {
      launchRawFill(dev, q, fill, a.get(), 1);
    } else if (kind == "fill_buffer") {
      OCL_CHECK(clEnqueueFillBuffer(q, a.get(), &pattern, 4, 0, 4, 0, nullptr, nullptr));
    } else {
      TORCH_CHECK_VALUE(false, "unknown small-fill kind '", kind, "'");
    }
  };
  once();
  OCL_CHECK(clFinish(q));
  auto t0 = Clock::now();
  for (int i = 0; i < launches; ++i) once();
  OCL_CHECK(clFinish(q));
  per = std::chrono::duration<double>(Clock::now() - t0).count() / launches;
  OCL_CATCH
  return per;
}

const char* kRawEmptySource = R"CLC(
__kernel void raw_empty(__global float* p) {}
)CLC";

// Launch latency of an empty kernel (one work group of one item) straight on OpenCL.
// kind "throughput": seconds per launch when `launches` are enqueued back to back and then
// finished (what a stream of small ops costs); kind "roundtrip": median seconds of one launch
// followed by clFinish (what a host sync after one small op costs).
double rawLaunchLatency(int index, const std::string& kind, int launches) {
  rt::Device& dev = device(static_cast<c10::DeviceIndex>(index));
  double result = 0;
  OCL_TRY
  TORCH_CHECK_VALUE(kind == "throughput" || kind == "roundtrip", "unknown launch kind '", kind,
                    "' (expected 'throughput' or 'roundtrip')");
  TORCH_CHECK_VALUE(launches > 0, "launches must be positive, got ", launches);
  cl_int err = CL_SUCCESS;
  cl_context ctx = dev.context();
  rt::Mem a(clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  rt::Program program(clCreateProgramWithSource(ctx, 1, &kRawEmptySource, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateProgramWithSource");
  cl_device_id id = dev.id();
  OCL_CHECK(clBuildProgram(program.get(), 1, &id, "", nullptr, nullptr));
  rt::Kernel kernel(clCreateKernel(program.get(), "raw_empty", &err));
  OCL_CHECK_ERR(err, "clCreateKernel");
  cl_mem buf = a.get();
  OCL_CHECK(clSetKernelArg(kernel.get(), 0, sizeof(cl_mem), &buf));
  cl_command_queue q = dev.queue(0);
  const size_t one = 1;
  auto launch = [&] {
    OCL_CHECK(clEnqueueNDRangeKernel(q, kernel.get(), 1, nullptr, &one, &one, 0, nullptr, nullptr));
  };
  launch();  // first enqueue may finish the compile
  OCL_CHECK(clFinish(q));
  if (kind == "throughput") {
    auto t0 = Clock::now();
    for (int i = 0; i < launches; ++i) launch();
    OCL_CHECK(clFinish(q));
    result = std::chrono::duration<double>(Clock::now() - t0).count() / launches;
  } else {
    std::vector<double> times;
    times.reserve(launches);
    for (int i = 0; i < launches; ++i) {
      auto t0 = Clock::now();
      launch();
      OCL_CHECK(clFinish(q));
      times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    result = times[times.size() / 2];
  }
  OCL_CATCH
  return result;
}

// Seconds per op of a dependent chain of `ops` in-place float adds (x = x + y) of n elements,
// enqueued back to back on the default stream and then finished: the raw reference for a chain
// of small torch ops. Median of `reps` chains. plain_queue: on a queue of its own created without
// CL_QUEUE_PROFILING_ENABLE (what profiling costs the driver per command).
double rawAddChain(int index, int64_t n, int ops, int reps, bool plain_queue) {
  rt::Device& dev = device(static_cast<c10::DeviceIndex>(index));
  TORCH_CHECK_VALUE(n > 0 && ops > 0 && reps > 0,
                    "_raw_add_chain: n, ops and reps must be positive");
  std::vector<double> times;
  OCL_TRY
  cl_int err = CL_SUCCESS;
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  rt::Mem x(clCreateBuffer(dev.context(), CL_MEM_READ_WRITE, bytes, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  rt::Mem y(clCreateBuffer(dev.context(), CL_MEM_READ_WRITE, bytes, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  RawFill add = buildRawFill(dev, "raw_add");
  rt::Queue own;
  if (plain_queue) {
    own = rt::Queue(clCreateCommandQueue(dev.context(), dev.id(), 0, &err));
    OCL_CHECK_ERR(err, "clCreateCommandQueue");
  }
  cl_command_queue q = plain_queue ? own.get() : dev.queue(0);
  const float zero = 0.f;
  OCL_CHECK(clEnqueueFillBuffer(q, x.get(), &zero, 4, 0, bytes, 0, nullptr, nullptr));
  OCL_CHECK(clEnqueueFillBuffer(q, y.get(), &zero, 4, 0, bytes, 0, nullptr, nullptr));
  const size_t local = std::min<size_t>(256, dev.info().max_work_group_size);
  const size_t global = (static_cast<size_t>(n) + local - 1) / local * local;
  auto once = [&] {
    // Arguments are set per launch, as a framework must (the kernel object is shared).
    cl_mem xm = x.get(), ym = y.get();
    cl_long nn = n;
    OCL_CHECK(clSetKernelArg(add.kernel.get(), 0, sizeof(cl_mem), &xm));
    OCL_CHECK(clSetKernelArg(add.kernel.get(), 1, sizeof(cl_mem), &ym));
    OCL_CHECK(clSetKernelArg(add.kernel.get(), 2, sizeof(cl_long), &nn));
    OCL_CHECK(clEnqueueNDRangeKernel(q, add.kernel.get(), 1, nullptr, &global, &local, 0, nullptr,
                                     nullptr));
  };
  once();  // first enqueue compiles for this local size
  OCL_CHECK(clFinish(q));
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < ops; ++i) once();
    OCL_CHECK(clFinish(q));
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / ops);
  }
  OCL_CATCH
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// Nanoseconds per call of the per-launch lookups, each `reps` times on `t` (an ocl tensor):
// "check_index" (what device(idx) did on every call before its fast path), "device",
// "resolve_checked" (the allocator's locked, checked block lookup), "resolve_ptr" (what launches
// use), "program_hit" (a program-cache hit), "kernel" (this thread's cl_kernel of a program).
py::dict hotPathCosts(const at::Tensor& t, int reps) {
  TORCH_CHECK_VALUE(t.device().type() == c10::DeviceType::PrivateUse1 && t.numel() > 0,
                    "_hot_path_costs expects a non-empty ocl tensor");
  TORCH_CHECK_VALUE(reps > 0, "_hot_path_costs: reps must be positive");
  const c10::DeviceIndex idx = t.device().index();
  const void* ptr = t.const_data_ptr();
  static const char family = 0;
  cl_program prog = programs(idx).get({&family, 0}, [] {
    return rt::ProgramSource{"hot_path_probe", kRawEmptySource, ""};
  });
  py::dict out;
  auto time = [&](const char* name, auto&& fn) {
    uintptr_t sink = 0;
    auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) sink += reinterpret_cast<uintptr_t>(fn());
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / reps;
    out[name] = ns + static_cast<double>(sink & 0);  // keeps fn() from being optimised away
  };
  OCL_TRY
  time("check_index", [&] {
    checkIndex(idx);
    return static_cast<void*>(nullptr);
  });
  time("device", [&] { return static_cast<void*>(&device(idx)); });
  time("resolve_checked", [&] { return static_cast<void*>(allocator(idx).resolve(ptr).mem); });
  time("resolve_ptr", [&] { return static_cast<void*>(resolvePtr(ptr).mem); });
  time("program_hit", [&] {
    return static_cast<void*>(programs(idx).get({&family, 0}, [] {
      return rt::ProgramSource{"hot_path_probe", kRawEmptySource, ""};
    }));
  });
  time("kernel", [&] { return static_cast<void*>(programs(idx).kernel(prog, "raw_empty")); });
  OCL_CATCH
  return out;
}

// Seconds per allocate+free pair of a cached block straight on the caching allocator.
double allocatorFastPath(int index, size_t nbytes, int reps) {
  rt::DeviceAllocator& a = allocator(static_cast<c10::DeviceIndex>(index));
  double per = 0;
  OCL_TRY
  a.free(a.allocate(nbytes, 0));  // make sure the block is cached
  auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) a.free(a.allocate(nbytes, 0));
  per = std::chrono::duration<double>(Clock::now() - t0).count() / reps;
  OCL_CATCH
  return per;
}

// Seconds per repetition of out = a @ b through CLBlast SGEMM directly on the tensors'
// (cl_mem, offset), with no framework in between: the reference for torch.mm. One warm-up call
// first (CLBlast compiles its kernels then); each timed repetition is finished before its clock
// stops. Takes the same process-wide CLBlast lock as torch.mm.
std::vector<double> rawSgemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out,
                             int reps) {
  for (const at::Tensor* t : {&a, &b, &out}) {
    TORCH_CHECK_VALUE(t->device().type() == c10::DeviceType::PrivateUse1,
                      "_raw_sgemm expects ocl tensors, got one on ", t->device());
    TORCH_CHECK_TYPE(t->scalar_type() == at::kFloat, "_raw_sgemm expects float32 tensors, got ",
                     t->scalar_type());
    TORCH_CHECK_VALUE(t->dim() == 2 && t->is_contiguous(),
                      "_raw_sgemm expects contiguous 2-D tensors");
  }
  aten::checkSameDevice({a, b, out});
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  TORCH_CHECK_VALUE(b.size(0) == k && out.size(0) == n && out.size(1) == m,
                    "_raw_sgemm: shapes do not match for out = a @ b: a ", a.sizes(), ", b ",
                    b.sizes(), ", out ", out.sizes());
  TORCH_CHECK_VALUE(reps >= 1, "_raw_sgemm: reps must be positive");
  const c10::DeviceIndex idx = out.device().index();
  const rt::BufferRef A = aten::bufferOf(a), B = aten::bufferOf(b), C = aten::bufferOf(out);
  std::vector<double> times;
  OCL_TRY
  cl_command_queue q = currentQueue(idx);
  OCL_CHECK(clFinish(q));  // whatever produced the inputs is not ours to time
  auto once = [&] {
    std::lock_guard<std::mutex> lock(aten::clblastMutex());
    const CLBlastStatusCode st = CLBlastSgemm(
        CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, m, k, 1.f, A.mem,
        A.offset / 4, std::max<int64_t>(k, 1), B.mem, B.offset / 4, std::max<int64_t>(m, 1), 0.f,
        C.mem, C.offset / 4, std::max<int64_t>(m, 1), &q, nullptr);
    TORCH_CHECK(st == CLBlastSuccess, "CLBlastSgemm failed with status ", static_cast<int>(st));
    OCL_CHECK(clFinish(q));
  };
  once();
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    once();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  OCL_CATCH
  return times;
}

}  // namespace

void bindRawBench(py::module_& m) {
  m.def("_raw_transfer", &rawTransfer, py::arg("device"), py::arg("kind"), py::arg("nbytes"),
        py::arg("reps"), py::call_guard<py::gil_scoped_release>());
  m.def("_raw_small_fill", &rawSmallFill, py::arg("device"), py::arg("kind"), py::arg("launches"),
        py::call_guard<py::gil_scoped_release>());
  m.def("_raw_launch_latency", &rawLaunchLatency, py::arg("device"), py::arg("kind"),
        py::arg("launches"), py::call_guard<py::gil_scoped_release>());
  m.def("_raw_add_chain", &rawAddChain, py::arg("device"), py::arg("n"), py::arg("ops"),
        py::arg("reps"), py::arg("plain_queue") = false, py::call_guard<py::gil_scoped_release>());
  m.def("_hot_path_costs", &hotPathCosts, py::arg("tensor"), py::arg("reps"));
  m.def("_allocator_fast_path", &allocatorFastPath, py::arg("device"), py::arg("nbytes"),
        py::arg("reps"), py::call_guard<py::gil_scoped_release>());
  m.def("_raw_sgemm", &rawSgemm, py::arg("a"), py::arg("b"), py::arg("out"), py::arg("reps"),
        py::call_guard<py::gil_scoped_release>());
}

}  // namespace torch_ocl
