"""Job and build number from where a build's results lie.

Layouts in use: the cache tree ``.../<job>/<build>/...`` (the file may sit deeper, e.g.
``<build>/archives/output_info.xml.gz``, and a UTI tree is the ``<build>`` directory itself),
and the flat ``<job>__<build>__<name>`` name.
"""

from __future__ import annotations

import re
from pathlib import PurePath

_FLAT = re.compile(r"^(?P<job>.+?)__(?P<build>\d+)__")


def job_build_from_path(path: str | PurePath) -> tuple[str, int] | None:
    """``(job, build)`` from the path (its nearest all-digit part with a parent), or None when no layout matches."""
    p = PurePath(path)
    m = _FLAT.match(p.name)
    if m:
        return m.group("job"), int(m.group("build"))
    parts = p.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i].isdigit() and parts[i - 1] not in ("", "/", ".", "..") and not parts[i - 1].endswith("/"):
            return parts[i - 1], int(parts[i])
    return None
