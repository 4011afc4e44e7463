"""c10d backend for ``ocl`` tensors: ``ocl_gloo``.

Registered when torch_ocl is imported (that only adds a name to ``torch.distributed.Backend``;
nothing here is imported until a process group is created), so that::

    dist.init_process_group()                                  # on an ocl machine
    dist.init_process_group(device_id=torch.device("ocl", r))
    dist.init_process_group(backend="cpu:gloo,ocl:ocl_gloo")

all give ``ocl`` tensors this backend and CPU tensors gloo. The transport is PyTorch's own
``ProcessGroupGloo``: the C++ backend (csrc/distributed) stages ``ocl`` tensors through pinned
host buffers, ordered by events on the tensor's stream, and completes Work objects and their
Futures on a communication stream. See docs/distributed.md.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

BACKEND_NAME = "ocl_gloo"

__all__ = ["BACKEND_NAME", "create_backend"]


def create_backend(dist_backend_opts, backend_options=None):
    """The ``extended_api`` creator that ``init_process_group`` calls for the ``ocl`` device."""
    from torch._C._distributed_c10d import ProcessGroupGloo

    from .._C import _distributed

    store = dist_backend_opts.store
    rank = dist_backend_opts.group_rank
    size = dist_backend_opts.group_size
    timeout = dist_backend_opts.timeout
    # A gloo of its own (the store is already prefixed with "ocl/" by c10d), created the way
    # c10d creates the CPU one.
    gloo = ProcessGroupGloo(store, rank, size, timeout)
    global _atexit_registered
    if not _atexit_registered:
        # A group the program never destroyed would otherwise stop its threads during static
        # destruction, after the runtime they use is gone.
        import atexit

        atexit.register(_distributed.stop_all)
        _atexit_registered = True
    return _distributed.create_backend(gloo, rank, size, timeout.total_seconds())


_atexit_registered = False
