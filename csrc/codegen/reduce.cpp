#include "codegen/reduce.h"
#include "codegen/pointwise.h"

#include <ATen/ATen.h>
#include <ATen/native/ReduceOpsUtils.h>

#include "aten/cl_types.h"
#include "aten/launch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace torch_ocl::codegen {

using aten::clComputeType;
using aten::clStorageType;
using aten::convertExpr;
using aten::kMaxDims;
using aten::loadExpr;
using aten::storeStmt;

namespace {

constexpr int kMaxLocal = 256;     // size of the local tree (power of two)
constexpr int kPartialBytes = 32;  // room for one ACC in the partials buffer (largest: 24)

// Kept dimensions: sizes and the byte strides of the input and both outputs; reduced dimensions:
// sizes and input byte strides. Innermost first, as TensorIterator orders them.
struct alignas(8) RedGeom {
  cl_long keep_sizes[kMaxDims];
  cl_long keep_in[kMaxDims];
  cl_long keep_out0[kMaxDims];
  cl_long keep_out1[kMaxDims];
  cl_long red_sizes[kMaxDims];
  cl_long red_in[kMaxDims];
};

const char* kGeomDecl =
    "typedef struct { long keep_sizes[OCL_MAX_DIMS]; long keep_in[OCL_MAX_DIMS];\n"
    "  long keep_out0[OCL_MAX_DIMS]; long keep_out1[OCL_MAX_DIMS];\n"
    "  long red_sizes[OCL_MAX_DIMS]; long red_in[OCL_MAX_DIMS]; } RedGeom;\n";

enum class Shape : uint8_t {
  kGeneral = 0,     // several reduced dims: index decomposition per element
  kOneDim = 1,      // a single reduced dim with any stride
  kContiguous = 2,  // a single reduced dim, stride one element
};

const std::string kNoNan = "#define V_ISNAN(x) 0\n#define V_NAN 0\n";

std::string limits(c10::ScalarType v) {
  switch (v) {
    case c10::kDouble:
    case c10::kFloat:
    case c10::kHalf:
    case c10::kBFloat16:
      // x != x, not isnan(x): PoCL makes isnan a call, and in a reduction loop that stopped
      // the vectoriser (amax over rows of 4096 floats: 31 ms against 6 ms).
      return "#define V_LOWEST (-INFINITY)\n#define V_HIGHEST INFINITY\n"
             "#define V_ISNAN(x) ((x) != (x))\n#define V_NAN NAN\n";
    case c10::kLong:
      return "#define V_LOWEST LONG_MIN\n#define V_HIGHEST LONG_MAX\n" + kNoNan;
    case c10::kInt:
      return "#define V_LOWEST INT_MIN\n#define V_HIGHEST INT_MAX\n" + kNoNan;
    case c10::kShort:
      return "#define V_LOWEST SHRT_MIN\n#define V_HIGHEST SHRT_MAX\n" + kNoNan;
    case c10::kChar:
      return "#define V_LOWEST CHAR_MIN\n#define V_HIGHEST CHAR_MAX\n" + kNoNan;
    default:  // uint8, bool
      return "#define V_LOWEST 0\n#define V_HIGHEST UCHAR_MAX\n" + kNoNan;
  }
}

struct Operands {
  int nout;
  c10::ScalarType in, out0, out1, acc;
};

// The lane loop of a struct accumulator with a Lanes form (see codegen/reduce.h) over the
// contiguous range [r0, r1) at ip, or "" where the dtypes have no vector form here (complex,
// moduli, conversions other than half/bfloat16 storage into float). `load` is the scalar loop's
// load of element r as x (the tail past the last full block).
// One struct accumulator per work item was a chain of dependent, branchy combines: on PoCL
// (2 cores, loaded, main's build against this one in alternating processes, medians of 5
// rounds) argmax over 4096 rows of 64 floats took 315 us, now 69 (sum: 48); over 1024 x 1024
// 853 -> 125 (sum 93); over 64 x 32000 2213 -> 214 (sum 167); amax 120 -> 63, 370 -> 109,
// 1083 -> 186; max with indices like argmax; float16 argmax over 1024 x 1024 1487 -> 92.
// CPU PyTorch in the same runs: argmax ~3x slower than this, amax ~3x faster (as for sum).
std::string structLaneLoop(const Lanes& ln, const Operands& t, bool modulus,
                           const std::string& load) {
  if (modulus || c10::isComplexType(t.in) || c10::isComplexType(t.acc)) return "";
  const bool storage16 = (t.in == c10::kHalf || t.in == c10::kBFloat16) && t.acc == c10::kFloat;
  if (t.in != t.acc && !storage16) return "";
  switch (t.acc) {  // the unsigned 16/32/64-bit types would not fit the (signed) int lanes
    case c10::kFloat:
    case c10::kDouble:
    case c10::kLong:
    case c10::kInt:
    case c10::kShort:
    case c10::kChar:
    case c10::kByte:
    case c10::kBool:
      break;
    default:
      return "";
  }
  const bool wide = c10::elementSize(t.acc) == 8;  // double, long: 8 lanes of 64 bits
  const bool fp = c10::isFloatingType(t.acc);
  if (!fp && std::strcmp(ln.map, "x") != 0) return "";  // fabs() is for floating lanes
  // Lanes of 32-bit types (float, int, and the smaller integers widened to int) and their masks
  // and indices: 16 (one AVX-512 register); of 64-bit types: 8.
  const int w = wide ? 8 : 16;
  const std::string n = std::to_string(w);
  const std::string vl = t.acc == c10::kFloat || t.acc == c10::kDouble || t.acc == c10::kLong
                             ? clComputeType(t.acc)
                             : "int";
  const std::string il = wide ? "long" : "int";  // mask and index lanes
  const std::string vt = vl + n, it = il + n;
  // W elements from ip + rb + off as lanes.
  auto vload_at = [&](const std::string& off) {
    const std::string p = "ip + rb" + (off.empty() ? "" : " + " + off);
    if (t.in == c10::kHalf) return "vload_half" + n + "(0, (__global const half*)(" + p + "))";
    if (t.in == c10::kBFloat16)
      return "as_float" + n + "(convert_uint" + n + "(vload" + n + "(0, " + p + ")) << 16)";
    if (vl == clComputeType(t.acc)) return "vload" + n + "(0, " + p + ")";
    return "convert_int" + n + "(vload" + n + "(0, " + p + "))";
  };
  const std::string cmp = ln.cmp;
  std::string iota;
  for (int l = 0; l < w; ++l) iota += (l ? ", " : "") + std::to_string(l);
  // Block `off` (elements rb + off .. + W) into lanes (m, li); block indices in ri + off. The NaN
  // terms only for floating lanes (integers have none, and clang warns on x != x there).
  auto update = [&](const std::string& m, const std::string& li, const std::string& off) {
    std::string u = "        {\n          const " + vt + " x = " + vload_at(off) + ";\n" +
                    "          const " + vt + " y = " + ln.map + ";\n";
    if (ln.indexed)
      u += "          const " + it + " t = (y " + cmp + " " + m + ")" +
           (fp ? " | ((y != y) & (" + m + " == " + m + "))" : "") + ";\n          " + m +
           " = select(" + m + ", y, t);\n          " + li + " = select(" + li + ", ri" +
           (off.empty() ? "" : " + " + off) + ", t);\n";
    else
      u += "          " + m + " = select(" + m + ", y, (y " + cmp + " " + m + ")" +
           (fp ? " | (y != y)" : "") + ");\n";
    return u + "        }\n";
  };
  // Lanes ma and mb merged into m of vector type v (not indexed): b wins where greater (smaller)
  // or NaN; order does not matter without indices.
  auto merge = [&](const std::string& v, const std::string& m, const std::string& ma,
                   const std::string& mb) {
    return "      const " + v + " " + m + " = select(" + ma + ", " + mb + ", (" + mb + " " + cmp +
           " " + ma + ")" + (fp ? " | (" + mb + " != " + mb + ")" : "") + ");\n";
  };
  // Two sets of lanes (blocks of 2W elements, the second block of each pair into the second
  // set) so that two independent select chains run; both start from the first block (a lane
  // merged with itself is unchanged). Each lane sees its elements in order and keeps the first
  // occurrence of its maximum (the first NaN, which then stays); then the lanes give one ACC and
  // the tail past the last full block goes element by element through r_combine.
  std::string s =
      "  ACC a = r_ident();\n"
      "  {\n"
      "    long rb = r0;\n"
      "    if (r1 - r0 >= " +
      n + (wide ? "" : " && r1 - r0 <= INT_MAX") +
      ") {\n"
      "      " +
      vt + " m, m1;\n      {\n        const " + vt + " x = " + vload_at("") +
      ";\n        m = " + ln.map + ";\n        m1 = m;\n      }\n";
  if (ln.indexed) s += "      " + it + " li = (" + it + ")(" + iota + "), li1 = li, ri = li;\n";
  s += "      for (rb += " + n + "; rb + " + std::to_string(2 * w) +
       " <= r1; rb += " + std::to_string(2 * w) + ") {\n";
  if (ln.indexed) s += "        ri += (" + it + ")" + n + ";\n";
  s += update("m", "li", "") + update("m1", "li1", n);
  if (ln.indexed) s += "        ri += (" + it + ")" + n + ";\n";
  s += "      }\n      if (rb + " + n + " <= r1) {\n";
  if (ln.indexed) s += "        ri += (" + it + ")" + n + ";\n";
  s += update("m", "li", "") + "        rb += " + n + ";\n      }\n";
  if (ln.indexed) {
    // The winner: where a lane holds NaN, the lowest index of the NaN lanes, else the lowest
    // index of the lanes equal to the lanes' maximum (a tree of fmax, then one of min; cheaper
    // than merging (value, index) pairs: rows of 64 floats, argmax 81 -> 67 us). Its value is
    // read again, so that the sign of a zero maximum is the first one's.
    const std::string big = wide ? "LONG_MAX" : "INT_MAX";
    const std::string ext = fp ? (cmp == ">" ? "fmax" : "fmin") : (cmp == ">" ? "max" : "min");
    s += "      " + it + " e0, e1;\n";
    if (fp)
      s += "      const " + it +
           " n0 = m != m, n1 = m1 != m1;\n"
           "      if (any(n0 | n1)) {\n        e0 = n0;\n        e1 = n1;\n      } else ";
    s += "{\n        const " + vt + " h" + n + " = " + ext + "(m, m1);\n";
    std::string hv = "h" + n;
    for (int h = w / 2; h >= 1; h /= 2) {
      const std::string hn = std::to_string(h);
      s += "        const " + (h == 1 ? vl : vl + hn) + " h" + hn + " = " + ext + "(" + hv +
           ".lo, " + hv + ".hi);\n";
      hv = "h" + hn;
    }
    s += "        e0 = m == h1;\n        e1 = m1 == h1;\n      }\n";
    s += "      const " + it + " c" + n + " = min(select((" + it + ")" + big +
         ", li, e0), select((" + it + ")" + big + ", li1, e1));\n";
    std::string cv = "c" + n;
    for (int h = w / 2; h >= 1; h /= 2) {
      const std::string hn = std::to_string(h);
      s += "      const " + (h == 1 ? il : il + hn) + " c" + hn + " = min(" + cv + ".lo, " + cv +
           ".hi);\n";
      cv = "c" + hn;
    }
    s += "      {\n        const long r = r0 + c1;\n" + load +
         "        a = r_map(x, r, s0, s1);\n      }\n";
  } else {
    // Halves of the lanes merged (b wins where greater or NaN), the last two with r_combine.
    s += merge(vt, "mm", "m", "m1");
    std::string sm = "mm";
    for (int h = w / 2; h >= 2; h /= 2) {
      const std::string hn = std::to_string(h);
      s += merge(vl + hn, "m" + hn, sm + ".lo", sm + ".hi");
      sm = "m" + hn;
    }
    s += "      a = r_combine(r_lane(" + sm + ".lo), r_lane(" + sm + ".hi));\n";
  }
  s += "    }\n"
       "    for (long r = rb; r < r1; ++r) {\n" +
       load +
       "      a = r_combine(a, r_map(x, r, s0, s1));\n"
       "    }\n"
       "  }\n";
  return s;
}

std::string kernelSource(const ReduceOp& op, const Operands& t, Shape shape) {
  const std::string v = clComputeType(t.acc);
  const std::string f2 = op.index_output ? "long" : "V";
  const c10::ScalarType f2t = op.index_output ? c10::kLong : t.acc;
  std::string s = "typedef " + v + " V;\n" + limits(t.acc) + aten::mathMacros(v);
  if (c10::isComplexType(t.acc)) s += complexHeader(t.acc);
  if (c10::isComplexType(t.in) && !c10::isComplexType(t.acc))
    s += "#define ocl_modulus(z) hypot((z).x, (z).y)\n";
  s += op.acc_decl ? std::string(op.acc_decl) + "\n" : "typedef V ACC;\n";
  s += kGeomDecl;
  s += "inline ACC r_ident(void) {" + std::string(op.identity) + "}\n";
  s += "inline ACC r_map(V x, long i, V s0, V s1) {" + std::string(op.map) + "}\n";
  s += "inline ACC r_combine(ACC a, ACC b) {" + std::string(op.combine) + "}\n";
  // The finalizers take the accumulator by pointer: passed by value, a struct ACC became a
  // stack copy that PoCL's vectoriser could not keep in registers across the reduction loop
  // (amax over rows of 4096 floats: 19 ms instead of 4 ms).
  s += "inline V r_fin(const ACC* pa, long n, V s0, V s1) {const ACC a = *pa; " +
       std::string(op.finalize) + "}\n";
  if (op.two_pass) {
    const TwoPass& tp = *op.two_pass;
    s += "inline V r_pre(V p, V x) {" + std::string(tp.pre) + "}\n";
    s += "inline V r_pre_fin(V p, long n) {" + std::string(tp.pre_fin) + "}\n";
    s += "inline V r_f(V x, V p) {" + std::string(tp.f) + "}\n";
    s += "inline V r_g(V x, V p) {" + std::string(tp.g) + "}\n";
    s += "inline ACC r_chunk(V p, V u, V w, long n) {" + std::string(tp.chunk) + "}\n";
  }
  if (op.lanes && op.lanes->from_lane)
    s += "inline ACC r_lane(V m) {" + std::string(op.lanes->from_lane) + "}\n";
  if (op.finalize2)
    s += "inline " + f2 + " r_fin2(const ACC* pa, long n, V s0, V s1) {const ACC a = *pa; " +
         op.finalize2 + "}\n";

  const std::string ist = clStorageType(t.in);
  const std::string o0t = clStorageType(t.out0);
  const std::string outArgs = "__global char* o0b, ulong o0off, " +
                              std::string(t.nout == 2 ? "__global char* o1b, ulong o1off, " : "");
  // Output offsets of output o (ob0/ob1) and its input base (ibase).
  const std::string keepLoop =
      "  long rem = o, ibase = 0, ob0 = 0, ob1 = 0;\n"
      "  for (int k = 0; k < nkeep; ++k) {\n"
      "    const long q = rem % g.keep_sizes[k];\n    rem /= g.keep_sizes[k];\n"
      "    ibase += q * g.keep_in[k]; ob0 += q * g.keep_out0[k]; ob1 += q * g.keep_out1[k];\n"
      "  }\n";
  std::string write =
      "  __global " + o0t + "* q0 = (__global " + o0t + "*)(o0b + o0off + ob0);\n" + "  " +
      storeStmt(t.out0, "q0", "0", convertExpr(t.acc, t.out0, "r_fin(&a, n_red, s0, s1)")) + "\n";
  if (t.nout == 2) {
    const std::string o1t = clStorageType(t.out1);
    write += "  __global " + o1t + "* q1 = (__global " + o1t + "*)(o1b + o1off + ob1);\n" + "  " +
             storeStmt(t.out1, "q1", "0", convertExpr(f2t, t.out1, "r_fin2(&a, n_red, s0, s1)")) +
             "\n";
  }
  // Loads element r of the reduced range of this output as V (a complex one as its modulus).
  const bool modulus = c10::isComplexType(t.in) && !c10::isComplexType(t.acc);
  TORCH_INTERNAL_ASSERT(!modulus || op.modulus_input, "torch-ocl: reduction ", op.name,
                        " takes no complex input into a real accumulator");
  auto value = [&](const std::string& e) {
    if (!modulus) return convertExpr(t.in, t.acc, e);
    return convertExpr(c10::toRealValueType(t.in), t.acc, "ocl_modulus(" + e + ")");
  };
  std::string load;
  switch (shape) {
    case Shape::kContiguous:
      load = "      const V x = " + value(loadExpr(t.in, "ip", "r")) + ";\n";
      break;
    case Shape::kOneDim:
      load = "      __global const " + ist + "* xp = (__global const " + ist +
             "*)((__global const char*)ip + r * g.red_in[0]);\n"
             "      const V x = " +
             value(loadExpr(t.in, "xp", "0")) + ";\n";
      break;
    case Shape::kGeneral:
      load =
          "      long rr = r, off = 0;\n"
          "      for (int k = 0; k < nred; ++k) {\n"
          "        off += (rr % g.red_sizes[k]) * g.red_in[k];\n        rr /= g.red_sizes[k];\n"
          "      }\n"
          "      __global const " +
          ist + "* xp = (__global const " + ist +
          "*)((__global const char*)ip + off);\n"
          "      const V x = " +
          value(loadExpr(t.in, "xp", "0")) + ";\n";
      break;
  }
  const std::string commonArgs =
      "__global const char* ib, ulong ioff, __global char* pb, ulong poff, long n_out, long n_red,"
      " long chunk, long chunks, int nkeep, int nred, RedGeom g, V s0, V s1)";
  const std::string prologue =
      "  const long r0 = c * chunk;\n  const long r1 = min(r0 + chunk, n_red);\n" + keepLoop +
      "  __global const " + ist + "* ip = (__global const " + ist + "*)(ib + ioff + ibase);\n";
  const std::string epilogue =
      "  if (chunks > 1) {\n    ((__global ACC*)(pb + poff))[c * n_out + o] = a;\n    return;\n"
      "  }\n" +
      write;

  // One work item per (output, chunk); neighbouring items take neighbouring outputs, so strided
  // (outer) reductions read contiguous memory across the items.
  const std::string itemLoop = op.two_pass ? "  ACC a = r_ident();\n"
                                             "  if (r1 > r0) {\n"
                                             "    V p = " +
                                                 std::string(op.two_pass->pre_ident) +
                                                 ";\n"
                                                 "    for (long r = r0; r < r1; ++r) {\n" +
                                                 load +
                                                 "      p = r_pre(p, x);\n"
                                                 "    }\n"
                                                 "    p = r_pre_fin(p, r1 - r0);\n"
                                                 "    V u = 0, w = 0;\n"
                                                 "    for (long r = r0; r < r1; ++r) {\n" +
                                                 load +
                                                 "      u += r_f(x, p);\n      w += r_g(x, p);\n"
                                                 "    }\n"
                                                 "    a = r_chunk(p, u, w, r1 - r0);\n"
                                                 "  }\n"
                                           : "  ACC a = r_ident();\n"
                                             "  for (long r = r0; r < r1; ++r) {\n" +
                                                 load +
                                                 "      a = r_combine(a, r_map(x, r, s0, s1));\n"
                                                 "  }\n";
  // A contiguous range with a scalar accumulator (sums, products, norms, any/all): eight
  // accumulators, element r into lane r % 8, merged pairwise with r_combine (which merges any
  // two partials: the chunks and the work-group trees rely on it). One accumulator is a chain
  // of dependent adds: on PoCL (2 cores, loaded, alternating builds) rows of 1024 floats summed
  // in 443-860 us, now 65-71; 64 rows of 32000 in 1047-1478 us, now 184-202. Struct
  // accumulators (amax/amin with their NaN flag, values with indices) as eight ACCs ran 1.2-3x
  // slower (spilled); those with a Lanes form take structLaneLoop instead (vectors of values
  // and indices under select()), the others keep one accumulator.
  const std::string laneLoop =
      "  ACC a = r_ident();\n"
      "  {\n"
      "    ACC la[8];\n"
      "    for (int l = 0; l < 8; ++l) la[l] = r_ident();\n"
      "    long rb = r0;\n"
      "    for (; rb + 8 <= r1; rb += 8) {\n"
      "      for (int l = 0; l < 8; ++l) {\n"
      "        const long r = rb + l;\n" +
      load +
      "        la[l] = r_combine(la[l], r_map(x, r, s0, s1));\n"
      "      }\n"
      "    }\n"
      "    for (long r = rb; r < r1; ++r) {\n" +
      load +
      "      la[0] = r_combine(la[0], r_map(x, r, s0, s1));\n"
      "    }\n"
      "    for (int w = 4; w > 0; w >>= 1)\n"
      "      for (int l = 0; l < w; ++l) la[l] = r_combine(la[l], la[l + w]);\n"
      "    a = la[0];\n"
      "  }\n";
  const std::string structLanes = op.lanes && !op.two_pass && shape == Shape::kContiguous
                                      ? structLaneLoop(*op.lanes, t, modulus, load)
                                      : "";
  const std::string itemBody = !op.two_pass && !op.acc_decl && shape == Shape::kContiguous
                                   ? laneLoop
                               : !structLanes.empty() ? structLanes
                                                      : itemLoop;
  s += "__kernel void red_item(" + outArgs + commonArgs +
       " {\n"
       "  const long gid = get_global_id(0);\n  if (gid >= n_out * chunks) return;\n"
       "  const long o = gid % n_out, c = gid / n_out;\n" +
       prologue + itemBody + epilogue + "}\n";

  // CPU drivers, a strided (outer) reduction whose kept inner dimension is contiguous: a
  // work-group of L items takes L neighbouring outputs (L contiguous columns) of one chunk of
  // rows and walks the rows in blocks of RB with a barrier after each. CPU drivers run a
  // work-group as a loop over its items and each item up to the next barrier, so without the
  // barriers every 16-wide vector of items would walk all its rows alone (one cache line per
  // page, latency-bound); with them, each block of RB rows is read row by row across the whole
  // stretch of L columns (whole pages, which the prefetchers follow), and a second pass of a
  // two-pass op finds the block in the caches. Items past n_out compute the last output and
  // never store it (every item must reach every barrier).
  {
    const std::string colLoad = load;
    auto blocked = [&](const std::string& body) {
      return "    for (long rb = r0; rb < r1; rb += RB) {\n"
             "      const long re = min(rb + RB, r1);\n"
             "      for (long r = rb; r < re; ++r) {\n" +
             colLoad + body +
             "      }\n"
             "      barrier(CLK_LOCAL_MEM_FENCE);\n"
             "    }\n";
    };
    const std::string colLoop =
        op.two_pass
            ? "  ACC a = r_ident();\n"
              "  {\n"
              "    V p = " +
                  std::string(op.two_pass->pre_ident) + ";\n" +
                  blocked("      p = r_pre(p, x);\n") +
                  "    p = r_pre_fin(p, r1 - r0);\n"
                  "    V u = 0, w = 0;\n" +
                  blocked("      u += r_f(x, p);\n      w += r_g(x, p);\n") +
                  "    if (r1 > r0) a = r_chunk(p, u, w, r1 - r0);\n"
                  "  }\n"
            : "  ACC a = r_ident();\n" + blocked("      a = r_combine(a, r_map(x, r, s0, s1));\n");
    s += "#define RB 8\n__kernel void red_cols(" + outArgs + commonArgs +
         " {\n"
         "  const long gpc = get_num_groups(0) / chunks;\n"
         "  const long grp = get_group_id(0), c = grp / gpc;\n"
         "  const long o_live = (grp % gpc) * get_local_size(0) + get_local_id(0);\n"
         "  const long o = min(o_live, n_out - 1);\n" +
         prologue + colLoop + "  if (o_live >= n_out) return;\n" + epilogue + "}\n";
  }

  // One work-group per (output, chunk): items stride through the range, then a tree.
  s += "__kernel void red_group(" + outArgs + commonArgs +
       " {\n"
       "  const long grp = get_group_id(0);\n"
       "  const int lid = get_local_id(0), L = get_local_size(0);\n"
       "  const long o = grp % n_out, c = grp / n_out;\n" +
       prologue +
       "  ACC a = r_ident();\n"
       "  for (long r = r0 + lid; r < r1; r += L) {\n" +
       load +
       "      a = r_combine(a, r_map(x, r, s0, s1));\n"
       "  }\n"
       "  __local ACC sa[" +
       std::to_string(kMaxLocal) +
       "];\n"
       "  sa[lid] = a;\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
       "  for (int h = L >> 1; h > 0; h >>= 1) {\n"
       "    if (lid < h) sa[lid] = r_combine(sa[lid], sa[lid + h]);\n"
       "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n"
       "  if (lid != 0) return;\n  a = sa[0];\n" +
       epilogue + "}\n";

  // Second pass: one work item per output combines its chunks' partials.
  s += "__kernel void red_final(" + outArgs +
       "__global const char* pb, ulong poff, long n_out, long n_red, long chunks, int nkeep,"
       " RedGeom g, V s0, V s1) {\n"
       "  const long o = get_global_id(0);\n  if (o >= n_out) return;\n" +
       keepLoop +
       "  __global const ACC* p = (__global const ACC*)(pb + poff);\n"
       "  ACC a = r_ident();\n"
       "  for (long c = 0; c < chunks; ++c) a = r_combine(a, p[c * n_out + o]);\n" +
       write + "}\n";
  return s;
}

struct ScalarArg {
  alignas(16) unsigned char bytes[16] = {};
  size_t size = 0;
};

ScalarArg scalarArg(const c10::Scalar& v, c10::ScalarType t) {
  ScalarArg a;
  auto put = [&](auto x) {
    std::memcpy(a.bytes, &x, sizeof(x));
    a.size = sizeof(x);
  };
  switch (t) {
    case c10::kBool:
    case c10::kByte:
      put(static_cast<cl_uchar>(v.toLong()));
      break;
    case c10::kChar:
      put(static_cast<cl_char>(v.toLong()));
      break;
    case c10::kShort:
      put(static_cast<cl_short>(v.toLong()));
      break;
    case c10::kInt:
      put(static_cast<cl_int>(v.toLong()));
      break;
    case c10::kLong:
      put(static_cast<cl_long>(v.toLong()));
      break;
    case c10::kDouble:
      put(static_cast<cl_double>(v.toDouble()));
      break;
    case c10::kComplexFloat: {
      const auto z = v.toComplexDouble();
      put(cl_float2{{static_cast<cl_float>(z.real()), static_cast<cl_float>(z.imag())}});
      break;
    }
    case c10::kComplexDouble: {
      const auto z = v.toComplexDouble();
      put(cl_double2{{z.real(), z.imag()}});
      break;
    }
    default:
      put(static_cast<cl_float>(v.toDouble()));
      break;
  }
  return a;
}

size_t pow2Floor(size_t x) {
  size_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

bool preferItemReductions(const rt::DeviceInfo& info) {
  static const bool force_tree = [] {
    const char* v = std::getenv("TORCH_OCL_TREE_REDUCTIONS");
    return v && std::string(v) == "1";
  }();
  return !force_tree && (info.type & CL_DEVICE_TYPE_CPU) != 0;
}

at::TensorIterator reductionIter(const at::Tensor& self, const at::Tensor& out,
                                 const at::Tensor& out2, at::OptionalIntArrayRef dims,
                                 bool keepdim) {
  const int64_t ndim = self.dim();
  const auto mask = at::native::make_dim_mask(dims, ndim);
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(false).resize_outputs(false).is_reduction(true).check_all_same_dtype(
      false);
  config.add_owned_output(at::native::review_reduce_result(out, ndim, mask, keepdim));
  if (out2.defined())
    config.add_owned_output(at::native::review_reduce_result(out2, ndim, mask, keepdim));
  config.add_const_input(self);
  return config.build();
}

void launchReduce(const ReduceOp& op, const at::TensorIteratorBase& iter, c10::ScalarType acc,
                  std::array<c10::Scalar, 2> scalars) {
  const int nout = iter.noutputs();
  TORCH_INTERNAL_ASSERT(nout >= 1 && nout <= 2 && iter.ntensors() == nout + 1);
  TORCH_CHECK(iter.ndim() <= kMaxDims, "torch-ocl: tensors that keep ", iter.ndim(),
              " dimensions after coalescing are not supported yet (at most ", kMaxDims, ")");
  const c10::DeviceIndex idx = iter.device(0).index();
  for (int i = 0; i < iter.ntensors(); ++i) {
    TORCH_CHECK(iter.device(i) == iter.device(0),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                iter.device(0), " and ", iter.device(i), "!");
    aten::checkDtypeSupported(iter.dtype(i), idx);
  }
  aten::checkDtypeSupported(acc, idx);

  // Split the iterator's dims into kept (output stride != 0) and reduced ones.
  RedGeom g{};
  int nkeep = 0, nred = 0;
  int64_t n_out = 1, n_red = 1;
  for (int d = 0; d < iter.ndim(); ++d) {
    const int64_t size = iter.shape()[d];
    const bool reduced = iter.strides(0)[d] == 0 && size != 1;
    if (reduced) {
      g.red_sizes[nred] = size;
      g.red_in[nred++] = iter.strides(nout)[d];
      n_red *= size;
    } else {
      g.keep_sizes[nkeep] = size;
      g.keep_in[nkeep] = iter.strides(nout)[d];
      g.keep_out0[nkeep] = iter.strides(0)[d];
      g.keep_out1[nkeep++] = nout == 2 ? iter.strides(1)[d] : 0;
      n_out *= size;
    }
  }
  if (n_out == 0) return;
  const c10::ScalarType in_t = iter.dtype(nout);
  const int64_t elem = c10::elementSize(in_t);
  const Shape shape = nred > 1                           ? Shape::kGeneral
                      : nred == 1 && g.red_in[0] == elem ? Shape::kContiguous
                                                         : Shape::kOneDim;
  const Operands ops{nout, in_t, iter.dtype(0), nout == 2 ? iter.dtype(1) : c10::kByte, acc};
  const uint64_t variant = aten::dtypeCode(acc) | (aten::dtypeCode(in_t) << 6) |
                           (aten::dtypeCode(ops.out0) << 12) | (aten::dtypeCode(ops.out1) << 18) |
                           (static_cast<uint64_t>(nout) << 24) |
                           (static_cast<uint64_t>(shape) << 26);
  cl_program prog = programs(idx).get({&op, variant}, [&] {
    std::string name = std::string("reduce_") + op.name + "<" + c10::toString(in_t) + "->" +
                       c10::toString(ops.out0) + ", acc " + c10::toString(acc) + ">";
    return rt::ProgramSource{name, aten::withPrelude(kernelSource(op, ops, shape)), ""};
  });

  rt::Device& dev = device(idx);
  const int64_t cu = std::max<int64_t>(1, dev.info().compute_units);
  // A long contiguous range per output goes to a work-group; strided or short ranges to items.
  // CPU devices (PoCL) run a work-group as a loop over its items, each to completion: there a
  // work item must own a contiguous stretch (or a few strided rows, so that neighbouring items
  // share cache lines and pages), and local-memory trees only cost. GPUs get the tree.
  const bool cpu = preferItemReductions(dev.info());
  const bool grouped = !cpu && shape == Shape::kContiguous && n_red >= 128;
  // red_cols: one reduced dim with a stride, the innermost kept dim contiguous and long enough.
  const bool cols = cpu && shape == Shape::kOneDim && nkeep >= 1 && g.keep_in[0] == elem &&
                    g.keep_sizes[0] >= 64 && n_red > 16;
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, grouped ? "red_group" : cols ? "red_cols" : "red_item");
  size_t local = 1;
  int64_t chunks = 1;
  if (grouped) {
    size_t kwg = 0;
    OCL_CHECK(clGetKernelWorkGroupInfo(k, dev.id(), CL_KERNEL_WORK_GROUP_SIZE, sizeof(kwg), &kwg,
                                       nullptr));
    const size_t lmax =
        pow2Floor(std::min<size_t>({kMaxLocal, kwg, dev.info().max_work_group_size}));
    // Enough groups to fill the device; each one still gets a long stretch of the range.
    const int64_t want_groups = 8 * cu;
    if (n_out < want_groups)
      chunks = std::clamp<int64_t>(std::min(ceilDiv(want_groups, n_out), n_red / (16 * kMaxLocal)),
                                   1, 1024);
    const int64_t per_group = ceilDiv(n_red, chunks);
    local = std::clamp<size_t>(pow2Floor(std::max<int64_t>(per_group / 16, 1)),
                               std::min<size_t>(64, lmax), lmax);
  } else if (cpu) {
    if (shape == Shape::kContiguous) {
      if (n_out < 256 * cu && n_red >= 16384) chunks = ceilDiv(n_red, 8192);
    } else if (n_red > 128) {
      chunks = ceilDiv(n_red, 64);
    }
    chunks = std::clamp<int64_t>(chunks, 1, std::max<int64_t>(1, (int64_t{1} << 22) / n_out));
  } else {
    const int64_t want_items = 1024 * cu;
    if (n_out < want_items && n_red >= 256)
      chunks = std::clamp<int64_t>(std::min(ceilDiv(want_items, n_out), n_red / 64), 1, 4096);
  }
  const int64_t chunk = std::max<int64_t>(1, ceilDiv(n_red, chunks));
  chunks = std::max<int64_t>(1, ceilDiv(n_red, chunk));

  const rt::BufferRef o0 = resolvePtr(iter.data_ptr(0));
  const rt::BufferRef o1 = nout == 2 ? resolvePtr(iter.data_ptr(1)) : o0;
  // A zero-size input has no storage to point at; any buffer does (no element is read).
  const rt::BufferRef in = n_red > 0 ? resolvePtr(iter.data_ptr(nout)) : o0;
  at::Tensor partials;
  rt::BufferRef pbuf = o0;
  if (chunks > 1) {
    partials = at::empty({n_out * chunks * kPartialBytes},
                         at::TensorOptions().dtype(at::kByte).device(iter.device(0)));
    pbuf = aten::bufferOf(partials);
  }
  const ScalarArg s0 = scalarArg(scalars[0], acc), s1 = scalarArg(scalars[1], acc);
  cl_uint a = 0;
  aten::setArg(k, a, o0);
  if (nout == 2) aten::setArg(k, a, o1);
  aten::setArg(k, a, in);
  aten::setArg(k, a, pbuf);
  aten::setArg(k, a, static_cast<cl_long>(n_out));
  aten::setArg(k, a, static_cast<cl_long>(n_red));
  aten::setArg(k, a, static_cast<cl_long>(chunk));
  aten::setArg(k, a, static_cast<cl_long>(chunks));
  aten::setArg(k, a, static_cast<cl_int>(nkeep));
  aten::setArg(k, a, static_cast<cl_int>(nred));
  aten::setArg(k, a, g);
  OCL_CHECK(clSetKernelArg(k, a++, s0.size, s0.bytes));
  OCL_CHECK(clSetKernelArg(k, a++, s1.size, s1.bytes));
  cl_command_queue queue = currentQueue(idx);
  if (grouped) {
    const size_t global = static_cast<size_t>(n_out * chunks) * local;
    aten::launchND(dev, queue, k, global, local);
  } else if (cols) {
    // L contiguous columns per group (a 4 KB page of floats where the outputs allow).
    const size_t L = std::min<size_t>(
        {1024, pow2Floor(static_cast<size_t>(g.keep_sizes[0])), dev.info().max_work_group_size});
    const size_t groups = static_cast<size_t>(ceilDiv(n_out, static_cast<int64_t>(L)));
    aten::launchND(dev, queue, k, groups * static_cast<size_t>(chunks) * L, L);
  } else {
    aten::launch1D(dev, queue, k, n_out * chunks);
  }
  if (chunks > 1) {
    cl_kernel f = programs(idx).kernel(prog, "red_final");
    a = 0;
    aten::setArg(f, a, o0);
    if (nout == 2) aten::setArg(f, a, o1);
    aten::setArg(f, a, pbuf);
    aten::setArg(f, a, static_cast<cl_long>(n_out));
    aten::setArg(f, a, static_cast<cl_long>(n_red));
    aten::setArg(f, a, static_cast<cl_long>(chunks));
    aten::setArg(f, a, static_cast<cl_int>(nkeep));
    aten::setArg(f, a, g);
    OCL_CHECK(clSetKernelArg(f, a++, s0.size, s0.bytes));
    OCL_CHECK(clSetKernelArg(f, a++, s1.size, s1.bytes));
    aten::launch1D(dev, queue, f, n_out);
  }
  OCL_CATCH
}

}  // namespace torch_ocl::codegen
