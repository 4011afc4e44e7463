// embedding_bag forward (sum, mean, max), one work item per (feature d, bag b) of a contiguous
// (num_weights, D) weight. Indices and offsets are int64. Bag b covers indices
// [offsets[b], offsets[b + 1]) (the last bag ends at n unless include_last_offset gave an end);
// entries equal to padding_idx are skipped and not counted. An out-of-range index is recorded by
// the device-side check (ocl_checked_index) and contributes nothing. Modes as in PyTorch:
// 0 sum (optionally weighted per sample), 1 mean, 2 max (first maximum wins, like CPU's `>`).
// offset2bag and bag_size (written by d == 0): the bag of each index; bag_size counts the bag's non-padding entries; max_idx holds the winning
// weight row per (b, d), -1 for an empty bag. Macros from nn_common: T, ACC, LD, ST.
__kernel void embedding_bag_forward(__global char* wb, ulong woff, __global char* ib, ulong ioff,
                                    __global char* ob, ulong ooff, __global char* pb, ulong poff,
                                    __global char* yb, ulong yoff, __global char* sb, ulong soff,
                                    __global char* qb, ulong qoff, __global char* mb, ulong moff,
                                    __global int* rec, long n, long noffsets, long num_weights, long D, long padding_idx,
                                    int mode, int has_psw) {
  const long d = get_global_id(0), b = get_global_id(1);
  if (d >= D) return;
  __global const T* w = (__global const T*)(wb + woff);
  __global const long* idx = (__global const long*)(ib + ioff);
  __global const long* offs = (__global const long*)(ob + ooff);
  __global const T* psw = (__global const T*)(pb + poff);
  const long start = min(offs[b], n);
  const long end = b + 1 < noffsets ? min(offs[b + 1], n) : n;
  ACC acc = 0;
  long count = 0, arg = -1;
  __global long* o2b = (__global long*)(qb + qoff);
  for (long j = start; j < end; ++j) {
    if (d == 0) o2b[j] = b;
    const long r = idx[j];
    if (r == padding_idx) continue;
    const long row = ocl_checked_index(r, num_weights, 0, rec, OCL_CHECK_EMBEDDING_BAG, 0);
    if (row < 0) continue;
    ACC v = LD(w, row * D + d);
    if (mode == 2) {
      if (count == 0 || v > acc) {
        acc = v;
        arg = row;
      }
    } else {
      acc += has_psw ? v * LD(psw, j) : v;
    }
    ++count;
  }
  if (mode == 1 && count > 0) acc /= (ACC)count;
  ST((__global T*)(yb + yoff), b * D + d, acc);
  if (d == 0) ((__global long*)(sb + soff))[b] = count;
  if (mode == 2) ((__global long*)(mb + moff))[b * D + d] = arg;
}
