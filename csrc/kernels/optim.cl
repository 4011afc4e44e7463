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
  for (long e = FE_FIRST; e < e1; e += FE_STEP) {
  REAL param = ld(pp, e);
  REAL grad = ld(pg, e);
  if (has_gs) grad = grad / gs;
  const REAL grad_to_store = grad;
  if (maximize) grad = -grad;
  if (weight_decay != 0) {
    if (adamw)
      param -= lr * weight_decay * param;
    else
      grad += param * weight_decay;
  }
  REAL exp_avg = ld(pm, e);
  REAL exp_avg_sq = ld(pv, e);
  exp_avg = beta1 * exp_avg + ((REAL)1 - beta1) * grad;
  exp_avg_sq = beta2 * exp_avg_sq + ((REAL)1 - beta2) * grad * grad;
  REAL denom;
  if (amsgrad) {
    const REAL max_exp_avg_sq = fmax(ld(pvmax, e), exp_avg_sq);
    st(pvmax, e, max_exp_avg_sq);
    denom = sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps;
  } else {
    denom = sqrt(exp_avg_sq) / bias_correction2_sqrt + eps;
  }
  param -= step_size * exp_avg / denom;
  st(pp, e, param);
  if (has_gs) st(pg, e, grad_to_store);
  st(pm, e, exp_avg);
  st(pv, e, exp_avg_sq);
  }
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
  for (long e = FE_FIRST; e < e1; e += FE_STEP) {
  REAL param = ld(pp, e);
  REAL grad = ld(pg, e);
  if (has_gs) {
    grad = grad / gs;
    st(pg, e, grad);
  }
  if (maximize) grad = -grad;
  if (weight_decay != 0) grad += weight_decay * param;
  if (momentum != 0) {
    REAL buf = is_first_step ? grad : momentum * ld(pb, e) + ((REAL)1 - dampening) * grad;
    st(pb, e, buf);
    grad = nesterov ? grad + momentum * buf : buf;
  }
  param -= lr * grad;
  st(pp, e, param);
  }
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
  for (long e = FE_FIRST; e < e1; e += FE_STEP) {
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
