"""CSIT test status messages, one small parser per message generation.

Results live only in the text of a test's ``<status>``. CSIT changed that text several
times; each generation is one entry of ``PARSERS`` (tried in order, first match wins). A
new generation is a new function plus a new entry, never an edit of an old one.

A parser returns None when the message is not its form, and a ``Measured`` otherwise.
A message that has the form but carries bad numbers gives NaN values and a ``problem``
text, never a guessed number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

#: Latency values CSIT writes when a measurement is invalid (TRex: -1, 0, 2**32-1).
INVALID_LATENCY = (-1.0, 0.0, 4294967295.0)

# A number as CSIT writes it: plain ASCII notation. ``float()`` alone also takes "1_000",
# Unicode digits and surrounding blanks, and a bare regex search takes the "12" of "12a34":
# both would turn a garbled message into a wrong number instead of NaN and a warning.
_STRICT_FLOAT = re.compile(r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf(?:inity)?)",
                           re.ASCII | re.IGNORECASE)
# A value token: everything up to the unit, the comma or the end of the line (checked strictly).
_TOKEN = r"(\S*?)(?:[ \t]*(?:pps|cps))?(?=[ \t]*(?:,|\r?\n|$))"


_NONE: Mapping[str, Any] = MappingProxyType({})


class Measured(NamedTuple):
    """What one message says: metric -> value, plus MRR trials and any doubt about the numbers.
    (A named tuple: one is made per test, and a frozen dataclass with two dict factories cost
    several times as much to make.)"""

    kind: str  # "mrr" | "cps" | "ndrpdr" | "soak": the test family the message belongs to
    values: dict[str, float]  # pal.model.METRICS name -> value (NaN when invalid)
    trials: list[float] | None = None
    stdev: float = math.nan
    problem: str | None = None  # set when the form matched but a number was unusable
    extra: Mapping[str, float] = _NONE  # NDR/PDR upper bounds, Gbps, ...
    units: Mapping[str, str] = _NONE  # metric -> unit when not the metric's default (CPS tests)


@dataclass(frozen=True)
class MessageParser:
    """One message generation: its name and the function reading it."""

    name: str
    parse: Callable[[str], Measured | None]

    @property
    def generation(self) -> str:
        return (self.parse.__doc__ or "").strip().splitlines()[0]


def _number(token: str) -> float | None:
    """The value of a number written in plain ASCII notation; None for anything else."""
    return float(token) if _STRICT_FLOAT.fullmatch(token) else None


_STRICT_LIST = re.compile(rf"[ \t]*{_STRICT_FLOAT.pattern}[ \t]*(?:,[ \t]*{_STRICT_FLOAT.pattern}[ \t]*)*",
                          re.ASCII | re.IGNORECASE)


# Digits, dots, commas and spaces only: an item of these that ``float()`` takes is a number of
# ``_STRICT_FLOAT`` (no sign, exponent, underscore nor other blank can be in it).
_PLAIN_LIST = re.compile(r"[0-9., ]*+")


def _floats(text: str) -> list[float] | None:
    """The items of a ``[a, b, ...]`` list; None when any item (an empty one too) is not a number.

    CSIT's lists (ten trials in every MRR message) are plain decimals: a cheap character check
    and ``float()`` read them. Else a list of numbers is checked by one strict match, anything
    else item by item; all three give the same verdict and the same numbers."""
    if _PLAIN_LIST.fullmatch(text):
        try:
            return [float(s) for s in text.split(",")]
        except ValueError:
            pass  # an empty item, "1.2.3", "1 2": the strict reading below says None
    if _STRICT_LIST.fullmatch(text):
        return [float(s) for s in text.split(",")]
    if not text.strip():
        return None
    values = [_number(s.strip()) for s in text.split(",")]
    return None if any(v is None for v in values) else values  # type: ignore[return-value]


def _trials_measured(kind: str, metric: str, trials: list[float] | None, raw: str) -> Measured:
    if not trials:
        return Measured(kind, {metric: math.nan}, None, math.nan, f"no usable trial values in [{raw[:80]}]")
    # the check of every value, when the two cheap ones say there may be a bad one (a NaN or an
    # infinity makes the sum one; so can an overflow of good values, averaged below)
    bad = [t for t in trials if not math.isfinite(t) or t < 0] \
        if min(trials) < 0 or not math.isfinite(sum(trials)) else None
    if bad:
        return Measured(kind, {metric: math.nan}, trials, math.nan, f"invalid trial values {bad[:3]}")
    try:
        mean = math.fsum(trials) / len(trials)
    except OverflowError:  # a sum beyond the float range: no honest mean to give
        return Measured(kind, {metric: math.nan}, trials, math.nan, f"trial values too large to average {trials[:3]}")
    # population stdev, two-pass with fsum (statistics.pstdev is exact but ~50x slower)
    try:
        stdev = math.sqrt(math.fsum([(t - mean) ** 2 for t in trials]) / len(trials))
    except OverflowError:  # squares of huge deviations: scale them first
        scale = max(abs(t - mean) for t in trials)
        stdev = scale * math.sqrt(math.fsum(((t - mean) / scale) ** 2 for t in trials) / len(trials))
    return Measured(kind, {metric: mean}, trials, stdev)


#: Mean and population stdev of trial results, with the checks every MRR form shares (UTI JSON too).
trials_measured = _trials_measured


_MRR_PPS = re.compile(r"Maximum Receive Rate trial results\s+in packets per second:\s*\[([^\]]*)\]")


def mrr_trials_pps(text: str) -> Measured | None:
    """MRR trial list in pps (CSIT 2019-): ``Maximum Receive Rate trial results in packets per second: [..]``."""
    m = _MRR_PPS.search(text)
    if not m:
        return None
    return _trials_measured("mrr", "mrr", _floats(m.group(1)), m.group(1))


_MRR_CPS = re.compile(
    r"Maximum Receive Rate trial results\s+in (?:estimated )?connections per second:\s*\[([^\]]*)\]"
)


def mrr_trials_cps(text: str) -> Measured | None:
    """MRR trial list of CPS tests (CSIT 2021-): ``... trial results in [estimated ]connections per second: [..]``."""
    m = _MRR_CPS.search(text)
    if not m:
        return None
    return _trials_measured("cps", "cps", _floats(m.group(1)), m.group(1))


_MRR_2018 = re.compile(
    r"MaxReceivedRate_Results\s*\[pkts/(\S*?)\s*sec\]:\s*tx\s+(\S*?),\s*rx\s+(\S*?)(?=[ \t]*(?:\r?\n|$))"
)


def mrr_tx_rx_2018(text: str) -> Measured | None:
    """MRR of 2018: ``MaxReceivedRate_Results [pkts/<secs>sec]: tx <n>, rx <n>``; rate = rx / secs."""
    m = _MRR_2018.search(text)
    if not m:
        return None
    secs, rx = _number(m.group(1)), _number(m.group(3))
    if secs is None or rx is None or not (secs > 0 and math.isfinite(rx) and rx >= 0):
        return Measured("mrr", {"mrr": math.nan}, None, math.nan, f"invalid MaxReceivedRate values: {m.group(0)}")
    rate = rx / secs
    return Measured("mrr", {"mrr": rate}, [rate], 0.0)


_BOUND = re.compile(r"\b(NDR_LOWER|NDR_UPPER|PDR_LOWER|PDR_UPPER):[ \t]*" + _TOKEN)
_LOAD_LATENCY = re.compile(r"Latency at (\d+)% PDR:\s*\[([^\]]*)\]", re.ASCII)
_STREAM = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def _latency_avg(stream: str) -> float:
    """The average of one ``min/avg/max[/hdrh]`` stream string in µs; NaN when invalid."""
    parts = stream.split("/")
    if len(parts) < 3:
        return math.nan
    avg = _number(parts[1].strip())
    if avg is None or not math.isfinite(avg) or avg in INVALID_LATENCY or avg < 0:
        return math.nan
    return avg


def _bounds(text: str) -> tuple[dict[str, float], str | None] | None:
    found = {m.group(1): m for m in _BOUND.finditer(text)}
    if "NDR_LOWER" not in found and "PDR_LOWER" not in found:
        return None
    values: dict[str, float] = {}
    problems = []
    for name, metric in (("NDR_LOWER", "ndr"), ("PDR_LOWER", "pdr")):
        m = found.get(name)
        value = _number(m.group(2)) if m else None
        if value is None or not math.isfinite(value) or value <= 0:
            problems.append(f"{name} missing or invalid")
            value = math.nan
        values[metric] = value
    return values, "; ".join(problems) or None


def ndrpdr_load_latency(text: str) -> Measured | None:
    """NDRPDR with ``Latency at 90/50/10/0% PDR: [..]`` lines (CSIT 2020-): NDR/PDR lower bounds, PDR50 latency."""
    if not _LOAD_LATENCY.search(text):
        return None
    bounds = _bounds(text)
    if bounds is None:
        return None
    values, problem = _with_load_latency(text, *bounds)
    return Measured("ndrpdr", values, problem=problem)


def ndrpdr_bounds(text: str) -> Measured | None:
    """NDRPDR bounds only (CSIT 2018-2019): ``NDR_LOWER: <f> pps, <f> Gbps`` ... with per-stream LATENCY lines."""
    bounds = _bounds(text)
    if bounds is None:
        return None
    values, problem = bounds
    return Measured("ndrpdr", values, problem=problem)


_PLR = re.compile(r"PLRsearch (lower|upper) bound:[ \t]*" + _TOKEN)


def _plrsearch(found: dict[str, str], units: dict[str, str]) -> Measured | None:
    """The SOAK result from the ``lower`` / ``upper`` bound texts of a PLRsearch message."""
    if "lower" not in found:
        return None
    lower = _number(found["lower"])
    if lower is None or not math.isfinite(lower) or lower <= 0:
        return Measured("soak", {"soak": math.nan}, problem=f"invalid PLRsearch lower bound {found['lower'][:40]!r}",
                        units=dict(units))
    upper = _number(found.get("upper", ""))
    extra = {"upper": upper} if upper is not None else {}
    return Measured("soak", {"soak": lower}, extra=extra, units=dict(units))


def soak_plrsearch(text: str) -> Measured | None:
    """SOAK (CSIT 2019-): ``PLRsearch lower bound: <f> pps ...`` / ``PLRsearch upper bound: ...``; trend the lower."""
    return _plrsearch({m.group(1): m.group(2) for m in _PLR.finditer(text)}, {})


# --- Generations added after the 2018-2020 forms above (those stay as they were) ---------------

# A bound in connections per second, as ``Display Single CPS Bound`` writes it: ``<label>: <f> CPS``.
_CPS_TOKEN = r"(\S*?)[ \t]+CPS(?=[ \t]*(?:\r?\n|$))"
_BOUND_CPS = re.compile(r"\b(NDR_LOWER|NDR_UPPER|PDR_LOWER|PDR_UPPER):[ \t]*" + _CPS_TOKEN)
_BOUND_V7 = re.compile(r"(?:^|\n)[ \t]*(NDR|PDR):[ \t]*" + _TOKEN)
_BOUND_V7_CPS = re.compile(r"(?:^|\n)[ \t]*(NDR|PDR):[ \t]*" + _CPS_TOKEN)


def _lower_bounds(found: dict[str, str], ndr: str, pdr: str) -> tuple[dict[str, float], str | None]:
    """NDR and PDR from the matched value tokens; a missing or bad one is NaN and named in the problem."""
    values: dict[str, float] = {}
    problems = []
    for label, metric in ((ndr, "ndr"), (pdr, "pdr")):
        value = _number(found[label]) if label in found else None
        if value is None or not math.isfinite(value) or value <= 0:
            problems.append(f"{label} missing or invalid")
            value = math.nan
        values[metric] = value
    return values, "; ".join(problems) or None


def _with_load_latency(text: str, values: dict[str, float], problem: str | None) -> tuple[dict[str, float], str | None]:
    """Add PDR50 latency per direction when the message has ``Latency at <n>% PDR`` lines."""
    loads = {int(m.group(1)): m.group(2) for m in _LOAD_LATENCY.finditer(text)}
    if not loads:
        return values, problem
    d1 = d2 = math.nan
    if 50 in loads:
        streams = [a or b for a, b in _STREAM.findall(loads[50])]
        if streams:
            d1 = _latency_avg(streams[0])
        if len(streams) > 1:
            d2 = _latency_avg(streams[1])
    else:
        problem = "; ".join(filter(None, [problem, "no 'Latency at 50% PDR' line"]))
    return {**values, "latency_pdr50_d1": d1, "latency_pdr50_d2": d2}, problem


def ndrpdr_bounds_cps(text: str) -> Measured | None:
    """NDRPDR of CPS tests before MLRsearch v7 (CSIT 2020-10 to 2023-10): ``NDR_LOWER: <f> CPS`` ...; unit cps."""
    found = {m.group(1): m.group(2) for m in _BOUND_CPS.finditer(text)}
    if "NDR_LOWER" not in found and "PDR_LOWER" not in found:
        return None
    values, problem = _with_load_latency(text, *_lower_bounds(found, "NDR_LOWER", "PDR_LOWER"))
    return Measured("ndrpdr", values, problem=problem, units={"ndr": "cps", "pdr": "cps"})


def ndrpdr_mlrsearch_v7(text: str) -> Measured | None:
    """NDRPDR since MLRsearch v7 (CSIT 2023-10-): ``NDR: <f> pps, <f> Gbps (initial)`` / ``PDR: ...``, latency lines."""
    found = {m.group(1): m.group(2) for m in _BOUND_V7.finditer(text)}
    if "NDR" not in found and "PDR" not in found:
        return None
    values, problem = _with_load_latency(text, *_lower_bounds(found, "NDR", "PDR"))
    return Measured("ndrpdr", values, problem=problem)


def ndrpdr_mlrsearch_v7_cps(text: str) -> Measured | None:
    """NDRPDR of CPS tests since MLRsearch v7 (CSIT 2023-10-): ``NDR: <f> CPS`` / ``PDR: <f> CPS``; unit cps."""
    found = {m.group(1): m.group(2) for m in _BOUND_V7_CPS.finditer(text)}
    if "NDR" not in found and "PDR" not in found:
        return None
    values, problem = _with_load_latency(text, *_lower_bounds(found, "NDR", "PDR"))
    return Measured("ndrpdr", values, problem=problem, units={"ndr": "cps", "pdr": "cps"})


_PLR_CPS = re.compile(r"PLRsearch (lower|upper) bound:[ \t]*" + _CPS_TOKEN)


def soak_plrsearch_cps(text: str) -> Measured | None:
    """SOAK of CPS tests (CSIT 2020-10-): ``PLRsearch lower bound: <f> CPS`` / ``... upper bound: <f> CPS``; unit cps."""
    return _plrsearch({m.group(1): m.group(2) for m in _PLR_CPS.finditer(text)}, {"soak": "cps"})


#: All known generations, tried in this order (more specific forms first).
PARSERS: list[MessageParser] = [
    MessageParser("mrr-trials-pps", mrr_trials_pps),
    MessageParser("mrr-trials-cps", mrr_trials_cps),
    MessageParser("mrr-tx-rx-2018", mrr_tx_rx_2018),
    MessageParser("ndrpdr-load-latency", ndrpdr_load_latency),
    MessageParser("ndrpdr-bounds", ndrpdr_bounds),
    MessageParser("ndrpdr-bounds-cps", ndrpdr_bounds_cps),
    MessageParser("ndrpdr-mlrsearch-v7", ndrpdr_mlrsearch_v7),
    MessageParser("ndrpdr-mlrsearch-v7-cps", ndrpdr_mlrsearch_v7_cps),
    MessageParser("soak-plrsearch", soak_plrsearch),
    MessageParser("soak-plrsearch-cps", soak_plrsearch_cps),
]


def parse_message(text: str, parsers: list[MessageParser] | None = None) -> tuple[Measured | None, str | None]:
    """Run the parsers over a status message; returns (measurement, name of the parser) or (None, None)."""
    for p in parsers if parsers is not None else PARSERS:
        measured = p.parse(text)
        if measured is not None:
            return measured, p.name
    return None, None
