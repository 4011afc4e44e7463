// One scalar vocabulary for the linear-algebra kernels that run on real and complex matrices
// (linalg_small.cl, linalg_ldl.cl, linalg_decomp.cl, linalg_blocked.cl), so that each algorithm is
// written once.
// Real programs come with nn_common's T (storage), ACC (arithmetic), LD and ST; complex ones
// define OCL_COMPLEX after typedef'ing CT (float2 / double2) and CR and placing
// kernels/complex.cl. The complex operations are identities or plain arithmetic for real scalars.
//   E: the element type in memory, S: the arithmetic scalar, SR: its real type;
//   S_LD(p, i) / S_ST(p, i, v): element i of p as S and back; S_MUL, S_DIV: product, quotient;
//   S_CONJ: conjugate; S_RE, S_IM: real and imaginary parts (0 for real); S_HAS_IM(x): im x != 0
//   (the literal 0 for real); S_CMPLX(re, im): re + i im (re for real: im is not evaluated);
//   S_ABS: |x|; S_ABS1: |re| + |im| (LAPACK's i?amax measure, |x| for real); S_ABS2: |x|^2;
//   S_REAL(r): r as an S; S_NONZERO(x): x != 0; S_IS_COMPLEX: 1 in complex programs (branches
//   on it fold away in real ones).
#ifdef OCL_COMPLEX
typedef CT E;
typedef CT S;
typedef CR SR;
#define S_LD(p, i) ((p)[i])
#define S_ST(p, i, v) ((p)[i] = (v))
#define S_MUL(a, b) ocl_cmul(a, b)
#define S_DIV(a, b) ocl_cdiv(a, b)
#define S_CONJ(a) ocl_cconj(a)
#define S_RE(a) ((a).x)
#define S_IM(a) ((a).y)
#define S_HAS_IM(a) ((a).y != 0)
#define S_CMPLX(re, im) ((CT)((re), (im)))
#define S_ABS(a) hypot((a).x, (a).y)
#define S_ABS1(a) (fabs((a).x) + fabs((a).y))
#define S_ABS2(a) ((a).x * (a).x + (a).y * (a).y)
#define S_REAL(r) ((CT)((r), 0))
#define S_NONZERO(a) ((a).x != 0 || (a).y != 0)
#define S_IS_COMPLEX 1
#else
typedef T E;
typedef ACC S;
typedef ACC SR;
#define S_LD(p, i) LD(p, i)
#define S_ST(p, i, v) ST(p, i, v)
#define S_MUL(a, b) ((a) * (b))
#define S_DIV(a, b) ((a) / (b))
#define S_CONJ(a) (a)
#define S_RE(a) (a)
#define S_IM(a) ((ACC)0)
#define S_HAS_IM(a) 0
#define S_CMPLX(re, im) (re)
#define S_ABS(a) fabs(a)
#define S_ABS1(a) fabs(a)
#define S_ABS2(a) ((a) * (a))
#define S_REAL(r) ((ACC)(r))
#define S_NONZERO(a) ((a) != 0)
#define S_IS_COMPLEX 0
#endif
