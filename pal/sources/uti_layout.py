"""Where a build directory keeps CSIT's UTI JSON results, for the local source.

A build copied from Jenkins or the log server holds its ``*.info.json`` files either as a
tree (robot's output directory, ``<build>/archives/tests/...``; on the log server every file
is gzipped: ``*.info.json.gz``) or as one archive of that tree (``.tar.gz``/``.tgz``/``.zip``,
e.g. Jenkins' ``archives.zip`` of the artifact directory). An output.xml in the same build
directory is still preferred (pal.sources.local); this is the fallback.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pal.parse.uti_archive import archive_kind, is_tar_name, is_uti_name

#: How deep a walk looks for a first ``*.info.json`` (robot's suite tree is 6-8 levels deep).
MAX_DEPTH = 12


def find_uti(build_dir: Path) -> Path | None:
    """The UTI results of a build directory: an archive file in it (or in ``archives/``), else the directory
    itself when a ``*.info.json`` lies in its tree; None when there are none."""
    for sub in (build_dir, build_dir / "archives"):
        if not sub.is_dir():
            continue
        for entry in sorted(os.scandir(sub), key=lambda e: e.name):
            name = entry.name.lower()
            if entry.is_file(follow_symlinks=False) and (is_tar_name(name) or name.endswith(".zip")):
                if archive_kind(Path(entry.path)) in ("tar", "zip"):
                    return Path(entry.path)
    return build_dir if _has_uti(build_dir, 0) else None


def _has_uti(d: Path, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    try:
        entries = sorted(os.scandir(d), key=lambda e: (e.is_dir(follow_symlinks=False), e.name))
    except OSError:
        return False
    for e in entries:
        if e.is_file(follow_symlinks=False) and is_uti_name(e.name):
            return True
    return any(_has_uti(Path(e.path), depth + 1) for e in entries if e.is_dir(follow_symlinks=False))


def tree_sha256(root: Path) -> str:
    """Fingerprint of a UTI tree: every ``*.info.json[.gz]`` file's relative path, size and mtime, in path order.

    Like the local source's hash cache for single files (keyed by size and mtime), it changes
    when a file is added, removed or rewritten, without reading thousands of files per build
    on every run. Links are not followed (the parser refuses them too).
    """
    h = hashlib.sha256(b"uti-tree\0")
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            if not is_uti_name(name):
                continue
            st = os.lstat(os.path.join(dirpath, name))
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_mode}\n".encode())
    return h.hexdigest()
