"""A change's evidence as a reader reads it: labels and units instead of the detectors' raw keys.

Detectors put their own numbers in ``Change.evidence`` (``before_runs``, ``tmsd``, ``T`` ...).
The drill-down page shows them through this table: each known key has a label and a kind
that says how its value is written (runs, a level in the metric's unit, a percentage, a
build). Keys not listed here are still shown, with their underscores turned into spaces.
"""

from __future__ import annotations

import math
from typing import Callable

from pal.render.naming import Scale, build_label

#: key -> (label, kind); kinds: runs, level (metric unit), pct, build, run (index of a run), bits, number
LABELS: dict[str, tuple[str, str]] = {
    # mdl
    "before_runs": ("runs at the old level", "runs"),
    "after_runs": ("runs at the new level", "runs"),
    "missing_between": ("missing runs between the levels", "runs"),
    "bits_saved": ("information gained by the split", "bits"),
    # alert filters
    "detector_before": ("old level as the detector saw it", "level"),
    "detector_after": ("new level as the detector saw it", "level"),
    "min_change_pct": ("smallest change alerted", "pct"),
    "confirm_runs": ("runs needed to confirm", "runs"),
    "restores_build": ("undoes the change of build", "build"),
    # run-flagging detectors (tma, wda)
    "flagged_runs": ("runs flagged", "runs"),
    "reference": ("reference level", "level"),
    "flagged_at": ("flagged at", "run"),
    # tma
    "tma": ("trimmed moving average", "level"),
    "tmsd": ("trimmed moving standard deviation", "level"),
    "low": ("lower band edge", "level"),
    "high": ("upper band edge", "level"),
    "mm": ("moving median", "level"),
    "value": ("value of the run", "level"),
    "sigma": ("band width in standard deviations", "number"),
    # wda
    "delta": ("difference from the history", "level"),
    "tolerance": ("tolerance", "level"),
    "check": ("check number", "number"),
    "historic_mean": ("mean of the history", "level"),
    "historic_median": ("median of the history", "level"),
    "historic_stddev": ("standard deviation of the history", "level"),
    "historic_mad": ("median absolute deviation of the history", "level"),
    "recent_mean": ("mean of the recent runs", "level"),
    "recent_median": ("median of the recent runs", "level"),
    # fisher
    "T": ("test statistic T", "number"),
    "Tc": ("critical value Tc", "number"),
    "phi": ("phi", "number"),
    "N": ("runs tested", "runs"),
    "D_P": ("D_P", "number"),
    "D_Q": ("D_Q", "number"),
    "depth": ("search depth", "number"),
    "before_mean": ("mean before", "level"),
    "after_mean": ("mean after", "level"),
}


def _number(v: float) -> str:
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.4g}"


def _plural(n: float, word: str) -> str:
    return f"{_number(n)} {word}" + ("" if n == 1 else "s")


def describe(evidence: dict, scale: Scale, job: str, build_of: Callable[[int], int | None]) -> list[tuple[str, str]]:
    """(label, text) pairs in the order of ``LABELS``, unknown keys after them by name.

    ``build_of`` maps a run index of the series to its build number (None outside the series).
    """
    order = {k: i for i, k in enumerate(LABELS)}
    out = []
    for key in sorted(evidence, key=lambda k: (order.get(str(k), len(order)), str(k))):
        value = evidence[key]
        label, kind = LABELS.get(str(key), (str(key).replace("_", " "), "number"))
        out.append((label, _text(value, kind, scale, job, build_of)))
    return out


def _text(value: object, kind: str, scale: Scale, job: str, build_of: Callable[[int], int | None]) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    v = float(value)
    if not math.isfinite(v):
        return "unknown"
    if kind == "runs":
        return _plural(v, "run")
    if kind == "level":
        return f"{v / scale.divisor:.{scale.digits + 1}f} {scale.unit}"
    if kind == "pct":
        return f"{v:g} %"
    if kind == "bits":
        return f"{v:.1f} bits"
    if kind == "build":
        return build_label(job, int(v))
    if kind == "run":
        b = build_of(int(v))
        return build_label(job, b) if b is not None else f"run {int(v)}"
    return _number(v)
