// The reduction kernel generator, sibling of the pointwise one. A reduction is an accumulator
// type ACC (a scalar of the accumulation dtype V, or a small struct over V), an identity, a map
// from one input element (converted to V) and its index along the reduced dimensions to an ACC,
// an associative combine of two ACCs and a finalize from ACC to the output value(s). Geometry
// comes from an at::TensorIterator built with is_reduction(true) (PyTorch's own reduction setup:
// dims, keepdim, out= strides); sizes and strides are kernel arguments, the kernels are
// specialised only on dtypes and on whether the reduced extent is a single (contiguous) dimension.
//
// Launch shapes: one work item per output for short or strided (outer) reductions, one
// work-group per output with a tree in local memory for long contiguous (inner) reductions, and
// both split into chunks with a second pass over the partials when there are too few outputs to
// fill the device.
#pragma once

#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include "runtime/device.h"

#include <array>

namespace torch_ocl::codegen {

// A reduction that a work item can run in two passes over its stretch of the range (the work
// item kernel only; work-group trees keep map/combine): p = pre_fin(fold of pre over the
// stretch, n), then u and w, the sums of f(x, p) and g(x, p) over it, give the stretch's ACC as
// chunk(p, u, w, n). Variance: p the mean, u and w the centred sums; logsumexp: p the maximum,
// u the sum of exp(x - p). Both avoid a division or an exp per element in the combine.
struct TwoPass {
  const char* pre_ident;  // V
  const char* pre;        // body of `V r_pre(V p, V x)`
  const char* pre_fin;    // body of `V r_pre_fin(V p, long n)`
  const char* f;          // body of `V r_f(V x, V p)`
  const char* g;          // body of `V r_g(V x, V p)`
  const char* chunk;      // body of `ACC r_chunk(V p, V u, V w, long n)`
};

// The lane form of a max/min-like struct accumulator, for a contiguous range in one work item
// (red_item): the running values in vectors of lanes (two sets of W lanes, blocks of W elements
// taking turns), updated with select() under a vector comparison, and (indexed) the first index
// of each lane's winner in vectors of int or long lanes, or (not indexed) a NaN that sticks in
// its lane (any NaN wins). Each lane keeps the first occurrence of its maximum (its first NaN);
// the indexed winner is the lowest index among the NaN lanes, else among the lanes equal to the
// maximum, read again with map; the others merge their lanes with from_lane and combine. The
// tail past the last full block goes through map and combine, so the result is the scalar
// loop's.
struct Lanes {
  const char* map;        // vector expression of the loaded lanes x: "x", "fabs(x)"
  const char* cmp;        // ">" for a maximum, "<" for a minimum
  bool indexed;           // keep the index of each lane's winner
  const char* from_lane;  // not indexed: body of `ACC r_lane(V m)`, a lane's value as ACC
};

struct ReduceOp {
  const char* name;
  // OpenCL C. In all of them V is the accumulation scalar type, and these macros exist:
  // V_LOWEST, V_HIGHEST (identities of max/min), V_ISNAN(x) (0 for integral V), V_NAN (0 for
  // integral V), and ocl_exp (see aten::mathMacros).
  const char* acc_decl;  // "typedef ... ACC;" for a struct accumulator; nullptr: ACC is V
  const char* identity;  // body of `ACC r_ident(void)`
  const char* map;       // body of `ACC r_map(V x, long i, V s0, V s1)`
  const char* combine;   // body of `ACC r_combine(ACC a, ACC b)`
  const char* finalize;  // body of `V r_fin(ACC a, long n, V s0, V s1)` (output 0)
  // Second output (values+indices, var+mean): body of `F2 r_fin2(ACC a, long n, V s0, V s1)`.
  const char* finalize2 = nullptr;
  bool index_output = false;  // F2 is long (an index), else V
  const TwoPass* two_pass = nullptr;
  // A complex input into a real accumulator: x is the element's modulus hypot(re, im) (as
  // std::abs), computed in the input's precision. Ops without it refuse that combination.
  bool modulus_input = false;
  // A struct accumulator's vector-lane form for contiguous ranges (nullptr: one accumulator).
  const Lanes* lanes = nullptr;
};

// A TensorIterator for reducing `self` into `out` (and `out2`, when defined) over `dims`
// (PyTorch's make_dim_mask: empty or none means all), outputs already of their final shape.
at::TensorIterator reductionIter(const at::Tensor& self, const at::Tensor& out,
                                 const at::Tensor& out2, at::OptionalIntArrayRef dims,
                                 bool keepdim);

// Runs op over iter (outputs first, then the input), accumulating in `acc`; scalars s0, s1 are
// converted to acc. An empty reduced extent yields finalize(identity) as on CPU.
void launchReduce(const ReduceOp& op, const at::TensorIteratorBase& iter, c10::ScalarType acc,
                  std::array<c10::Scalar, 2> scalars = {});

// True when the device runs work-groups as loops over their items (CPU devices such as PoCL):
// there one work item owns a contiguous stretch and local-memory trees are avoided. Setting
// TORCH_OCL_TREE_REDUCTIONS=1 gives every device the GPU shapes (the tests use it to cover them).
bool preferItemReductions(const rt::DeviceInfo& info);

}  // namespace torch_ocl::codegen
