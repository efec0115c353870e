"""Numba kernels (the analysis', the render's), imported on first use.

A kernel module imports numba, which costs half a second and about 100 MB of resident memory
in a process (numba's and LLVM's libraries, measured after the first call): the modules that
use one load it here when a computation first needs it (never at their own import), and run
their NumPy forms when numba is missing.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType


@functools.cache
def load(module: str) -> ModuleType | None:
    """The kernel module ``module`` (``pal.analysis.mdl_kernel``) imported once, or None when numba
    is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
