#!/usr/bin/env python3
"""Generates csrc/aten/special_math.h: OpenCL C ports of the special functions in PyTorch's
aten/src/ATen/native/Math.h (Cephes and SciPy derived; see the notices there), one string macro per
function, so that each pointwise op's program includes only the functions it calls.

The translation is mechanical: template headers dropped, the function renamed ocl_<name> over the
kernel's compute type T, std:: maths mapped to OpenCL C builtins, T(v) casts to (T)(v), static
arrays to private const arrays. Literals keep C++'s types (a double literal promotes a float
expression exactly as it does on the CPU).

usage: tools/port_special_math.py [path/to/Math.h] > csrc/aten/special_math.h
"""

import re
import sys
import sysconfig
from pathlib import Path

# (C++ name in Math.h, signature marker, functions it calls)
FUNCS = [
    ("calc_ndtri", "T calc_ndtri(T y0)", ["polevl"]),
    ("erfcx_y100", "erfcx_y100(T y100)", []),
    ("calc_erfcx", "calc_erfcx(T x)", ["erfcx_y100"]),
    ("calc_log_ndtr", "T calc_log_ndtr(T x)", ["calc_erfcx"]),
    ("airy_ai_forward", "T airy_ai_forward(T x)", []),
    ("bessel_j0_forward", "T bessel_j0_forward(T x)", []),
    ("bessel_j1_forward", "T bessel_j1_forward(T x)", []),
    ("bessel_y0_forward", "T bessel_y0_forward(T x)", ["bessel_j0_forward"]),
    ("bessel_y1_forward", "T bessel_y1_forward(T x)", ["bessel_j1_forward"]),
    ("modified_bessel_i0_forward", "T modified_bessel_i0_forward(T x)", []),
    ("modified_bessel_i1_forward", "T modified_bessel_i1_forward(T x)", []),
    ("modified_bessel_k0_forward", "T modified_bessel_k0_forward(T x)", ["modified_bessel_i0_forward"]),
    ("modified_bessel_k1_forward", "T modified_bessel_k1_forward(T x)", ["modified_bessel_i1_forward"]),
    ("scaled_modified_bessel_k0_forward", "T scaled_modified_bessel_k0_forward(T x)", ["modified_bessel_i0_forward"]),
    ("scaled_modified_bessel_k1_forward", "T scaled_modified_bessel_k1_forward(T x)", ["modified_bessel_i1_forward"]),
    ("spherical_bessel_j0_forward", "T spherical_bessel_j0_forward(T x)", []),
    # regularized incomplete gamma functions (SciPy's igam/igamc, Boost's Lanczos sum)
    ("ratevl", "scalar_t ratevl(scalar_t x", []),
    ("lanczos_sum_expg_scaled", "scalar_t lanczos_sum_expg_scaled(scalar_t x)", ["ratevl"]),
    ("_igam_helper_fac", "scalar_t _igam_helper_fac(scalar_t a, scalar_t x)", ["lanczos_sum_expg_scaled"]),
    ("_igam_helper_series", "scalar_t _igam_helper_series(scalar_t a, scalar_t x)", ["_igam_helper_fac"]),
    ("_igamc_helper_series", "scalar_t _igamc_helper_series(scalar_t a, scalar_t x)", []),
    ("_igam_helper_asymptotic_series", "scalar_t _igam_helper_asymptotic_series(scalar_t a", []),
    ("_igamc_helper_continued_fraction", "scalar_t _igamc_helper_continued_fraction(scalar_t a", []),
    ("calc_igammac", "scalar_t calc_igammac(scalar_t a, scalar_t x)",
     ["_igam_helper_series", "_igamc_helper_series", "_igam_helper_asymptotic_series",
      "_igamc_helper_continued_fraction"]),
    ("calc_igamma", "scalar_t calc_igamma(scalar_t a, scalar_t x)", ["calc_igammac"]),
] + [
    (f"{p}_forward", f"T {p}_forward(T x, int64_t n)", [])
    for p in [
        "chebyshev_polynomial_t",
        "chebyshev_polynomial_u",
        "chebyshev_polynomial_v",
        "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u",
        "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w",
        "hermite_polynomial_h",
        "hermite_polynomial_he",
        "laguerre_polynomial_l",
        "legendre_polynomial_p",
    ]
]
NAMES = [f[0] for f in FUNCS]

SUBS = [
    (r"\bscalar_t\b", "T"),
    (r"std::is_same_v<T, ?double>", "(sizeof(T) == 8)"),
    (r"c10::pi<float>", "(float)M_PI"),
    (r"\bstatic T\b", "const T"),
    (r"\bstatic int\b", "const int"),
    (r"pow\(x, i\)", "pow(x, (T)i)"),
    (r"std::numeric_limits<T>::infinity\(\)", "(T)INFINITY"),
    (r"std::numeric_limits<T>::quiet_NaN\(\)", "(T)NAN"),
    (r"std::numeric_limits<T>::epsilon\(\)", "OCL_T_EPSILON"),
    (r"c10::pi<T>", "(T)M_PI"),
    (r"c10::frac_sqrt_2<T>", "(T)0.70710678118654752440"),
    (r"at::_isnan", "isnan"),
    (r"std::abs\b", "fabs"),
    (r"std::", ""),
    (r"(?<![\w>])::(?=[a-z])", ""),
    (r"\bstatic constexpr T\b", "const T"),
    (r"\bstatic const T\b", "const T"),
    (r"\bconstexpr T\b", "const T"),
    (r"\bint64_t\b", "long"),
    (r"\buint8_t\b", "uchar"),
    (r"\buint64_t\b", "ulong"),
    (r"\bT\{", "(T)("),
    (r"\bT\(", "(T)("),
    (r"getHermitianLimit<T>\(\)", "(sizeof(T) == 4 ? 128 : 512)"),
    (r"static_cast<T>\(", "(T)("),
    (r"static_cast<int>\(", "(int)("),
    # Math.h leaves r unset where the recurrence loop never runs (x NaN); CPU returns q's NaN.
    (r"\bT r;", "T r = q;"),
]


def extract(src: str, name: str, marker: str) -> str:
    i = src.index(marker)
    start = src.rindex("template", 0, i)
    # The body ends at the first line that closes the function at column 0 (erfcx_y100's switch
    # closes its cases there too: it ends after its final return).
    if name == "erfcx_y100":
        return src[start : src.index("return 1.0;\n}", i) + len("return 1.0;\n}")]
    m = re.compile(r"^\}.*$", re.M).search(src, i)
    body = src[start : m.end()]
    return body


def translate(body: str, name: str) -> str:
    lines = body.split("\n")
    # Drop the template line(s) and rebuild the signature.
    while lines[0].startswith("template"):
        lines.pop(0)
    head = []
    while "{" not in lines[0] and not lines[0].rstrip().endswith(")"):
        head.append(lines.pop(0))
    head.append(lines.pop(0))
    sig = " ".join(head)
    params = sig[sig.index(name) + len(name) :]
    params = params[: params.rindex(")") + 1]
    tail = "{" if "{" in sig else ""
    out = "\n".join(lines)
    for pat, rep in SUBS:
        out = re.sub(pat, rep, out)
        params = re.sub(pat, rep, params)
    for n in NAMES + ["polevl"]:
        out = re.sub(rf"\b{n}\(", f"ocl_{n}(", out)
    # T{1.0} became (T)(1.0} above: close the brace-initialised casts.
    out = re.sub(r"\(T\)\(([^{}()]*)\}", r"(T)(\1)", out)
    out = out.replace("__ubsan_ignore_float_divide_by_zero__", "")
    # OpenCL C has no recursion: an odd function's `return -f(-x)` for x < 0 becomes a wrapper.
    odd = re.compile(rf"\s*if \(x < \(T\)\(0\.0\)\) \{{\s*return -ocl_{name}\(-x\);\s*\}}")
    if odd.search(out):
        out = odd.sub("", out, count=1)
        return (
            f"inline T ocl_{name}_nonneg{params} {tail}\n{out}\n"
            f"inline T ocl_{name}(T x) {{\n"
            f"  return x < (T)0 ? -ocl_{name}_nonneg(-x) : ocl_{name}_nonneg(x);\n}}"
        )
    return f"inline T ocl_{name}{params} {tail}\n{out}"


def coefficients(src: str, name: str) -> list:
    """The (values, length) of each chebyshev_coefficients_<name>() in Math.h, in file order (the
    i1e tables have a double and a float version)."""
    found = []
    for m in re.finditer(rf"chebyshev_coefficients_{name}\(\) \{{", src):
        body = re.sub(r"/\*.*?\*/", "", src[m.end() : src.index("\n}", m.end())], flags=re.S)
        is_float = "is_same_v<float, T>" in src[m.start() - 150 : m.start()]
        values = body[body.index("{") + 1 : body.index("};")]
        values = re.sub(r"/\*.*?\*/", "", values, flags=re.S)
        length = int(re.search(r"make_tuple\(coeff, (\d+)\)", body).group(1))
        found.append((" ".join(values.split()), length, is_float))
    return found


def table(src: str, name: str, var: str) -> str:
    """A private table for T; where Math.h has separate double and float tables, both, and the
    length to use as a compile-time choice on sizeof(T)."""
    tabs = coefficients(src, name)
    if len(tabs) == 1:
        vals, n, _ = tabs[0]
        return f"  const T {var}[] = {{{vals}}};\n  const int {var}_len = {n};\n"
    (fv, fn, _), (dv, dn, _) = sorted(tabs, key=lambda t: not t[2])  # float first
    return (
        f"  const T {var}_d[] = {{{dv}}};\n  const T {var}_f[] = {{{fv}}};\n"
        f"  const T* {var} = sizeof(T) == 8 ? {var}_d : {var}_f;\n"
        f"  const int {var}_len = sizeof(T) == 8 ? {dn} : {fn};\n"
    )


# calc_i0, calc_i0e, calc_i1, calc_i1e of Math.h over T (they share chbevl and the Cephes tables).
POLEVL = """inline T ocl_polevl(const T x, const T* A, ulong len) {
  T result = 0;
  for (ulong i = 0; i <= len; i++) {
    result = result * x + A[i];
  }
  return result;
}"""
CHBEVL = """inline T ocl_chbevl(const T x, const T* array, int len) {
  T b0, b1, b2 = (T)0;
  b0 = array[0];
  b1 = (T)0;
  for (int i = 1; i < len; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + array[i];
  }
  return (T)0.5 * (b0 - b2);
}"""
BESSEL_I = {
    "calc_i0": ("i0e", "return exp(x) * ocl_chbevl(y, A, A_len);",
                "return exp(x) * ocl_chbevl((T)32 / x - (T)2, B, B_len) / sqrt(x);", False),
    "calc_i0e": ("i0e", "return ocl_chbevl(y, A, A_len);",
                 "return ocl_chbevl((T)32 / x - (T)2, B, B_len) / sqrt(x);", False),
    "calc_i1": ("i1e", "const T out = exp(x) * x * ocl_chbevl(y, A, A_len);",
                "const T out = (exp(x) * ocl_chbevl((T)32 / x - (T)2, B, B_len)) / sqrt(x);", True),
    "calc_i1e": ("i1e", "const T out = ocl_chbevl(y, A, A_len) * x;",
                 "const T out = ocl_chbevl((T)32 / x - (T)2, B, B_len) / sqrt(x);", True),
}


def bessel_i(src: str, name: str) -> str:
    tab, small, large, odd = BESSEL_I[name]
    sign = "\n    return (_x < (T)0) ? -out : out;" if odd else ""
    sign_l = "\n  return (_x < (T)0) ? -out : out;" if odd else ""
    return (
        f"inline T ocl_{name}(T _x) {{\n  T x = fabs(_x);\n  if (x <= (T)8) {{\n"
        + table(src, tab + "_A", "A").replace("\n  ", "\n    ").replace("  const", "    const", 1)
        + f"    T y = (x / (T)2) - (T)2;\n    {small}{sign}\n  }}\n"
        + table(src, tab + "_B", "B")
        + f"  {large}{sign_l}\n}}"
    )


def emit(name: str, code: str, deps: list) -> None:
    body = " \\\n".join(
        '  "' + ln.rstrip().replace("\\", "\\\\").replace('"', '\\"') + '\\n"'
        for ln in code.split("\n")
        if ln.strip()
    )
    print(f"#define OCL_SM_{name} \\\n{body}")
    dep = " ".join(f"OCL_SM_DEPS_{d} OCL_SM_{d}" for d in deps)
    print(f"#define OCL_SM_DEPS_{name} OCL_SM_PRELUDE {dep}\n")


def main() -> None:
    default = Path(sysconfig.get_paths()["purelib"]) / "torch/include/ATen/native/Math.h"
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    src = path.read_text()
    print("// Generated by tools/port_special_math.py from PyTorch's ATen/native/Math.h: do not edit.")
    print("// OpenCL C ports of the Cephes/SciPy-derived special functions that CPU PyTorch uses, written")
    print("// over the kernel's compute type T. OCL_SM_<name> holds ocl_<name> and OCL_SM_DEPS_<name> the")
    print("// functions before it that it calls; an op's helpers concatenate exactly what it needs.")
    print("// Cephes Math Library: 3-Clause BSD License (see the note in Math.h).")
    print("#pragma once\n")
    print("// Generated: one OpenCL C source line per string literal.")
    print("// clang-format off")
    print('#define OCL_SM_PRELUDE "#define OCL_T_EPSILON (sizeof(T) == 4 ? FLT_EPSILON : (T)2.220446049250313e-16)\\n"\n')
    emit("chbevl", CHBEVL, [])
    emit("polevl", POLEVL, [])
    for name in BESSEL_I:
        emit(name, bessel_i(src, name), ["chbevl"])
    for name, marker, deps in FUNCS:
        emit(name, translate(extract(src, name, marker), name), deps)


if __name__ == "__main__":
    main()
