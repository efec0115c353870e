"""Real labelled series from the Turing Change Point Dataset (TCPD), and its F1 measure.

TCPD (van den Burg & Williams, 2020; github.com/alan-turing-institute/TCPD) holds real time
series, each annotated by several people. pal does not ship its data: ``read_tcpd`` reads a
checkout (``annotations.json`` and ``datasets/<name>/<name>.json``) from a path the user gives.
Only univariate series are read; ``null`` values are missing runs (NaN).

The measure (``f1``) follows the paper's definition: the first observation counts as a change
point for the predictions and for every annotator; a prediction is a true positive for an
annotator when it lies within ``margin`` observations of one of their points (one-to-one);
precision is the share of predictions that are true positives for at least one annotator,
recall the mean over annotators of the share of their points found. Kinds (regression or
progression) play no part: TCPD's series have no better direction.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from pal.errors import ParseError

MAX_BYTES = 50_000_000  # a TCPD file is at most a few MB; refuse anything far larger


@dataclass(frozen=True)
class TcpdSeries:
    """One univariate TCPD series and each annotator's change points (0-based indices)."""

    name: str
    values: np.ndarray
    annotations: dict[str, tuple[int, ...]]


def _load(path: Path) -> object:
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ParseError(str(path), f"larger than {MAX_BYTES} bytes")
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ParseError(str(path), f"cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise ParseError(str(path), f"not JSON: {exc}") from None


def read_tcpd(root: str | Path) -> list[TcpdSeries]:
    """The univariate series of a TCPD checkout at ``root`` with annotations, sorted by name."""
    root = Path(root)
    notes = _load(root / "annotations.json")
    if not isinstance(notes, dict):
        raise ParseError(str(root / "annotations.json"), "expected an object of datasets")
    out = []
    for path in sorted((root / "datasets").glob("*/*.json")):
        doc = _load(path)
        if not isinstance(doc, dict) or "series" not in doc or "name" not in doc:
            continue  # not a dataset file (e.g. a metadata file)
        name = str(doc["name"])
        if doc.get("n_dim") != 1 or name not in notes:
            continue
        raw = doc["series"][0].get("raw")
        if not isinstance(raw, list):
            raise ParseError(str(path), "series[0].raw is not a list")
        values = np.array([math.nan if v is None else float(v) for v in raw], dtype=np.float64)
        ann = {str(k): tuple(int(i) for i in v) for k, v in notes[name].items()}
        out.append(TcpdSeries(name, values, ann))
    return out


def _true_positives(truth: Iterable[int], predicted: Sequence[int], margin: int) -> set[int]:
    """Predictions matched one-to-one to ``truth`` within ``margin`` (closest pairs first)."""
    pairs = sorted((abs(p - t), pi, ti) for ti, t in enumerate(sorted(set(truth)))
                   for pi, p in enumerate(predicted) if abs(p - t) <= margin)
    used_t: set[int] = set()
    hit: set[int] = set()
    for _, pi, ti in pairs:
        if pi not in hit and ti not in used_t:
            hit.add(pi)
            used_t.add(ti)
    return {predicted[i] for i in hit}


def f1(annotations: dict[str, Sequence[int]], predicted: Iterable[int], margin: int = 5) -> float:
    """TCPD's F1 of one series: the first observation counts for everyone (see module doc)."""
    pred = sorted(set(predicted) | {0})
    if not annotations:
        raise ValueError("tcpd f1: a series without annotators")
    found: set[int] = set()
    recalls = []
    for points in annotations.values():
        truth = set(points) | {0}
        tp = _true_positives(truth, pred, margin)
        found |= tp
        recalls.append(len(tp) / len(truth))
    p = len(found) / len(pred)
    r = sum(recalls) / len(recalls)
    return 2 * p * r / (p + r) if p + r else 0.0


def score(series: Sequence[TcpdSeries], find: Callable[[TcpdSeries], Sequence[int]],
          margin: int = 5) -> dict[str, float]:
    """F1 per series name for a change finder (indices of new segments' first observations)."""
    return {s.name: f1(s.annotations, find(s), margin) for s in series}
