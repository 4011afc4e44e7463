"""Inductor config of the ocl backend; its values are part of Inductor's FX-graph cache key
(``device_custom_config``), so a cached graph is never reused across devices, drivers or
torch-ocl versions."""

import sys

from torch.utils._config_module import install_config_module

device_name: str = ""
driver_version: str = ""
platform: str = ""
torch_ocl_version: str = ""
# Reductions on CPU drivers: one work item per row (True) or, as on GPUs, a work group per row
# with a __local tree (False; the tests run both forms on PoCL).
cpu_row_per_work_item: bool = True
# Reductions over a strided (outer) dimension on CPU drivers (layer-norm and bias weight
# gradients: sums over the batch) with up to this many neighbouring columns per work item, which
# walks the rows once with a column vector of accumulators (codegen.py, OclKernel._column_lanes).
# 0 keeps one work item per column.
column_lanes: int = 64
# Pointwise kernels on CPU drivers as vector code, 16 elements per work item in float16/int16
# where every op and access has a vector form (codegen.OclKernel.vector_candidate); False
# keeps one element per work item.
vector_pointwise: bool = True
# Reductions with one work item per row (CPU drivers) as vector code: the row in chunks of 16
# elements, float16 accumulators combined across lanes after the loop (sum, max, min, any,
# Welford), where every op and access has a vector form; False keeps the scalar row loop.
vector_reductions: bool = True
# Float sums with one work item per row: this many accumulators (1: a single chain of adds).
sum_lanes: int = 8
# mm/addmm/bmm with at most this many multiply-adds (static sizes, float32/float64) lower as
# generated reductions that fuse with their neighbours; larger ones call the eager GEMM
# (lowering.py). 0 turns it off. Measured on PoCL: a 64x32x128 product as a reduction takes
# ~70 us of device time, the eager GEMM ~10 us; the launch it saves costs ~10 us of host time,
# so only tiny products pay (small GPT's train step at 300k: 65 -> 59 launches, device time
# 1.3 -> 3.8 ms per step).
small_mm_max_macs: int = 32_768
# Independent mm nodes of a graph (a backward's input and weight gradients) with more
# multiply-adds than small_mm_max_macs and at most this many run as one torch_ocl::mm_group: one
# native kernel of the host BLAS for the group where it takes them all (lowering.py, gemmGroup
# in gemm.cpp), not a launch each. Larger products keep their own call (and the engine's choice
# of provider). 0 turns it off.
group_mm_max_macs: int = 1 << 21
# gelu/relu(addmm) where the addmm is read elsewhere too (a training graph saves it for the
# activation's backward) as one torch_ocl::addmm_with_activation: the host BLAS stores the product
# with its bias and the activation in one command, instead of the product and then a generated
# bias + activation kernel (lowering.py).
addmm_activation_pair: bool = True
# F.embedding(torch.arange(n), weight) on ocl (a GPT's position embedding) as weight[:n] before
# AOTAutograd traces it: no gather kernel in the forward, no zero fill and scatter-add in the
# backward (a pre-grad pass, lowering.py).
arange_embedding_as_slice: bool = True
# addmm on ocl as an extern mm plus a generated bias add (which fuses into the consumer) rather
# than our eager addmm (a bias copy kernel, then the GEMM).
unfuse_addmm_bias: bool = True
# A cat of more than Inductor's max_pointwise_cat_inputs tensors with at most this many
# elements in all (clip_grad_norm_'s stack of per-parameter norms) lowers as a pointwise op that
# fuses into its reader, not as a copy kernel (lowering.py). 0 turns it off.
pointwise_cat_max_numel: int = 4096
# Attention with at least this many scores (L * S) per head compiles as batched products and
# fused softmax kernels (attention.py) instead of calls of the eager fused attention kernels;
# 0 keeps the eager kernels. nanoGPT's 256 x 256 on PoCL: see docs/compile.md.
sdpa_math_min_scores: int = 128 * 128
# ... while the scores of the whole batch (B * H * L * S elements) fit in this many bytes.
sdpa_math_max_bytes: int = 256 << 20
# Eager attention's own choice of the math path on CPU drivers (torch_ocl._attention), made while
# Dynamo traces: copied from the runtime so that it is part of the cache key.
sdpa_gemm_min_work: int = 0
# The kernels of a generated module built as one program (a few where a module has many, one
# per compile thread) instead of one program each: on PoCL a program costs ~0.3 s for the
# prelude and the builtin library, a kernel ~0.02 s (runtime.py).
one_program_per_module: bool = True
# Hash of the code generator and the prelude: a changed generator never reuses a cached graph.
codegen_hash: str = ""

install_config_module(sys.modules[__name__])
