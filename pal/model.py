"""The data that flows between stages: the samples table and the per-series analysis result.

Stages talk through these shapes only:

    sources  -> BuildFile (a local path per job/build)
    parse    -> samples DataFrame, columns SAMPLE_COLUMNS, one row per (job, build, test_id, metric)
    store    -> the same DataFrame, kept as Parquet
    analysis -> SeriesResult per (job, test_id, metric)
    render / alerts read SeriesResult and the samples table.

Missing data stays missing: a failed test is a row with ``value`` NaN and its ``message``;
it is never 0.0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (numpy only names the arrays' type: `pal run` reads its spec, which imports this,
    # before it imports numpy, so that its forkserver starts sooner)
    import numpy as np
    import pandas as pd

# ---------------------------------------------------------------------------
# Samples table (output of parse, content of the store)
# ---------------------------------------------------------------------------

#: column -> pandas dtype. ``trials`` holds a list of floats (MRR trial results) or None.
SAMPLE_COLUMNS: dict[str, str] = {
    "job": "string",  # Jenkins job name, e.g. csit-vpp-perf-mrr-daily-master-2n-icx
    "build": "int64",  # Jenkins build number
    "build_time": "datetime64[ns, UTC]",  # end time of the top suite
    "topo_arch": "string",  # last two dash-parts of the job name, e.g. 2n-icx
    "testbed": "string",  # testbed name from the spec's map of TG IP -> name (or the IP)
    "dut": "string",  # "vpp" | "dpdk" | ...
    "dut_version": "string",  # e.g. 22.02-rc0~508-g88a9c0e02~b851
    "test_id": "string",  # normalised long name (CSIT-FORMATS §3), after rename mapping
    "test_name": "string",  # the short test name as in output.xml
    "suite": "string",  # the parent suite's long name, lower-cased
    "test_type": "string",  # MRR | NDRPDR | SOAK | CPS | BMRR ...
    "metric": "string",  # see METRICS
    "unit": "string",  # "pps" | "cps" | "us"
    "value": "float64",  # the trended value; NaN when the test failed or the value is invalid
    "stdev": "float64",  # population stdev of trials (MRR), else NaN
    "trials": "object",  # list[float] of trial results (MRR), else None
    "status": "string",  # PASS | FAIL
    "message": "string",  # the test's status message for FAIL tests ("" for PASS)
    "nic": "string",  # e.g. 25ge2p1xxv710 (from the suite name) or the NIC_ tag
    "frame_size": "string",  # 64B | 1518B | 9000B | IMIX
    "cores": "string",  # 1C | 2C | 4C (physical cores)
    "threads_cores": "string",  # 2T1C ...
    "driver": "string",  # DRV_AVF -> avf, DRV_VFIO_PCI -> vfio-pci
    "topology": "string",  # 2_NODE_SINGLE_LINK_TOPO ...
    "tags": "object",  # tuple[str, ...] of all tags, upper-cased
    "source_file": "string",  # the file the row came from
}

#: metric name -> (unit, direction). direction +1: higher is better, -1: lower is better.
METRICS: dict[str, tuple[str, int]] = {
    "mrr": ("pps", +1),
    "ndr": ("pps", +1),
    "pdr": ("pps", +1),
    "soak": ("pps", +1),  # PLRsearch lower bound
    "cps": ("cps", +1),  # MRR of CPS tests
    "latency_pdr50_d1": ("us", -1),  # avg latency at 50 % PDR, direction 1
    "latency_pdr50_d2": ("us", -1),  # avg latency at 50 % PDR, direction 2
}

SERIES_KEY = ("job", "test_id", "metric")


def empty_samples() -> pd.DataFrame:
    """An empty samples table with the right columns and dtypes."""
    import pandas as pd  # (not at import: ``pal run`` loads its spec before the stages' imports)

    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in SAMPLE_COLUMNS.items()})


def coerce_samples(df: pd.DataFrame) -> pd.DataFrame:
    """Return ``df`` with exactly SAMPLE_COLUMNS, in order, with their dtypes (missing columns added)."""
    import pandas as pd

    out = {}
    for col, dtype in SAMPLE_COLUMNS.items():
        if col in df.columns:
            s = df[col]
        else:
            s = pd.Series([None] * len(df), index=df.index)
        if dtype == "object":
            out[col] = s.astype("object")
        elif dtype.startswith("datetime64"):
            out[col] = pd.to_datetime(s, utc=True).astype(dtype)  # pandas 3 may pick µs otherwise
        else:
            out[col] = s.astype(dtype)
    return pd.DataFrame(out, index=df.index)


def topo_arch_of(job: str) -> str:
    """CSIT: the topology-architecture is the last two dash-separated parts of the job name."""
    parts = job.split("-")
    return "-".join(parts[-2:]) if len(parts) >= 2 else job


# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildFile:
    """An output.xml (plain, .gz, .xz or .zip) of one build, available locally."""

    job: str
    build: int
    path: Path
    source: str  # name of the data source that provided it
    url: str = ""  # where it came from (for the report and links)
    sha256: str = ""  # content hash of the archive as fetched


# ---------------------------------------------------------------------------
# Analysis result (output of analysis, input of render and alerts)
# ---------------------------------------------------------------------------


_NOT_SLUG = re.compile(r"[^\w-]")


@dataclass(frozen=True)
class SeriesKey:
    job: str
    test_id: str
    metric: str

    def slug(self) -> str:
        """A stable, filesystem-safe name for pages and data files of this series.

        Made once per key object and kept on it (not a field: equality, hashing and the stored
        forms are the three names'): a series' page, its group's page and data file and the
        index each ask for it, 20 us a time (0.5 s of CPU in a daily run of 6,000 series)."""
        made = self.__dict__.get("_slug")
        if made is None:
            import hashlib

            digest = hashlib.sha1(f"{self.job}|{self.test_id}|{self.metric}".encode()).hexdigest()[:10]
            tail = self.test_id.rsplit(".", 1)[-1]
            safe = _NOT_SLUG.sub("-", tail[:80])  # \w is str.isalnum() or "_": alphanumerics, "-", "_" stay
            made = f"{safe}-{self.metric}-{digest}"
            object.__setattr__(self, "_slug", made)  # frozen: the one attribute set after __init__
        return made


@dataclass(frozen=True)
class TrendGroup:
    """A run of consecutive valid samples with one trend (group average).

    ``start``/``end`` index the series' sample arrays (all runs, missing included), end exclusive.
    """

    start: int
    end: int
    avg: float
    stdev: float
    size: int  # number of valid samples in the group
    label: str  # "normal" | "regression" | "progression"


#: ``Change.state`` of an alertable change: the series is still at the new level / came back to
#: the old one / moved on to another level.
ACTIVE, RECOVERED, SUPERSEDED = "active", "recovered", "superseded"


@dataclass(frozen=True)
class Change:
    """A change of level in one series: the one shape from detector to alert, page and score.

    A detector fills what it knows (index, kind, levels, runs, when it reports it, evidence);
    the analysis adds the builds and, for the changes it decides to alert on, the state and
    whether the change is recent. Levels are in the metric's unit.

    ``index`` is the first run of the new level; ``reported_at`` the run at which the change is
    (or would be) reported: the same run for a plain detector, later when the alert filters
    wait for confirmation or a windowed detector needs several runs.
    """

    index: int
    kind: str  # "regression" | "progression"
    before: float  # level before the change (group average, median of the kept level, TMA, ...)
    after: float  # level from the change on
    runs: int  # valid runs the new level has held
    reported_at: int
    evidence: dict = field(default_factory=dict)  # the detector's own numbers, JSON-friendly
    before_stdev: float = float("nan")
    after_stdev: float = float("nan")
    detector: str = ""
    first_bad_build: int | None = None  # build of run ``index``
    last_good_build: int | None = None  # last valid build before ``index``
    state: str = ""  # alertable changes only: active | recovered | superseded
    recent: bool = False  # alertable changes only: fresh, or starts inside the short-term window
    fresh: bool = False  # alertable changes only: active and reported at the series' last run
    late: bool = False  # alertable changes only: recent because its evidence became strong in the window, not by its start

    @property
    def change(self) -> float:
        """Relative change (after - before) / |before|; NaN when before is 0."""
        return (self.after - self.before) / abs(self.before) if self.before else float("nan")


@dataclass(frozen=True)
class Compliance:
    """The dashboard metrics (CSIT trend compliance), see pal.analysis.compliance."""

    trend: float  # trend[last]
    runs: int  # runs[last]
    short_term_change: float  # percent, NaN if not computable
    long_term_change: float  # percent, NaN if not computable
    regressions: int  # anomalies in the short-term window
    progressions: int


@dataclass(frozen=True)
class SearchStates:
    """What the searches of a series leave for its next run, where its window grows
    (``Detector.detect``'s ``keep``/``resume``; opaque here, kept by the result cache): the
    detector's search of the series and its search of the series with the transient runs masked
    (the alert filters' second search, ``pal.analysis.filters.alert_changes``). None: nothing."""

    detector: Any = None
    masked: Any = None


@dataclass
class SeriesResult:
    """Everything known about one (job, test, metric) series after analysis.

    The arrays are aligned: one entry per run of the job that the test appears in,
    in build order. Missing values are NaN and are never used as 0.0.
    """

    key: SeriesKey
    builds: np.ndarray  # int64
    times: np.ndarray  # datetime64[ns] (UTC)
    values: np.ndarray  # float64, NaN = missing (failed / invalid)
    stdevs: np.ndarray  # float64, NaN where not applicable
    trend: np.ndarray  # float64: the group average per sample, NaN where missing
    groups: list[TrendGroup]
    changes: list[Change]  # every change the detector calls (graphs mark them)
    compliance: Compliance
    verdict: str  # the detector's verdict on the last run: normal | regression | progression | missing
    direction: int  # +1 higher is better, -1 lower is better
    detector: str
    test_set: str
    attrs: dict = field(default_factory=dict)  # topo_arch, nic, frame_size, cores, test_type, ...
    bands: dict[str, np.ndarray] = field(default_factory=dict)  # the detector's own, e.g. TMA's "tma", "tma_lo"
    alertable: list[Change] = field(default_factory=list)  # what the alert filters keep, with state and recency
    # what the series' searches go on from on its next run (``SearchStates``): the result cache takes
    # it off (``ResultCache.merge``) and keeps it; nothing else reads it
    resume: SearchStates | None = None

    @property
    def last_time(self) -> datetime | None:
        if len(self.times) == 0:
            return None
        import pandas as pd

        return pd.Timestamp(self.times[-1]).to_pydatetime()


@dataclass(frozen=True)
class AlertView:
    """What the site shows of one alert (made by ``pal.alerts.model.Alert.view``).

    The render stage reads alerts only through this shape: it never imports the alerts stage.
    """

    id: str
    key: SeriesKey
    kind: str  # regression | progression
    state: str  # active | recovered | superseded
    status: str  # new | ongoing
    acked: bool
    ack_reason: str | None
    ack_snippet: str  # the acks.yaml lines to copy
    change_pct: float
    first_bad_build: int
    suspect_verdict: str = "unknown"  # code | infrastructure | unknown (pal.culprit)
    suspect_summary: str = ""  # one line: the commit range and its size, or what else changed
    suspect_url: str | None = None  # link to the commit range (outputs.commit-range-url)
    bisect_comment: str | None = None  # CSIT's bisect trigger for a bisectable code range


# ---------------------------------------------------------------------------
# Per-build facts (output of parse beside the samples; statistics page, alert headers)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildMeta:
    """What one build's output.xml says about the build as a whole."""

    job: str
    build: int
    build_time: datetime | None  # top suite end time (UTC)
    start_time: datetime | None  # top suite start time (UTC)
    dut: str  # "vpp" | "dpdk"
    dut_version: str | None
    testbed: str | None  # name from the spec's TG-IP map, or the TG IP if unmapped
    passed: int
    failed: int
    duration_s: float | None  # top suite duration
    source_file: str = ""
    sha256: str = ""


BUILD_COLUMNS: dict[str, str] = {
    "job": "string",
    "build": "int64",
    "build_time": "datetime64[ns, UTC]",
    "start_time": "datetime64[ns, UTC]",
    "dut": "string",
    "dut_version": "string",
    "testbed": "string",
    "passed": "int64",
    "failed": "int64",
    "duration_s": "float64",
    "source_file": "string",
    "sha256": "string",
}
