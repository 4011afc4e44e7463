"""Loading the example workloads (examples/<name>.py, see the WORKLOAD contract) for bench and
warmup. A module that is absent is "not available", never a crash."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Optional

DEFAULT_MODELS = ("mlp", "cnn", "gpt", "minilm")


def module_name(spec: str) -> str:
    """'gpt' -> 'examples.gpt'; dotted names are taken as they are."""
    return spec if "." in spec else f"examples.{spec}"


def load(spec: str) -> tuple[Optional[Any], Optional[str]]:
    """(module, None) or (None, why it is not available)."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # examples/ lives in the repo root (the current directory)
    name = module_name(spec)
    try:
        mod = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and (name == e.name or name.startswith(e.name + ".")):
            return None, f"not available ({name} not found from {os.getcwd()})"
        return None, f"not available (needs {e.name}: {e})"
    except ImportError as e:
        return None, f"not available ({e})"
    if not hasattr(mod, "workload"):
        return None, f"not available ({name} has no workload())"
    return mod, None


def make(mod, device: str, *, small: bool) -> tuple[Optional[Any], Optional[str]]:
    """Builds the workload; ImportError (missing optional packages) means not available."""
    try:
        return mod.workload(device, seed=0, small=small), None
    except ImportError as e:
        return None, f"not available ({e})"
