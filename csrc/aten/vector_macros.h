// OpenCL C macros for kernels written in explicit vector types, for CPU drivers: PoCL runs a
// work-group as a loop over its items, and a loop inside one item (over a row) stays scalar
// unless it is written in vectors (one AVX-512 register: 16 floats or 8 doubles).
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <string>
#include <utility>

namespace torch_ocl::aten {

// VW lanes of the accumulation type: ACCV (and ACC8/ACC4/ACC2 for horizontal steps), v_hsum;
// for float also ACCI (int lanes), CONVERT_ACCI, AS_ACCV and ACC_IS_FLOAT.
inline std::string vectorTypeMacros(c10::ScalarType acc) {
  const bool dbl = acc == c10::kDouble;
  const std::string w = dbl ? "8" : "16", a = dbl ? "double" : "float";
  std::string h = "#define VW " + w + "\ntypedef " + a + w + " ACCV;\ntypedef " + a +
                  "8 ACC8;\ntypedef " + a + "4 ACC4;\ntypedef " + a + "2 ACC2;\n";
  if (!dbl)
    h += "#define ACC_IS_FLOAT 1\ntypedef int16 ACCI;\n#define CONVERT_ACCI convert_int16\n"
         "#define AS_ACCV as_float16\n"
         "inline ushort16 ocl_v_to_bf16(float16 f) {\n"
         "  uint16 u = as_uint16(f);\n  u += 0x7fffu + ((u >> 16) & 1u);\n"
         "  return convert_ushort16(select(u >> 16, (uint16)0x7fc0, as_uint16(f != f)));\n}\n";
  h += std::string("inline ") + a + " v_hsum(ACCV v) {\n" +
       (dbl ? "  const ACC8 s8 = v;\n" : "  const ACC8 s8 = v.lo + v.hi;\n") +
       "  const ACC4 s4 = s8.lo + s8.hi;\n  return (s4.x + s4.y) + (s4.z + s4.w);\n}\n";
  return h;
}

// VLOAD_<name>(p, i): the VW elements at p + i (storage type t) as ACCV; VSTORE_<name>(p, i, v).
inline std::string vectorAccessMacros(const std::string& name, c10::ScalarType t,
                                      c10::ScalarType acc) {
  const bool dbl = acc == c10::kDouble;
  const std::string w = dbl ? "8" : "16",
                    cv = std::string("convert_") + (dbl ? "double" : "float") + w;
  std::string ld, st;
  switch (t) {
    case c10::kHalf:
      ld = "vload_half" + w + "(0, (__global const half*)(p) + (i))";
      if (dbl) ld = cv + "(" + ld + ")";
      st = "vstore_half" + w + "_rte(" + (dbl ? "convert_float8(v)" : "(v)") +
           ", 0, (__global half*)(p) + (i))";
      break;
    case c10::kBFloat16:
      TORCH_INTERNAL_ASSERT(!dbl);
      ld = "as_float16(convert_uint16(vload16(0, (p) + (i))) << 16)";
      st = "vstore16(ocl_v_to_bf16(v), 0, (p) + (i))";
      break;
    default: {  // float or double storage
      TORCH_INTERNAL_ASSERT(t == c10::kFloat || t == c10::kDouble);
      const bool same = (t == c10::kDouble) == dbl;
      const std::string tv = std::string(t == c10::kDouble ? "double" : "float") + w;
      ld = same ? "vload" + w + "(0, (p) + (i))" : cv + "(vload" + w + "(0, (p) + (i)))";
      st = same ? "vstore" + w + "((v), 0, (p) + (i))"
                : "vstore" + w + "(convert_" + tv + "(v), 0, (p) + (i))";
    }
  }
  return "#define VLOAD_" + name + "(p, i) (" + ld + ")\n#define VSTORE_" + name + "(p, i, v) " +
         st + "\n";
}

}  // namespace torch_ocl::aten
