"""The manifest: the store's list of builds, the fragment each build's samples are in, and the
schema version. It is the store's single source of truth: written last and atomically, so a
fragment that is not listed (left by a killed run) is ignored and later vacuumed.

On disk: ``manifest.json``::

    {"format": "pal-store", "schema_version": 1,
     "builds": [{"job": ..., "build": 42, <the other BUILD_COLUMNS>, "sha256": ...,
                 "fragment": "samples/job=<job>/42-<sha8>-<id>.parquet", "rows": 120,
                 "stored_at": "2024-01-01T00:00:00+00:00"}, ...]}

Schema version 2 adds ``"row_group": g, "offset": o`` to the entries of builds that live in a
compacted fragment (``pal store vacuum``: one file of many builds, a row group holding several
consecutive builds): the build's rows are ``rows`` rows from row ``o`` of row group ``g``. An
entry without them owns its whole file. Version 1 manifests (no compaction) are read as they are and
saved as version 2 on the next write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from pal.errors import StoreError
from pal.model import BUILD_COLUMNS, BuildMeta
from pal.atomic import crash_point, write_text_atomic
from pal.store.schema import READABLE_VERSIONS, SCHEMA_VERSION, json_safe

MANIFEST_NAME = "manifest.json"
FORMAT = "pal-store"

BuildKey = tuple[str, int]


@dataclass
class Manifest:
    """Builds by (job, build); each entry holds BUILD_COLUMNS plus ``fragment``, ``rows``, ``stored_at``."""

    schema_version: int = SCHEMA_VERSION
    builds: dict[BuildKey, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, store_dir: Path) -> "Manifest":
        """Read the manifest (an empty one if the store is new); StoreError if damaged or of another version."""
        path = Path(store_dir) / MANIFEST_NAME
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        except OSError as exc:
            raise StoreError(f"{path}: cannot read the store manifest ({exc.strerror})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StoreError(f"{path}: damaged store manifest ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise StoreError(f"{path}: not a pal store manifest (format {data.get('format') if isinstance(data, dict) else None!r})")
        version = data.get("schema_version")
        if version not in READABLE_VERSIONS:
            raise StoreError(
                f"{path}: store schema version {version!r} is not one this pal reads "
                f"({', '.join(map(str, READABLE_VERSIONS))}); re-create the store or use a matching pal version"
            )
        builds = {(e["job"], int(e["build"])): e for e in data.get("builds", [])}
        return cls(version, builds)

    def save(self, store_dir: Path) -> None:
        """Write atomically (temp file + rename): readers see the old or the new manifest, never a mix."""
        entries = [self.builds[k] for k in sorted(self.builds)]
        self.schema_version = SCHEMA_VERSION  # an older store is migrated by its next write
        text = json.dumps(
            {"format": FORMAT, "schema_version": self.schema_version, "builds": entries},
            separators=(",", ":"), sort_keys=True, default=json_safe,  # no indent: the C encoder, 10x faster
        )
        write_text_atomic(Path(store_dir) / MANIFEST_NAME, text, step="manifest-temp")
        crash_point("manifest-replaced")

    def copy(self) -> "Manifest":
        return Manifest(self.schema_version, dict(self.builds))

    def fragments(self, jobs: list[str] | None = None) -> list[str]:
        """Relative paths of the listed fragments, for all jobs or only ``jobs``, in (job, build) order."""
        wanted = None if jobs is None else set(jobs)
        seen: dict[str, None] = {}
        for k, e in sorted(self.builds.items()):
            if wanted is None or k[0] in wanted:
                seen.setdefault(e["fragment"], None)
        return list(seen)

    def pieces(self, keys: list[BuildKey]) -> list[tuple[str, list[tuple[int, int, int]] | None]]:
        """What to read for the builds ``keys`` (in their order): (fragment, None = the whole file) or
        (fragment, [(row group, offset, rows), ...]) for builds in a compacted fragment.

        Consecutive builds in the same compacted fragment become one piece, so a window of
        compacted builds is one ``read_row_groups`` call per file, not one read per build.
        """
        out: list[tuple[str, list[tuple[int, int, int]] | None]] = []
        for key in keys:
            e = self.builds[key]
            group = e.get("row_group")
            if group is None:
                out.append((e["fragment"], None))
                continue
            span = (int(group), int(e.get("offset", 0)), int(e.get("rows", 0)))
            last = out[-1] if out else None
            if last is not None and last[0] == e["fragment"] and last[1] is not None:
                last[1].append(span)
            else:
                out.append((e["fragment"], [span]))
        return out

    def references(self, fragment: str) -> int:
        """How many builds the manifest keeps in ``fragment``."""
        return sum(1 for e in self.builds.values() if e["fragment"] == fragment)


def entry_of(meta: BuildMeta, sha256: str, fragment: str, rows: int) -> dict[str, Any]:
    """A manifest entry for one build: BuildMeta's fields with the archive hash given here."""
    def iso(t: datetime | None) -> str | None:
        return None if t is None else pd.Timestamp(t).isoformat()

    return {
        "job": meta.job,
        "build": int(meta.build),
        "build_time": iso(meta.build_time),
        "start_time": iso(meta.start_time),
        "dut": meta.dut,
        "dut_version": meta.dut_version,
        "testbed": meta.testbed,
        "passed": int(meta.passed),
        "failed": int(meta.failed),
        "duration_s": None if meta.duration_s is None else float(meta.duration_s),
        "source_file": meta.source_file,
        "sha256": sha256,
        "fragment": fragment,
        "rows": int(rows),
        "stored_at": datetime.now(timezone.utc).isoformat(),
    }


def builds_frame(entries: list[dict[str, Any]]) -> pd.DataFrame:
    """The builds table (BUILD_COLUMNS with their dtypes) from manifest entries."""
    out: dict[str, pd.Series] = {}
    for col, dtype in BUILD_COLUMNS.items():
        values = [e.get(col) for e in entries]
        if dtype.startswith("datetime64"):
            out[col] = pd.to_datetime(pd.Series(values, dtype="object"), utc=True, format="ISO8601").astype(dtype)
        elif dtype == "float64":
            out[col] = pd.Series([float("nan") if v is None else v for v in values], dtype="float64")
        else:
            out[col] = pd.Series(values, dtype="object").astype(dtype)
    return pd.DataFrame(out)
