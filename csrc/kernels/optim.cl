// Fused optimizer steps over a chunk of tensors (see foreach_common.cl for the table). The host
// prepends: REAL (float, or double for double params), ld/st for the parameter storage type
// (math in REAL) and ld_step for the step tensors' dtype. The math follows PyTorch's fused CUDA
// kernels (ATen/native/cuda/fused_adam_utils.cuh, FusedSgdKernel.cu).

// Optional one-element scalars: lr as a tensor, grad_scale, found_inf (all stored as REAL).
#define OPT_SCALAR_PARAMS                                                              \
  __global const char *lrb, ulong lroff, int has_lr, __global const char *gsb,         \
      ulong gsoff, int has_gs, __global const char *fib, ulong fioff, int has_fi

// Bias corrections of one chunk, one work item per tensor j: bc[2j] = 1 - beta1^step and
// bc[2j + 1] = sqrt(1 - beta2^step). pow is a slow library call on CPU drivers; evaluated per
// element it made the fused step four times slower than the foreach one on PoCL.
__kernel void adam_bias_corrections(__global const char* tb, ulong toff, int m, FE_BUF_PARAMS,
                                    REAL beta1, REAL beta2, __global char* bcb, ulong bcoff) {
  __global const long* tab = (__global const long*)(tb + toff);
  const int j = get_global_id(0);
  if (j >= m) return;
  __global REAL* bc = (__global REAL*)(bcb + bcoff);
  const REAL step = ld_step(FE_PTR(tab[6 * m + j]));
  bc[2 * j] = (REAL)1 - pow(beta1, step);
  bc[2 * j + 1] = sqrt((REAL)1 - pow(beta2, step));
}

// One element (T = REAL) or 16 (T = float16, with OPT_VEC16: float32 storage on CPU drivers,
// where an item walks its block in vectors) of the fused Adam(W) step at e.
#define ADAM_ELEMENT(T, LOAD, STORE, e)                                   \
  {                                                                       \
    T param = LOAD(pp, e);                                                \
    T grad = LOAD(pg, e);                                                 \
    if (has_gs) grad = grad / gs;                                         \
    const T grad_to_store = grad;                                         \
    if (maximize) grad = -grad;                                           \
    if (weight_decay != 0) {                                              \
      if (adamw)                                                          \
        param -= lr * weight_decay * param;                               \
      else                                                                \
        grad += param * weight_decay;                                     \
    }                                                                     \
    T exp_avg = LOAD(pm, e);                                              \
    T exp_avg_sq = LOAD(pv, e);                                           \
    exp_avg = beta1 * exp_avg + ((REAL)1 - beta1) * grad;                 \
    exp_avg_sq = beta2 * exp_avg_sq + ((REAL)1 - beta2) * grad * grad;    \
    T denom;                                                              \
    if (amsgrad) {                                                        \
      const T max_exp_avg_sq = fmax(LOAD(pvmax, e), exp_avg_sq);          \
      STORE(pvmax, e, max_exp_avg_sq);                                    \
      denom = sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps;         \
    } else {                                                              \
      denom = sqrt(exp_avg_sq) / bias_correction2_sqrt + eps;             \
    }                                                                     \
    param -= step_size * exp_avg / denom;                                 \
    STORE(pp, e, param);                                                  \
    if (has_gs) STORE(pg, e, grad_to_store);                              \
    STORE(pm, e, exp_avg);                                                \
    STORE(pv, e, exp_avg_sq);                                             \
  }
// float16 loads and stores of float32 storage.
#define LDV(p, e) vload16(0, (p) + (e))
#define STV(p, e, v) vstore16((v), 0, (p) + (e))
// A fused step's element loop over this work-group's block: ELEMENT(T, LOAD, STORE, e) in float16
// vectors, then the block's last elements, with OPT_VEC16; else one element per item.
#ifdef OPT_VEC16
#define OPT_BLOCK_LOOP(ELEMENT)                    \
  FE_VEC16_LOOP(e) ELEMENT(float16, LDV, STV, e) \
  FE_VEC16_TAIL(e) ELEMENT(REAL, ld, st, e)
#else
#define OPT_BLOCK_LOOP(ELEMENT) \
  for (long e = FE_FIRST; e < e1; e += FE_STEP) ELEMENT(REAL, ld, st, e)
#endif

// Lists: param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq (param again when !amsgrad), step;
// bc from adam_bias_corrections over the same chunk.
__kernel void fused_adam(__global const char* tb, ulong toff, int m, FE_BUF_PARAMS, REAL lr_arg,
                         REAL beta1, REAL beta2, REAL weight_decay, REAL eps, int amsgrad,
                         int maximize, int adamw, OPT_SCALAR_PARAMS, __global const char* bcb,
                         ulong bcoff) {
  __global const long* tab = (__global const long*)(tb + toff);
  if (has_fi && *(__global const REAL*)(fib + fioff) == (REAL)1) return;
  FE_BLOCK(tab)
  __global ST* pp = (__global ST*)FE_PTR(tab[m + j]);
  __global ST* pg = (__global ST*)FE_PTR(tab[2 * m + j]);
  __global ST* pm = (__global ST*)FE_PTR(tab[3 * m + j]);
  __global ST* pv = (__global ST*)FE_PTR(tab[4 * m + j]);
  __global ST* pvmax = (__global ST*)FE_PTR(tab[5 * m + j]);
  __global const REAL* bc = (__global const REAL*)(bcb + bcoff);
  const REAL lr = has_lr ? *(__global const REAL*)(lrb + lroff) : lr_arg;
  const REAL bias_correction1 = bc[2 * j];
  const REAL bias_correction2_sqrt = bc[2 * j + 1];
  const REAL step_size = lr / bias_correction1;
  const REAL gs = has_gs ? *(__global const REAL*)(gsb + gsoff) : (REAL)1;
  OPT_BLOCK_LOOP(ADAM_ELEMENT)
}

// One element or 16 (as ADAM_ELEMENT) of the fused SGD step at e.
#define SGD_ELEMENT(T, LOAD, STORE, e)                                                     \
  {                                                                                        \
    T param = LOAD(pp, e);                                                                 \
    T grad = LOAD(pg, e);                                                                  \
    if (has_gs) {                                                                          \
      grad = grad / gs;                                                                    \
      STORE(pg, e, grad);                                                                  \
    }                                                                                      \
    if (maximize) grad = -grad;                                                            \
    if (weight_decay != 0) grad += weight_decay * param;                                   \
    if (momentum != 0) {                                                                   \
      T buf = is_first_step ? grad : momentum * LOAD(pb, e) + ((REAL)1 - dampening) * grad; \
      STORE(pb, e, buf);                                                                   \
      grad = nesterov ? grad + momentum * buf : buf;                                       \
    }                                                                                      \
    param -= lr * grad;                                                                    \
    STORE(pp, e, param);                                                                   \
  }

// Lists: param, grad, momentum_buffer (param again when momentum == 0).
__kernel void fused_sgd(__global const char* tb, ulong toff, int m, FE_BUF_PARAMS, REAL lr_arg,
                        REAL weight_decay, REAL momentum, REAL dampening, int nesterov,
                        int maximize, int is_first_step, OPT_SCALAR_PARAMS) {
  __global const long* tab = (__global const long*)(tb + toff);
  if (has_fi && *(__global const REAL*)(fib + fioff) == (REAL)1) return;
  FE_BLOCK(tab)
  __global ST* pp = (__global ST*)FE_PTR(tab[m + j]);
  __global ST* pg = (__global ST*)FE_PTR(tab[2 * m + j]);
  __global ST* pb = (__global ST*)FE_PTR(tab[3 * m + j]);
  const REAL lr = has_lr ? *(__global const REAL*)(lrb + lroff) : lr_arg;
  const REAL gs = has_gs ? *(__global const REAL*)(gsb + gsoff) : (REAL)1;
  OPT_BLOCK_LOOP(SGD_ELEMENT)
}

// GradScaler (torch.amp): the math of PyTorch's CUDA AmpKernels.cu. List 0 holds the gradients
// (ST storage); a non-finite element sets *found_inf to 1 (every writer stores the same value),
// and every element is multiplied by *inv_scale in REAL.
__kernel void amp_unscale(__global const char* tb, ulong toff, int m, FE_BUF_PARAMS,
                          __global char* fib, ulong fioff, __global const char* isb, ulong isoff) {
  __global const long* tab = (__global const long*)(tb + toff);
  FE_BLOCK(tab)
  __global ST* p = (__global ST*)FE_PTR(tab[m + j]);
  const REAL inv = (REAL) * (__global const float*)(isb + isoff);
  int bad = 0;
#ifdef OPT_VEC16
  int16 badv = 0;
  FE_VEC16_LOOP(e) {
    const float16 v = LDV(p, e);
    badv |= !isfinite(v);
    STV(p, e, inv == (REAL)1 ? v : v * inv);
  }
  bad = any(badv);
  FE_VEC16_TAIL(e) {
#else
  for (long e = FE_FIRST; e < e1; e += FE_STEP) {
#endif
    const REAL v = ld(p, e);
    bad |= !isfinite(v);
    st(p, e, inv == (REAL)1 ? v : v * inv);
  }
  if (bad) *(__global float*)(fib + fioff) = 1.0f;
}

// One work item: back off after an overflow, grow after growth_interval clean steps.
__kernel void amp_update_scale(__global char* sb, ulong soff, __global char* gb, ulong goff,
                               __global const char* fib, ulong fioff, float growth, float backoff,
                               int interval) {
  __global float* scale = (__global float*)(sb + soff);
  __global int* tracker = (__global int*)(gb + goff);
  if (*(__global const float*)(fib + fioff) != 0.0f) {
    *scale = *scale * backoff;
    *tracker = 0;
    return;
  }
  const int successful = *tracker + 1;
  if (successful == interval) {
    const float grown = *scale * growth;
    if (isfinite(grown)) *scale = grown;
    *tracker = 0;
  } else {
    *tracker = successful;
  }
}
