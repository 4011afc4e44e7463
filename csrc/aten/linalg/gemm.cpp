// The matrix engine (see gemm.h): one entry point, four providers, chosen per device and dtype.
#include "aten/gemm.h"

#include <ATen/ATen.h>
#include <clblast_c.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/linalg.h"
#include "aten/linalg/gemm_host_epilogue.h"
#include "aten/linalg/gemm_tuning.h"
#include "integration/command_names.h"
#include "runtime/driver_threads.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace torch_ocl::aten {

const char* gemmProviderName(GemmProvider p) {
  switch (p) {
    case GemmProvider::kAuto:
      return "auto";
    case GemmProvider::kHostBlas:
      return "host_blas";
    case GemmProvider::kCpuTile:
      return "cpu_tile";
    case GemmProvider::kClBlast:
      return "clblast";
    case GemmProvider::kTiled:
      return "tiled";
  }
  return "?";
}

GemmProvider parseGemmProvider(const std::string& name) {
  for (GemmProvider p : {GemmProvider::kAuto, GemmProvider::kHostBlas, GemmProvider::kCpuTile,
                         GemmProvider::kClBlast, GemmProvider::kTiled})
    if (name == gemmProviderName(p)) return p;
  TORCH_CHECK_VALUE(false, "unknown GEMM provider '", name,
                    "' (expected auto, host_blas, cpu_tile, clblast or tiled)");
}

namespace {

// ---- choice ------------------------------------------------------------------------------------

std::atomic<GemmProvider>& forced() {
  static std::atomic<GemmProvider> f{[] {
    const char* env = std::getenv("TORCH_OCL_GEMM");
    if (!env || !*env) return GemmProvider::kAuto;
    try {
      return parseGemmProvider(env);
    } catch (const c10::Error&) {
      TORCH_WARN("torch-ocl: ignoring TORCH_OCL_GEMM=", env,
                 " (expected auto, host_blas, cpu_tile, clblast or tiled)");
      return GemmProvider::kAuto;
    }
  }()};
  return f;
}

thread_local GemmProvider t_last = GemmProvider::kAuto;

// ---- host BLAS (OpenBLAS), loaded privately ----------------------------------------------------

// CBLAS enums (cblas.h): row-major, no transpose, transpose.
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                         int, double, double*, int);
// cblas_cgemm / cblas_zgemm: alpha and beta by pointer, matrices as void*.
using CgemmFn = void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*,
                         int, const void*, void*, int);

// The CPUs this process may run on, read when the host BLAS loads (before any driver pins).
cpu_set_t& processCpus() {
  static cpu_set_t set = [] {
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof(s), &s) != 0) CPU_ZERO(&s);
    return s;
  }();
  return set;
}

struct HostBlas {
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  CgemmFn cgemm = nullptr, zgemm = nullptr;  // optional: complex runs on CLBlast without them
  HostBlasInfo info;
};

// The vector width of the kernels an OpenBLAS core name stands for: the cores with AVX-512 SGEMM
// kernels, and every other one (Haswell, Zen, Sandybridge, ...: AVX2 or narrower). OpenBLAS 0.3.21
// (Debian 12) has no AVX-512 core for AMD: on a Zen 5 EPYC it picks Haswell.
int openblasVectorBits(const std::string& core) {
  if (core.empty()) return 0;
  for (const char* wide : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (core == wide) return 512;
  return 256;
}

// dlopen with RTLD_LOCAL | RTLD_DEEPBIND: libtorch_cpu exports its own sgemm_ (and maybe
// cblas_*), and the library's internal calls must bind to itself, never to those. The handle is
// kept for the life of the process: queued native kernels may still call into it at exit.
const HostBlas& hostBlas() {
  static const HostBlas blas = [] {
    HostBlas h;
    std::vector<std::string> names;
    if (const char* env = std::getenv("TORCH_OCL_HOST_BLAS"); env && *env) {
      if (std::string(env) == "0") {
        h.info.error = "disabled by TORCH_OCL_HOST_BLAS=0";
        return h;
      }
      names.emplace_back(env);
    } else {
      names = {"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0", "libblis.so.4"};
    }
    processCpus();
    std::string errors;
    for (const std::string& name : names) {
      void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!lib) {
        const char* e = dlerror();
        errors += (errors.empty() ? "" : "; ") + std::string(e ? e : name.c_str());
        continue;
      }
      auto s = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm"));
      auto d = reinterpret_cast<DgemmFn>(dlsym(lib, "cblas_dgemm"));
      if (!s || !d) {
        errors += (errors.empty() ? "" : "; ") + name + " has no cblas_sgemm/cblas_dgemm";
        dlclose(lib);
        continue;
      }
      h.sgemm = s, h.dgemm = d;
      h.cgemm = reinterpret_cast<CgemmFn>(dlsym(lib, "cblas_cgemm"));
      h.zgemm = reinterpret_cast<CgemmFn>(dlsym(lib, "cblas_zgemm"));
      h.info.available = true;
      h.info.library = name;
      Dl_info where{};
      if (dladdr(reinterpret_cast<void*>(s), &where) && where.dli_fname)
        h.info.library = where.dli_fname;
      if (auto cfg = reinterpret_cast<const char* (*)()>(dlsym(lib, "openblas_get_config")))
        h.info.config = cfg();
      if (auto core = reinterpret_cast<const char* (*)()>(dlsym(lib, "openblas_get_corename"))) {
        const char* name = core();
        h.info.corename = name ? name : "";
        h.info.vector_bits = openblasVectorBits(h.info.corename);
      }
      // One BLAS thread per core: the call runs on one of the driver's worker threads while the
      // queue waits for it, so the driver's other workers are idle meanwhile.
      if (auto set = reinterpret_cast<void (*)(int)>(dlsym(lib, "openblas_set_num_threads"))) {
        int threads = 0;
        if (const char* env = std::getenv("OPENBLAS_NUM_THREADS"); env && *env)
          threads = std::atoi(env);
        if (threads <= 0) threads = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
        set(threads);
      }
      if (auto get = reinterpret_cast<int (*)()>(dlsym(lib, "openblas_get_num_threads")))
        h.info.threads = get();
      return h;
    }
    h.info.error = "no host BLAS found (" + errors + "); install libopenblas0";
    return h;
  }();
  return blas;
}

bool fitsInt(std::initializer_list<int64_t> v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x >= 0 && x <= INT_MAX; });
}

bool deviceCanHostBlas(c10::DeviceIndex idx) {
  const rt::DeviceInfo& info = device(idx).info();
  return info.native_kernel && info.host_unified_memory && hostBlas().info.available;
}

bool isCpuDevice(c10::DeviceIndex idx) {
  return (device(idx).info().type & CL_DEVICE_TYPE_CPU) != 0;
}

// -1: measured from the library and the device; 0 / 1: as if the BLAS were as wide / narrower
// (TORCH_OCL_GEMM_NARROW_BLAS, or tests).
std::atomic<int>& narrowBlasOverride() {
  static std::atomic<int> v{[] {
    const char* env = std::getenv("TORCH_OCL_GEMM_NARROW_BLAS");
    if (env && std::string(env) == "0") return 0;
    if (env && std::string(env) == "1") return 1;
    return -1;
  }()};
  return v;
}
// The device's native float vector in bits (CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: 16 floats on
// PoCL with AVX-512), asked once per device. Read on every float32 product that reaches the
// shape rule: a relaxed atomic per device, no lock (two threads asking first both ask the driver
// and store the same value).
int deviceVectorBits(c10::DeviceIndex idx) {
  static std::array<std::atomic<int>, 128> bits{};  // bits + 1; 0: not asked yet
  const size_t i = static_cast<size_t>(static_cast<uint8_t>(idx)) % bits.size();
  int v = bits[i].load(std::memory_order_relaxed);
  if (v == 0) {
    cl_uint w = 0;
    if (clGetDeviceInfo(device(idx).id(), CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof(w), &w,
                        nullptr) != CL_SUCCESS)
      w = 0;
    v = static_cast<int>(w) * 32 + 1;
    bits[i].store(v, std::memory_order_relaxed);
  }
  return v - 1;
}

// A large cpu_tile product on a CPU driver whose workers run under SCHED_BATCH (driver_threads.h)
// runs with them under SCHED_OTHER: set by the enqueuing thread before its launch wakes them,
// restored by a native kernel queued right after it. Under SCHED_BATCH the second worker, woken
// for the product, often waited for its core until the first one had done the product alone
// (worker CPU 59 % / 18 % on 64x784 @ 784x512 with the other core busy). Measured on 2 shared
// cores, main vs this, interleaved (GFLOP/s, synchronised calls): 512^3 133 -> 138-221, 64x784 @
// 784x512 119-124 -> 158-178, 64x512 @ 512x512 122-125 -> 128-150; the MLP's Adam step and
// inference unchanged within noise. Not for products below this many multiply-adds (the syscalls
// and the extra command cost more than a late worker there), and not for the host BLAS (its
// native kernel runs on one worker; switching there slowed back-to-back (64x512)^T @ 64x784 by
// 20-40 %). Tried and dropped: switching from native kernels queued around the product (too late
// for the wake-up, two more commands: back to back 512^3 fell 160 -> 120), and keeping the
// workers switched while any switched product was queued (the Python thread was then preempted at
// every launch of a model step: MLP inference 1.1 -> 1.3-1.9 ms).
// TORCH_OCL_GEMM_WORKER_SWITCH=0 never switches.
constexpr double kWorkerSwitchMinWork = 4194304.0;  // 161^3

// (Not while q captures a graph: the restoring command would only run at replay.)
bool workersToNormal(c10::DeviceIndex idx, cl_command_queue q, double work) {
  static const bool enabled = [] {
    const char* env = std::getenv("TORCH_OCL_GEMM_WORKER_SWITCH");
    return !(env && std::string(env) == "0");
  }();
  if (!enabled || work < kWorkerSwitchMinWork || !rt::driver_threads::workersSwitchable())
    return false;
  const rt::DeviceInfo& info = device(idx).info();
  if (!(info.type & CL_DEVICE_TYPE_CPU) || !info.native_kernel) return false;
  if (rt::capture::active() && rt::capture::graphOf(q)) return false;
  rt::driver_threads::setWorkersBatch(false);
  return true;
}

void CL_CALLBACK workersBackToBatch(void*) {
  rt::driver_threads::setWorkersBatch(true);
}

// Switches the workers for what the scope enqueues, then queues the restoring native kernel
// behind it (restoring at once if that cannot be queued).
class WorkersNormalScope {
 public:
  WorkersNormalScope(c10::DeviceIndex idx, cl_command_queue q, double work)
      : q_(q), on_(workersToNormal(idx, q, work)) {}
  ~WorkersNormalScope() {
    if (!on_) return;
    char unused = 0;
    if (rt::enqueueNativeKernel(q_, workersBackToBatch, &unused, sizeof(unused), 0, nullptr,
                                nullptr, 0, nullptr, nullptr) != CL_SUCCESS)
      rt::driver_threads::setWorkersBatch(true);
  }
  WorkersNormalScope(const WorkersNormalScope&) = delete;
  WorkersNormalScope& operator=(const WorkersNormalScope&) = delete;

 private:
  cl_command_queue q_;
  bool on_;
};

bool supports(GemmProvider p, c10::DeviceIndex idx, c10::ScalarType t) {
  switch (p) {
    case GemmProvider::kHostBlas:
      return ((t == at::kFloat || t == at::kDouble) ||
              (t == at::kComplexFloat && hostBlas().cgemm) ||
              (t == at::kComplexDouble && hostBlas().zgemm)) &&
             deviceCanHostBlas(idx);
    case GemmProvider::kCpuTile:
      return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
    case GemmProvider::kClBlast:
      return t == at::kFloat || t == at::kDouble || c10::isComplexType(t);
    case GemmProvider::kTiled:
      return gemmSupports(t) && !c10::isComplexType(t);
    case GemmProvider::kAuto:
      return false;
  }
  return false;
}

GemmProvider autoProvider(c10::DeviceIndex idx, c10::ScalarType t) {
  if (supports(GemmProvider::kHostBlas, idx, t)) return GemmProvider::kHostBlas;
  if (isCpuDevice(idx) && supports(GemmProvider::kCpuTile, idx, t)) return GemmProvider::kCpuTile;
  if (t == at::kFloat || t == at::kDouble || c10::isComplexType(t)) return GemmProvider::kClBlast;
  return GemmProvider::kTiled;
}

// ---- operands ----------------------------------------------------------------------------------

struct BlasOperand {
  at::Tensor tensor;  // keeps a contiguous copy alive when one was needed
  bool trans = false;
  size_t ld = 1;
  rt::BufferRef buf;
};

// A row-major view of a (rows x cols) matrix, or its transpose, without copying when the strides
// allow it. For 3-D (batched) operands the batch stride is tensor.stride(0).
BlasOperand blasOperand(const at::Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t s_row = t.stride(-2), s_col = t.stride(-1);
  BlasOperand op;
  if ((s_col == 1 || cols == 1) && (s_row >= std::max<int64_t>(1, cols) || rows == 1)) {
    op.tensor = t;
    op.ld = static_cast<size_t>(std::max<int64_t>({rows == 1 ? cols : s_row, cols, 1}));
  } else if ((s_row == 1 || rows == 1) && (s_col >= std::max<int64_t>(1, rows) || cols == 1)) {
    op.tensor = t;
    op.trans = true;
    op.ld = static_cast<size_t>(std::max<int64_t>({cols == 1 ? rows : s_col, rows, 1}));
  } else {
    op.tensor = t.contiguous();
    op.ld = static_cast<size_t>(std::max<int64_t>(cols, 1));
  }
  op.buf = bufferOf(op.tensor);
  return op;
}

// True when a BLAS can write out directly: row-major rows with a leading dimension >= cols, and
// batches that do not overlap.
bool blasWritable(const at::Tensor& out) {
  const int64_t rows = out.size(-2), cols = out.size(-1);
  const bool rows_ok = (out.stride(-1) == 1 || cols == 1) &&
                       (out.stride(-2) >= std::max<int64_t>(cols, 1) || rows == 1);
  if (out.dim() == 2) return rows_ok;
  return rows_ok && (out.size(0) == 1 || out.stride(0) >= rows * cols);
}

size_t ldcOf(const at::Tensor& out) {
  const int64_t n = out.size(-2), m = out.size(-1);
  return static_cast<size_t>(n == 1 ? std::max<int64_t>(m, 1)
                                    : std::max<int64_t>(out.stride(-2), 1));
}

int64_t batchStride(const BlasOperand& op) {
  return op.tensor.dim() == 3 ? op.tensor.stride(0) : 0;
}

// ---- provider: CLBlast -------------------------------------------------------------------------

void checkClBlast(CLBlastStatusCode status, const char* call) {
  if (status == CLBlastSuccess) return;
  if (status == CLBlastTempBufferAllocFailure || status == CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TORCH_CHECK_WITH(OutOfMemoryError, false, "OpenCL out of memory in ", call, " (CLBlast status ",
                     static_cast<int>(status), ")");
  TORCH_CHECK(false, call, " failed with CLBlast status ", static_cast<int>(status),
              status < 0 && status > -100 ? " (" + rt::clErrorName(status) + ")" : std::string());
}

// The CLBlast GEMM entry points of one element type, plain and strided-batched, with their names
// for the error messages.
template <typename Plain, typename Batched>
struct ClBlastGemmFns {
  Plain plain;
  const char* plain_name;
  Batched batched;
  const char* batched_name;
};
template <typename Plain, typename Batched>
ClBlastGemmFns<Plain, Batched> gemmFns(Plain p, const char* pn, Batched b, const char* bn) {
  return {p, pn, b, bn};
}
#define TORCH_OCL_CLBLAST_GEMM(X)                                                  \
  gemmFns(&CLBlast##X##gemm, "CLBlast" #X "gemm", &CLBlast##X##gemmStridedBatched, \
          "CLBlast" #X "gemmStridedBatched")
template <typename T>
auto clblastGemmFns() {
  if constexpr (std::is_same_v<T, float>) {
    return TORCH_OCL_CLBLAST_GEMM(S);
  } else if constexpr (std::is_same_v<T, double>) {
    return TORCH_OCL_CLBLAST_GEMM(D);
  } else if constexpr (std::is_same_v<T, cl_float2>) {
    return TORCH_OCL_CLBLAST_GEMM(C);
  } else {
    static_assert(std::is_same_v<T, cl_double2>,
                  "CLBlast GEMM: float, double, cl_float2, cl_double2");
    return TORCH_OCL_CLBLAST_GEMM(Z);
  }
}
#undef TORCH_OCL_CLBLAST_GEMM

// out (blasWritable) = alpha * a @ b + beta * out through CLBlast S/D/C/ZGEMM. T is float, double,
// cl_float2 or cl_double2; complex operands hold no conjugate bit (gemm resolves it first).
template <typename T>
void clblastGemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, T alpha, T beta) {
  const bool batched = out.dim() == 3;
  const int64_t n = out.size(-2), m = out.size(-1), k = a.size(-1);
  const int64_t batch = batched ? out.size(0) : 1;
  const BlasOperand A = blasOperand(a), B = blasOperand(b);
  const rt::BufferRef C = bufferOf(out);
  const size_t ldc = ldcOf(out);
  const auto ta = A.trans ? CLBlastTransposeYes : CLBlastTransposeNo;
  const auto tb = B.trans ? CLBlastTransposeYes : CLBlastTransposeNo;
  constexpr size_t es = sizeof(T);
  const auto fns = clblastGemmFns<T>();
  cl_command_queue q = currentQueue(out.device().index());
  refuseCapture(q, "a CLBlast GEMM (it enqueues by itself)");
  std::lock_guard<std::mutex> lock(clblastMutex());
  if (!batched) {
    checkClBlast(
        fns.plain(CLBlastLayoutRowMajor, ta, tb, n, m, k, alpha, A.buf.mem, A.buf.offset / es, A.ld,
                  B.buf.mem, B.buf.offset / es, B.ld, beta, C.mem, C.offset / es, ldc, &q, nullptr),
        fns.plain_name);
  } else {
    // Batched operands: the batch stride of a broadcast (expanded) operand is 0.
    checkClBlast(
        fns.batched(CLBlastLayoutRowMajor, ta, tb, n, m, k, alpha, A.buf.mem, A.buf.offset / es,
                    A.ld, batchStride(A), B.buf.mem, B.buf.offset / es, B.ld, batchStride(B), beta,
                    C.mem, C.offset / es, ldc, out.stride(0), batch, &q, nullptr),
        fns.batched_name);
  }
  afterLaunch(q);
}

// ---- provider: host BLAS through clEnqueueNativeKernel -----------------------------------------

// Host address of a buffer's storage on this device. PoCL 3.1 replaces the handles of a native
// kernel with host pointers in its own (sorted) order of the buffers, not in the order of
// args_mem_loc, so with two or more buffers the pointers can land in the wrong slots (seen here:
// A and C swapped, a segfault). A native kernel with a single buffer is unambiguous: the address
// of each cl_mem is learned that way once, into a slot that the GEMM's native kernel reads when
// it runs. The probe is enqueued ahead of the GEMM on the same in-order queue and never waited
// for (the first version waited for it on the host, which drained the whole stream at every
// segment a GEMM saw for the first time). The slot stays valid for the life of the process; the
// map entry is dropped when the driver destroys the object (its destructor callback), so a
// recycled handle is never mistaken for the old one.
class HostAddresses {
 public:
  // Filled by the probe (on a worker thread), read by the GEMM kernel queued after it.
  struct Slot {
    std::atomic<char*> ptr{nullptr};
  };
  static HostAddresses& get() {
    static HostAddresses* h = new HostAddresses();  // NOLINT: lives as long as the process
    return *h;
  }
  // The slot of mem's host address, with a probe queued on q ahead of what is enqueued next
  // when the address is not known yet (or was probed on another queue and has not arrived).
  const Slot* slotOf(cl_command_queue q, cl_mem mem) {
    Slot* slot = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(mem);
      if (it != map_.end()) {
        if (it->second.slot->ptr.load(std::memory_order_acquire) ||
            std::find(it->second.queues.begin(), it->second.queues.end(), q) !=
                it->second.queues.end())
          return it->second.slot;
        slot = it->second.slot;
        it->second.queues.push_back(q);
      } else {
        slots_.emplace_back();
        slot = &slots_.back();
        map_.emplace(mem, Entry{slot, {q}});
        OCL_CHECK(clSetMemObjectDestructorCallback(mem, &HostAddresses::forget, this));
      }
    }
    struct Probe {
      void* ptr;  // the handle, replaced by the driver
      Slot* slot;
    };
    Probe probe{mem, slot};
    const void* loc = &probe.ptr;
    OCL_CHECK(clEnqueueNativeKernel(
        q,
        [](void* p) {
          auto* pr = static_cast<Probe*>(p);
          pr->slot->ptr.store(static_cast<char*>(pr->ptr), std::memory_order_release);
        },
        &probe, sizeof(probe), 1, &mem, &loc, 0, nullptr, nullptr));
    probes_.fetch_add(1, std::memory_order_relaxed);
    return slot;
  }
  int64_t probes() const { return probes_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    Slot* slot;
    std::vector<cl_command_queue> queues;  // where a probe for it was queued
  };
  static void CL_CALLBACK forget(cl_mem mem, void* self) {
    auto* h = static_cast<HostAddresses*>(self);
    std::lock_guard<std::mutex> lock(h->mutex_);
    h->map_.erase(mem);
  }
  std::mutex mutex_;
  std::unordered_map<cl_mem, Entry> map_;
  std::deque<Slot> slots_;  // never shrinks: a queued kernel may still read a forgotten slot
  std::atomic<int64_t> probes_{0};
};

// A host address known when the native kernel runs: the slot's value plus a byte offset.
struct HostPtr {
  const HostAddresses::Slot* slot = nullptr;
  size_t offset = 0;
  char* get() const { return slot ? slot->ptr.load(std::memory_order_acquire) + offset : nullptr; }
};

// The argument block the driver copies: host addresses of the operands (bytes offsets added).
// The buffers also go in the native kernel's mem_list, so the driver keeps them alive and ordered
// with the queue; their slots (unused) are handles[].
struct HostGemmArgs {
  void* handles[5];
  HostPtr a, b, c, bias;
  HostPtr act_out;     // the activation's destination (null: C itself)
  int64_t s_act[2];    // its batch and row strides, elements
  int64_t sa, sb, sc;  // batch strides, elements
  int64_t sbias[3];    // bias strides (batch, row, column), elements; 0 where it broadcasts
  double bias_scale[2];
  GemmActivation act;
  int batch, n, m, k, lda, ldb, ldc, ta, tb;
  c10::ScalarType dtype;
  double alpha[2], beta[2];  // real and imaginary parts
  SgemmFn sgemm;
  DgemmFn dgemm;
  CgemmFn cgemm, zgemm;
};

// While the BLAS runs on the driver's worker thread, that thread may use every core: PoCL with
// POCL_AFFINITY=1 pins each worker to one core, and the BLAS's own threads, woken from there,
// were then often scheduled onto the same core (measured: half speed). Restores the mask after.
class WidenedAffinity {
 public:
  explicit WidenedAffinity(bool wanted) {
    if (!wanted) return;
    const cpu_set_t& all = processCpus();
    if (CPU_COUNT(&all) == 0) return;
    if (pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) != 0) return;
    if (CPU_EQUAL(&saved_, &all)) return;
    changed_ = pthread_setaffinity_np(pthread_self(), sizeof(all), &all) == 0;
  }
  ~WidenedAffinity() {
    if (changed_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }
  WidenedAffinity(const WidenedAffinity&) = delete;
  WidenedAffinity& operator=(const WidenedAffinity&) = delete;

 private:
  cpu_set_t saved_;
  bool changed_ = false;
};

// The epilogue's bias, before the BLAS call: C = beta * C + bias_scale * bias for one matrix
// (beta 0 ignores C), so that the BLAS then adds its product with beta = 1.
template <typename T>
void hostBiasPrepass(const HostGemmArgs& g, const char* bias_base, int i, T* C) {
  const T* bias = reinterpret_cast<const T*>(bias_base) + i * g.sbias[0];
  T scale, beta;
  if constexpr (c10::is_complex<T>::value) {
    using R = typename T::value_type;
    scale = T(static_cast<R>(g.bias_scale[0]), static_cast<R>(g.bias_scale[1]));
    beta = T(static_cast<R>(g.beta[0]), static_cast<R>(g.beta[1]));
  } else {
    scale = static_cast<T>(g.bias_scale[0]), beta = static_cast<T>(g.beta[0]);
  }
  const bool beta_zero = g.beta[0] == 0 && g.beta[1] == 0;
  const int64_t sm = g.sbias[1], sn = g.sbias[2];
  for (int r = 0; r < g.n; ++r) {
    T* c = C + static_cast<int64_t>(r) * g.ldc;
    const T* br = bias + r * sm;
    if (beta_zero) {
      for (int j = 0; j < g.m; ++j) c[j] = scale * br[j * sn];
    } else {
      for (int j = 0; j < g.m; ++j) c[j] = beta * c[j] + scale * br[j * sn];
    }
  }
}

// The epilogue's activation, right after the BLAS call (C is still in the caches).
// With act_out, C keeps the value before the activation and act_out receives it.
template <typename T>
void hostActivation(const HostGemmArgs& g, T* C, int i) {
  if constexpr (!c10::is_complex<T>::value) {
    if (g.act == GemmActivation::kNone) return;
    char* const dst = g.act_out.get();
    for (int r = 0; r < g.n; ++r) {
      T* c = C + static_cast<int64_t>(r) * g.ldc;
      if (dst) {
        T* d = reinterpret_cast<T*>(dst) + i * g.s_act[0] + r * g.s_act[1];
        std::copy(c, c + g.m, d);
        c = d;
      }
      if (g.act == GemmActivation::kRelu) hostReluRow(c, g.m);
      if (g.act == GemmActivation::kGelu) hostGeluRow(c, g.m);
    }
  }
}

void runHostGemm(const HostGemmArgs& g) {
  // A batch stride of 0 for C sums the products into it (gemmBatchSum): beta after the first.
  const bool sum = g.sc == 0 && g.batch > 1;
  char *const pa = g.a.get(), *const pb = g.b.get(), *const pc = g.c.get();
  const char* const pbias = g.bias.get();
  const bool pre = pbias != nullptr;
  const float alpha_c[2] = {static_cast<float>(g.alpha[0]), static_cast<float>(g.alpha[1])};
  for (int i = 0; i < g.batch; ++i) {
    const bool beta_one = (sum && i > 0) || pre;
    const double beta = beta_one ? 1.0 : g.beta[0];
    const double beta_z[2] = {beta, beta_one ? 0.0 : g.beta[1]};
    const float beta_c[2] = {static_cast<float>(beta_z[0]), static_cast<float>(beta_z[1])};
    if (g.dtype == at::kComplexFloat) {
      const auto* A = reinterpret_cast<const c10::complex<float>*>(pa) + i * g.sa;
      const auto* B = reinterpret_cast<const c10::complex<float>*>(pb) + i * g.sb;
      auto* C = reinterpret_cast<c10::complex<float>*>(pc) + i * g.sc;
      if (pre) hostBiasPrepass<c10::complex<float>>(g, pbias, i, C);
      g.cgemm(kCblasRowMajor, g.ta, g.tb, g.n, g.m, g.k, alpha_c, A, g.lda, B, g.ldb, beta_c, C,
              g.ldc);
      hostActivation<c10::complex<float>>(g, C, i);
    } else if (g.dtype == at::kComplexDouble) {
      const auto* A = reinterpret_cast<const c10::complex<double>*>(pa) + i * g.sa;
      const auto* B = reinterpret_cast<const c10::complex<double>*>(pb) + i * g.sb;
      auto* C = reinterpret_cast<c10::complex<double>*>(pc) + i * g.sc;
      if (pre) hostBiasPrepass<c10::complex<double>>(g, pbias, i, C);
      g.zgemm(kCblasRowMajor, g.ta, g.tb, g.n, g.m, g.k, g.alpha, A, g.lda, B, g.ldb, beta_z, C,
              g.ldc);
      hostActivation<c10::complex<double>>(g, C, i);
    } else if (g.dtype == at::kDouble) {
      const double* A = reinterpret_cast<const double*>(pa) + i * g.sa;
      const double* B = reinterpret_cast<const double*>(pb) + i * g.sb;
      double* C = reinterpret_cast<double*>(pc) + i * g.sc;
      if (pre) hostBiasPrepass<double>(g, pbias, i, C);
      g.dgemm(kCblasRowMajor, g.ta, g.tb, g.n, g.m, g.k, g.alpha[0], A, g.lda, B, g.ldb, beta, C,
              g.ldc);
      hostActivation<double>(g, C, i);
    } else {
      const float* A = reinterpret_cast<const float*>(pa) + i * g.sa;
      const float* B = reinterpret_cast<const float*>(pb) + i * g.sb;
      float* C = reinterpret_cast<float*>(pc) + i * g.sc;
      if (pre) hostBiasPrepass<float>(g, pbias, i, C);
      g.sgemm(kCblasRowMajor, g.ta, g.tb, g.n, g.m, g.k, static_cast<float>(g.alpha[0]), A, g.lda,
              B, g.ldb, static_cast<float>(beta), C, g.ldc);
      hostActivation<float>(g, C, i);
    }
  }
}

// OpenBLAS 0.3 runs a product of at most 65536 * 4 multiply-adds on the calling thread alone
// (interface/gemm.c: SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD), so widening the worker's
// mask there buys nothing and costs two affinity syscalls and often a migration per call.
constexpr double kBlasSingleThreadWork = 262144.0;

bool blasMayThread(const HostGemmArgs& g) {
  return hostBlas().info.threads != 1 &&
         static_cast<double>(g.n) * g.m * g.k > kBlasSingleThreadWork;
}

void CL_CALLBACK hostGemmKernel(void* p) {
  const auto& g = *static_cast<const HostGemmArgs*>(p);
  const WidenedAffinity widen(blasMayThread(g));
  runHostGemm(g);
}

// Products of gemmGroup in one native kernel, run in turn on the driver's worker.
constexpr int kMaxGroup = 8;
struct HostGemmGroupArgs {
  int count;
  HostGemmArgs calls[kMaxGroup];
};

void CL_CALLBACK hostGemmGroupKernel(void* p) {
  const auto& grp = *static_cast<const HostGemmGroupArgs*>(p);
  const WidenedAffinity widen(std::any_of(grp.calls, grp.calls + grp.count,
                                          [](const HostGemmArgs& g) { return blasMayThread(g); }));
  for (int i = 0; i < grp.count; ++i) runHostGemm(grp.calls[i]);
}

bool hostBlasShapeOk(const at::Tensor& out, const BlasOperand& A, const BlasOperand& B) {
  return fitsInt({out.size(-2), out.size(-1), A.tensor.size(-1), static_cast<int64_t>(A.ld),
                  static_cast<int64_t>(B.ld), static_cast<int64_t>(ldcOf(out)),
                  out.dim() == 3 ? out.size(0) : 1});
}

// out (blasWritable) = alpha * a @ b + beta * out, as a native kernel on out's current queue.
// With sum_batch > 0, out is one matrix and receives the sum of the sum_batch products.
// With an epilogue, the bias goes into C before the BLAS call (which then adds with beta 1) and the
// activation runs over C right after it, in the same native kernel.
// The argument block of one host-BLAS product on queue q; its buffers are added to mems (once
// each) and their handle slots in g.handles to locs.
void fillHostGemmArgs(HostGemmArgs& g, cl_command_queue q, const at::Tensor& out,
                      const BlasOperand& A, const BlasOperand& B, const c10::Scalar& alpha,
                      const c10::Scalar& beta, int64_t sum_batch, const GemmEpilogue& epi,
                      std::vector<cl_mem>& mems, std::vector<const void*>& locs) {
  TORCH_INTERNAL_ASSERT(sum_batch == 0 || epi.empty());
  const HostBlas& blas = hostBlas();
  const rt::BufferRef C = bufferOf(out);
  rt::BufferRef bias{};
  if (epi.bias.defined()) bias = bufferOf(epi.bias);
  int slot = 0;
  for (cl_mem m : {A.buf.mem, B.buf.mem, C.mem, bias.mem}) {
    if (!m || std::find(mems.begin(), mems.end(), m) != mems.end()) continue;
    g.handles[slot] = m;
    mems.push_back(m);
    locs.push_back(&g.handles[slot++]);
  }
  HostAddresses& host = HostAddresses::get();
  g.a = {host.slotOf(q, A.buf.mem), A.buf.offset};
  g.b = {host.slotOf(q, B.buf.mem), B.buf.offset};
  g.c = {host.slotOf(q, C.mem), C.offset};
  if (bias.mem) {
    g.bias = {host.slotOf(q, bias.mem), bias.offset};
    const at::Tensor& bt = epi.bias;
    g.sbias[0] = bt.dim() == 3 ? bt.stride(0) : 0;
    g.sbias[1] = bt.stride(-2), g.sbias[2] = bt.stride(-1);
    const c10::complex<double> s = epi.bias_scale.toComplexDouble();
    g.bias_scale[0] = s.real(), g.bias_scale[1] = s.imag();
  }
  g.act = epi.act;
  if (epi.act_out.defined()) {
    const rt::BufferRef D = bufferOf(epi.act_out);
    if (std::find(mems.begin(), mems.end(), D.mem) == mems.end()) {
      g.handles[slot] = D.mem;
      mems.push_back(D.mem);
      locs.push_back(&g.handles[slot++]);
    }
    g.act_out = {host.slotOf(q, D.mem), D.offset};
    g.s_act[0] = epi.act_out.dim() == 3 ? epi.act_out.stride(0) : 0;
    g.s_act[1] = epi.act_out.stride(-2);
  }
  g.sa = batchStride(A), g.sb = batchStride(B), g.sc = out.dim() == 3 ? out.stride(0) : 0;
  g.batch = static_cast<int>(out.dim() == 3 ? out.size(0) : 1);
  if (sum_batch > 0) g.batch = static_cast<int>(sum_batch), g.sc = 0;
  g.n = static_cast<int>(out.size(-2)), g.m = static_cast<int>(out.size(-1));
  g.k = static_cast<int>(A.tensor.size(-1));
  g.lda = static_cast<int>(A.ld), g.ldb = static_cast<int>(B.ld);
  g.ldc = static_cast<int>(ldcOf(out));
  g.ta = A.trans ? kCblasTrans : kCblasNoTrans, g.tb = B.trans ? kCblasTrans : kCblasNoTrans;
  g.dtype = out.scalar_type();
  const c10::complex<double> al = alpha.toComplexDouble(), be = beta.toComplexDouble();
  g.alpha[0] = al.real(), g.alpha[1] = al.imag(), g.beta[0] = be.real(), g.beta[1] = be.imag();
  g.sgemm = blas.sgemm, g.dgemm = blas.dgemm, g.cgemm = blas.cgemm, g.zgemm = blas.zgemm;
}

// out (blasWritable) = alpha * a @ b + beta * out, as a native kernel on out's current queue.
// With sum_batch > 0, out is one matrix and receives the sum of the sum_batch products.
// With an epilogue, the bias goes into C before the BLAS call (which then adds with beta 1) and the
// activation runs over C right after it, in the same native kernel.
void hostBlasGemm(const at::Tensor& out, const BlasOperand& A, const BlasOperand& B,
                  const c10::Scalar& alpha, const c10::Scalar& beta, int64_t sum_batch = 0,
                  const GemmEpilogue& epi = {}) {
  cl_command_queue q = currentQueue(out.device().index());
  HostGemmArgs g{};
  std::vector<cl_mem> mems;
  std::vector<const void*> locs;
  fillHostGemmArgs(g, q, out, A, B, alpha, beta, sum_batch, epi, mems, locs);
  ProfiledCommand pc(CommandKind::kKernel, command_names::kHostBlas);
  OCL_CHECK(rt::enqueueNativeKernel(q, hostGemmKernel, &g, sizeof(g),
                                    static_cast<cl_uint>(mems.size()), mems.data(), locs.data(), 0,
                                    nullptr, pc.event()));
  countLaunches(1);  // a kernel of the device (a native one), counted as the others are
  afterLaunch(q);
}

// ---- programs: tiled (gemm.cl) and cpu_tile (gemm_cpu.cl) --------------------------------------

constexpr int kTile = 16;
const char kTiledFamily = 0;
const char kCpuTileFamily = 0;

// Element strides of a [batch x] rows x cols operand, batch stride 0 for 2-D operands.
std::array<cl_long, 3> elemStrides(const at::Tensor& t) {
  return {t.dim() == 3 ? t.stride(0) : 0, t.stride(-2), t.stride(-1)};
}

void setScalarArg(cl_kernel kern, cl_uint& i, c10::ScalarType t, const c10::Scalar& v) {
  switch (t) {
    case at::kByte:
      return setArg(kern, i, static_cast<cl_uchar>(v.toLong()));
    case at::kChar:
      return setArg(kern, i, static_cast<cl_char>(v.toLong()));
    case at::kShort:
      return setArg(kern, i, static_cast<cl_short>(v.toLong()));
    case at::kInt:
      return setArg(kern, i, static_cast<cl_int>(v.toLong()));
    case at::kLong:
      return setArg(kern, i, static_cast<cl_long>(v.toLong()));
    case at::kDouble:
      return setArg(kern, i, v.toDouble());
    default:
      return setArg(kern, i, v.toFloat());
  }
}

// The epilogue variant of a program: bit 0 a bias, bits 1-2 the activation, bit 3 the activation
// stored to act_out (cpu_tile only).
uint64_t epilogueCode(const GemmEpilogue& e) {
  return (e.bias.defined() ? 1u : 0u) | (static_cast<uint64_t>(e.act) << 1) |
         (e.act_out.defined() ? 8u : 0u);
}

std::string epilogueName(uint64_t code) {
  std::string n;
  if (code & 1) n += "+bias";
  const auto act = static_cast<GemmActivation>((code >> 1) & 3);
  if (act == GemmActivation::kRelu) n += "+relu";
  if (act == GemmActivation::kGelu) n += "+gelu";
  if (code & 8) n += "+act_out";
  return n;
}

// ST, ACC, LOAD, STORE and the epilogue (EPI_BIAS, gemm_epi) for one dtype and variant.
std::string typeHeader(c10::ScalarType t, bool float_acc, uint64_t epi) {
  const bool reduced = t == at::kHalf || t == at::kBFloat16;
  const bool is_double = t == at::kDouble && !float_acc;
  std::string h = "typedef " + std::string(clStorageType(t)) + " ST;\n";
  h += "#define ST_IS_FLOAT " + std::string(t == at::kFloat ? "1" : "0") + "\n";
  h += "typedef " + std::string(reduced || float_acc ? "float" : clComputeType(t)) + " ACC;\n";
  h += "#define LOAD(p, i) (" + loadExpr(t, "(p)", "(i)") + ")\n";
  h += "#define STORE(p, i, v) " + storeStmt(t, "(p)", "(i)", "(v)") + "\n";
  h += "#define EPI_BIAS " + std::to_string(epi & 1) + "\n";
  h += "#define EPI_ACT " + std::to_string((epi >> 3) & 1) + "\n";
  h += "inline ACC gemm_epi(ACC v) {\n";
  const auto act = static_cast<GemmActivation>((epi >> 1) & 3);
  if (act != GemmActivation::kNone && t == at::kHalf) h += "  v = ocl_round_to_half(v);\n";
  if (act != GemmActivation::kNone && t == at::kBFloat16) h += "  v = ocl_round_to_bf16(v);\n";
  if (act == GemmActivation::kRelu) h += "  v = v < (ACC)0 ? (ACC)0 : v;  /* NaN stays */\n";
  if (act == GemmActivation::kGelu)
    h += is_double ? "  v = 0.5 * v * (1.0 + erf(v * M_SQRT1_2));\n"
                   : "  v = 0.5f * v * (1.0f + ocl_gelu_erf_float(v));\n";
  h += "  return v;\n}\n";
  // The vector store of cpu_tile (float32): the activation on float16 too. gelu is the eager
  // gelu kernel's formula (prelude.cl's ocl_gelu_erf, scalar and instantiated for float16), so
  // that a fused product + gelu gives eager's gelu of the product. Before, a gelu epilogue stored
  // element by element through a scalar erf: 0.42 ms more than the product for a 1024 x 512
  // output on PoCL, now ~0.12 ms with the second store (a separate gelu kernel: 0.08 ms).
  const bool vec = t == at::kFloat && float_acc;
  h += "#define EPI_VEC " + std::string(vec ? "1" : "0") + "\n";
  if (act == GemmActivation::kRelu) {
    h += "#define gemm_epi16(v) select((v), (float16)(0.0f), (v) < (float16)(0.0f))\n";
  } else if (act == GemmActivation::kGelu && vec) {
    h += "OCL_DEFINE_FLOAT_MATH(float16, int16, float16)\n"
         "#define gemm_epi16(v) ((float16)(0.5f) * (v) * "
         "((float16)(1.0f) + ocl_gelu_erf_float16(v)))\n";
  } else {
    h += "#define gemm_epi16(v) (v)\n";
  }
  return h;
}

cl_program tiledProgram(c10::DeviceIndex idx, c10::ScalarType t, uint64_t epi) {
  return programs(idx).get({&kTiledFamily, dtypeCode(t) | (epi << 8)}, [&] {
    std::string h =
        typeHeader(t, false, epi) + "#define OCL_GEMM_TS " + std::to_string(kTile) + "\n";
    return rt::ProgramSource{std::string("gemm<") + c10::toString(t) + epilogueName(epi) + ">",
                             withPrelude(h + kernels::source("gemm.cl")), ""};
  });
}

cl_program cpuTileProgram(c10::DeviceIndex idx, c10::ScalarType t, uint64_t epi) {
  return programs(idx).get({&kCpuTileFamily, dtypeCode(t) | (epi << 8)}, [&] {
    return rt::ProgramSource{std::string("gemm_cpu<") + c10::toString(t) + epilogueName(epi) + ">",
                             withPrelude(typeHeader(t, true, epi) + kernels::source("gemm_cpu.cl")),
                             ""};
  });
}

// The bias arguments every gemm kernel takes (buffer, batch/row/column strides, scale): out's own
// buffer and zeros when there is no bias (the kernel then never reads it).
void setBiasArgs(cl_kernel kern, cl_uint& i, const at::Tensor& out, const GemmEpilogue& e,
                 c10::ScalarType scale_type) {
  if (e.bias.defined()) {
    setArg(kern, i, bufferOf(e.bias));
    const auto& b = e.bias;
    setArg(kern, i, static_cast<cl_long>(b.dim() == 3 ? b.stride(0) : 0));
    setArg(kern, i, static_cast<cl_long>(b.stride(-2)));
    setArg(kern, i, static_cast<cl_long>(b.stride(-1)));
  } else {
    setArg(kern, i, bufferOf(out));
    for (int j = 0; j < 3; ++j) setArg(kern, i, static_cast<cl_long>(0));
  }
  setScalarArg(kern, i, scale_type, e.bias_scale);
}

// The act_out arguments of the cpu_tile kernels (buffer, batch/row/column strides): out's own
// buffer and zeros without one (the kernel then never writes it).
void setActArgs(cl_kernel kern, cl_uint& i, const at::Tensor& out, const GemmEpilogue& e) {
  const at::Tensor& d = e.act_out.defined() ? e.act_out : out;
  setArg(kern, i, bufferOf(d));
  const bool on = e.act_out.defined();
  setArg(kern, i, static_cast<cl_long>(on && d.dim() == 3 ? d.stride(0) : 0));
  setArg(kern, i, static_cast<cl_long>(on ? d.stride(-2) : 0));
  setArg(kern, i, static_cast<cl_long>(on ? d.stride(-1) : 0));
}

void tiledGemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
               const c10::Scalar& alpha, const c10::Scalar& beta, const GemmEpilogue& epi) {
  const c10::ScalarType t = out.scalar_type();
  const c10::DeviceIndex idx = out.device().index();
  const int64_t n = out.size(-2), m = out.size(-1), k = a.size(-1);
  const int64_t batch = out.dim() == 3 ? out.size(0) : 1;
  cl_program prog = tiledProgram(idx, t, epilogueCode(epi));
  OCL_TRY
  cl_kernel kern = programs(idx).kernel(prog, "gemm");
  const auto sa = elemStrides(a), sb = elemStrides(b), sc = elemStrides(out);
  cl_uint i = 0;
  setArg(kern, i, bufferOf(a));
  setArg(kern, i, bufferOf(b));
  setArg(kern, i, bufferOf(out));
  setArg(kern, i, static_cast<cl_long>(n));
  setArg(kern, i, static_cast<cl_long>(m));
  setArg(kern, i, static_cast<cl_long>(k));
  for (const auto* s : {&sa, &sb, &sc})
    for (cl_long v : *s) setArg(kern, i, v);
  // Integer accumulation in the dtype itself (wrapping), as CPU PyTorch does.
  setScalarArg(kern, i, t, alpha);
  setScalarArg(kern, i, t, beta);
  setBiasArgs(kern, i, out, epi, t);
  const size_t local[3] = {kTile, kTile, 1};
  const size_t global[3] = {static_cast<size_t>((m + kTile - 1) / kTile * kTile),
                            static_cast<size_t>((n + kTile - 1) / kTile * kTile),
                            static_cast<size_t>(batch)};
  launchKernel(currentQueue(idx), kern, 3, global, local);
  OCL_CATCH
}

constexpr int64_t kTm = 6, kTn = 64;
constexpr int64_t kPackTk = 16;  // PACK_TK in gemm_cpu.cl: rows of K per pack_b_t work item

// B is already a float panel matrix: unit column stride and whole panels. A row stride that is a
// multiple of 4 KB maps the rows of a panel onto a few cache sets: the k-blocked kernel below
// still reads such a B in place for fewer than 1024 rows of C, beyond that a packed copy pays
// for itself (1024^3: 250 packed / 179 in place; 64x1024 @ 1024x1024: 130 / 273 GFLOP/s).
// Columns that are not whole panels are read in place too when every row is padded to whole
// panels inside the storage (a convolution's columns): the lanes past N feed accumulators that
// are never stored.
bool cpuTileReadsBInPlace(const at::Tensor& b, int64_t cols, int64_t rows) {
  const auto sb = elemStrides(b);
  if (b.scalar_type() != at::kFloat || sb[2] != 1 || !(sb[1] % 1024 != 0 || rows < 1024))
    return false;
  if (cols % kTn == 0) return true;
  const int64_t padded = (cols + kTn - 1) / kTn * kTn, k = b.size(-2);
  const int64_t batches = b.dim() == 3 ? b.size(0) : 1;
  if (sb[0] < 0 || sb[1] < padded || k == 0 || !b.has_storage()) return false;
  const int64_t end = b.storage_offset() + (batches - 1) * sb[0] + (k - 1) * sb[1] + padded;
  return end * static_cast<int64_t>(sizeof(float)) <= static_cast<int64_t>(b.storage().nbytes());
}

// The shortest K for which cpuTileGemm computes out^T instead of packing a wide B.
constexpr int64_t kSwapMinK = 256;
// ... and K per row of C it needs for that, or fewer rows than this with a partial last panel of
// B's columns (see cpuTileGemm).
constexpr int64_t kSwapKPerRow = 48;
constexpr int64_t kSwapMaxRows = 128;

// K blocks of gemm_6x64_kblocks (<= KBMAX in gemm_cpu.cl), and its row tiles per work item
// (<= RT; 6 and 8 measured no better for 64 to 640 rows, and read B more often).
constexpr int64_t kKBlock = 128, kRowTiles = 11;

// Whether cpu_tile runs K in blocks (gemm_6x64_kblocks): for B read in place when a whole panel
// would not stay in the caches between tiles: a row stride that is a multiple of 1 KB (the rows of
// a panel then share a few cache sets) with K beyond 512 (a multiple of 4 KB: beyond 128), or K
// beyond 2048 at any stride. Measured on 2 AVX-512 cores (best of 6 interleaved rounds, GFLOP/s
// plain / k-blocked): 64x784 @ 784x512 220/278, 640x1024 @ 1024x512 171/314, 640x784 @ 784x512
// 263/317, 64x512 @ 512x512 266/275; with strides that do not alias the plain kernel keeps up
// (640x784 @ 784x576 362/342, @ 784x448 360/351). Packing B first costs more than either here.
bool cpuTileKBlocks(int64_t k, int64_t b_row_stride) {
  return (b_row_stride % 256 == 0 && k > 512) || (b_row_stride % 1024 == 0 && k > kKBlock) ||
         k > 2048;
}

// The epilogue of out^T: the bias transposed with it.
GemmEpilogue transposed(const GemmEpilogue& e) {
  GemmEpilogue t = e;
  if (t.bias.defined()) t.bias = t.bias.transpose(-1, -2);
  if (t.act_out.defined()) t.act_out = t.act_out.transpose(-1, -2);
  return t;
}

// nsum > 1: out (2-D) = alpha * the sum of the nsum products a[i] @ b[i] (3-D) + beta * out, in
// the kernel's accumulators (gemmBatchSum); no epilogue then.
void cpuTileGemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                 const c10::Scalar& alpha, const c10::Scalar& beta, const GemmEpilogue& epi,
                 int64_t nsum = 1) {
  const c10::ScalarType t = out.scalar_type();
  const c10::DeviceIndex idx = out.device().index();
  const int64_t n = out.size(-2), m = out.size(-1), k = a.size(-1);
  const int64_t batch = out.dim() == 3 ? out.size(0) : 1;
  const int64_t b_count = nsum > 1 ? nsum : batch;  // B's matrices
  const int64_t panels = (m + kTn - 1) / kTn;
  const auto sa = elemStrides(a), sb = elemStrides(b), sc = elemStrides(out);
  const bool direct = cpuTileReadsBInPlace(b, m, n);
  // A packed B costs K x N; when C has fewer rows than columns, out^T = b^T @ a^T packs a^T
  // (K x M) instead, e.g. linear's x @ W^T at batch 64. (The swapped call has rows >= columns,
  // so it never swaps back.) It then stores C transposed, 6 floats per cache line, which costs
  // more than the packing saves when K is short: a weight gradient's (64x512)^T @ 64x784 ran
  // 236 GFLOP/s unswapped, 160 swapped (best reps, 2 AVX-512 cores); x @ W^T with K = 784
  // 189 swapped, 145 unswapped. Swapping trades packing B (K x N) for packing A^T (K x M) and
  // storing C transposed (one 6-float piece per row of C, rows a few KB apart), which costs per
  // element of C what the product costs for ~48 of K: it pays when K >= 48 rows of C (a
  // convolution's weight gradient, K = its pixels), or, below 128 rows, when B's columns end in
  // a partial panel (x @ W^T with 784 outputs: 64x512 @ (784x512)^T 239 swapped, 150 packed).
  // Elsewhere packing B won (device time, PoCL, 2 cores, /work/scratch/s13/gemm_rows*.py): a
  // transformer MLP's 256x384 @ (1536x384)^T 177 -> 405 GFLOP/s; 16-96 rows with 256-2048
  // columns 1.1-2.9x faster.
  if (!direct && n < m && k >= kSwapMinK &&
      (k >= kSwapKPerRow * n || (n < kSwapMaxRows && m % kTn != 0)))
    return cpuTileGemm(out.transpose(-1, -2), b.transpose(-1, -2), a.transpose(-1, -2), alpha, beta,
                       transposed(epi), nsum);
  cl_program prog = cpuTileProgram(idx, t, epilogueCode(epi));
  OCL_TRY
  cl_command_queue q = currentQueue(idx);
  const WorkersNormalScope workers(idx, q, static_cast<double>(n) * m * k * batch * nsum);
  // B as float panels: itself when it already is one (float32, unit column stride, whole panels,
  // a row stride that is not a multiple of 4 KB), else a packed copy.
  at::Tensor panel_buf;
  rt::BufferRef bp;
  cl_long pb_b = 0, pb_k = 0, pb_p = 0;
  if (direct) {
    bp = bufferOf(b);
    pb_b = sb[0], pb_k = sb[1], pb_p = kTn;
  } else {
    const int64_t b_batches = (b.dim() == 3 && sb[0] != 0) ? b_count : 1;
    panel_buf = at::empty({b_batches, panels, k, kTn}, out.options().dtype(at::kFloat));
    // B's rows along K (read transposed): pack_b_t reads down them; else one element per item.
    const bool down_k = std::abs(sb[1]) < std::abs(sb[2]) && k > 1;
    cl_kernel pack = programs(idx).kernel(prog, down_k ? "pack_b_t" : "pack_b");
    cl_uint i = 0;
    setArg(pack, i, bufferOf(panel_buf));
    setArg(pack, i, bufferOf(b));
    setArg(pack, i, static_cast<cl_long>(m));
    setArg(pack, i, static_cast<cl_long>(k));
    for (cl_long v : sb) setArg(pack, i, v);
    if (down_k) {
      const size_t global[3] = {static_cast<size_t>(panels),
                                static_cast<size_t>((k + kPackTk - 1) / kPackTk),
                                static_cast<size_t>(b_batches)};
      const size_t local[3] = {1, 1, 1};
      launchKernel(q, pack, 3, global, local);
    } else {
      const size_t global[3] = {static_cast<size_t>(panels * kTn), static_cast<size_t>(k),
                                static_cast<size_t>(b_batches)};
      launchKernel(q, pack, 3, global, nullptr);
    }
    bp = bufferOf(panel_buf);
    pb_b = b_batches == 1 ? 0 : panels * k * kTn, pb_k = kTn, pb_p = k * kTn;
  }
  const bool kblocks = direct && nsum <= 1 && cpuTileKBlocks(k, sb[1]);
  cl_kernel kern = programs(idx).kernel(prog, kblocks ? "gemm_6x64_kblocks" : "gemm_6x64");
  cl_uint i = 0;
  setArg(kern, i, bufferOf(a));
  setArg(kern, i, bp);
  setArg(kern, i, bufferOf(out));
  setArg(kern, i, static_cast<cl_long>(n));
  setArg(kern, i, static_cast<cl_long>(m));
  setArg(kern, i, static_cast<cl_long>(k));
  for (cl_long v : sa) setArg(kern, i, v);
  setArg(kern, i, pb_b);
  setArg(kern, i, pb_k);
  setArg(kern, i, pb_p);
  for (cl_long v : sc) setArg(kern, i, v);
  setArg(kern, i, alpha.toFloat());
  setArg(kern, i, beta.toFloat());
  setBiasArgs(kern, i, out, epi, at::kFloat);
  setActArgs(kern, i, out, epi);
  setArg(kern, i, static_cast<cl_long>(std::max<int64_t>(nsum, 1)));
  if (kblocks) {
    setArg(kern, i, static_cast<cl_long>(kKBlock));
    setArg(kern, i, static_cast<cl_int>(kRowTiles));
  }
  const size_t local[3] = {1, 1, 1};
  const int64_t rows_per_item = kblocks ? kTm * kRowTiles : kTm;
  const size_t global[3] = {static_cast<size_t>((n + rows_per_item - 1) / rows_per_item),
                            static_cast<size_t>(panels), static_cast<size_t>(batch)};
  launchKernel(q, kern, 3, global, local);
  OCL_CATCH
}

bool isZero(const c10::Scalar& s) {
  if (s.isComplex()) return s.toComplexDouble() == c10::complex<double>(0, 0);
  return s.isFloatingPoint() ? s.toDouble() == 0 : s.toLong() == 0;
}

}  // namespace

bool gemmSupports(c10::ScalarType t) {
  switch (t) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kByte:
    case at::kChar:
    case at::kShort:
    case at::kInt:
    case at::kLong:
    case at::kComplexFloat:
    case at::kComplexDouble:
      return true;
    default:
      return false;  // bool
  }
}

GemmProvider gemmProviderFor(c10::DeviceIndex idx, c10::ScalarType t) {
  const GemmProvider f = forced().load(std::memory_order_relaxed);
  if (f != GemmProvider::kAuto && supports(f, idx, t)) return f;
  return autoProvider(idx, t);
}

namespace {

// The shape rule between host_blas and cpu_tile where a device has both (PoCL, float32). Measured
// on 2 AVX-512 cores shared with other work (benchmarks/gemm.py and an interleaved A/B of the two,
// best of 10, GFLOP/s host_blas / cpu_tile): 512^3 308/324, 1024^3 79/199, 2048^3 89/102,
// 64x512 @ 512x512 219/245 (B read in place), but with B packed first the MLP's training shapes
// favour the BLAS: 64x784 @ (512x784)^T 212/176, 64x512 @ 512x784 234/144, (64x512)^T @ 64x784
// 192/147, 64x9216 @ (128x9216)^T 195/109. The BLAS splits the work statically between its
// threads, so it also suffers most when another process takes a core; our kernel's work-groups
// are shared out dynamically by the driver.
// The smallest product that runs cpu_tile where the host BLAS is narrower than the device (unless
// cpu_tile reads B in place): 128^3 multiply-adds.
constexpr double kNarrowBlasMinWork = 2097152.0;

GemmProvider chooseUncapturedProvider(const at::Tensor& out, const at::Tensor& a,
                                      const at::Tensor& b) {
  const c10::DeviceIndex idx = out.device().index();
  const c10::ScalarType t = out.scalar_type();
  // The tuning table (warmup's measurements) first, unless a provider is forced.
  if (forced().load(std::memory_order_relaxed) == GemmProvider::kAuto) {
    const int cls = gemmShapeClass(out.size(-2), out.size(-1), a.size(-1),
                                   cpuTileReadsBInPlace(b, out.size(-1), out.size(-2)),
                                   gemmOperandTransposed(a), gemmOperandTransposed(b));
    if (const auto tuned = gemmTunedProvider(idx, t, cls); tuned && supports(*tuned, idx, t))
      return *tuned;
  }
  const GemmProvider p = gemmProviderFor(idx, t);
  if (p != GemmProvider::kHostBlas || t != at::kFloat ||
      forced().load(std::memory_order_relaxed) == GemmProvider::kHostBlas || !isCpuDevice(idx))
    return p;
  const int64_t rows = out.size(-2), cols = out.size(-1), k = a.size(-1);
  const double work = static_cast<double>(rows) * cols * k * (out.dim() == 3 ? out.size(0) : 1);
  // A BLAS whose kernels are narrower than the device's vectors (OpenBLAS 0.3.21's AVX2 kernels
  // on a Zen 5 EPYC, where PoCL compiles for AVX-512) loses to cpu_tile on every shape measured
  // there (GFLOP/s host_blas / cpu_tile, best of 3 interleaved rounds, /work/scratch/prov_ab.py):
  // 512^3 241/455, 1024^3 119/428, 64x784 @ 784x512 106/289, 64x784 @ (512x784)^T 100/197,
  // (64x512)^T @ 64x784 197/259, 64x512 @ (784x512)^T 99/274, 64x36864 @ (288x36864)^T 90/231,
  // (36864x288)^T @ 36864x64 88/176, 128x9216 @ (64x9216)^T 95/156; only a long K with B packed
  // came out even (64x36864 @ 36864x288 94/87).
  // Below 128^3 multiply-adds a B that cpu_tile must pack costs a launch more than the product
  // saves: with every float32 product on cpu_tile the small example models' steps were 6-15 %
  // slower (quiet, best of 4 interleaved rounds: mlp 0.34 -> 0.39 ms, cnn 1.38 -> 1.50, small GPT
  // 1.66 -> 1.77; compiled 0.31 -> 0.33, 0.99 -> 1.11, 1.44 -> 1.52).
  if (hostBlasNarrowerThanDevice(idx) &&
      (work >= kNarrowBlasMinWork || cpuTileReadsBInPlace(b, cols, rows)))
    return GemmProvider::kCpuTile;
  // Our kernel keeps a whole K x 64 panel of B per tile row and does not split K: beyond ~2048 the
  // panel leaves the L2 cache and every tile streams it from memory again (the weight gradient of
  // a convolution, K = batch * pixels), where the BLAS's K blocking wins.
  if (rows >= 16 && cpuTileReadsBInPlace(b, cols, rows)) return GemmProvider::kCpuTile;
  if (k > 2048) return p;
  if (work >= 134217728.0 /* 512^3 */) return GemmProvider::kCpuTile;
  // A batch of small products (a grouped convolution's per-sample GEMMs, 16 x 144 @ 144 x 784):
  // the BLAS runs them one after the other, each too small to share between its threads; our
  // kernel takes the whole batch in one launch.
  if (out.dim() == 3 && out.size(0) > 1 && rows * cols * k < 8388608 /* 203^3 */ && cols >= 32)
    return GemmProvider::kCpuTile;
  return p;
}

// CLBlast enqueues by itself, so a graph cannot record its commands: while the stream captures,
// our own tiled kernels take the products CLBlast would have run (GPU drivers, where CLBlast is
// the default, or a forced TORCH_OCL_GEMM=clblast). Complex products have no tiled kernel and
// stay refused by CLBlast's capture check.
GemmProvider chooseProvider(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  const GemmProvider p = chooseUncapturedProvider(out, a, b);
  if (p != GemmProvider::kClBlast || !rt::capture::active()) return p;
  const c10::DeviceIndex idx = out.device().index();
  if (rt::capture::graphOf(currentQueue(idx)) &&
      supports(GemmProvider::kTiled, idx, out.scalar_type()))
    return GemmProvider::kTiled;
  return p;
}

}  // namespace

int gemmShapeClassOf(const at::Tensor& a, const at::Tensor& b) {
  return gemmShapeClass(a.size(-2), b.size(-1), a.size(-1),
                        cpuTileReadsBInPlace(b, b.size(-1), a.size(-2)), gemmOperandTransposed(a),
                        gemmOperandTransposed(b));
}

std::string gemmShapeRule(c10::DeviceIndex idx) {
  if (gemmProviderFor(idx, at::kFloat) != GemmProvider::kHostBlas || !isCpuDevice(idx) ||
      forced().load() == GemmProvider::kHostBlas)
    return "";
  if (hostBlasNarrowerThanDevice(idx))
    return "float32 runs cpu_tile from 128^3 multiply-adds up or when it reads B in place: the "
           "host "
           "BLAS's kernels (" +
           (hostBlas().info.corename.empty() ? std::string("?") : hostBlas().info.corename) +
           ") are narrower than the device's " + std::to_string(deviceVectorBits(idx)) +
           "-bit vectors";
  return "float32 runs cpu_tile instead of host_blas when it reads B in place (unit column "
         "stride, columns a multiple of 64, or rows padded to whole panels; 16 rows or more), for "
         "batches of small products (below 203^3 multiply-adds each), and from 512^3 "
         "multiply-adds up for K <= 2048";
}

void setForcedGemmProvider(GemmProvider p) {
  forced().store(p);
}
GemmProvider forcedGemmProvider() {
  return forced().load();
}
GemmProvider lastGemmProvider() {
  return t_last;
}

HostBlasInfo hostBlasInfo() {
  return hostBlas().info;
}

void setHostBlasNarrowOverride(int mode) {
  narrowBlasOverride().store(mode < 0 ? -1 : (mode > 0 ? 1 : 0));
}

bool hostBlasNarrowerThanDevice(c10::DeviceIndex idx) {
  if (!deviceCanHostBlas(idx) || !isCpuDevice(idx)) return false;
  if (const int o = narrowBlasOverride().load(std::memory_order_relaxed); o >= 0) return o == 1;
  const int blas = hostBlas().info.vector_bits;
  return blas > 0 && deviceVectorBits(idx) > blas;
}

namespace {

// act(beta * out + bias_scale * bias) by ops: the k == 0 product, and the epilogue of providers
// without one of their own (CLBlast), in the order CPU PyTorch's addmm does it (self copied into
// the result, then scaled).
void epilogueByOps(const at::Tensor& out, const c10::Scalar& beta, const GemmEpilogue& epi,
                   bool bias_and_beta, bool act) {
  if (bias_and_beta) {
    if (isZero(beta)) {
      if (epi.bias.defined()) {
        out.copy_(epi.bias);
        if (!(epi.bias_scale.isFloatingPoint()
                  ? epi.bias_scale.toDouble() == 1
                  : !epi.bias_scale.isComplex() && epi.bias_scale.toLong() == 1))
          out.mul_(epi.bias_scale);
      } else {
        out.zero_();
      }
    } else {
      out.mul_(beta);
      if (epi.bias.defined()) out.add_(epi.bias, epi.bias_scale);
    }
  }
  if (!act) return;
  at::Tensor o = out;
  if (epi.act == GemmActivation::kRelu) at::relu_(o);
  if (epi.act == GemmActivation::kGelu) at::gelu_(o);
}

}  // namespace

namespace {

// gemm with epi.act_out where the provider cannot store two results: the product (and bias)
// into out, then the activation into act_out as an op.
void productThenActivation(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                           const c10::Scalar& alpha, const c10::Scalar& beta,
                           const GemmEpilogue& epi) {
  GemmEpilogue plain = epi;
  plain.act = GemmActivation::kNone;
  plain.act_out = at::Tensor();
  gemm(out, a, b, alpha, beta, plain);
  at::Tensor dst = epi.act_out;
  if (epi.act == GemmActivation::kRelu)
    at::relu_out(dst, out);
  else if (epi.act == GemmActivation::kGelu)
    at::gelu_out(dst, out);
  else
    dst.copy_(out);
}

}  // namespace

void gemm(const at::Tensor& out, const at::Tensor& a_in, const at::Tensor& b_in,
          const c10::Scalar& alpha, const c10::Scalar& beta, const GemmEpilogue& epi_in) {
  TORCH_INTERNAL_ASSERT(gemmSupports(out.scalar_type()));
  if (out.numel() == 0) return;
  GemmEpilogue epi = epi_in;
  if (epi.bias.defined()) {
    TORCH_INTERNAL_ASSERT(epi.bias.scalar_type() == out.scalar_type() &&
                          epi.bias.dim() <= out.dim());
    epi.bias = epi.bias.expand(out.sizes());
    if (isZero(epi.bias_scale)) epi.bias = at::Tensor();  // a zero scale ignores it, as beta does
  }
  TORCH_INTERNAL_ASSERT(epi.act == GemmActivation::kNone || !c10::isComplexType(out.scalar_type()));
  // Conjugate views (mm, bmm, addmm and dot receive them as they are) are materialised on the
  // device; the BLAS providers then see plain operands.
  const at::Tensor a = a_in.resolve_conj(), b = b_in.resolve_conj();
  if (epi.bias.defined()) epi.bias = epi.bias.resolve_conj();
  const bool beta_zero = isZero(beta);
  if (a.size(-1) == 0) {
    epilogueByOps(out, beta, epi, true, !epi.act_out.defined());
    if (epi.act_out.defined()) {
      epi.act_out.copy_(out);
      epilogueByOps(epi.act_out, 0, GemmEpilogue{at::Tensor(), 1, epi.act}, false, true);
    }
    return;
  }
  const c10::ScalarType t = out.scalar_type();
  GemmProvider p = chooseProvider(out, a, b);
  const c10::Scalar beta_eff = beta_zero ? c10::Scalar(0) : beta;
  // The host BLAS and cpu_tile write the activation to a second tensor in the same command; other
  // providers store the product, then the activation runs as an op.
  if (epi.act_out.defined() && ((p != GemmProvider::kHostBlas && p != GemmProvider::kCpuTile) ||
                                (p == GemmProvider::kHostBlas && !blasWritable(out)) ||
                                epi.act == GemmActivation::kNone || epi.act_out.scalar_type() != t))
    return productThenActivation(out, a, b, alpha, beta, epi);
  switch (p) {
    case GemmProvider::kCpuTile:
      t_last = p;
      return cpuTileGemm(out, a, b, alpha, beta_eff, epi);
    case GemmProvider::kTiled:
      t_last = p;
      return tiledGemm(out, a, b, alpha, beta_eff, epi);
    default:
      break;
  }
  // BLAS-style providers write row-major C only.
  if (!blasWritable(out)) {
    at::Tensor tmp = beta_zero ? at::empty(out.sizes(), out.options()) : out.contiguous();
    gemm(tmp, a, b, alpha, beta_eff, epi);
    out.copy_(tmp);
    return;
  }
  if (p == GemmProvider::kHostBlas) {
    const BlasOperand A = blasOperand(a), B = blasOperand(b);
    if (hostBlasShapeOk(out, A, B)) {
      t_last = p;
      OCL_TRY
      hostBlasGemm(out, A, B, alpha, beta_eff, 0, epi);
      OCL_CATCH
      return;
    }
    if (epi.act_out.defined()) return productThenActivation(out, a, b, alpha, beta, epi);
    p = GemmProvider::kClBlast;  // sizes beyond a 32-bit BLAS
  }
  t_last = GemmProvider::kClBlast;
  // CLBlast has no epilogue: the bias goes into C first (then beta 1), the activation after.
  c10::Scalar beta_cl = beta_eff;
  if (epi.bias.defined()) {
    epilogueByOps(out, beta_eff, epi, true, false);
    beta_cl = 1;
  }
  if (t == at::kFloat) {
    clblastGemm<float>(out, a, b, alpha.toFloat(), beta_cl.toFloat());
  } else if (t == at::kDouble) {
    clblastGemm<double>(out, a, b, alpha.toDouble(), beta_cl.toDouble());
  } else {
    const c10::complex<double> al = alpha.toComplexDouble(), be = beta_cl.toComplexDouble();
    if (t == at::kComplexFloat)
      clblastGemm<cl_float2>(
          out, a, b, cl_float2{{static_cast<float>(al.real()), static_cast<float>(al.imag())}},
          cl_float2{{static_cast<float>(be.real()), static_cast<float>(be.imag())}});
    else
      clblastGemm<cl_double2>(out, a, b, cl_double2{{al.real(), al.imag()}},
                              cl_double2{{be.real(), be.imag()}});
  }
  if (epi.act != GemmActivation::kNone) epilogueByOps(out, beta_eff, epi, false, true);
}

bool gemmGroup(at::TensorList outs, at::TensorList a, at::TensorList b) {
  TORCH_INTERNAL_ASSERT(outs.size() == a.size() && a.size() == b.size());
  const size_t n = outs.size();
  bool grouped = n >= 2 && n <= static_cast<size_t>(kMaxGroup);
  const GemmProvider forced_p = forced().load(std::memory_order_relaxed);
  grouped = grouped && (forced_p == GemmProvider::kAuto || forced_p == GemmProvider::kHostBlas);
  std::vector<BlasOperand> A, B;
  if (grouped) {
    const c10::DeviceIndex idx = outs[0].device().index();
    const c10::ScalarType t = outs[0].scalar_type();
    grouped = (t == at::kFloat || t == at::kDouble) && supports(GemmProvider::kHostBlas, idx, t);
    for (size_t i = 0; grouped && i < n; ++i) {
      const at::Tensor& o = outs[i];
      grouped = o.dim() == 2 && o.device() == outs[0].device() && o.scalar_type() == t &&
                !a[i].is_conj() && !b[i].is_conj() && a[i].size(-1) > 0 && o.numel() > 0 &&
                blasWritable(o);
    }
    for (size_t i = 0; grouped && i < n; ++i) {
      A.push_back(blasOperand(a[i]));
      B.push_back(blasOperand(b[i]));
      grouped = hostBlasShapeOk(outs[i], A.back(), B.back());
    }
  }
  if (!grouped) {
    for (size_t i = 0; i < n; ++i) gemm(outs[i], a[i], b[i], 1, 0);
    return false;
  }
  OCL_TRY
  cl_command_queue q = currentQueue(outs[0].device().index());
  auto grp = std::make_unique<HostGemmGroupArgs>();
  grp->count = static_cast<int>(n);
  std::vector<cl_mem> mems;
  std::vector<const void*> locs;
  for (size_t i = 0; i < n; ++i)
    fillHostGemmArgs(grp->calls[i], q, outs[i], A[i], B[i], 1, 0, 0, {}, mems, locs);
  // Only the filled part of the block is copied by the driver: its handle slots lie inside it.
  const size_t bytes = offsetof(HostGemmGroupArgs, calls) + n * sizeof(HostGemmArgs);
  ProfiledCommand pc(CommandKind::kKernel, command_names::kHostBlas);
  OCL_CHECK(rt::enqueueNativeKernel(q, hostGemmGroupKernel, grp.get(), bytes,
                                    static_cast<cl_uint>(mems.size()), mems.data(), locs.data(), 0,
                                    nullptr, pc.event()));
  countLaunches(1);  // one native kernel for the whole group
  afterLaunch(q);
  t_last = GemmProvider::kHostBlas;
  OCL_CATCH
  return true;
}

namespace {
GemmProvider gemmBatchSumProvider(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  const GemmProvider p = chooseProvider(out, a, b);
  const c10::DeviceIndex idx = out.device().index();
  if (forced().load(std::memory_order_relaxed) != GemmProvider::kAuto ||
      !supports(GemmProvider::kHostBlas, idx, out.scalar_type()))
    return p;
  // The whole sum is one cpu_tile launch (one packing of B for all of it): the size rule of the
  // narrow BLAS applies to the sum's work, not to one product's.
  const double work = static_cast<double>(out.size(0)) * out.size(1) * a.size(-1) * a.size(0);
  if (out.scalar_type() == at::kFloat && hostBlasNarrowerThanDevice(idx) &&
      (p == GemmProvider::kCpuTile || work >= kNarrowBlasMinWork))
    return GemmProvider::kCpuTile;
  return GemmProvider::kHostBlas;
}
}  // namespace

bool gemmBatchSumInKernel(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  return gemmBatchSumProvider(out, a, b) == GemmProvider::kCpuTile;
}

void gemmBatchSum(const at::Tensor& out, const at::Tensor& a_in, const at::Tensor& b_in,
                  const c10::Scalar& alpha, const c10::Scalar& beta) {
  const at::Tensor a = a_in.resolve_conj(), b = b_in.resolve_conj();
  TORCH_INTERNAL_ASSERT(out.dim() == 2 && a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0));
  if (out.numel() == 0) return;
  const int64_t nbatch = a.size(0);
  const bool beta_zero = isZero(beta);
  if (nbatch == 0 || a.size(-1) == 0) {  // an empty sum: beta * out
    if (beta_zero)
      out.zero_();
    else
      out.mul_(beta);
    return;
  }
  if (nbatch == 1) return gemm(out, a.select(0, 0), b.select(0, 0), alpha, beta);
  const c10::Scalar beta_eff = beta_zero ? c10::Scalar(0) : beta;
  // The host BLAS adds the products up in place, cpu_tile in its accumulators; the other
  // providers write them all first and then sum them. Unless forced otherwise, a device with the
  // host BLAS keeps it here, unless its kernels are narrower than the device's (float32 then
  // runs cpu_tile).
  GemmProvider p = gemmBatchSumProvider(out, a, b);
  if (p == GemmProvider::kCpuTile) {
    t_last = p;
    return cpuTileGemm(out, a, b, alpha, beta_eff, {}, nbatch);
  }
  if (p == GemmProvider::kHostBlas && blasWritable(out) && fitsInt({nbatch})) {
    const BlasOperand A = blasOperand(a), B = blasOperand(b);
    if (hostBlasShapeOk(out, A, B)) {
      t_last = GemmProvider::kHostBlas;
      OCL_TRY
      hostBlasGemm(out, A, B, alpha, beta_eff, nbatch);
      OCL_CATCH
      return;
    }
  }
  // Other providers: the batched products, then their sum.
  at::Tensor prod = at::empty({nbatch, out.size(0), out.size(1)}, out.options());
  gemm(prod, a, b, alpha, 0);
  const at::Tensor total = prod.sum(0);
  if (beta_zero)
    out.copy_(total);
  else
    out.mul_(beta).add_(total);
}

}  // namespace torch_ocl::aten
