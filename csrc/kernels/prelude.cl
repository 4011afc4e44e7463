// Prelude of every torch-ocl program: extensions, index structs, bf16 helpers.
#ifdef TORCH_OCL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// Sizes and byte strides of up to two operands, innermost dimension first (TensorIterator's
// order). Only longs, so host and device agree on the layout.
#define OCL_MAX_DIMS 10
typedef struct {
  long sizes[OCL_MAX_DIMS];
  long strides[2][OCL_MAX_DIMS];
} OclStrides2;

// bfloat16 is a storage type everywhere: the top half of a float.
inline float ocl_bf16_to_float(ushort b) { return as_float(((uint)b) << 16); }
inline ushort ocl_float_to_bf16(float f) {
  uint u = as_uint(f);
  if (isnan(f)) return (ushort)0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even, as c10::BFloat16 does
  return (ushort)(u >> 16);
}

// Philox-4x32-10 (Salmon et al., SC'11): counter-based, so element i of a random op draws from
// counter (offset, i) under key seed on every device, with pure integer arithmetic.
inline uint4 ocl_philox(uint4 c, uint2 k) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k.x += 0x9E3779B9u;
      k.y += 0xBB67AE85u;
    }
    const uint lo0 = 0xD2511F53u * c.x, hi0 = mul_hi(0xD2511F53u, c.x);
    const uint lo1 = 0xCD9E8D57u * c.z, hi1 = mul_hi(0xCD9E8D57u, c.z);
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}
inline uint4 ocl_philox_at(ulong seed, ulong offset, long i) {
  return ocl_philox((uint4)((uint)offset, (uint)(offset >> 32), (uint)i, (uint)((ulong)i >> 32)),
                    (uint2)((uint)seed, (uint)(seed >> 32)));
}
// 24 random bits -> [0, 1) float.
inline float ocl_uniform_float(uint x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

// Sizes and byte strides of up to four operands (pointwise kernels: output + three inputs).
typedef struct {
  long sizes[OCL_MAX_DIMS];
  long strides[4][OCL_MAX_DIMS];
} OclStrides4;

// Geometry of a reduction: kept and reduced dimensions of the input, innermost first, with the
// input's byte strides.
typedef struct {
  long keep_sizes[OCL_MAX_DIMS];
  long keep_strides[OCL_MAX_DIMS];
  long red_sizes[OCL_MAX_DIMS];
  long red_strides[OCL_MAX_DIMS];
} OclReduceGeom;
