"""A job's window as the analysis reads it: its series and the history rows later stages keep,
read from the store or slid from what the last run read.

A daily run adds a build to each job and, with ``max-builds``, drops the oldest: 169 of 170
builds are those the last run read and cut. Reading and cutting a job's window costs about a
second at CSIT's scale (a year's window: 1.0 s to read a million rows, 0.4 s to cut them); the
result cache (``pal.analysis.result_cache``) keeps each job's series inputs and history rows, so
``slide`` drops the runs of the builds that left the window from them and appends those of the
new builds, read alone. What it gives equals a read of the whole window when:

* the kept builds are the same in the store (manifest entry, placement aside: a build moved
  into a compacted fragment is the same build) and so are pal's code, what of the spec a window
  depends on (``window_spec``) and the rename file (``Slides.base``);
* the builds that left are older than every kept one and those that came newer (a build that
  fills a gap means a read);
* every series' runs had one test set (``Cut.uniform``), so losing its oldest runs cannot change
  its test set, and every key is text;
* no detector reads trial lists (the cache keeps none).

Otherwise the job is read (``plan`` or ``slide`` give None).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from pal.analysis.series import Cut, SeriesInput, cut_series, shared_axis
from pal.history import concat_samples
from pal.spec import Spec

#: manifest fields that say where a build's rows are, not what they are
PLACEMENT = ("fragment", "row_group", "offset")


def entry_digest(entry: dict[str, Any]) -> str:
    """A stored build's identity: its manifest entry without its placement."""
    what = {k: v for k, v in entry.items() if k not in PLACEMENT}
    return hashlib.sha1(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def window_spec(spec: Spec) -> str:
    """What of the spec a job's series and history rows depend on besides its builds: the jobs,
    the test sets, the renames, the ignore list and the testbed names (the rename file's
    contents are digested beside it). Not the outputs, sources, alerts or the store's path: a
    state moved to another directory, or a new title, still finds its windows."""
    return repr((spec.jobs, spec.test_sets, sorted(spec.rename.items()), spec.ignore, sorted(spec.testbeds.items())))


@dataclass(frozen=True)
class Slides:
    """What a job's window is slid against: the digest of what every window depends on besides its
    builds (pal's code, ``window_spec``, the rename file) and, per job, its window's builds with their
    ``entry_digest``."""

    base: str
    builds: dict[str, dict[int, str]]


@dataclass(frozen=True)
class JobWindow:
    """One job's window as the analysis reads it.

    ``series``: its cut (``split_series``); ``samples``: its history rows the later stages read
    (``alert_samples``); ``rows``: the rows it holds; ``builds``: per build, its ``entry_digest``
    and row count; ``uniform``: ``Cut.uniform``."""

    series: list[SeriesInput]
    samples: pd.DataFrame | None
    rows: int
    builds: dict[int, tuple[str, int]]
    uniform: bool


@dataclass(frozen=True)
class Plan:
    """The builds that left a job's window (oldest first) and those that came (``plan``)."""

    dropped: list[int]
    added: list[int]


def read_window(samples: pd.DataFrame, spec: Spec, entries: dict[int, str]) -> JobWindow:
    """The window of a job whose rows were read whole (``history.read_samples``)."""
    from pal.alerts import alert_samples

    cut = cut_series(samples, spec)
    return JobWindow(cut.series, alert_samples(samples), len(samples), _builds(samples, entries), cut.uniform)


def plan(kept: dict[int, tuple[str, int]], now: dict[int, str]) -> Plan | None:
    """How the window of the last run (``kept``: build -> (digest, rows)) became ``now`` (build ->
    digest); None when a slide would not give what a read gives (see the module's docstring)."""
    both = kept.keys() & now.keys()
    if not both or any(kept[b][0] != now[b] for b in both):
        return None
    dropped, added = sorted(kept.keys() - both), sorted(now.keys() - both)
    if (dropped and dropped[-1] >= min(both)) or (added and added[0] <= max(both)):
        return None
    return Plan(dropped, added)


def slide(kept: JobWindow, steps: Plan, added: pd.DataFrame | None, spec: Spec, entries: dict[int, str]
          ) -> JobWindow | None:
    """``kept`` without the runs and rows of ``steps.dropped`` and with ``added`` (the rows of
    ``steps.added``, ``history.read_samples``; None when none came): what ``read_window`` of the
    whole new window gives; None when it cannot say (a key that is not text)."""
    if not kept.uniform:
        return None
    cut = cut_series(added, spec) if added is not None else Cut([], True)
    if any(type(s.key.test_id) is not str or type(s.key.metric) is not str for s in cut.series):
        return None  # (ordered here as text: a missing one would sort elsewhere in a read)
    old_cut = steps.dropped[-1] if steps.dropped else None
    olds: dict[tuple[str, str], tuple[SeriesInput, int]] = {}
    for s in kept.series:
        at = int(np.searchsorted(s.builds, old_cut, side="right")) if old_cut is not None else 0
        if at < len(s.builds):  # (a series all of whose runs left is gone)
            olds[(s.key.test_id, s.key.metric)] = (s, at)
    news = {(s.key.test_id, s.key.metric): s for s in cut.series}
    uniform = cut.uniform
    axes: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}  # by content: the series' shared axes
    made: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}  # by the parts they are made of

    def axis(parts: tuple[int, ...], make: Callable[[], tuple[np.ndarray, np.ndarray]]
             ) -> tuple[np.ndarray, np.ndarray]:
        """The builds and times arrays of a series, one pair for all series with the same
        (``shared_axis``), made once for all series made of the same parts."""
        got = made.get(parts)
        if got is None:
            got = made[parts] = shared_axis(axes, *make())
        return got

    series: list[SeriesInput] = []
    for key in sorted(olds.keys() | news.keys()):
        old, new = olds.get(key), news.get(key)
        if old is None:
            assert new is not None
            b, t = axis((id(new.builds), id(new.times)), lambda: (new.builds, new.times))
            series.append(SeriesInput(new.key, new.test_set, b, t, new.values, new.stdevs, new.attrs))
            continue
        o, at = old
        if new is None:
            b, t = axis((id(o.builds), id(o.times), at), lambda: (o.builds[at:], o.times[at:]))
            series.append(SeriesInput(o.key, o.test_set, b, t, o.values[at:], o.stdevs[at:], o.attrs))
            continue
        # the first run's test set (the kept runs' are uniform), the last run's attributes
        uniform = uniform and new.test_set == o.test_set
        b, t = axis((id(o.builds), id(o.times), at, id(new.builds), id(new.times)),
                    lambda: (np.concatenate([o.builds[at:], new.builds]), np.concatenate([o.times[at:], new.times])))
        series.append(SeriesInput(o.key, o.test_set, b, t, np.concatenate([o.values[at:], new.values]),
                                  np.concatenate([o.stdevs[at:], new.stdevs]), new.attrs))
    left = set(steps.dropped)
    builds = {b: v for b, v in kept.builds.items() if b not in left}
    rows = kept.rows - sum(kept.builds[b][1] for b in steps.dropped)
    if added is not None:
        builds.update(_builds(added, entries, steps.added))
        rows += len(added)
    return JobWindow(series, _slid_rows(kept.samples, steps, added), rows, builds, uniform)


def _slid_rows(kept: pd.DataFrame | None, steps: Plan, added: pd.DataFrame | None) -> pd.DataFrame | None:
    """The history rows ``alert_samples`` keeps of the new window: ``alert_samples`` of the kept
    ones without the dropped builds' and of the added rows. The kept rows hold every row
    ``alert_samples`` could keep of the builds still in the window (each build's last, the
    failures, the newest build's every row), so the newest build's rows it no longer keeps are
    the only ones it drops."""
    from pal.alerts import alert_samples

    if kept is None:
        return None
    parts = [kept[(kept["build"] > steps.dropped[-1]).to_numpy()].reset_index(drop=True)
             if steps.dropped and len(kept) else kept]
    if added is not None and len(added):
        parts.append(added)
    return alert_samples(concat_samples(parts))


def _builds(samples: pd.DataFrame, entries: dict[int, str], only: list[int] | None = None
            ) -> dict[int, tuple[str, int]]:
    """Per build of ``entries`` (or of ``only``): its digest and its rows in ``samples``."""
    counts = samples["build"].value_counts().to_dict() if len(samples) else {}
    return {int(b): (entries[b], int(counts.get(b, 0))) for b in (only if only is not None else entries)}
