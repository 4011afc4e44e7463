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
