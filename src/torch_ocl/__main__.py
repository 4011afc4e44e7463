"""``python -m torch_ocl``: doctor, analyze, bench and warmup (see ``torch_ocl.cli``)."""

from .cli import main

raise SystemExit(main())
