"""Atomic writes of alert outputs: temp file beside the target, then ``os.replace``.

Reuses ``pal.store.atomic.write_atomic`` (fsync + rename) so a reader (Jenkins mailing the
files, the site) never sees half a file.
"""

from __future__ import annotations

from pathlib import Path

from pal.store.atomic import write_atomic


def write_text(target: Path, text: str) -> Path:
    """Write ``text`` as UTF-8 with ``\\n`` line ends, atomically."""
    write_atomic(target, lambda p: p.write_bytes(text.encode("utf-8")))
    return target


def write_bytes(target: Path, data: bytes) -> Path:
    write_atomic(target, lambda p: p.write_bytes(data))
    return target
