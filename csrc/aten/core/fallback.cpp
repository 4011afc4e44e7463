#include "aten/fallback.h"

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace torch_ocl::aten {
namespace {

std::mutex g_mutex;
std::map<std::string, FallbackRecord>& records() {
  static auto* r = new std::map<std::string, FallbackRecord>();  // NOLINT: leaked on purpose
  return *r;
}

bool strictFromEnv() {
  const char* v = std::getenv("TORCH_OCL_STRICT");
  return v && *v && std::string(v) != "0";
}
// Strict mode is process-wide (autograd runs backward on its own threads, which must see it).
// `strict()` blocks push an override and pop it by token, so blocks on several threads can end
// in any order: the newest override still open wins, else the base value (env or setStrict).
struct StrictState {
  std::mutex mutex;
  bool base = strictFromEnv();
  uint64_t next_token = 1;
  std::vector<std::pair<uint64_t, bool>> overrides;  // in push order
};
StrictState& strictState() {
  static auto* s = new StrictState();  // NOLINT: leaked on purpose (read at exit by kernels)
  return *s;
}
std::atomic<bool> g_strict{strictFromEnv()};
void refreshStrict(StrictState& s) {  // caller holds s.mutex
  g_strict.store(s.overrides.empty() ? s.base : s.overrides.back().second);
}

// Calls fn for every defined ocl tensor held by v.
template <typename Fn>
void forEachOclTensor(const c10::IValue& v, Fn fn) {
  auto visit = [&](const at::Tensor& t) {
    if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) fn(t);
  };
  if (v.isTensor()) {
    visit(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList()) visit(t);
  } else if (v.isOptionalTensorList()) {
    for (const std::optional<at::Tensor> t : v.toOptionalTensorList())
      if (t.has_value()) visit(*t);
  }
}

int64_t oclBytes(const c10::IValue& v) {
  int64_t n = 0;
  forEachOclTensor(v, [&](const at::Tensor& t) { n += static_cast<int64_t>(t.nbytes()); });
  return n;
}

// The CPU fallback would silently compute with tensors of two ocl devices (and put the result on
// one of them); PyTorch's per-op device check, which the fallback bypasses, refuses that.
void checkOneOclDevice(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const size_t nargs = schema.arguments().size();
  std::optional<c10::Device> first;
  for (size_t i = 0; i < nargs; ++i) {
    forEachOclTensor(stack[stack.size() - nargs + i], [&](const at::Tensor& t) {
      if (!first) first = t.device();
      TORCH_CHECK(t.device() == *first,
                  "Expected all tensors to be on the same device, but found at least two "
                  "devices, ",
                  *first, " and ", t.device(), "! (in ", schema.name(), ", argument '",
                  schema.arguments()[i].name(), "')");
    });
  }
}

void oclFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  std::string name = schema.name();
  if (!schema.overload_name().empty()) name += "." + schema.overload_name();
  TORCH_CHECK_NOT_IMPLEMENTED(
      !g_strict.load(std::memory_order_relaxed), "torch-ocl strict mode: ", name,
      " has no native ocl kernel (for these arguments) and would run on the CPU. Leave strict mode "
      "(TORCH_OCL_STRICT=0 / torch_ocl.strict(False)) to allow the CPU fallback; the README says "
      "what runs natively.");

  checkOneOclDevice(schema, *stack);

  const size_t nargs = schema.arguments().size();
  int64_t to_host = 0, to_device = 0;
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& a = (*stack)[stack->size() - nargs + i];
    const int64_t b = oclBytes(a);
    to_host += b;
    const auto* alias = schema.arguments()[i].alias_info();
    if (alias && alias->isWrite()) to_device += b;  // mutated in place: copied back
  }
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    first = records().find(name) == records().end();
    if (first) records()[name].op = name;
  }
  if (first)
    TORCH_WARN("torch-ocl: ", name,
               " has no native ocl kernel (for these arguments); it runs on the CPU, copying its "
               "tensors between "
               "host and device (slow). torch_ocl.fallback_report() lists every such op; "
               "TORCH_OCL_STRICT=1 makes this an error.");

  const auto t0 = std::chrono::steady_clock::now();
  at::native::cpu_fallback(op, stack);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t nret = schema.returns().size();
  for (size_t i = 0; i < nret && i < stack->size(); ++i) {
    const auto* alias = schema.returns()[i].alias_info();
    if (alias && alias->isWrite()) continue;  // already counted as a mutated argument
    to_device += oclBytes((*stack)[stack->size() - nret + i]);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  FallbackRecord& r = records()[name];
  r.calls += 1;
  r.bytes_to_host += to_host;
  r.bytes_to_device += to_device;
  r.seconds += secs;
}

}  // namespace

std::vector<c10::IValue> runFallback(const char* name, const char* overload,
                                     std::vector<c10::IValue> args) {
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  torch::jit::Stack stack(std::move(args));
  oclFallback(op, &stack);
  return stack;
}

std::vector<FallbackRecord> fallbackRecords() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<FallbackRecord> out;
  for (const auto& kv : records()) out.push_back(kv.second);
  return out;
}

void resetFallbackRecords() {
  std::lock_guard<std::mutex> lock(g_mutex);
  records().clear();
}

void setStrict(bool strict) {
  StrictState& s = strictState();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.base = strict;
  refreshStrict(s);
}
uint64_t pushStrict(bool strict) {
  StrictState& s = strictState();
  std::lock_guard<std::mutex> lock(s.mutex);
  uint64_t token = s.next_token++;
  s.overrides.emplace_back(token, strict);
  refreshStrict(s);
  return token;
}
void popStrict(uint64_t token) {
  StrictState& s = strictState();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = std::find_if(s.overrides.begin(), s.overrides.end(),
                         [&](const auto& o) { return o.first == token; });
  TORCH_CHECK(it != s.overrides.end(), "torch-ocl: strict-mode token ", token, " is not open");
  s.overrides.erase(it);
  refreshStrict(s);
}
bool strict() {
  return g_strict.load();
}

// Sparse layouts: COO and CSR have the basics of aten/sparse/sparse_{coo,csr}.cpp; every other op
// that reaches a sparse dispatch key says so by name, instead of the dispatcher's "Could not run
// ... with arguments from the 'Sparseocl' backend" (and no sparse op falls back to the CPU).
template <const char* kLayout, const char* kCoverage>
void sparseUnsupported(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "torch-ocl: ", op.schema().operator_name(), " on a ", kLayout,
                              " tensor is not supported on ocl yet (", kCoverage,
                              "); keep the tensor on the CPU, or make it dense (.to_dense()) "
                              "first");
}
constexpr char kCoo[] = "sparse COO";
constexpr char kCooCoverage[] =
    "sparse COO on ocl covers construction, .to(), to_sparse/to_dense, coalesce, indices/values, "
    "sparse @ dense (mm, addmm, torch.sparse.mm and its backward), torch.sparse.sum and clone";
constexpr char kCompressed[] = "sparse compressed (CSR/CSC/BSR/BSC)";
constexpr char kCsrCoverage[] =
    "sparse CSR on ocl covers construction, .to(), to_sparse_csr/to_dense/to_sparse, "
    "crow_indices/col_indices/values, clone and copy_, CSR @ dense (mm, addmm, matmul, and "
    "their backward for the dense operand), zero-preserving unary ops, scaling by a number and "
    "sum()";

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&oclFallback>());
}
TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparseUnsupported<kCoo, kCooCoverage>>());
}
TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(
      torch::CppFunction::makeFromBoxedFunction<&sparseUnsupported<kCompressed, kCsrCoverage>>());
}

}  // namespace torch_ocl::aten
