"""Worker-side ingest: parse one archive and write its samples as a staged fragment (``write_staged``).

Runs in executor workers, so everything crossing the process boundary is small and
picklable: a BuildFile (a path) goes in, a Fragment (a path, a row count, BuildMeta and
problems) comes out. No DataFrame travels through the scheduler; the driver then calls
``Store.commit_fragments`` to place them in the store (as Parquet) and update the manifest.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pal.errors import ParseError
from pal.model import BuildFile, BuildMeta
from pal.report import Problem

ParseFn = Callable[..., Any]  # parse_build(path, job, build, **options) -> ParseResult(table, meta, problems)


@dataclass(frozen=True)
class Fragment:
    """One parsed build, staged on disk; ``error`` is set (and ``path`` None) if it could not be parsed."""

    job: str
    build: int
    sha256: str
    path: str | None  # the staged file (Arrow IPC, ``pal.store.store.write_staged``)
    rows: int = 0
    meta: BuildMeta | None = None
    problems: list[Problem] = field(default_factory=list)  # per-test problems from the parser
    error: str | None = None  # why the whole build could not be read


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Content hash of an archive, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def parse_to_fragment(
    build_file: BuildFile,
    staging_dir: str,
    parse_options: dict[str, Any],
    parse_fn: ParseFn | None = None,
) -> Fragment:
    """Parse ``build_file`` and write its samples to ``staging_dir``; return the Fragment.

    ``parse_options`` are passed to the parser as keywords (testbeds, rename, ignore, dut).
    ``parse_fn`` defaults to ``pal.parse.parse_build`` (imported here, in the worker); tests
    inject a fake. A ParseError or an unreadable file gives a Fragment with ``error`` set.
    """
    from pal.store.store import STAGED_SUFFIX, write_staged  # the store's writer: one schema for both paths

    job, build = build_file.job, int(build_file.build)
    try:
        sha = build_file.sha256 or file_sha256(build_file.path)
    except OSError as exc:
        return Fragment(job, build, "", None, error=f"{build_file.path}: {exc.strerror or exc}")
    if parse_fn is None:
        from pal.parse import parse_build as parse_fn  # type: ignore[no-redef]
    try:
        result = parse_fn(str(build_file.path), job, build, **parse_options)
    except (ParseError, OSError) as exc:
        return Fragment(job, build, sha, None, error=str(exc))
    safe_job = "".join(c if c.isalnum() or c in "-_." else "_" for c in job)
    target = Path(staging_dir) / f"{safe_job}--{build}-{sha[:8]}-{uuid.uuid4().hex[:6]}{STAGED_SUFFIX}"
    rows = write_staged(result.table, target)
    return Fragment(job, build, sha, str(target), rows, result.meta, list(result.problems))
