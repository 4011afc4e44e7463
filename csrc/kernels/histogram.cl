// The bin of each element of a 1-D histogram (-1: outside the edges, or NaN), as CPU's
// histogramdd kernel picks it, in the input's own precision (RND from the host rounds 16-bit
// types after every operation). `edges` holds nedges increasing bin edges. mode 0: linear
// interpolation between the outer edges (histc); 1: the same, then corrected against the
// neighbouring edges (histogram with a bin count, whose edges come from linspace); 2: binary
// search over all edges (histogram with given edges). The rightmost bin
// includes its right edge.
__kernel void hist_bin(__global char* posb, ulong posoff, __global const char* xb, ulong xoff,
                       __global const char* eb, ulong eoff, long n, long nedges, int mode) {
  const long gid = get_global_id(0);
  if (gid >= n) return;
  __global const T* x = (__global const T*)(xb + xoff);
  __global const T* e = (__global const T*)(eb + eoff);
  __global long* pos = (__global long*)(posb + posoff);
  const ACC v = LD(x, gid), lo = LD(e, 0), hi = LD(e, nedges - 1);
  long p = -1;
  if (v >= lo && v <= hi) {
    long a = 0, b = nedges;  // upper_bound over [a, b)
    if (mode < 2) {
      p = (long)RND(RND(RND(v - lo) * (ACC)(nedges - 1)) / RND(hi - lo));
      a = max(0L, p - 1);
      b = min(p + 2, nedges);
    }
    if (mode > 0) {
      while (a < b) {
        const long mid = a + (b - a) / 2;
        if (v < LD(e, mid))
          b = mid;
        else
          a = mid + 1;
      }
      p = a - 1;
    }
    if (p == nedges - 1) --p;
  }
  pos[gid] = p;
}
