// unique_dim_consecutive (torch.unique_consecutive(x, dim=d)): runs of equal slices along `dim`
// collapse into one. Rows of the (size(dim), -1) view are compared with their predecessor on the
// device (ne: NaN never equals NaN, -0.0 equals 0.0, as CPU's at::equal), the run starts are
// gathered, and inverse and counts follow from them. Like CPU, inverse and counts are always
// computed and the output is a moveaxis view of the gathered rows.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>

namespace torch_ocl::aten {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> uniqueDimConsecutive(const at::Tensor& self,
                                                                    int64_t dim,
                                                                    bool return_inverse,
                                                                    bool return_counts) {
  (void)return_inverse;
  (void)return_counts;
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_complex(),
                              "\"unique_dim_consecutive_ocl\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const std::vector<int64_t> sizes = self.sizes().vec();
  const auto num_zero_dims = std::count(sizes.begin(), sizes.end(), 0);
  const auto longs = self.options().dtype(at::kLong);
  if (self.size(dim) == 0) {
    TORCH_CHECK(num_zero_dims == 1,
                "Number of zero sized dimensions is more than one, so unique cannot be applied ");
    return {at::empty(sizes, self.options()), at::empty({0}, longs), at::empty({0}, longs)};
  }
  TORCH_CHECK(num_zero_dims == 0,
              "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
              "applied");
  const at::Tensor moved = self.moveaxis(dim, 0);
  std::vector<int64_t> new_sizes = moved.sizes().vec();
  const int64_t n = moved.size(0);
  const at::Tensor flat = moved.contiguous().view({n, -1});
  at::Tensor starts = at::ones({n}, self.options().dtype(at::kBool));
  if (n > 1) starts.slice(0, 1).copy_(flat.slice(0, 1).ne(flat.slice(0, 0, n - 1)).any(1));
  const at::Tensor inverse = starts.cumsum(0, at::kLong).sub_(1);
  const at::Tensor start_idx = starts.nonzero().squeeze(1);
  const at::Tensor ends = at::cat({start_idx.slice(0, 1), at::full({1}, n, longs)});
  const at::Tensor counts = ends - start_idx;
  new_sizes[0] = -1;
  at::Tensor output = flat.index_select(0, start_idx).view(new_sizes).moveaxis(0, dim);
  return {output, inverse, counts};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("unique_dim_consecutive", TORCH_FN(uniqueDimConsecutive));
}

}  // namespace torch_ocl::aten
