"""The detectors pal knows, by the name a spec gives them: one line per detector.

Adding a detector is one module with a class that follows ``pal.analysis.detector.Detector``
and one line here. The spec's allowed names, ``pal validate``'s parameter checks, ``pal
evaluate``'s candidates and the docs' list all read this table. Entries are import paths, so
reading the names costs no import of the detectors themselves.
"""

from __future__ import annotations

import importlib
from typing import Any

from pal.errors import SpecError

DETECTORS: dict[str, str] = {
    "mdl": "pal.analysis.mdl_detector:MdlDetector",
    "tma": "pal.analysis.tma:TmaDetector",
    "fisher": "pal.analysis.fisher:FisherDetector",
    "wda": "pal.analysis.wda:WdaDetector",
}


def names() -> tuple[str, ...]:
    """The registered detector names, in registry order."""
    return tuple(DETECTORS)


def detector_class(name: str) -> type:
    """The class registered as ``name``; SpecError naming the known ones otherwise."""
    if name not in DETECTORS:
        raise SpecError("detector.name", name, "one of " + ", ".join(DETECTORS))
    module, _, attr = DETECTORS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def get_detector(name: str, params: dict[str, Any] | None = None) -> Any:
    """The detector called ``name`` with ``params`` checked; SpecError for unknown names or keys."""
    return detector_class(name)(params)


def summary(name: str) -> str:
    """The first line of the detector's docstring (for docs and ``pal evaluate``)."""
    doc = detector_class(name).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else name
