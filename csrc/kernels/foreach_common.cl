// Multi-tensor ("foreach") helpers. A launch covers a chunk of tensors that live in up to 16
// cl_mem buffers (OpenCL has no pointer arrays across buffers without SVM). The chunk's table is
// a device buffer of longs:
//   ends[m]            running element counts (tensor j has ends[j] - ends[j-1] elements)
//   locs[L][m]         per list l and tensor j: buffer slot << 56 | byte offset in that buffer
//   ...                per-kernel extra columns (scalar lists, output indices)
// and its block table (blkb): the block size, then one entry per work-group, j << 40 | first
// element, as CUDA's multi_tensor_apply assigns (tensor, chunk) to blocks: a work-group finds
// its tensor with one load and its items stride through the block (FE_BLOCK).
#define FE_BUF_PARAMS __global const char *blkb, ulong blkoff, __global char* b0, __global char* b1, __global char* b2, __global char* b3, __global char* b4, __global char* b5, __global char* b6, __global char* b7, __global char* b8, __global char* b9, __global char* b10, __global char* b11, __global char* b12, __global char* b13, __global char* b14, __global char* b15
#define FE_BUF_ARGS b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15
#define FE_OFF_MASK 0x00ffffffffffffffUL

#define FE_MEM_PARAMS __global char* b0, __global char* b1, __global char* b2, __global char* b3, __global char* b4, __global char* b5, __global char* b6, __global char* b7, __global char* b8, __global char* b9, __global char* b10, __global char* b11, __global char* b12, __global char* b13, __global char* b14, __global char* b15

inline __global char* fe_base(ulong loc, FE_MEM_PARAMS) {
  switch ((int)(loc >> 56)) {
    case 1: return b1;
    case 2: return b2;
    case 3: return b3;
    case 4: return b4;
    case 5: return b5;
    case 6: return b6;
    case 7: return b7;
    case 8: return b8;
    case 9: return b9;
    case 10: return b10;
    case 11: return b11;
    case 12: return b12;
    case 13: return b13;
    case 14: return b14;
    case 15: return b15;
    default: return b0;
  }
}
#define FE_PTR(loc) (fe_base((ulong)(loc), FE_BUF_ARGS) + ((ulong)(loc) & FE_OFF_MASK))

// This work-group's block: tensor j (of the table `ends`) and its elements [e0, e1). Then
// `for (long e = FE_FIRST; e < e1; e += FE_STEP)` visits this item's elements.
#define FE_BLOCK(ends)                                                           \
  __global const long* fe_blk = (__global const long*)(blkb + blkoff);           \
  const long fe_ent = fe_blk[1 + get_group_id(0)];                               \
  const int j = (int)(fe_ent >> 40);                                             \
  const long e0 = fe_ent & 0xffffffffffL;                                        \
  const long e1 = min(e0 + fe_blk[0], (ends)[j] - (j > 0 ? (ends)[j - 1] : 0));
#define FE_FIRST (e0 + (long)get_local_id(0))
#define FE_STEP ((long)get_local_size(0))
// Kernels whose one work item walks the whole block (Plan::launchBlocks(k, c, true), CPU
// drivers): `FE_VEC16_LOOP(e) { ... }` visits its whole 16-element vectors from e0, then
// `FE_VEC16_TAIL(e) { ... }` its last (e1 - e0) % 16 elements one by one.
#define FE_VEC16_LOOP(e) for (long e = e0; e + 16 <= e1; e += 16)
#define FE_VEC16_TAIL(e) for (long e = e0 + (e1 - e0) / 16 * 16; e < e1; ++e)
