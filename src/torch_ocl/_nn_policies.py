"""Device-keyed choices inside torch.nn's Python code, given for ``ocl``.

``F.linear_cross_entropy``'s chunked path resolves ``acc_policy="auto"`` / ``acc_dtype=None`` per
device type: float32 accumulation for float16/bfloat16 inputs on CPU and CUDA, the input dtype
everywhere else. On ``ocl`` float16 and bfloat16 are storage types whose arithmetic runs in float
(no ``cl_khr_fp16``; see DESIGN.md section 3), so float32 accumulation costs nothing extra, and
without it ``ocl`` rounds the logits, their exponentials and the log-sum-exp to float16 where the
CPU keeps float32, and the losses come out up to a few float16 ulps apart from the CPU's. ``ocl``
gets the CPU's choices: float32 accumulation and the ``"accurate"`` policy with ``aspect_ratio``
chunking.
"""

import torch


def install() -> None:
    try:
        from torch.nn.modules import linear_cross_entropy_options as lce
    except ImportError:  # a torch without linear_cross_entropy
        return
    options = getattr(lce, "LinearCrossEntropyOptions", None)
    defaults = getattr(lce, "_AUTO_DEFAULTS", None)
    resolve = getattr(options, "_resolve_auto_acc_dtype", None)
    if options is None or defaults is None or resolve is None:
        return
    if getattr(resolve, "_torch_ocl", False):
        return
    for dtype in (torch.float16, torch.bfloat16):
        if ("cpu", dtype) in defaults:
            defaults.setdefault(("ocl", dtype), defaults[("cpu", dtype)])

    def resolve_auto_acc_dtype(dtype, device):
        if device is not None and device.type == "ocl":
            return resolve(dtype, torch.device("cpu"))
        return resolve(dtype, device)

    resolve_auto_acc_dtype._torch_ocl = True
    options._resolve_auto_acc_dtype = staticmethod(resolve_auto_acc_dtype)
