// sort (stable and not; argsort reaches it), topk, unique (_unique2) and the order statistics
// (kthvalue, median, nanmedian). Sorting is a bottom-up
// merge sort over the rows of a contiguous (rows, n) copy: each pass merges runs of `width`
// with one work item per element, which finds its place by a binary search in the partner run
// (stable by construction; NaN sorts as the largest value, as on CPU). log2(n) launches.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/Sorting.h>
#include <ATen/ops/sort_native.h>
#include <ATen/ops/topk_meta.h>
#include <torch/library.h>

#include <algorithm>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/index_kernels.h"
#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kSortFamily;

cl_program sortProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kSortFamily, dtypeCode(t)}, [&] {
    const std::string st = clStorageType(t), ct = clComputeType(t);
    const bool fl = c10::isFloatingType(t);
    std::string s = "typedef " + st + " ST;\ntypedef " + ct + " CT;\n";
    s += "inline CT key(__global const ST* p, long i) { return " + loadExpr(t, "p", "i") + "; }\n";
    s += fl ? "inline int is_nan_key(CT a) { return isnan(a); }\n"
            : "inline int is_nan_key(CT a) { return 0; }\n";
    // before(a, b): a sorts strictly before b.
    s += "inline int before(CT a, CT b, int desc) {\n"
         "  if (desc) return (is_nan_key(a) && !is_nan_key(b)) || a > b;\n"
         "  return (!is_nan_key(a) && is_nan_key(b)) || a < b;\n}\n";
    s += "__kernel void iota(__global char* ib, ulong ioff, long total, long n) {\n"
         "  const long g = get_global_id(0);\n  if (g >= total) return;\n"
         "  ((__global long*)(ib + ioff))[g] = g % n;\n}\n";
    s += R"CLC(
__kernel void merge_pass(__global const char* kib, ulong kioff, __global const char* iib,
                         ulong iioff, __global char* kob, ulong kooff, __global char* iob,
                         ulong iooff, long total, long n, long width, int desc) {
  const long g = get_global_id(0);
  if (g >= total) return;
  const long row = g / n, p = g % n;
  __global const ST* kin = (__global const ST*)(kib + kioff) + row * n;
  __global const long* iin = (__global const long*)(iib + iioff) + row * n;
  const long run = p / width;
  const long ls = (run & ~1L) * width;
  const long rs = min(ls + width, n), re = min(ls + 2 * width, n);
  const CT v = key(kin, p);
  long pos;
  if ((run & 1L) == 0) {
    // left run: count right elements that sort strictly before v
    long lo = rs, hi = re;
    while (lo < hi) {
      const long mid = (lo + hi) / 2;
      if (before(key(kin, mid), v, desc)) lo = mid + 1; else hi = mid;
    }
    pos = (p - ls) + (lo - rs);
  } else {
    // right run: count left elements that do not sort after v (equal ones stay first)
    long lo = ls, hi = rs;
    while (lo < hi) {
      const long mid = (lo + hi) / 2;
      if (!before(v, key(kin, mid), desc)) lo = mid + 1; else hi = mid;
    }
    pos = (p - rs) + (lo - ls);
  }
  ((__global ST*)(kob + kooff))[row * n + ls + pos] = kin[p];
  ((__global long*)(iob + iooff))[row * n + ls + pos] = iin[p];
}

// unique_dim: a merge pass over row numbers of the (R, C) matrix m, rows compared
// lexicographically as CPU's unique_dim does (NaN compares neither less nor greater).
inline int row_before(__global const ST* m, long c, long a, long b) {
  for (long i = 0; i < c; ++i) {
    const CT x = key(m, a * c + i), y = key(m, b * c + i);
    if (x < y) return 1;
    if (x > y) return 0;
  }
  return 0;
}
__kernel void merge_rows_pass(__global const char* mb, ulong moff, __global const char* iib,
                              ulong iioff, __global char* iob, ulong iooff, long n, long c,
                              long width) {
  const long p = get_global_id(0);
  if (p >= n) return;
  __global const ST* m = (__global const ST*)(mb + moff);
  __global const long* iin = (__global const long*)(iib + iioff);
  const long run = p / width, ls = (run & ~1L) * width;
  const long rs = min(ls + width, n), re = min(ls + 2 * width, n);
  const long v = iin[p];
  long pos;
  if ((run & 1L) == 0) {
    long lo = rs, hi = re;
    while (lo < hi) {
      const long mid = (lo + hi) / 2;
      if (row_before(m, c, iin[mid], v)) lo = mid + 1; else hi = mid;
    }
    pos = (p - ls) + (lo - rs);
  } else {
    long lo = ls, hi = rs;
    while (lo < hi) {
      const long mid = (lo + hi) / 2;
      if (!row_before(m, c, v, iin[mid])) lo = mid + 1; else hi = mid;
    }
    pos = (p - rs) + (lo - ls);
  }
  ((__global long*)(iob + iooff))[ls + pos] = v;
}

// Group of each sorted position: the last j with starts[j] <= i (unique's inverse).
__kernel void group_of(__global const char* sb, ulong soff, long nstarts,
                       __global char* gb, ulong goff, long n) {
  const long i = get_global_id(0);
  if (i >= n) return;
  __global const long* starts = (__global const long*)(sb + soff);
  long lo = 0, hi = nstarts;
  while (lo < hi) {
    const long mid = (lo + hi) / 2;
    if (starts[mid] <= i) lo = mid + 1; else hi = mid;
  }
  ((__global long*)(gb + goff))[i] = lo - 1;
}
)CLC";
    return rt::ProgramSource{std::string("sort<") + c10::toString(t) + ">", withPrelude(s), ""};
  });
}

bool sortable(c10::ScalarType t) {
  return !c10::isComplexType(t);
}

// Sorts the rows of x (contiguous (rows, n)); returns (sorted keys, source positions). x is only
// read: the passes ping-pong between two scratch buffers (writing into x made torch.unique
// reorder its input).
std::pair<at::Tensor, at::Tensor> sortRows(const at::Tensor& x, bool descending) {
  const c10::DeviceIndex idx = x.device().index();
  const int64_t rows = x.size(0), n = x.size(1), total = rows * n;
  at::Tensor ka = x, ia = at::empty({rows, n}, x.options().dtype(c10::kLong));
  if (total == 0) return {ka, ia};
  at::Tensor kb = at::empty_like(x), ib = at::empty_like(ia);
  cl_program prog = sortProgram(idx, x.scalar_type());
  rt::Device& dev = device(idx);
  cl_command_queue q = currentQueue(idx);
  OCL_TRY
  cl_kernel ki = programs(idx).kernel(prog, "iota");
  setArgs(ki, bufferOf(ia), static_cast<cl_long>(total), static_cast<cl_long>(n));
  launch1D(dev, q, ki, total);
  cl_kernel km = programs(idx).kernel(prog, "merge_pass");
  for (int64_t width = 1; width < n; width *= 2) {
    setArgs(km, bufferOf(ka), bufferOf(ia), bufferOf(kb), bufferOf(ib), static_cast<cl_long>(total),
            static_cast<cl_long>(n), static_cast<cl_long>(width), static_cast<cl_int>(descending));
    launch1D(dev, q, km, total);
    std::swap(ka, kb);
    std::swap(ia, ib);
    if (kb.is_same(x)) kb = at::empty_like(x);
  }
  OCL_CATCH
  return {ka, ia};
}

// sort_stub: `values` already holds self; sorts it along dim and fills `indices`.
void sortStub(const at::TensorBase& self, const at::TensorBase& values_b,
              const at::TensorBase& indices_b, int64_t dim, bool descending, bool /*stable*/) {
  const at::Tensor values(values_b), indices(indices_b);
  TORCH_CHECK(sortable(values.scalar_type()), "sort(): ", values.scalar_type(),
              " is not supported on ocl");
  const int64_t n = values.dim() == 0 ? 1 : values.size(dim);
  if (values.numel() == 0) return;
  if (n <= 1) {
    indices.zero_();
    return;
  }
  const at::Tensor moved = values.movedim(dim, -1);
  const at::Tensor x = moved.contiguous().view({-1, n});
  auto [keys, pos] = sortRows(x, descending);
  moved.copy_(keys.view(moved.sizes()));
  indices.movedim(dim, -1).copy_(pos.view(moved.sizes()));
}

}  // namespace

OCL_REGISTER_STUB(sort_stub, &sortStub)

namespace {

std::tuple<at::Tensor&, at::Tensor&> sortStableOut(const at::Tensor& self,
                                                   std::optional<bool> stable, int64_t dim,
                                                   bool descending, at::Tensor& values,
                                                   at::Tensor& indices) {
  if (!sortable(self.scalar_type())) {
    runFallback("aten::sort", "values_stable", {self, stable, dim, descending, values, indices});
    return {values, indices};
  }
  Structured<at::native::structured_sort_stable_out> s(Mode::kOut, &values, &indices);
  s.meta(self, stable, dim, descending);
  s.impl(self, stable, dim, descending, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sortStable(const at::Tensor& self, std::optional<bool> stable,
                                              int64_t dim, bool descending) {
  if (!sortable(self.scalar_type())) {
    auto r = runFallback("aten::sort", "stable", {self, stable, dim, descending});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::native::structured_sort_stable_out> s(Mode::kFunctional, nullptr);
  s.meta(self, stable, dim, descending);
  s.impl(self, stable, dim, descending, s.output(0), s.output(1));
  return {s.output(0), s.output(1)};
}

// ---- order statistics: kthvalue, median, nanmedian (through the stable sort) ----------------
// The sort puts NaN last, so kthvalue ranks NaN largest, median returns the first NaN of a row
// that has one, and nanmedian takes the lower median of a row's non-NaN entries, as CPU does.
// Empty inputs go to the counted fallback, which raises or returns what CPU does.
enum class Order { kKth, kMedian, kNanMedian };

std::tuple<at::Tensor, at::Tensor> orderStatistic(const at::Tensor& self, Order what, int64_t k,
                                                  int64_t dim, bool keepdim) {
  if (self.dim() == 0) {
    TORCH_CHECK(what != Order::kKth || k == 1,
                "kthvalue(): selected number k out of range for dimension ", dim);
    return {self.clone(), at::zeros({}, self.options().dtype(at::kLong))};
  }
  dim = at::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(dim);
  auto [sv, si] = at::sort(self, /*stable=*/true, dim, /*descending=*/false);
  at::Tensor values, indices;
  if (what == Order::kKth) {
    TORCH_CHECK(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ", dim);
    values = sv.narrow(dim, k - 1, 1);
    indices = si.narrow(dim, k - 1, 1);
  } else {
    at::Tensor pos;
    if (c10::isFloatingType(self.scalar_type())) {
      const at::Tensor nans = at::isnan(self).sum(dim, /*keepdim=*/true);
      pos = what == Order::kMedian ? at::where(nans.gt(0), n - nans, (n - 1) / 2)
                                   : at::floor_divide((n - nans - 1).clamp_min(0), 2);
    } else {
      std::vector<int64_t> shape = self.sizes().vec();
      shape[dim] = 1;
      pos = at::full(shape, (n - 1) / 2, self.options().dtype(at::kLong));
    }
    values = sv.gather(dim, pos);
    indices = si.gather(dim, pos);
  }
  if (!keepdim) {
    values = values.squeeze(dim);
    indices = indices.squeeze(dim);
  }
  return {values, indices};
}

bool orderNative(const at::Tensor& self) {
  return sortable(self.scalar_type()) && self.numel() > 0;
}

std::tuple<at::Tensor&, at::Tensor&> orderOut(const at::Tensor& self, Order what, int64_t k,
                                              int64_t dim, bool keepdim, at::Tensor& values,
                                              at::Tensor& indices) {
  checkSameDevice({self, values, indices});
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", values.scalar_type(), " instead");
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "Expected out tensor to have dtype Long, but got ", indices.scalar_type(),
              " instead");
  auto [v, i] = orderStatistic(self, what, k, dim, keepdim);
  at::native::resize_output(values, v.sizes());
  at::native::resize_output(indices, i.sizes());
  values.copy_(v);
  indices.copy_(i);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> kthvalueOut(const at::Tensor& self, int64_t k, int64_t dim,
                                                 bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  if (!orderNative(self)) {
    runFallback("aten::kthvalue", "values", {self, k, dim, keepdim, values, indices});
    return {values, indices};
  }
  return orderOut(self, Order::kKth, k, dim, keepdim, values, indices);
}

template <Order kWhat>
std::tuple<at::Tensor&, at::Tensor&> medianDimOut(const at::Tensor& self, int64_t dim, bool keepdim,
                                                  at::Tensor& values, at::Tensor& indices) {
  const char* name = kWhat == Order::kMedian ? "aten::median" : "aten::nanmedian";
  if (!orderNative(self)) {
    runFallback(name, "dim_values", {self, dim, keepdim, values, indices});
    return {values, indices};
  }
  return orderOut(self, kWhat, 0, dim, keepdim, values, indices);
}

template <Order kWhat>
at::Tensor medianAll(const at::Tensor& self) {
  const char* name = kWhat == Order::kMedian ? "aten::median" : "aten::nanmedian";
  if (!orderNative(self)) return runFallback(name, "", {self})[0].toTensor();
  return std::get<0>(orderStatistic(self.reshape({-1}), kWhat, 0, 0, /*keepdim=*/false));
}

void topkInto(const at::Tensor& self, int64_t k, int64_t dim, bool largest,
              const at::Tensor& values, const at::Tensor& indices) {
  if (values.numel() == 0 && k == 0) return;
  if (self.dim() == 0) {
    values.copy_(self);
    indices.zero_();
    return;
  }
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (k == 0) return;
  auto [sv, si] = at::sort(self, /*stable=*/true, dim, /*descending=*/largest);
  values.copy_(sv.narrow(dim, 0, k));
  indices.copy_(si.narrow(dim, 0, k));
}

std::tuple<at::Tensor, at::Tensor> topkFn(const at::Tensor& self, int64_t k, int64_t dim,
                                          bool largest, bool sorted) {
  if (!sortable(self.scalar_type())) {
    auto r = runFallback("aten::topk", "", {self, k, dim, largest, sorted});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured_topk> s(Mode::kFunctional, nullptr);
  s.meta(self, k, dim, largest, sorted);
  topkInto(self, k, dim, largest, s.output(0), s.output(1));
  return {s.output(0), s.output(1)};
}

std::tuple<at::Tensor&, at::Tensor&> topkOut(const at::Tensor& self, int64_t k, int64_t dim,
                                             bool largest, bool sorted, at::Tensor& values,
                                             at::Tensor& indices) {
  if (!sortable(self.scalar_type())) {
    runFallback("aten::topk", "values", {self, k, dim, largest, sorted, values, indices});
    return {values, indices};
  }
  Structured<at::meta::structured_topk> s(Mode::kOut, &values, &indices);
  s.meta(self, k, dim, largest, sorted);
  topkInto(self, k, dim, largest, values, indices);
  return {values, indices};
}

// Unique runs of the sorted rows `sorted` ((n, c), n > 0), whose row i came from row perm[i]:
// the first row of each run (one readback, nonzero), the counts, and the run of every source row.
struct Runs {
  at::Tensor starts, counts, inverse;
};
Runs runsOf(const at::Tensor& sorted, const at::Tensor& perm, c10::ScalarType key_type,
            bool counts = true, bool inverse = true) {
  const int64_t n = sorted.size(0);
  const auto long_opts = perm.options();
  at::Tensor first = at::empty({n}, sorted.options().dtype(c10::kBool));
  first.narrow(0, 0, 1).fill_(true);
  if (n > 1) {
    at::Tensor differs = sorted.narrow(0, 1, n - 1).ne(sorted.narrow(0, 0, n - 1));
    if (differs.dim() > 1) differs = differs.any(1);
    first.narrow(0, 1, n - 1).copy_(differs);
  }
  Runs r;
  r.starts = at::nonzero(first).view({-1});
  const int64_t u = r.starts.size(0);
  r.counts = r.inverse = at::empty({0}, long_opts);
  if (counts) {
    at::Tensor ends = at::empty({u}, long_opts);
    if (u > 1) ends.narrow(0, 0, u - 1).copy_(r.starts.narrow(0, 1, u - 1));
    ends.narrow(0, u - 1, 1).fill_(n);
    r.counts = ends.sub(r.starts);
  }
  if (!inverse) return r;
  const c10::DeviceIndex idx = sorted.device().index();
  at::Tensor group = at::empty({n}, long_opts);
  cl_program prog = sortProgram(idx, key_type);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "group_of");
  setArgs(k, bufferOf(r.starts.contiguous()), static_cast<cl_long>(u), bufferOf(group),
          static_cast<cl_long>(n));
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
  r.inverse = at::empty({n}, long_opts).scatter_(0, perm, group);
  return r;
}

// unique_dim / unique_consecutive(dim=): the slices along dim as rows of a (n, c) matrix; for
// unique_dim their row numbers are merge-sorted lexicographically first (merge_rows_pass,
// log2(n) launches). Then the runs of equal rows. Like CPU, inverse and counts are always
// computed, and of empty inputs only those empty along dim alone are accepted.
std::tuple<at::Tensor, at::Tensor, at::Tensor> uniqueRows(const at::Tensor& self, int64_t dim,
                                                          bool sort) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  const auto long_opts = self.options().dtype(c10::kLong);
  if (self.numel() == 0) {
    const auto sizes = self.sizes();
    const auto zero_dims = std::count(sizes.begin(), sizes.end(), 0);
    TORCH_CHECK(self.size(dim) == 0,
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied");
    TORCH_CHECK(zero_dims == 1,
                "Number of zero sized dimensions is more than one, so unique cannot be applied ");
    return {at::empty(sizes, self.options()), at::empty({0}, long_opts), at::empty({0}, long_opts)};
  }
  const at::Tensor moved = self.movedim(dim, 0);
  const int64_t n = moved.size(0);
  const at::Tensor flat = moved.contiguous().view({n, -1});
  at::Tensor perm = at::arange(n, long_opts);
  if (sort) {
    at::Tensor other = at::empty({n}, long_opts);
    const int64_t c = flat.size(1);
    const c10::DeviceIndex idx = self.device().index();
    cl_program prog = sortProgram(idx, self.scalar_type());
    OCL_TRY
    cl_kernel k = programs(idx).kernel(prog, "merge_rows_pass");
    for (int64_t width = 1; width < n; width *= 2) {
      setArgs(k, bufferOf(flat), bufferOf(perm), bufferOf(other), static_cast<cl_long>(n),
              static_cast<cl_long>(c), static_cast<cl_long>(width));
      launch1D(device(idx), currentQueue(idx), k, n);
      std::swap(perm, other);
    }
    OCL_CATCH
  }
  const at::Tensor rows = sort ? flat.index_select(0, perm) : flat;
  const Runs r = runsOf(rows, perm, self.scalar_type());
  std::vector<int64_t> sizes = moved.sizes().vec();
  sizes[0] = r.starts.size(0);
  at::Tensor values = rows.index_select(0, r.starts).view(sizes).movedim(0, dim);
  return {values, r.inverse, r.counts};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> uniqueDim(const at::Tensor& self, int64_t dim,
                                                         bool sorted, bool return_inverse,
                                                         bool return_counts) {
  if (!sortable(self.scalar_type()) || self.dim() == 0) {
    auto r =
        runFallback("aten::unique_dim", "", {self, dim, sorted, return_inverse, return_counts});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  return uniqueRows(self, dim, /*sort=*/true);
}

// unique_consecutive: runs of equal neighbours, without sorting; over the flattened tensor
// (inverse shaped like the input) or over slices along dim.
std::tuple<at::Tensor, at::Tensor, at::Tensor> uniqueConsecutive(const at::Tensor& self,
                                                                 bool return_inverse,
                                                                 bool return_counts,
                                                                 std::optional<int64_t> dim) {
  if (!sortable(self.scalar_type()) || (dim && self.dim() == 0)) {
    auto r =
        runFallback("aten::unique_consecutive", "", {self, return_inverse, return_counts, dim});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  if (dim && self.dim() > 1) return uniqueRows(self, *dim, /*sort=*/false);
  const auto long_opts = self.options().dtype(c10::kLong);
  const int64_t n = self.numel();
  at::Tensor inverse = at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0}, long_opts);
  if (n == 0) return {at::empty({0}, self.options()), inverse, at::empty({0}, long_opts)};
  const at::Tensor flat = self.reshape({n});
  const Runs r =
      runsOf(flat, at::arange(n, long_opts), self.scalar_type(), return_counts, return_inverse);
  if (return_inverse) inverse = r.inverse.view(self.sizes());
  return {flat.index_select(0, r.starts), inverse, r.counts};
}

// _unique2: sort, mark the first of each run, one count readback (nonzero), then the values,
// counts and inverse from the run starts. Always sorted (sorted=False allows any order).
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool /*sorted*/,
                                                       bool return_inverse, bool return_counts) {
  if (!sortable(self.scalar_type())) {
    auto r = runFallback("aten::_unique2", "", {self, true, return_inverse, return_counts});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  const int64_t n = self.numel();
  const auto long_opts = self.options().dtype(c10::kLong);
  at::Tensor inverse = at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0}, long_opts);
  if (n == 0) {
    return {at::empty({0}, self.options()), inverse, at::empty({0}, long_opts)};
  }
  auto [keys, pos] = sortRows(self.reshape({1, n}).contiguous(), false);
  const at::Tensor sorted = keys.view({n});
  const Runs r = runsOf(sorted, pos.view({n}), self.scalar_type(), return_counts, return_inverse);
  at::Tensor values = sorted.index_select(0, r.starts);
  if (return_inverse) inverse = r.inverse.view(self.sizes());
  return {values, inverse, r.counts};
}

// mode: the most frequent value of each row, the smallest on ties, with the largest index of
// its occurrences (as CPU). From the stable sort: run starts, their running maximum (cummax)
// gives each element's position in its run, and the first maximum of that ends the wanted run.
std::tuple<at::Tensor, at::Tensor> modeImpl(const at::Tensor& self, int64_t dim, bool keepdim) {
  if (self.dim() == 0) return {self.clone(), at::zeros({}, self.options().dtype(at::kLong))};
  dim = at::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(dim);
  auto [sv, si] = at::sort(self, /*stable=*/true, dim, /*descending=*/false);
  const at::Tensor v = sv.movedim(dim, -1), i = si.movedim(dim, -1);
  at::Tensor starts = at::ones(v.sizes(), v.options().dtype(at::kBool));
  if (n > 1) starts.narrow(-1, 1, n - 1).copy_(v.narrow(-1, 1, n - 1).ne(v.narrow(-1, 0, n - 1)));
  const at::Tensor ar = at::arange(n, v.options().dtype(at::kLong)).expand(v.sizes());
  const at::Tensor run_start = std::get<0>(at::where(starts, ar, 0).cummax(-1));
  const at::Tensor pos = (ar - run_start).argmax(-1, /*keepdim=*/true);
  at::Tensor values = v.gather(-1, pos).movedim(-1, dim),
             indices = i.gather(-1, pos).movedim(-1, dim);
  if (!keepdim) {
    values = values.squeeze(dim);
    indices = indices.squeeze(dim);
  }
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> modeOut(const at::Tensor& self, int64_t dim, bool keepdim,
                                             at::Tensor& values, at::Tensor& indices) {
  checkSameDevice({self, values, indices});
  if (!orderNative(self)) {
    runFallback("aten::mode", "values", {self, dim, keepdim, values, indices});
    return {values, indices};
  }
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", values.scalar_type(), " instead");
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "Expected out tensor to have dtype Long, but got ", indices.scalar_type(),
              " instead");
  auto [v, i] = modeImpl(self, dim, keepdim);
  at::native::resize_output(values, v.sizes());
  at::native::resize_output(indices, i.sizes());
  values.copy_(v);
  indices.copy_(i);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> modeFn(const at::Tensor& self, int64_t dim, bool keepdim) {
  if (!orderNative(self)) {
    auto r = runFallback("aten::mode", "", {self, dim, keepdim});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  return modeImpl(self, dim, keepdim);
}

// _unique (the older form): _unique2's values and inverse.
std::tuple<at::Tensor, at::Tensor> uniqueLegacy(const at::Tensor& self, bool sorted,
                                                bool return_inverse) {
  auto [values, inverse, counts] = unique2(self, sorted, return_inverse, false);
  return {values, inverse};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_unique2", TORCH_FN(unique2));
  m.impl("kthvalue.values", TORCH_FN(kthvalueOut));
  m.impl("median", TORCH_FN(medianAll<Order::kMedian>));
  m.impl("median.dim_values", TORCH_FN(medianDimOut<Order::kMedian>));
  m.impl("mode", TORCH_FN(modeFn));
  m.impl("mode.values", TORCH_FN(modeOut));
  m.impl("nanmedian", TORCH_FN(medianAll<Order::kNanMedian>));
  m.impl("nanmedian.dim_values", TORCH_FN(medianDimOut<Order::kNanMedian>));
  m.impl("unique_dim", TORCH_FN(uniqueDim));
  m.impl("unique_consecutive", TORCH_FN(uniqueConsecutive));
  m.impl("_unique", TORCH_FN(uniqueLegacy));
  m.impl("sort.stable", TORCH_FN(sortStable));
  m.impl("sort.values_stable", TORCH_FN(sortStableOut));
  m.impl("topk", TORCH_FN(topkFn));
  m.impl("topk.values", TORCH_FN(topkOut));
}

}  // namespace torch_ocl::aten
