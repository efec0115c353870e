"""A package's public names, each imported from its module at first use (PEP 562).

``pal.alerts`` and ``pal.parse`` name their entry points this way: a command that needs one
module of the package (``pal validate`` the acks file, the download's integrity check the
archive limits) does not import the rest (pandas, lxml) with it.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_names(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``homes`` maps each public name to the submodule holding it."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home}"), name)

    return __getattr__
