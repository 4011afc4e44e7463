"""How c10d finds ``ocl_gloo`` (run when torch_ocl is imported; creates nothing).

1. ``Backend.register_backend("ocl_gloo", ..., extended_api=True, devices=["ocl", "cpu"])``:
   the name, its creator, and its devices. ``register_backend`` makes it the default backend of
   the ``ocl`` device (``Backend.default_device_backend_map["ocl"]``; ``"cpu"`` keeps ``gloo``
   there, which is already mapped), so ``init_process_group(device_id=torch.device("ocl", r))``
   picks it, and ``backend="ocl_gloo"`` serves both ``ocl`` and CPU tensors (CPU tensors go to
   the backend's own gloo unchanged).

2. ``init_process_group()`` with no backend and no device: torch 2.13's ``BackendConfig`` then
   creates a backend for the detected accelerator only (``{"ocl": "ocl_gloo"}``), so a CPU tensor
   collective would raise ``No backend type associated with device type cpu``, and the group's
   default backend type (which c10d sets to GLOO for an undefined backend) would name a backend
   the group does not have. On an ``ocl`` machine we add ``"cpu": "gloo"`` to that one
   configuration, which is what earlier torch 2.x releases did for every available
   accelerator (``cpu:gloo,cuda:nccl``) and what ``backend="cpu:gloo,ocl:ocl_gloo"`` gives explicitly. This is
   a wrapper around ``BackendConfig.__init__``, the only place the choice is made; it changes
   nothing when a backend is named, when the accelerator is not ``ocl`` or when ``gloo`` is
   unavailable. ``TORCH_OCL_DIST_DEFAULT_CPU=0`` turns it off (PyTorch's accelerator-only rule).
"""

from __future__ import annotations

import functools
import os

BACKEND_NAME = "ocl_gloo"


def _create_ocl_gloo(dist_backend_opts, backend_options):
    from . import create_backend

    return create_backend(dist_backend_opts, backend_options)


def _patch_backend_config(dist) -> None:
    c10d = dist.distributed_c10d
    cls = c10d.BackendConfig
    if getattr(cls.__init__, "_torch_ocl", False):
        return
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self, backend):
        original(self, backend)
        if str(backend) != dist.Backend.UNDEFINED:
            return
        if os.environ.get("TORCH_OCL_DIST_DEFAULT_CPU", "1") == "0":
            return
        m = self.device_backend_map
        if list(m) != ["ocl"] or m["ocl"] != BACKEND_NAME or not dist.is_gloo_available():
            return
        # cpu first, as in "cpu:gloo,ocl:ocl_gloo"; the order is the same on every rank.
        self.device_backend_map = {"cpu": dist.Backend(dist.Backend.GLOO), "ocl": m["ocl"]}

    __init__._torch_ocl = True
    cls.__init__ = __init__


def register() -> None:
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_gloo_available():
        return
    if BACKEND_NAME not in dist.Backend.backend_list:
        dist.Backend.register_backend(
            BACKEND_NAME, _create_ocl_gloo, extended_api=True, devices=["ocl", "cpu"]
        )
    _patch_backend_config(dist)
