"""The compiled kernels (the analysis', the render's): C extensions, imported on first use.

``setup.py`` builds them at install (``make venv``, ``pip install``): plain C through the buffer
protocol, compiled without fast-math or contraction into fused multiply-adds, so their floats are
bit for bit the NumPy forms' and jumpavg's. A process loads one in about a millisecond (the
Numba kernels they replace cost 0.5-0.8 s of CPU in each process that analysed or drew, 7.6 s to
compile on a fresh install, and about 100 MB of resident memory).

A tree run without its install (a checkout on ``PYTHONPATH``) has none: the modules that use one
then run their NumPy forms, the same results several times slower, and the run says so once.
"""

from __future__ import annotations

import functools
import importlib
import logging
from types import ModuleType

log = logging.getLogger("pal")


@functools.cache
def load(module: str) -> ModuleType | None:
    """The kernel module ``module`` (``pal.analysis.mdl_kernel``) imported once, or None when it
    was not built (then its NumPy form runs)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        log.warning("compiled kernel %s not built (%s): its NumPy form runs, slower; "
                    "build it with `make venv` or `pip install -e .`", module, exc)
        return None
