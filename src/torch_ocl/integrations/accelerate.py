"""Hugging Face accelerate (and ``transformers.Trainer``) on ``ocl`` devices. Opt-in.

accelerate 1.15 chooses the device and the distributed backend from a fixed list (mps, mlu,
sdaa, musa, npu, hpu, cuda, xpu, neuron); on an ``ocl`` machine it picks the CPU, and a process
started by ``accelerate launch``/torchrun finds no backend and runs undistributed.
``transformers.TrainingArguments`` has a list of its own for one process. :func:`enable` wraps
the few functions that make those choices, and changes a choice only where the original would
have used the CPU without being asked to:

``accelerate.state.PartialState._prepare_backend``
    in a launched process (``LOCAL_RANK`` set, ``cpu`` not requested) that found no backend:
    backend ``"ocl_gloo"`` (torch-ocl's c10d backend; it also carries CPU tensors) and
    ``DistributedType.MULTI_CPU``, accelerate's device-neutral torch.distributed path
    (``DistributedDataParallel`` without ``device_ids``; ``init_process_group`` from the
    launcher's environment).
``accelerate.state.PartialState.set_device``
    ``ocl:<local rank % device count>`` in such a process; ``ocl:<current>`` in a single process
    whose default device would be the CPU.
``accelerate.state.PartialState.wait_for_everyone``
    the barrier names this process's ``ocl`` device (accelerate names ``local_process_index``,
    which is out of range when processes share a device, as on PoCL).
``accelerate.commands.launch._validate_launch_command``
    ``accelerate launch --num_processes N`` (N > 1, one machine, no config file, no other mode)
    uses the multi-process launcher, as accelerate does when it counts more than one GPU.
``accelerate.utils.imports.is_bf16_available`` (and the names bound to it in accelerate)
    true when accelerate's device is ``ocl``: ``mixed_precision="bf16"`` then autocasts on
    ``ocl`` (``native_amp``), where accelerate would run in float32 without a word.
``transformers.TrainingArguments._setup_devices``
    for one process, the device of accelerate's state (``ocl``) instead of its own CUDA/CPU choice.

Use it in the script, before the ``Accelerator``/``TrainingArguments`` are created::

    import torch_ocl.integrations.accelerate
    torch_ocl.integrations.accelerate.enable()

or for unmodified scripts and for ``accelerate launch`` itself, ``TORCH_OCL_ACCELERATE=1`` in the
environment (torch-ocl then applies the same wrappers when accelerate/transformers are
imported). ``Accelerator(cpu=True)``, ``--cpu`` and ``use_cpu=True`` keep the CPU.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys

import torch

__all__ = ["enable", "is_enabled"]

BACKEND = "ocl_gloo"
_MARK = "_torch_ocl_wrapped"
_enabled = False


def _ocl_count() -> int:
    try:
        import torch_ocl

        return int(torch_ocl.device_count())
    except Exception:  # noqa: BLE001
        return 0


def _serves_ocl(backend) -> bool:
    b = str(backend or "").lower()
    return b == BACKEND or "ocl:" in b


def _wrap(owner, name, make):
    current = owner.__dict__[name]
    if getattr(current, _MARK, False):
        return
    new = make(current)
    setattr(new, _MARK, True)
    setattr(owner, name, new)


def _patch_state(state_mod) -> None:
    from accelerate.utils import DistributedType

    PartialState = state_mod.PartialState

    def prepare_backend(original):
        @functools.wraps(original)
        def _prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
            chosen, dtype = original(self, cpu, sagemaker_dp, backend)
            if (
                dtype == DistributedType.NO
                and not cpu
                and not sagemaker_dp
                and int(os.environ.get("LOCAL_RANK", -1)) != -1
                and _ocl_count() > 0
                and (backend is None or _serves_ocl(backend))
            ):
                return chosen or BACKEND, DistributedType.MULTI_CPU
            return chosen, dtype

        return _prepare_backend

    def set_device(original):
        @functools.wraps(original)
        def _set_device(self):
            if self.device is None and not self._cpu and _ocl_count() > 0:
                index = None
                if self.distributed_type == DistributedType.MULTI_CPU and _serves_ocl(self.backend):
                    index = self.local_process_index % _ocl_count()
                elif (
                    self.distributed_type == DistributedType.NO
                    and self.default_device.type == "cpu"
                ):
                    index = torch.ocl.current_device()
                if index is not None:
                    self.device = torch.device("ocl", index)
                    torch.ocl.set_device(index)
                    return
            original(self)

        return _set_device

    def wait_for_everyone(original):
        @functools.wraps(original)
        def _wait_for_everyone(self):
            if (
                self.distributed_type == DistributedType.MULTI_CPU
                and _serves_ocl(self.backend)
                and self.device is not None
                and self.device.type == "ocl"
            ):
                torch.distributed.barrier(device_ids=[self.device.index])
                return
            original(self)

        return _wait_for_everyone

    _wrap(PartialState, "_prepare_backend", prepare_backend)
    _wrap(PartialState, "set_device", set_device)
    _wrap(PartialState, "wait_for_everyone", wait_for_everyone)


def _patch_imports(imports_mod) -> None:
    original = imports_mod.__dict__["is_bf16_available"]
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def is_bf16_available(ignore_tpu=False):
        if original(ignore_tpu):
            return True
        state = sys.modules.get("accelerate.state")
        device = state.PartialState._shared_state.get("device") if state else None
        if device is not None:
            return torch.device(device).type == "ocl"
        return _ocl_count() > 0 and not torch.cuda.is_available()

    setattr(is_bf16_available, _MARK, True)
    # `from .imports import is_bf16_available` copies the name: rebind the copies made so far.
    for name, mod in list(sys.modules.items()):
        if (name == "accelerate" or name.startswith("accelerate.")) and mod is not None:
            if getattr(mod, "is_bf16_available", None) is original:
                mod.is_bf16_available = is_bf16_available


def _patch_launch(launch_mod) -> None:
    def validate(original):
        @functools.wraps(original)
        def _validate_launch_command(args):
            args, defaults, mp_from_config = original(args)
            others = ("multi_gpu", "cpu", "tpu", "use_deepspeed", "use_fsdp", "use_megatron_lm")
            if (
                defaults is None
                and not any(getattr(args, k, False) for k in others)
                and (args.num_processes or 1) > 1
                and (args.num_machines or 1) <= 1
                and _ocl_count() > 0
            ):
                args.multi_gpu = True
            return args, defaults, mp_from_config

        return _validate_launch_command

    _wrap(launch_mod, "_validate_launch_command", validate)


def _patch_training_args(ta_mod) -> None:
    def setup_devices(current):
        original = current.func

        def _setup_devices(self):
            device = original(self)
            state = getattr(self, "distributed_state", None)
            if (
                device.type == "cpu"
                and not self.use_cpu
                and state is not None
                and getattr(state, "device", None) is not None
                and state.device.type == "ocl"
            ):
                return state.device
            return device

        _setup_devices.__doc__ = original.__doc__
        new = functools.cached_property(_setup_devices)
        new.__set_name__(ta_mod.TrainingArguments, "_setup_devices")
        return new

    _wrap(ta_mod.TrainingArguments, "_setup_devices", setup_devices)


_TARGETS = {
    "accelerate.state": _patch_state,
    "accelerate.utils.imports": _patch_imports,
    "accelerate.commands.launch": _patch_launch,
    "transformers.training_args": _patch_training_args,
}


class _AfterImport:
    """Applies a patch right after one of _TARGETS is first imported."""

    def find_spec(self, name, path=None, target=None):
        if name not in _TARGETS or name in sys.modules:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_patch(module):
            exec_module(module)
            _TARGETS[name](module)

        spec.loader.exec_module = exec_then_patch
        return spec


def _apply_now(name) -> None:
    """Patches an imported module; one still being initialised (torch-ocl imported from inside
    it) is left to the names it binds later."""
    try:
        _TARGETS[name](sys.modules[name])
    except (AttributeError, KeyError):
        pass


def enable() -> None:
    """Applies the wrappers (idempotent): at once to the modules already imported, at import to
    the others. Call it before ``Accelerator()``/``TrainingArguments`` are created."""
    global _enabled
    if importlib.util.find_spec("accelerate") is None:
        raise ImportError("torch_ocl.integrations.accelerate needs the accelerate package")
    for name in _TARGETS:
        if name in sys.modules:
            _apply_now(name)
    if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())
    # accelerate.state is what every use goes through: patch it now.
    import accelerate.state  # noqa: F401

    _enabled = True


def is_enabled() -> bool:
    return _enabled


def _enable_from_env() -> None:
    """TORCH_OCL_ACCELERATE=1: called when torch-ocl is imported. Only installs the import hook
    (accelerate is not imported here)."""
    global _enabled
    if os.environ.get("TORCH_OCL_ACCELERATE", "0") in ("", "0"):
        return
    if importlib.util.find_spec("accelerate") is None:
        return
    for name in _TARGETS:
        if name in sys.modules:
            _apply_now(name)
    if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())
    _enabled = True
