"""How series are named, grouped and scaled on the site (one place, so pages agree)."""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass

from pal.model import METRICS, SeriesKey, SeriesResult, topo_arch_of

#: metric -> dashboard test type
TEST_TYPES: dict[str, str] = {
    "mrr": "MRR",
    "ndr": "NDR",
    "pdr": "PDR",
    "soak": "SOAK",
    "cps": "CPS",
    "latency_pdr50_d1": "Latency",
    "latency_pdr50_d2": "Latency",
}
#: order of the dashboard tables within a testbed
TYPE_ORDER = ("MRR", "CPS", "NDR", "PDR", "SOAK", "Latency")
#: CSIT's order of metrics on a graph page (throughput before latency); others after, by name
METRIC_ORDER = ("mrr", "cps", "ndr", "pdr", "soak", "latency_pdr50_d1", "latency_pdr50_d2")


#: how graph titles name a metric (CSIT: the test type; latency: avg at 50 % PDR, per direction)
METRIC_LABELS: dict[str, str] = {
    "mrr": "MRR", "ndr": "NDR", "pdr": "PDR", "soak": "SOAK", "cps": "CPS",
    "latency_pdr50_d1": "latency at 50 % PDR, direction 1", "latency_pdr50_d2": "latency at 50 % PDR, direction 2",
}


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def metric_rank(metric: str) -> tuple[int, str]:
    """Sort key of a metric in CSIT's order: MRR, CPS, NDR, PDR, SOAK, latency, then unknown ones."""
    try:
        return (METRIC_ORDER.index(metric), "")
    except ValueError:
        return (len(METRIC_ORDER), metric)


@dataclass(frozen=True)
class Scale:
    """Display unit of a metric: raw value / divisor, shown with ``digits`` decimals."""

    unit: str  # "Mpps" | "Mcps" | "µs"
    divisor: float
    digits: int
    quantity: str  # axis title word

    def axis_title(self, direction: int) -> str:
        hint = " (lower is better)" if direction < 0 else ""
        return f"{self.quantity} [{self.unit}]{hint}"


_SCALES = {
    "pps": Scale("Mpps", 1e6, 2, "Throughput"),
    "cps": Scale("Mcps", 1e6, 3, "Connection rate"),
    "us": Scale("µs", 1.0, 1, "Latency"),
}


def scale_of(metric: str, unit: str | None = None) -> Scale:
    """Display scale of a metric; ``unit`` (the samples' unit, e.g. cps for an NDR of a CPS test)
    wins over the metric's default unit."""
    unit = unit or METRICS.get(metric, ("pps", +1))[0]
    return _SCALES.get(unit, Scale(unit, 1.0, 3, "Value"))


def scale_for(result: SeriesResult) -> Scale:
    """The display scale of one series: its samples' unit."""
    return scale_of(result.key.metric, str(result.attrs.get("unit") or "") or None)


def test_type_of(result: SeriesResult) -> str:
    """Dashboard test type from the metric (CPS tests trend their MRR as ``cps``)."""
    return TEST_TYPES.get(result.key.metric, result.key.metric.upper())


#: Longest test name shown in the site (CSIT's longest are ~120 characters).
MAX_NAME = 300


def short_name(key: SeriesKey, nic: str = "") -> str:
    """CSIT's dashboard name: ``<nic>-<test name>``, with the direction for latency."""
    tail = key.test_id.rsplit(".", 1)[-1]
    name = f"{nic}-{tail}" if nic and not tail.startswith(nic) else tail
    if key.metric.startswith("latency_"):
        name += f" [{key.metric.rsplit('_', 1)[-1]}]"
    elif key.metric not in ("mrr", "cps") and not tail.endswith(key.metric):
        name += f" [{key.metric}]"
    if len(name) > MAX_NAME:  # pages, graphs and their data show it; exports keep the full id
        name = f"{name[:MAX_NAME]}\u2026 ({len(name)} characters)"
    return name


def area_of(result: SeriesResult) -> str:
    """Test area for grouping graphs (``ip4`` in ``tests.vpp.perf.ip4.<suite>.<test>``)."""
    area = result.attrs.get("area")
    if area:
        return str(area)
    parts = result.key.test_id.split(".")
    return parts[3] if len(parts) >= 6 else "other"


def job_label(job: str) -> str:
    """``csit-vpp-perf-mrr-daily-master-2n-icx`` -> ``mrr-daily`` (CSIT's hover build label)."""
    parts = job.split("-")
    if "perf" in parts:
        parts = parts[parts.index("perf") + 1:]
    if len(parts) > 2:
        parts = parts[:-2]
    if len(parts) > 1 and parts[-1] == "master":
        parts = parts[:-1]
    return "-".join(parts) or job


def build_label(job: str, build: int) -> str:
    return f"{job_label(job)}-build-{build}"


@functools.lru_cache(maxsize=4096)
def safe_slug(*parts: str) -> str:
    """A stable, filesystem-safe page name for an arbitrary tuple of strings (memoised: every
    drill-down names its job's and its group's files, 3 of 6,000 pages' ~8 us)."""
    digest = hashlib.sha1("|".join(parts).encode()).hexdigest()[:8]
    text = "-".join(p for p in parts if p)
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:80]
    return f"{safe}-{digest}" if safe else digest


def group_key(result: SeriesResult) -> tuple[str, str, str]:
    """Graph page a series belongs to: testbed (topo-arch) x NIC x test area."""
    return (topo_of(result), str(result.attrs.get("nic") or ""), area_of(result))


def topo_of(result: SeriesResult) -> str:
    """Testbed type: from attrs, else CSIT's rule (the job name's last two dash-parts)."""
    return str(result.attrs.get("topo_arch") or topo_arch_of(result.key.job))


def graph_key(result: SeriesResult) -> tuple[str, str, str]:
    """One graph on a group page per metric x frame size x cores (CSIT's layout)."""
    attrs = result.attrs
    return (result.key.metric, str(attrs.get("frame_size") or ""), str(attrs.get("cores") or ""))


def graph_order(key: tuple[str, str, str]) -> tuple:
    """Sort key of a ``graph_key``: metrics in CSIT's order, then frame size and cores as numbers."""
    metric, fs, cores = key
    return (metric_rank(metric), _natural(fs), _natural(cores))


def _natural(text: str) -> tuple:
    """``"64B"`` < ``"1518B"`` < ``"9000B"`` < ``"IMIX"``; ``"2C"`` < ``"10C"``."""
    m = re.match(r"(\d+)", text)
    return (0, int(m.group(1)), text) if m else (1, 0, text)
