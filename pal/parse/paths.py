"""Job and build number from where an output.xml lies.

Two layouts are in use: the cache tree ``.../<job>/<build>/output.xml.gz`` and the flat
``<job>__<build>__output.xml.gz`` name.
"""

from __future__ import annotations

import re
from pathlib import Path

_FLAT = re.compile(r"^(?P<job>.+?)__(?P<build>\d+)__")


def job_build_from_path(path: str | Path) -> tuple[str, int] | None:
    """``(job, build)`` from the file's path, or None when neither layout matches."""
    p = Path(path)
    m = _FLAT.match(p.name)
    if m:
        return m.group("job"), int(m.group("build"))
    parent = p.parent
    if parent.name.isdigit() and parent.parent.name:
        return parent.parent.name, int(parent.name)
    return None
