// One separable pass of CPU PyTorch's uint8 bilinear / bicubic interpolation (antialiased or
// not): int16 fixed-point weights of `prec` bits, an int accumulator starting at half a unit,
// then >> prec and a clamp to [0, 255], as its basic_loop_aa_horizontal / vertical<uint8_t>.
// The tensor is seen as (outer, length, inner) and resampled along the middle dimension: the
// horizontal pass has inner = 1, the vertical pass inner = the row length. Output index o reads
// xsize[o] inputs from xmin[o] with the weights w[o * k ...].
__kernel void resample_u8(__global char* sb, ulong soff, __global char* db, ulong doff,
                          __global char* mb, ulong moff, __global char* zb, ulong zoff,
                          __global char* wb, ulong woff, long outer, long len_in, long len_out,
                          long inner, int k, int prec) {
  const long id = get_global_id(0);
  if (id >= outer * len_out * inner) return;
  const long c = id % inner, o = (id / inner) % len_out, r = id / (inner * len_out);
  __global const uchar* src = (__global const uchar*)(sb + soff) + r * len_in * inner + c;
  __global uchar* dst = (__global uchar*)(db + doff);
  const int x0 = ((__global const int*)(mb + moff))[o];
  const int n = ((__global const int*)(zb + zoff))[o];
  __global const short* w = (__global const short*)(wb + woff) + o * (long)k;
  int acc = 1 << (prec - 1);
  for (int j = 0; j < n; ++j) acc += (int)src[(long)(x0 + j) * inner] * (int)w[j];
  dst[id] = (uchar)clamp(acc >> prec, 0, 255);
}
