"""Run a function once a module is imported, without importing it ourselves (importing Inductor's
modules eagerly would make ``import torch._dynamo`` about a second slower)."""

from __future__ import annotations

import importlib.util
import sys
from typing import Callable


def call_after_import(name: str, fn: Callable[[], None]) -> None:
    """Calls ``fn()`` now if module ``name`` is loaded, else right after its first import."""
    if name in sys.modules:
        fn()
        return

    class _Hook:
        def find_spec(self, fullname, path=None, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(fullname)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def exec_then_call(module):
                exec_module(module)
                fn()

            spec.loader.exec_module = exec_then_call
            return spec

    sys.meta_path.insert(0, _Hook())
