// Convolutions (1-D, 2-D and 3-D, transposed or not, any stride/padding/dilation/groups)
// through per-sample im2col/col2im (vol2col/col2vol for a real depth axis) kernels and batched
// GEMMs of the matrix engine, one per group (over the samples) or per sample (over the groups);
// 2-D depthwise ones through direct row-blocked kernels. PyTorch routes every PrivateUse1
// convolution through at::_convolution, whose backend choice for a device it does not know is
// ConvBackend::Overrideable: convolution_overrideable and convolution_backward_overrideable (shapes
// are already checked there). Every convolution is seen as 3-D here (1-D and 2-D ones get unit
// depth and height); integer dtypes run the same kernels (an integer GEMM that accumulates in the
// dtype). Floating 2-D/1-D depthwise convolutions, and grouped ones with up to 16 output channels
// a group on CPU drivers, run vectorised direct row kernels instead (width stride 1 or 2; the
// input gradient unit strides). On CPU drivers the 2-D columns are written by im2col_rows (a
// (sample, channel) per work item) and added up by col2im_planes (an image plane per work item),
// and ungrouped weight gradients run as one batched product per chunk of samples, then a sum.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <vector>

#include "aten/fallback.h"
#include "aten/gemm.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kIm2colFamily;

// Mirrors ConvGeom in im2col.cl.
struct alignas(8) ConvGeom {
  cl_long N, C, H, W;
  cl_long KH, KW, OH, OW;
  cl_long sh, sw, ph, pw, dh, dw;
  cl_long sn, sc, sy, sx;
};

// Mirrors ConvGeom3 in im2col.cl.
struct alignas(8) ConvGeom3 {
  cl_long N, C, D, H, W;
  cl_long KD, KH, KW, OD, OH, OW;
  cl_long sd, sh, sw, pd, ph, pw, dd, dh, dw;
  cl_long sn, sc, sz, sy, sx;
};

// A convolution seen as 3-D: 2-D ones get D = 1, 1-D ones D = H = 1 (kernel 1, stride 1,
// padding 0 on the added axes).
struct Params {
  int64_t sd = 1, sh = 1, sw = 1, pd = 0, ph = 0, pw = 0, dd = 1, dh = 1, dw = 1;
  int64_t opd = 0, oph = 0, opw = 0, groups = 1;
};

Params params3d(at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                at::IntArrayRef output_padding, int64_t groups) {
  Params p;
  // Element `back` places from the end (0: width, 1: height, 2: depth), or the default.
  auto at_ = [](at::IntArrayRef v, size_t back, int64_t dflt) {
    return v.size() > back ? v[v.size() - 1 - back] : dflt;
  };
  p.sw = at_(stride, 0, 1), p.sh = at_(stride, 1, 1), p.sd = at_(stride, 2, 1);
  p.pw = at_(padding, 0, 0), p.ph = at_(padding, 1, 0), p.pd = at_(padding, 2, 0);
  p.dw = at_(dilation, 0, 1), p.dh = at_(dilation, 1, 1), p.dd = at_(dilation, 2, 1);
  p.opw = at_(output_padding, 0, 0), p.oph = at_(output_padding, 1, 0);
  p.opd = at_(output_padding, 2, 0);
  p.groups = groups;
  return p;
}

// (N, C, L) -> (N, C, 1, 1, L), (N, C, H, W) -> (N, C, 1, H, W); a view.
at::Tensor as3d(const at::Tensor& t) {
  if (t.dim() == 3) return t.unsqueeze(2).unsqueeze(2);
  if (t.dim() == 4) return t.unsqueeze(2);
  return t;
}

// The inverse of as3d for a result of an input of `dim` dimensions.
at::Tensor fromAs3d(const at::Tensor& t, int64_t dim) {
  if (!t.defined()) return t;
  if (dim == 3) return t.squeeze(2).squeeze(2);
  if (dim == 4) return t.squeeze(2);
  return t;
}

// A volume (nb, C, D, H, W) and kernel/column depth that the 2-D kernels can take: no real depth
// axis.
bool flat(const at::Tensor& vol, int64_t kd, int64_t od, const Params& p) {
  return vol.size(2) == 1 && kd == 1 && od == 1 && p.pd == 0;
}

// image: (nb, C, Hi, Wi) with any strides; col spatial size (Hc, Wc).
ConvGeom geometry(const at::Tensor& image, int64_t kh, int64_t kw, int64_t hc, int64_t wc,
                  const Params& p) {
  ConvGeom g{};
  g.N = image.size(0), g.C = image.size(1), g.H = image.size(2), g.W = image.size(3);
  g.KH = kh, g.KW = kw, g.OH = hc, g.OW = wc;
  g.sh = p.sh, g.sw = p.sw, g.ph = p.ph, g.pw = p.pw, g.dh = p.dh, g.dw = p.dw;
  g.sn = image.stride(0), g.sc = image.stride(1), g.sy = image.stride(2), g.sx = image.stride(3);
  return g;
}

// vol: (nb, C, Di, Hi, Wi) with any strides; col spatial size (Dc, Hc, Wc).
ConvGeom3 geometry3(const at::Tensor& vol, at::IntArrayRef k, at::IntArrayRef c, const Params& p) {
  ConvGeom3 g{};
  g.N = vol.size(0), g.C = vol.size(1), g.D = vol.size(2), g.H = vol.size(3), g.W = vol.size(4);
  g.KD = k[0], g.KH = k[1], g.KW = k[2], g.OD = c[0], g.OH = c[1], g.OW = c[2];
  g.sd = p.sd, g.sh = p.sh, g.sw = p.sw, g.pd = p.pd, g.ph = p.ph, g.pw = p.pw;
  g.dd = p.dd, g.dh = p.dh, g.dw = p.dw;
  g.sn = vol.stride(0), g.sc = vol.stride(1), g.sz = vol.stride(2), g.sy = vol.stride(3);
  g.sx = vol.stride(4);
  return g;
}

// Direct depthwise kernels (see im2col.cl): out, two inputs, the input's geometry and O.
// depthwise_fwd and depthwise_bwd_input take one work item per (row, 64 columns of it) of a
// `grid` (columns, rows, N * channels); depthwise_bwd_weight_rows one per output row (grid (OH,
// O, N)), writing partial sums. Measured on PoCL (2 cores), 16 x 64 x 28 x 28, 3x3, against one
// work item per element (best of 30, alternating processes): forward 6.1-7.5 -> 1.6 ms, input
// gradient 18.9-21.1 -> 1.1 ms, weight gradient (a work group per weight) 6.1 -> 2.2 ms.
constexpr int64_t kDepthwiseRow = 64;  // DW_ROW in im2col.cl

void launchDepthwise(const char* name, const at::Tensor& out, const at::Tensor& a,
                     const at::Tensor& b, const ConvGeom& g, int64_t o,
                     std::array<int64_t, 3> grid) {
  if (grid[0] * grid[1] * grid[2] == 0) return;
  const c10::DeviceIndex idx = out.device().index();
  // The inputs' dtype: the weight gradient's partial sums are float for 16-bit inputs.
  cl_program prog = nnProgram(idx, &kIm2colFamily, "im2col.cl", a.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  setArgs(k, bufferOf(out), bufferOf(a), bufferOf(b), g, static_cast<cl_long>(o));
  const bool row_blocks = std::string(name) != "depthwise_bwd_weight_rows";
  const size_t global[3] = {
      static_cast<size_t>(row_blocks ? (grid[0] + kDepthwiseRow - 1) / kDepthwiseRow : grid[0]),
      static_cast<size_t>(grid[1]), static_cast<size_t>(grid[2])};
  const size_t local[3] = {1, 1, 1};
  launchKernel(currentQueue(idx), k, 3, global, local);
  OCL_CATCH
}

// The vectorised row kernels (conv_rows*, conv_wgrad_rows* in im2col.cl) for depthwise and
// grouped convolutions: width stride 1 or 2, floating dtypes, and taps within their fixed private
// buffers (DWV_* there). 16 x 64 x 28 x 28, 3x3 depthwise on PoCL (loaded, min of 15) against
// the row-blocked kernels below: forward 2.0 -> 0.6 ms, input gradient 1.3 -> 0.65, weight
// gradient 3.4 -> 0.6.
constexpr int64_t kDwvCols = 32, kDwvSpan = 64, kDwvRing = 8, kDwvTaps = 25, kDwvRows = 8;

bool dwvFits(const ConvGeom& g, c10::ScalarType t) {
  return nnFloating(t) && g.sw <= 2 && kDwvCols + (g.KW - 1) * g.dw / g.sw <= kDwvSpan &&
         (g.KH - 1) * g.dh + 1 <= kDwvRing && g.KH * g.KW <= kDwvTaps;
}

// Rows per work item of the vectorised kernels: whole images where the other axes give 256 work
// items or more (the rows staged by one output row are reused by the next), else fewer rows.
int64_t dwvRowBlock(int64_t rows, int64_t items) {
  if (rows <= 0) return 1;
  const int64_t nblk = std::clamp<int64_t>((256 + items - 1) / std::max<int64_t>(items, 1), 1,
                                           std::max<int64_t>(rows, 1));
  return (rows + nblk - 1) / nblk;
}

// A vectorised depthwise kernel over `grid` work items (work groups of one), its arguments after
// the output and the two inputs being `extra`.
template <typename... Extra>
void launchDwv(const char* name, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
               std::array<int64_t, 3> grid, const Extra&... extra) {
  if (grid[0] * grid[1] * grid[2] == 0) return;
  const c10::DeviceIndex idx = out.device().index();
  cl_program prog = nnProgram(idx, &kIm2colFamily, "im2col.cl", a.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  setArgs(k, bufferOf(out), bufferOf(a), bufferOf(b), extra...);
  const size_t global[3] = {static_cast<size_t>(grid[0]), static_cast<size_t>(grid[1]),
                            static_cast<size_t>(grid[2])};
  const size_t local[3] = {1, 1, 1};
  launchKernel(currentQueue(idx), k, 3, global, local);
  OCL_CATCH
}

// conv_rows (im2col.cl) into y (N, G * og, OH, OW) contiguous: the correlation of x (geometry
// g) with filters in G groups of og output channels, each summing M input channels, the filter
// of (group, output channel in it, input channel m) at grp * wg + ol * wo + m * wm (flipped
// when `flip`). Work items of 8 output channels where the groups have 8 or more, 4 or 1 else.
void convRows(const at::Tensor& y, const at::Tensor& x, const at::Tensor& w, const ConvGeom& g,
              int64_t groups, int64_t og, int64_t m, int64_t wg, int64_t wo, int64_t wm,
              bool flip) {
  const int64_t ob = og >= 8 ? 8 : og >= 4 ? 4 : 1;
  const char* name = ob == 8 ? "conv_rows8" : ob == 4 ? "conv_rows4" : "conv_rows1";
  const int64_t ncb = (g.OW + kDwvCols - 1) / kDwvCols, z = g.N * groups * ((og + ob - 1) / ob);
  int64_t rb = dwvRowBlock(g.OH, ncb * z);
  if (m > 1) rb = std::min(rb, kDwvRows);  // the sums over m wait in private memory
  auto L = [](int64_t v) { return static_cast<cl_long>(v); };
  launchDwv(name, y, x, w, {ncb, (g.OH + rb - 1) / rb, z}, g, L(groups), L(og), L(m), L(wg), L(wo),
            L(wm), L(rb), cl_int{flip ? 1 : 0});
}

// The geometry of the correlation that gives the input gradient of a convolution with unit
// strides: over go (N, O, OH, OW), padded by (K - 1) * dilation - padding, into gi's size.
ConvGeom inputGradGeometry(const ConvGeom& xg, const at::Tensor& go, const at::Tensor& gi) {
  ConvGeom g = xg;
  g.N = go.size(0), g.C = go.size(1), g.H = go.size(2), g.W = go.size(3);
  g.OH = gi.size(2), g.OW = gi.size(3);
  g.ph = (g.KH - 1) * g.dh - xg.ph, g.pw = (g.KW - 1) * g.dw - xg.pw;
  g.sn = go.stride(0), g.sc = go.stride(1), g.sy = go.stride(2), g.sx = go.stride(3);
  return g;
}

// The weight gradient (O, M, KH, KW) of a convolution in groups of og output channels and M input
// channels (depthwise: og = multiplier, M = 1) through conv_wgrad_rows: partial sums per sample
// and block of output rows (in the accumulation dtype for 16-bit floats), then their sum. go (N,
// O, OH, OW) with unit column stride. Grouped 3 x 3 filters with 4 or more output channels a
// group (and M > 1) take conv_wgrad_grp4/8 instead: a work item per (sample, row block, group)
// stages the group's grad_output rows once for all its input channels and keeps 3 * OB vector
// sums per filter row in registers. 16 x 64 x 28 x 28 in 4 groups on PoCL (2 cores, loaded, best
// of 40 in one process, wall / process CPU ms): 3.9-4.8 / 6.2-7.6 -> 1.1-1.8 / 1.9-2.7; as
// benchmarks/conv_passes.py's CPU / ours, 0.15-0.30 -> 0.47-0.78. 8 output channels at a time
// where they divide og (float64: 4; 24 sums of 16 doubles would leave the registers).
constexpr int64_t kWgradGrpRows = 32;  // WG_RB in im2col.cl
constexpr int64_t kWgradGrpItems = 32;

at::Tensor convWgradRows(const at::Tensor& go, const at::Tensor& x, const ConvGeom& g, int64_t og,
                         int64_t m, at::IntArrayRef wsizes) {
  const int64_t o = go.size(1), n = go.size(0), oh = go.size(2), taps = g.KH * g.KW;
  const c10::ScalarType t = go.scalar_type();
  const bool reduced = t == at::kHalf || t == at::kBFloat16;
  const int64_t max_rows = (40 - (g.KH - 1) * g.dh - 1) / g.sh + 1;  // DWV_IMG staged rows
  const bool grp = g.KH == 3 && g.KW == 3 && m > 1 && og >= 4 && og <= 16;
  int64_t rb = 0, nblk = 0, items = 0;
  if (grp) {
    // Whole images where they fit (the partial sums' lane sums, once per block and output
    // channel, cost as much as a few rows), more blocks where samples x groups are few.
    items = o / og;
    const int64_t want =
        std::max<int64_t>(1, (kWgradGrpItems + items * n - 1) / std::max<int64_t>(1, items * n));
    rb = std::min({kWgradGrpRows, max_rows, std::max<int64_t>(1, (oh + want - 1) / want)});
  } else {
    // Work items of up to 16 output channels (DWV_OBW), their row blocks within the DWV_IMG (40)
    // staged input rows.
    items = (o / og) * m * ((og + 15) / 16);
    rb = std::min(dwvRowBlock(oh, items * n), max_rows);
  }
  nblk = (oh + rb - 1) / rb;
  const at::Tensor part =
      at::empty({n * nblk, o * m, taps}, go.options().dtype(reduced ? at::kFloat : t));
  if (part.numel() == 0) return at::zeros(wsizes, go.options());
  auto L = [](int64_t v) { return static_cast<cl_long>(v); };
  const char* name = grp ? (og % 8 == 0 && t != at::kDouble ? "conv_wgrad_grp8" : "conv_wgrad_grp4")
                     : g.KH == 3 && g.KW == 3 ? "conv_wgrad_rows3x3"
                                              : "conv_wgrad_rows";
  launchDwv(name, part, go, x, {nblk, items, n}, g, L(o), L(og), L(m), L(go.stride(0)),
            L(go.stride(1)), L(go.stride(2)), L(rb));
  return part.sum(0).to(t).view(wsizes);
}

// Grouped convolutions whose groups have few output channels run conv_rows on CPU drivers:
// their GEMMs (og rows each) are too thin for the matrix engine, and their columns cost as much
// as the products (16 x 64 x 28 x 28 in 4 groups on PoCL, loaded, min of 15: forward 8.5-12.7
// -> 2.0 ms, input gradient 6.0-7.0 -> 1.9, weight gradient 26-32 -> 5.3). GPUs keep the GEMMs
// (conv_rows' private buffers would leave their registers; not measured there).
constexpr int64_t kRowsMaxGroupOut = 16;

bool groupedRows(const at::Tensor& x, const std::array<int64_t, 3>& k,
                 const std::array<int64_t, 3>& c, const Params& p, int64_t og, bool transposed) {
  return !transposed && p.groups > 1 && og <= kRowsMaxGroupOut && x.size(2) == 1 && k[0] == 1 &&
         c[0] == 1 && p.pd == 0 && nnFloating(x.scalar_type()) &&
         (device(x.device().index()).info().type & CL_DEVICE_TYPE_CPU) != 0;
}

// One input channel per group: a direct kernel beats G tiny GEMMs by far.
bool depthwise(const at::Tensor& x, const Params& p, bool transposed) {
  return !transposed && p.groups > 1 && x.size(1) == p.groups;
}

// A 2-D launch (d0, d1) of the im2col/col2im/vol2col/col2vol kernels; the driver picks the local
// size. `extra` are further cl_long arguments after the geometry.
template <typename Geom>
void launchGeom2D(const at::Tensor& anchor, const char* name, const at::Tensor& out,
                  const at::Tensor& in, const Geom& g, int64_t d0, int64_t d1,
                  std::initializer_list<cl_long> extra = {}) {
  if (d0 == 0 || d1 == 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = nnProgram(idx, &kIm2colFamily, "im2col.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  setArgs(k, bufferOf(out), bufferOf(in), g);
  cl_uint i = 5;  // out (mem, offset), in (mem, offset), geometry
  for (cl_long v : extra) setArg(k, i, v);
  const size_t global[2] = {static_cast<size_t>(d0), static_cast<size_t>(d1)};
  launchKernel(currentQueue(idx), k, 2, global, nullptr);
  OCL_CATCH
}

bool cpuDevice(const at::Tensor& t) {
  return (device(t.device().index()).info().type & CL_DEVICE_TYPE_CPU) != 0;
}

// A 2-D launch of im2col_rows / col2im_planes (CPU drivers): work groups of one work item, each
// the columns of one (sample, channel) or one image plane (a few hundred or more for a batch:
// enough for the driver's threads, each large enough to amortise a work group's start).
void launchRows(const at::Tensor& anchor, const char* name, const at::Tensor& out,
                const at::Tensor& in, const ConvGeom& g, std::array<int64_t, 2> grid,
                std::initializer_list<cl_long> extra) {
  if (grid[0] == 0 || grid[1] == 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = nnProgram(idx, &kIm2colFamily, "im2col.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  setArgs(k, bufferOf(out), bufferOf(in), g);
  cl_uint i = 5;
  for (cl_long v : extra) setArg(k, i, v);
  const size_t global[2] = {static_cast<size_t>(grid[0]), static_cast<size_t>(grid[1])};
  const size_t local[2] = {1, 1};
  launchKernel(currentQueue(idx), k, 2, global, local);
  OCL_CATCH
}

// Kernel (KD, KH, KW) and column (OD, OH, OW) sizes.
using Dims3 = std::array<int64_t, 3>;

int64_t prod(const Dims3& d) {
  return d[0] * d[1] * d[2];
}

// Columns of `vol` (nb, C, Di, Hi, Wi): per sample (nb, C*K, L), each sample's columns one
// matrix whose rows (c, kd, kh, kw) put group g's Cg*K rows together; K = KD*KH*KW, L = OD*OH*OW.
// With pad_rows (float32), each row is allocated with L rounded up to 64 and the result is a view
// of the first L: the matrix engine's cpu_tile then reads the columns in place as whole panels
// instead of packing a copy (28 x 28 outputs: L = 784).
at::Tensor im2col(const at::Tensor& vol, const Dims3& k, const Dims3& c, const Params& p,
                  bool pad_rows = false) {
  const int64_t ck = vol.size(1) * prod(k), nb = vol.size(0), l = prod(c);
  const int64_t lp = pad_rows && vol.scalar_type() == at::kFloat ? (l + 63) / 64 * 64 : l;
  at::Tensor col = at::empty({nb, ck, lp}, vol.options());
  if (lp != l) col = col.narrow(2, 0, l);
  if (col.numel() == 0) return col;
  const cl_long cs_n = ck * lp, cs_k = lp;
  const int64_t rows = ck * nb;
  if (flat(vol, k[0], c[0], p)) {
    const at::Tensor image = vol.select(2, 0);
    const ConvGeom geom = geometry(image, k[1], k[2], c[1], c[2], p);
    if (cpuDevice(vol))
      launchRows(vol, "im2col_rows", col, image, geom, {nb, vol.size(1)}, {cs_n, cs_k});
    else
      launchGeom2D(vol, "im2col", col, image, geom, c[1], rows, {cs_n, cs_k});
  } else {
    launchGeom2D(vol, "vol2col", col, vol, geometry3(vol, k, c, p), c[0] * c[1], rows,
                 {cs_n, cs_k});
  }
  return col;
}

// Adds up columns into the contiguous `vol` (nb, C, Di, Hi, Wi), which it overwrites. `col` is
// contiguous, per sample (nb, C*K, L) as im2col writes it.
void col2im(const at::Tensor& col, const at::Tensor& vol, const Dims3& k, const Dims3& c,
            const Params& p) {
  TORCH_INTERNAL_ASSERT(vol.is_contiguous() && col.is_contiguous());
  if (vol.numel() == 0) return;
  const int64_t l = prod(c), rows = vol.size(1) * prod(k);
  const cl_long cs_n = rows * l, cs_k = l;
  const int64_t nc = vol.size(0) * vol.size(1);
  if (flat(vol, k[0], c[0], p)) {
    const at::Tensor image = vol.select(2, 0);
    const ConvGeom geom = geometry(image, k[1], k[2], c[1], c[2], p);
    const c10::ScalarType t = vol.scalar_type();
    if (cpuDevice(vol) && (t == at::kFloat || t == at::kDouble))
      launchRows(vol, "col2im_planes", image, col, geom, {nc, 1}, {cs_n, cs_k});
    else
      launchGeom2D(vol, "col2im", image, col, geom, image.size(2), nc, {cs_n, cs_k});
  } else {
    launchGeom2D(vol, "col2vol", vol, col, geometry3(vol, k, c, p), vol.size(2) * vol.size(3), nc,
                 {cs_n, cs_k});
  }
}

// Samples per chunk: one chunk's columns near `mib` MiB (at least one sample). The forward and
// the input gradient take 4 MiB, so that the columns are still in the caches when the next
// kernel reads them; the weight gradient, one host-BLAS batch sum per chunk on PoCL, 128 MiB
// (best of 16, load 1.2, 2 cores: the CNN's 32->64 layer at batch 64, 4 / 128 MiB: forward 9.9 /
// 10.7 ms, input gradient 7.6 / 9.2, weight gradient 13.4 / 12.3; ResNet 64->64 on 56 x 56 at
// batch 8: 11.5 / 13.7, 9.0 / 11.0, 15.1 / 12.2).
int64_t batchChunk(int64_t n, int64_t col_elems_per_sample, int64_t elem_size, int64_t mib = 4) {
  const int64_t budget = mib << 20;
  const int64_t per = std::max<int64_t>(1, col_elems_per_sample * elem_size);
  return std::max<int64_t>(1, std::min<int64_t>(n, budget / per));
}

// (nb, G*R, S...) as (nb, G, R, S): a view where the strides allow, else a contiguous copy.
at::Tensor byGroup(const at::Tensor& t, int64_t g) {
  const int64_t nb = t.size(0), r = t.size(1) / g;
  return t.reshape({nb, g, r, -1});
}

// Grouped products with fewer rows than this keep one batched GEMM per group or per sample (4
// rows: 8 x 128 channels in 32 groups measured slower batched over samples and groups).
constexpr int64_t kGroupBatchMinRows = 16;

// Whether a weight gradient runs all (sample, group) products in one batched GEMM and sums them
// after (float32 and float64: 16-bit products would be rounded before the sum): grouped ones
// everywhere, ungrouped ones on CPU drivers too, where the host BLAS's in-place sum over the
// samples (one sgemm after the other, each split statically between its threads) lost to one
// batched launch of cpu_tile, whose work groups the driver shares out. Measured on PoCL (2 cores
// shared with other work, best of 30 interleaved, wall / process CPU ms of the products alone):
// the CNN's 32->64 layer at batch 64 (64 x 576 @ 576 x 288 per sample) 22.2 / 22.3 -> 13.5 /
// 18.9, ResNet 64->64 on 56 x 56 at batch 8 (64 x 3136 @ 3136 x 576) 25.2 / 25.0 -> 12.2 / 19.1.
// Ungrouped ones need 256 pixels or more per sample: the products written before their sum
// cost O x Cin*K elements a sample against 2 x O x Cin*K x pixels flops (late ResNet stages, 7 x 7
// pixels, keep the host BLAS's in-place sum; not measured).
constexpr int64_t kDenseBatchMinK = 256;

bool groupSumBatched(int64_t groups, int64_t rows, int64_t k, c10::ScalarType t, bool cpu) {
  return (groups > 1 || (cpu && k >= kDenseBatchMinK)) && rows >= kGroupBatchMinRows &&
         (t == at::kFloat || t == at::kDouble);
}

// The inner dimension of a batched weight-gradient product in pieces of at most this (CPU
// drivers): cpu_tile keeps a whole K x 64 panel per tile row, and the matrix engine gives K
// beyond 2048 to the host BLAS (ResNet's 56 x 56 pixels: K = 3136 in two pieces of 1568).
constexpr int64_t kSumMaxK = 2048;

int64_t sumPieces(int64_t k, bool cpu) {
  return cpu && k > kSumMaxK ? (k + kSumMaxK - 1) / kSumMaxK : 1;
}

// out[n][j] = a[j] @ b[n][j] (+ bias[j]) for every sample n and group j: out (nb, G, M, N) and b
// (nb, G, K, N) views, a (G, M, K) shared by the samples. One batched GEMM over every (sample,
// group) pair where the groups have 16 rows or more, else one per group over the samples or per
// sample over the groups, whichever launches fewer. Measured (process CPU time per call, 2 cores
// loaded by other work, 2 alternating processes each): 16 x 64 x 28 x 28 in 4 groups, forward +
// both gradients 36-42 -> 32 ms, its weight gradient 35-37 -> 24 ms; 8 x 128 x 28 x 28 in 8
// groups unchanged; 32 groups of 4 rows slower batched (so kept per group).
void groupedGemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                 const at::Tensor& bias = {}) {
  const int64_t nb = out.size(0), g = out.size(1), m = out.size(2), n = out.size(3);
  const int64_t k = a.size(2);
  auto epi = [&](const at::Tensor& bj, at::IntArrayRef sizes) {
    GemmEpilogue e;
    if (bj.defined()) e.bias = bj.expand(sizes);
    return e;
  };
  // Every (sample, group) product in one batched GEMM: out and b flattened to nb * G matrices
  // (their strides allow it: im2col's columns and a contiguous output do), a and the bias
  // repeated per sample (small: the weights, nb times).
  if (g > 1 && nb > 1 && m >= kGroupBatchMinRows && out.stride(0) == g * out.stride(1) &&
      b.stride(0) == g * b.stride(1) && nb * g * m * k <= (int64_t{4} << 20)) {
    const at::Tensor out_f = out.flatten(0, 1), b_f = b.flatten(0, 1);
    const at::Tensor a_f = a.unsqueeze(0).expand({nb, g, m, k}).reshape({nb * g, m, k});
    at::Tensor bias_f;
    if (bias.defined())
      bias_f = bias.view({1, g, m, 1}).expand({nb, g, m, 1}).reshape({nb * g, m, 1});
    gemm(out_f, a_f, b_f, 1, 0, epi(bias_f, {nb * g, m, n}));
    return;
  }
  if (g <= nb) {
    for (int64_t j = 0; j < g; ++j) {
      const at::Tensor bj = bias.defined() ? bias.narrow(0, j * m, m).view({1, m, 1}) : bias;
      gemm(out.select(1, j), a.select(0, j).expand({nb, m, k}), b.select(1, j), 1, 0,
           epi(bj, {nb, m, n}));
    }
  } else {
    const at::Tensor bg = bias.defined() ? bias.view({g, m, 1}) : bias;
    for (int64_t i = 0; i < nb; ++i)
      gemm(out.select(0, i), a, b.select(0, i), 1, 0, epi(bg, {g, m, n}));
  }
}

// The products a batched weight gradient writes before their sum, at most (16 M elements).
constexpr int64_t kSumMaxElems = int64_t{4} << 20;

// out[j] = sum_n a[n][j] @ b[n][j] + beta * out[j]: out (G, M, N), a (nb, G, M, K), b (nb, G, K,
// N) views (a weight gradient, the sum running over the samples).
void groupedGemmSum(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, bool beta) {
  const int64_t nb = a.size(0), g = out.size(0), m = out.size(1), n = out.size(2);
  const c10::ScalarType t = out.scalar_type();
  // Every (sample, group) product in one batched GEMM (per piece of K), then their sum over the
  // samples and pieces (float32 and float64 only: 16-bit products would be rounded before the
  // sum).
  const bool cpu = cpuDevice(out);
  const int64_t k = a.size(3), pieces = sumPieces(k, cpu), piece = (k + pieces - 1) / pieces;
  // Ungrouped on cpu_tile, the sum runs in the kernel's accumulators (no products written, no
  // separate sum), one launch per piece of K. CNN 32->64 on 26 x 26 at batch 64 (64 x 576 @
  // 576 x 288 per sample), weight gradient, best of 4 alternating rounds, loaded: 9.7 -> 8.0 ms.
  if (g == 1 && nb > 1 && gemmBatchSumInKernel(out.select(0, 0), a.select(1, 0), b.select(1, 0))) {
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t k0 = i * piece, kl = std::min(piece, k - k0);
      gemmBatchSum(out.select(0, 0), a.select(1, 0).narrow(2, k0, kl),
                   b.select(1, 0).narrow(1, k0, kl), 1, (beta || i > 0) ? 1 : 0);
    }
    return;
  }
  if (groupSumBatched(g, m, k, t, cpu) && nb > 1 && (g == 1 || a.stride(0) == g * a.stride(1)) &&
      (g == 1 || b.stride(0) == g * b.stride(1)) && pieces * nb * g * m * n <= kSumMaxElems) {
    at::Tensor prod = at::empty({pieces, nb * g, m, n}, out.options());
    const at::Tensor a_f = a.flatten(0, 1), b_f = b.flatten(0, 1);
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t k0 = i * piece, kl = std::min(piece, k - k0);
      gemm(prod.select(0, i), a_f.narrow(2, k0, kl), b_f.narrow(1, k0, kl), 1, 0);
    }
    const at::Tensor total = prod.view({pieces * nb, g, m, n}).sum(0);
    if (beta)
      out.add_(total);
    else
      out.copy_(total);
    return;
  }
  for (int64_t j = 0; j < out.size(0); ++j)
    gemmBatchSum(out.select(0, j), a.select(1, j), b.select(1, j), 1, beta ? 1 : 0);
}

// Floating dtypes, and integers (not bool) as CPU PyTorch computes them: im2col in the dtype and
// the matrix engine's integer GEMM (tiled, accumulating in the dtype, wrapping as CPU does).
bool native(const at::Tensor& input, const at::Tensor& weight) {
  const c10::ScalarType t = input.scalar_type();
  return (nnFloating(t) || (nnInteger(t) && gemmSupports(t))) && input.dim() >= 3 &&
         input.dim() <= 5 && weight.scalar_type() == t;
}

Dims3 kernelDims(const at::Tensor& w) {
  return {w.size(2), w.size(3), w.size(4)};
}

// Output size of a convolution along one axis.
int64_t convOut(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / s + 1;
}

int64_t convTransposeOut(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil, int64_t op) {
  return (in - 1) * s - 2 * pad + dil * (k - 1) + op + 1;
}

// A depthwise convolution without a depth axis runs the direct 2-D kernels.
bool depthwise2d(const at::Tensor& x, const Dims3& k, const Dims3& c, const Params& p,
                 bool transposed) {
  return depthwise(x, p, transposed) && flat(x, k[0], c[0], p);
}

at::Tensor convForward(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, const Params& p, bool transposed) {
  const at::Tensor x = as3d(input), w = as3d(weight);
  const int64_t n = x.size(0), g = p.groups;
  const Dims3 k = kernelDims(w), in{x.size(2), x.size(3), x.size(4)};
  const int64_t kk = prod(k);
  at::Tensor out;
  // A bias of the result's dtype on a dtype the engine runs goes into the GEMM's epilogue.
  const bool has_bias = bias && bias->defined();
  bool fused_bias = false;
  if (!transposed) {
    const int64_t o = w.size(0), og = o / g, cg = x.size(1) / g;
    fused_bias = has_bias && bias->scalar_type() == x.scalar_type() && bias->dim() == 1 &&
                 bias->numel() == o && gemmSupports(x.scalar_type());
    const Dims3 c{convOut(in[0], k[0], p.sd, p.pd, p.dd), convOut(in[1], k[1], p.sh, p.ph, p.dh),
                  convOut(in[2], k[2], p.sw, p.pw, p.dw)};
    out = at::empty({n, o, c[0], c[1], c[2]}, x.options());
    if (depthwise2d(x, k, c, p, transposed)) {
      const at::Tensor wc = w.select(2, 0).contiguous(), x2 = x.select(2, 0);
      const ConvGeom geom = geometry(x2, k[1], k[2], c[1], c[2], p);
      const int64_t mult = o / x.size(1), taps = k[1] * k[2];
      if (dwvFits(geom, x.scalar_type()))
        convRows(out.select(2, 0), x2, wc, geom, x.size(1), mult, 1, mult * taps, taps, 0, false);
      else
        launchDepthwise("depthwise_fwd", out, x2, wc, geom, o, {c[2], c[1], n * o});
      fused_bias = false;
    } else if (groupedRows(x, k, c, p, og, transposed) &&
               dwvFits(geometry(x.select(2, 0), k[1], k[2], c[1], c[2], p), x.scalar_type())) {
      const at::Tensor x2 = x.select(2, 0), wc = w.select(2, 0).contiguous();
      convRows(out.select(2, 0), x2, wc, geometry(x2, k[1], k[2], c[1], c[2], p), g, og, cg,
               og * cg * kk, cg * kk, kk, false);
      fused_bias = false;
    } else {
      // Per sample and group: out[n][j] (Og x L) = W[j] (Og x Cg*K) @ columns[n][j] (Cg*K x L),
      // straight into out, the bias in the GEMM's epilogue.
      const int64_t l = prod(c);
      const at::Tensor w_r = w.reshape({g, og, cg * kk});
      const int64_t step = batchChunk(n, x.size(1) * kk * l, x.element_size());
      for (int64_t n0 = 0; n0 < n; n0 += step) {
        const int64_t nb = std::min(step, n - n0);
        const at::Tensor col = im2col(x.narrow(0, n0, nb), k, c, p, /*pad_rows=*/true);
        groupedGemm(out.narrow(0, n0, nb).view({nb, g, og, l}), w_r, col.view({nb, g, cg * kk, l}),
                    fused_bias ? *bias : at::Tensor());
      }
    }
  } else {
    const int64_t cin_g = x.size(1) / g, cout_g = w.size(1), cout = cout_g * g;
    const Dims3 c{convTransposeOut(in[0], k[0], p.sd, p.pd, p.dd, p.opd),
                  convTransposeOut(in[1], k[1], p.sh, p.ph, p.dh, p.oph),
                  convTransposeOut(in[2], k[2], p.sw, p.pw, p.dw, p.opw)};
    out = at::empty({n, cout, c[0], c[1], c[2]}, x.options());
    // Per sample and group: the output's columns at the input's positions, columns[n][j]
    // (Cout_g*K x In) = W[j]^T @ x[n][j] (Cin_g x In), then added up into the output.
    const int64_t l_in = prod(in);
    const at::Tensor w_t = w.reshape({g, cin_g, cout_g * kk}).transpose(1, 2);
    const int64_t step = batchChunk(n, cout * kk * l_in, x.element_size());
    for (int64_t n0 = 0; n0 < n; n0 += step) {
      const int64_t nb = std::min(step, n - n0);
      at::Tensor col = at::empty({nb, cout * kk, l_in}, x.options());
      if (col.numel() == 0) continue;
      groupedGemm(col.view({nb, g, cout_g * kk, l_in}), w_t, byGroup(x.narrow(0, n0, nb), g));
      col2im(col, out.narrow(0, n0, nb), k, in, p);
    }
  }
  if (has_bias && !fused_bias) out.add_(bias->view({1, -1, 1, 1, 1}));
  return fromAs3d(out, input.dim());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convBackward(const at::Tensor& grad_output,
                                                            const at::Tensor& input,
                                                            const at::Tensor& weight,
                                                            const Params& p, bool transposed,
                                                            std::array<bool, 3> mask) {
  const at::Tensor x = as3d(input), w = as3d(weight), go = as3d(grad_output);
  const int64_t n = x.size(0), g = p.groups;
  const Dims3 k = kernelDims(w), in{x.size(2), x.size(3), x.size(4)};
  const Dims3 c{go.size(2), go.size(3), go.size(4)};
  const int64_t kk = prod(k), l = prod(c), l_in = prod(in);
  at::Tensor gi = mask[0] ? at::empty(x.sizes(), x.options()) : at::Tensor();
  at::Tensor gw_r;
  if (depthwise2d(x, k, c, p, transposed)) {
    const at::Tensor goc = go.select(2, 0).contiguous(), wc = w.select(2, 0).contiguous();
    const at::Tensor x2 = x.select(2, 0);
    const ConvGeom geom = geometry(x2, k[1], k[2], c[1], c[2], p);
    const bool dwv = dwvFits(geom, x.scalar_type());
    if (mask[0]) {
      const int64_t c_in = x.size(1), mult = w.size(0) / c_in, taps = k[1] * k[2];
      if (dwv && p.sh == 1 && p.sw == 1) {
        const at::Tensor gi2 = gi.select(2, 0);
        convRows(gi2, goc, wc, inputGradGeometry(geom, goc, gi2), c_in, 1, mult, mult * taps, 0,
                 taps, true);
      } else {
        launchDepthwise("depthwise_bwd_input", gi, goc, wc, geom, w.size(0),
                        {x2.size(3), x2.size(2), n * x2.size(1)});
      }
    }
    if (mask[1]) {
      if (dwv) {
        gw_r = convWgradRows(goc, x2, geom, w.size(0) / x.size(1), 1, w.sizes());
      } else {
        // Partial sums per output row (in the accumulation dtype for 16-bit floats), then
        // their sum over the rows.
        const int64_t o = w.size(0), taps = k[1] * k[2];
        const c10::ScalarType t = goc.scalar_type();
        const bool reduced = t == at::kHalf || t == at::kBFloat16;
        const at::Tensor part =
            at::empty({n * c[1], o, taps}, goc.options().dtype(reduced ? at::kFloat : t));
        launchDepthwise("depthwise_bwd_weight_rows", part, goc, x2, geom, o, {c[1], o, n});
        gw_r = part.size(0) == 0 ? at::zeros(w.sizes(), w.options())
                                 : part.sum(0).to(t).view(w.sizes());
      }
    }
  } else if (!transposed) {
    const int64_t og = w.size(0) / g, cg = x.size(1) / g;
    const at::Tensor w_r = w.reshape({g, og, cg * kk});
    const int64_t col_elems = x.size(1) * kk * l;
    const at::Tensor x2 = x.select(2, 0);
    const bool rows = groupedRows(x, k, c, p, og, transposed) &&
                      dwvFits(geometry(x2, k[1], k[2], c[1], c[2], p), x.scalar_type());
    if (mask[1] && rows) {
      const at::Tensor go2 = go.select(2, 0);
      gw_r = convWgradRows(go2.stride(3) == 1 ? go2 : go2.contiguous(), x2,
                           geometry(x2, k[1], k[2], c[1], c[2], p), og, cg, w.sizes());
    } else if (mask[1]) {
      // dW[j] = sum over samples of grad_output[n][j] (Og x L) @ columns[n][j]^T, accumulated
      // in place over the chunks. Batched over groups (groupSumBatched): 8 MiB chunks (process
      // CPU time of the weight gradient, 3 alternating rounds, loaded: 4 x 16 channels at batch
      // 16 and 8 x 16 at batch 8, 4 MiB 23-26 / 31-36 ms, 8 MiB 25-26 / 24-25, 16 MiB 26-28 /
      // 26-27).
      const bool cpu = cpuDevice(x);
      const bool batched = groupSumBatched(g, og, l, x.scalar_type(), cpu);
      int64_t step = batchChunk(n, col_elems, x.element_size(), !batched ? 128 : g > 1 ? 8 : 64);
      if (batched)  // the products of a chunk within kSumMaxElems
        step = std::max<int64_t>(
            1, std::min(step,
                        kSumMaxElems / std::max<int64_t>(1, sumPieces(l, cpu) * g * og * cg * kk)));
      for (int64_t n0 = 0; n0 < n; n0 += step) {
        const int64_t nb = std::min(step, n - n0);
        const at::Tensor col =
            im2col(x.narrow(0, n0, nb), k, c, p, /*pad_rows=*/true).view({nb, g, cg * kk, l});
        const bool first = !gw_r.defined();
        if (first) gw_r = at::empty({g, og, cg * kk}, w.options());
        groupedGemmSum(gw_r, byGroup(go.narrow(0, n0, nb), g), col.transpose(2, 3), !first);
      }
    }
    if (mask[0] && rows && p.sh == 1 && p.sw == 1) {
      // The correlation of grad_output with the flipped filters, group by group (the filter of
      // input channel cl and output channel om of a group at om * Cg*K + cl * K).
      const at::Tensor gi2 = gi.select(2, 0), go2 = go.select(2, 0);
      const at::Tensor wc = w.select(2, 0).contiguous();
      convRows(gi2, go2, wc, inputGradGeometry(geometry(x2, k[1], k[2], c[1], c[2], p), go2, gi2),
               g, cg, og, og * cg * kk, kk, cg * kk, true);
    } else if (mask[0]) {
      // Columns[n][j] (Cg*K x L) = W[j]^T @ grad_output[n][j], added up into grad_input.
      const int64_t step = batchChunk(n, col_elems, x.element_size());
      for (int64_t n0 = 0; n0 < n; n0 += step) {
        const int64_t nb = std::min(step, n - n0);
        at::Tensor gcol = at::empty({nb, x.size(1) * kk, l}, x.options());
        groupedGemm(gcol.view({nb, g, cg * kk, l}), w_r.transpose(1, 2),
                    byGroup(go.narrow(0, n0, nb), g));
        col2im(gcol, gi.narrow(0, n0, nb), k, c, p);
      }
    }
  } else {
    const int64_t cin_g = x.size(1) / g, cout_g = w.size(1), cout = cout_g * g;
    const at::Tensor w_r = w.reshape({g, cin_g, cout_g * kk});
    const int64_t step = batchChunk(n, cout * kk * l_in, x.element_size());
    for (int64_t n0 = 0; n0 < n; n0 += step) {
      const int64_t nb = std::min(step, n - n0);
      // The transposed convolution's adjoint is an ordinary one over grad_output: its columns
      // at the input's positions, (nb, G, Cout_g*K, In).
      const at::Tensor col = im2col(go.narrow(0, n0, nb), k, in, p, /*pad_rows=*/true)
                                 .view({nb, g, cout_g * kk, l_in});
      if (mask[0]) groupedGemm(gi.narrow(0, n0, nb).view({nb, g, cin_g, l_in}), w_r, col);
      if (mask[1]) {
        const bool first = !gw_r.defined();
        if (first) gw_r = at::empty({g, cin_g, cout_g * kk}, w.options());
        groupedGemmSum(gw_r, byGroup(x.narrow(0, n0, nb), g), col.transpose(2, 3), !first);
      }
    }
  }
  at::Tensor gw;
  if (mask[1]) gw = gw_r.defined() ? gw_r.view(w.sizes()) : at::zeros(w.sizes(), w.options());
  gw = fromAs3d(gw, weight.dim());
  gi = fromAs3d(gi, input.dim());
  at::Tensor gb;
  if (mask[2]) {
    // Sum over pixels as a batched GEMV through the matrix engine, then over the batch.
    // 16-bit floats as a float sum rounded once, as CPU PyTorch does (the GEMV's per-sample
    // results would be rounded before their sum over the batch).
    const c10::ScalarType t = go.scalar_type();
    const at::Tensor ones = at::ones({l, 1}, go.options());
    gb = go.numel() == 0 ? at::zeros({go.size(1)}, go.options())
         : t == at::kHalf || t == at::kBFloat16
             ? go.sum({0, 2, 3, 4}, false, at::kFloat).to(t)
             : at::bmm(go.reshape({n, go.size(1), l}), ones.expand({n, l, 1}))
                   .sum(0)
                   .view({go.size(1)});
  }
  return {gi, gw, gb};
}

at::Tensor convolutionOverrideable(const at::Tensor& input, const at::Tensor& weight,
                                   const std::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                   at::IntArrayRef padding, at::IntArrayRef dilation,
                                   bool transposed, at::IntArrayRef output_padding,
                                   int64_t groups) {
  const at::Tensor no_bias;
  checkSameDevice({input, weight, bias ? *bias : no_bias});
  if (!native(input, weight))
    return runFallback("aten::convolution", "",
                       {input, weight, bias, stride.vec(), padding.vec(), dilation.vec(),
                        transposed, output_padding.vec(), groups})[0]
        .toTensor();
  // im2col reads any strides; channels_last inputs are read in place (no .contiguous()).
  return convForward(input, weight, bias,
                     params3d(stride, padding, dilation, output_padding, groups), transposed);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolutionBackwardOverrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
    at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  checkSameDevice({grad_output, input, weight});
  if (!native(input, weight) || grad_output.scalar_type() != input.scalar_type()) {
    const int64_t out_channels = transposed ? weight.size(1) * groups : weight.size(0);
    auto r =
        runFallback("aten::convolution_backward", "",
                    {grad_output, input, weight,
                     std::optional<std::vector<int64_t>>(std::vector<int64_t>{out_channels}),
                     stride.vec(), padding.vec(), dilation.vec(), transposed, output_padding.vec(),
                     groups, c10::List<bool>({output_mask[0], output_mask[1], output_mask[2]})});
    auto get = [&](size_t i) { return r[i].isTensor() ? r[i].toTensor() : at::Tensor(); };
    return {get(0), get(1), get(2)};
  }
  return convBackward(grad_output, input, weight,
                      params3d(stride, padding, dilation, output_padding, groups), transposed,
                      output_mask);
}

// nn.functional.unfold / fold: the sliding blocks of a (N, C, H, W) or (C, H, W) image as
// (N, C*KH*KW, L) columns and back, with the convolution's own kernels.
void checkBlocks(const char* op, at::IntArrayRef kernel, at::IntArrayRef dilation,
                 at::IntArrayRef padding, at::IntArrayRef stride) {
  TORCH_CHECK(
      kernel.size() == 2 && dilation.size() == 2 && padding.size() == 2 && stride.size() == 2, op,
      ": kernel_size, dilation, padding and stride must have 2 elements each");
  TORCH_CHECK(kernel[0] > 0 && kernel[1] > 0, op,
              ": kernel size should be greater than zero, but got kH: ", kernel[0],
              " kW: ", kernel[1]);
  TORCH_CHECK(dilation[0] > 0 && dilation[1] > 0, op,
              ": dilation should be greater than zero, but got dH: ", dilation[0],
              " dW: ", dilation[1]);
  TORCH_CHECK(padding[0] >= 0 && padding[1] >= 0, op,
              ": padding should be non-negative, but got padH: ", padding[0],
              " padW: ", padding[1]);
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0, op,
              ": stride should be greater than zero, but got dH: ", stride[0], " dW: ", stride[1]);
}

Dims3 blockGrid(const char* op, int64_t h, int64_t w, at::IntArrayRef kernel,
                at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  const int64_t oh = convOut(h, kernel[0], stride[0], padding[0], dilation[0]);
  const int64_t ow = convOut(w, kernel[1], stride[1], padding[1], dilation[1]);
  TORCH_CHECK(oh >= 1 && ow >= 1, op, ": given input with spatial size (", h, ", ", w,
              "), kernel_size=", kernel, ", dilation=", dilation, ", padding=", padding,
              ", calculated shape of the array of sliding blocks as (", oh, ", ", ow,
              "), but its components must be at least one.");
  return {1, oh, ow};
}

Params blockParams(at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  return params3d(stride, padding, dilation, {}, 1);
}

at::Tensor im2colOp(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation,
                    at::IntArrayRef padding, at::IntArrayRef stride) {
  const c10::ScalarType t = self.scalar_type();
  // im2col only moves elements (zeros in the padding): bool runs as its bytes, complex64 as
  // 8-byte words (0 is 0 + 0j), complex128 as its real and imaginary parts.
  if (t == at::kBool)
    return im2colOp(self.view(at::kByte), kernel, dilation, padding, stride).view(at::kBool);
  if (t == at::kComplexFloat)
    return im2colOp(self.resolve_conj().resolve_neg().view(at::kLong), kernel, dilation, padding,
                    stride)
        .view(at::kComplexFloat);
  if (t == at::kComplexDouble) {
    const at::Tensor parts = at::view_as_real(self.resolve_conj().resolve_neg());
    const at::Tensor re = im2colOp(parts.select(-1, 0), kernel, dilation, padding, stride);
    const at::Tensor im = im2colOp(parts.select(-1, 1), kernel, dilation, padding, stride);
    return at::complex(re, im);
  }
  if (!nnFloating(t) && !nnInteger(t))
    return runFallback("aten::im2col", "",
                       {self, kernel.vec(), dilation.vec(), padding.vec(), stride.vec()})[0]
        .toTensor();
  checkBlocks("im2col", kernel, dilation, padding, stride);
  TORCH_CHECK((self.dim() == 3 && self.size(0) > 0 && self.size(1) > 0 && self.size(2) > 0) ||
                  (self.dim() == 4 && self.size(1) > 0 && self.size(2) > 0 && self.size(3) > 0),
              "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
              "non-zero dimensions for input, but got: ",
              self.sizes());
  const at::Tensor x = self.dim() == 3 ? self.unsqueeze(0) : self;
  const Dims3 c = blockGrid("im2col", x.size(2), x.size(3), kernel, dilation, padding, stride);
  const at::Tensor col =
      im2col(as3d(x), {1, kernel[0], kernel[1]}, c, blockParams(dilation, padding, stride));
  return self.dim() == 3 ? col.squeeze(0) : col;
}

at::Tensor col2imOp(const at::Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel,
                    at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  if (!nnFloating(self.scalar_type()))
    return runFallback("aten::col2im", "",
                       {self, output_size.vec(), kernel.vec(), dilation.vec(), padding.vec(),
                        stride.vec()})[0]
        .toTensor();
  checkBlocks("col2im", kernel, dilation, padding, stride);
  TORCH_CHECK(output_size.size() == 2, "col2im: output_size must have 2 elements, got ",
              output_size.size());
  TORCH_CHECK((self.dim() == 2 && self.size(0) > 0 && self.size(1) > 0) ||
                  (self.dim() == 3 && self.size(1) > 0 && self.size(2) > 0),
              "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
              "non-zero dimensions for input, but got: ",
              self.sizes());
  const at::Tensor col = self.dim() == 2 ? self.unsqueeze(0) : self;
  const int64_t k = kernel[0] * kernel[1];
  TORCH_CHECK(col.size(1) % k == 0,
              "Expected size of input's dimension 1 to be divisible by the product of "
              "kernel_size, but got input.size(1)=",
              col.size(1), " and kernel_size=", kernel);
  const Dims3 c =
      blockGrid("col2im", output_size[0], output_size[1], kernel, dilation, padding, stride);
  TORCH_CHECK(col.size(2) == c[1] * c[2], "Given output_size=", output_size,
              ", kernel_size=", kernel, ", dilation=", dilation, ", padding=", padding,
              ", stride=", stride,
              ", expected size of input's dimension 2 to match the calculated "
              "number of sliding blocks ",
              c[1], " * ", c[2], " = ", c[1] * c[2], ", but got input.size(2)=", col.size(2), ".");
  at::Tensor out =
      at::empty({col.size(0), col.size(1) / k, output_size[0], output_size[1]}, col.options());
  col2im(col.contiguous(), as3d(out), {1, kernel[0], kernel[1]}, c,
         blockParams(dilation, padding, stride));
  return self.dim() == 2 ? out.squeeze(0) : out;
}

// ---- The legacy slow_conv* ops (called directly by some code and by TorchScript graphs): all are
// plain convolutions, routed to at::convolution and so to the kernels above.
at::Tensor slowConv(const at::Tensor& self, const at::Tensor& weight,
                    const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                    c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation, bool transposed,
                    c10::SymIntArrayRef output_padding) {
  const size_t n = static_cast<size_t>(weight.dim()) - 2;
  const std::vector<c10::SymInt> ones(n, 1), zeros(n, 0);
  return at::convolution_symint(
      self, weight, bias, stride, padding, dilation.empty() ? c10::SymIntArrayRef(ones) : dilation,
      transposed, output_padding.empty() ? c10::SymIntArrayRef(zeros) : output_padding, 1);
}

at::Tensor slowConvForward(const at::Tensor& self, const at::Tensor& weight,
                           c10::SymIntArrayRef kernel_size, const std::optional<at::Tensor>& bias,
                           c10::SymIntArrayRef stride, c10::SymIntArrayRef padding) {
  return slowConv(self, weight, bias, stride, padding, {}, false, {});
}

at::Tensor slowConvDilated(const at::Tensor& self, const at::Tensor& weight,
                           c10::SymIntArrayRef kernel_size, const std::optional<at::Tensor>& bias,
                           c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                           c10::SymIntArrayRef dilation) {
  return slowConv(self, weight, bias, stride, padding, dilation, false, {});
}

at::Tensor slowConvTranspose(const at::Tensor& self, const at::Tensor& weight,
                             c10::SymIntArrayRef kernel_size, const std::optional<at::Tensor>& bias,
                             c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                             c10::SymIntArrayRef output_padding, c10::SymIntArrayRef dilation) {
  return slowConv(self, weight, bias, stride, padding, dilation, true, output_padding);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> slowConv2dBackward(
    const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& weight,
    c10::SymIntArrayRef kernel_size, c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
    std::array<bool, 3> output_mask) {
  const std::vector<c10::SymInt> bias_sizes{weight.sym_size(0)}, ones(2, 1), zeros(2, 0);
  return at::convolution_backward_symint(grad_output, self, weight, bias_sizes, stride, padding,
                                         ones, false, zeros, 1, output_mask);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_slow_conv2d_backward.output_mask", TORCH_FN(slowConv2dBackward));
  m.impl("_slow_conv2d_forward", TORCH_FN(slowConvForward));
  m.impl("col2im", TORCH_FN(col2imOp));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolutionBackwardOverrideable));
  m.impl("convolution_overrideable", TORCH_FN(convolutionOverrideable));
  m.impl("im2col", TORCH_FN(im2colOp));
  m.impl("slow_conv3d_forward", TORCH_FN(slowConvForward));
  m.impl("slow_conv_dilated2d", TORCH_FN(slowConvDilated));
  m.impl("slow_conv_dilated3d", TORCH_FN(slowConvDilated));
  m.impl("slow_conv_transpose2d", TORCH_FN(slowConvTranspose));
  m.impl("slow_conv_transpose3d", TORCH_FN(slowConvTranspose));
}

}  // namespace torch_ocl::aten
