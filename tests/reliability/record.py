"""Rows for docs/reliability.md: each reliability test says what it tried and what came out.

With ``PAL_RELIABILITY_RECORD=1`` every call of :func:`record` appends one JSON line to
``tests/reliability/results/<pid>.jsonl`` (one file per process, so xdist workers never
interleave); ``python -m tests.reliability.make_doc`` turns them into the table. Without
the variable nothing is written and tests stay side-effect free.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

RESULTS_DIR = Path(__file__).with_name("results")
ENV = "PAL_RELIABILITY_RECORD"


def record(area: str, case: str, outcome: str, *, inputs: int = 1, faults: int = 0, killed: int = 0,
           lost: int = 0, stage: str | None = None, peak_mb: float | None = None, no_report: int = 0,
           hangs: int = 0) -> None:
    """Note one case: its area (table section), what was tried, what pal did, and the counts.

    ``stage``: the run stage the kills landed in; ``peak_mb``: the case's peak RSS measured in a
    subprocess; ``no_report``: runs that ended without report.json; ``hangs``: cases that did not end.
    """
    if os.environ.get(ENV) != "1":
        return
    RESULTS_DIR.mkdir(exist_ok=True)
    row = {"area": area, "case": case, "outcome": outcome, "inputs": inputs, "faults": faults,
           "killed": killed, "lost": lost, "no_report": no_report, "hangs": hangs}
    if stage is not None:
        row["stage"] = stage
    if peak_mb is not None:
        row["peak_mb"] = round(peak_mb)
    with open(RESULTS_DIR / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")


def fuzz_examples(default: int) -> int:
    """Hypothesis examples per property: small for ``make test``, ``PAL_FUZZ_EXAMPLES`` for ``make fuzz``."""
    return int(os.environ.get("PAL_FUZZ_EXAMPLES", default))
