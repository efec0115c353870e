"""Per-build facts for hover text and links: DUT version and testbed of each (job, build)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class BuildFacts:
    version: str
    testbed: str


class BuildIndex:
    """(job, build) -> BuildFacts, from the builds table, completed from the samples table."""

    def __init__(self, builds: pd.DataFrame, samples: pd.DataFrame):
        self._facts: dict[tuple[str, int], BuildFacts] = {}
        for df in (samples, builds):  # builds table wins: it is the per-build authority
            if df is None or df.empty or not {"job", "build"} <= set(df.columns):
                continue
            cols = [c for c in ("dut_version", "testbed") if c in df.columns]
            first = df[["job", "build", *cols]].drop_duplicates(["job", "build"], keep="last")
            for row in first.itertuples(index=False):
                rec = row._asdict()
                self._facts[(str(rec["job"]), int(rec["build"]))] = BuildFacts(
                    _text(rec.get("dut_version")), _text(rec.get("testbed"))
                )

    def get(self, job: str, build: int) -> BuildFacts:
        return self._facts.get((job, int(build)), BuildFacts("", ""))

    def job_table(self, job: str) -> dict[str, list[str]]:
        """``{"<build>": [version, testbed]}`` for one job (the per-job data file)."""
        items = sorted((b, f) for (j, b), f in self._facts.items() if j == job)
        return {str(b): [f.version, f.testbed] for b, f in items}


def _text(v: object) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return ""
    return str(v)
