"""A CSIT bisect job's results, read back: the values of each build and the search it made.

Why: the bisect job's console shows its choices, but its archive is what stays; reading the
archive gives the search state of a running job and the culprit of a finished one without
scrolling through logs. Layout (CSIT ``resources/libraries/bash/entry/bisect.sh``): one
directory per tested build, ``earliest/``, ``latest/`` and ``middle/<n>/`` (``n`` = 1, 2, ...
in the order git bisect chose them), each name also accepted with CSIT's ``csit_`` prefix.

Values of one build, as CSIT's ``resources/libraries/python/model/parse.py`` extracts them,
flattened over its tests in test-id order:

1. ``results.json`` (the cache CSIT writes next to the results: test id -> list of floats);
2. else UTI JSON files (``*.json`` with a ``test_id``): mrr -> the trial rates, ndrpdr -> PDR
   lower bound, soak -> critical rate lower bound, reconf -> loss time, hoststack ->
   bandwidth; a failed test -> four values of 1.0 (CSIT's fake result);
3. else Robot Framework ``output.xml`` (any container pal.parse reads): MRR/CPS -> the
   trials, NDRPDR -> PDR, SOAK -> the PLRsearch lower bound; FAIL -> four 1.0 values.

The DUT version (hence the commit) comes from the UTI ``dut_version`` or output.xml's
version message. A build directory that does not exist yet, or holds no results, marks where
a running job has got to.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pal.analysis.mdl import MdlInputError
from pal.culprit.decision import Decision, decide
from pal.culprit.versions import DutVersion, commits_between, parse_version
from pal.errors import ParseError, PalError
from pal.report import RunReport

#: CSIT's fake result of a failed test: this value, four times.
FAIL_VALUE, FAIL_COUNT = 1.0, 4
#: A UTI JSON file larger than this is not a test result (they are a few kB): skipped with a warning.
MAX_JSON_BYTES = 64 * 1024 * 1024
_OUTPUT_XML = re.compile(r"^output(?:_info)?\.xml(?:\.gz|\.xz|\.zip)?$")
_METRIC_ORDER = ("mrr", "cps", "pdr", "soak")


class BisectLayoutError(PalError):
    """The directory is not a bisect job's results (no earliest/ and latest/)."""


@dataclass(frozen=True)
class BuildResults:
    """The flattened values of one tested build and the version it was built from."""

    name: str  # earliest | latest | middle/<n>
    path: Path
    values: tuple[float, ...]
    tests: int
    version: str | None
    source: str  # results.json | uti-json | output.xml | none

    @property
    def avg(self) -> float:
        return math.fsum(self.values) / len(self.values) if self.values else math.nan


@dataclass(frozen=True)
class Step:
    """One mid build classified: the decision and the boundaries after it."""

    mid: BuildResults
    decision: Decision
    early: str  # name of the early boundary after this step
    late: str


@dataclass(frozen=True)
class BisectState:
    """The search replayed: boundaries now, the steps, and the culprit once the range is one commit."""

    earliest: BuildResults
    latest: BuildResults
    steps: tuple[Step, ...]
    early: BuildResults
    late: BuildResults
    pending: tuple[str, ...] = field(default_factory=tuple)  # middle builds with no results yet
    dut: str = "vpp"

    @property
    def commits_left(self) -> int | None:
        """Commits in early..late (the candidates: late itself included), when the versions tell."""
        return _between(self.early.version, self.late.version, self.dut)

    @property
    def culprit(self) -> DutVersion | None:
        """The first bad commit: the late boundary, once it is the only commit left."""
        if self.commits_left == 1 and self.late.version:
            return parse_version(self.late.version, self.dut)
        return None

    @property
    def steps_left(self) -> int | None:
        n = self.commits_left
        return None if n is None or n < 1 else math.ceil(math.log2(n))

    def to_dict(self) -> dict[str, Any]:
        def b(r: BuildResults) -> dict[str, Any]:
            return {"name": r.name, "version": r.version, "commit": _ref(r.version, self.dut), "tests": r.tests,
                    "values": len(r.values), "avg": r.avg if r.values else None, "source": r.source}
        culprit = self.culprit
        return {
            "earliest": b(self.earliest), "latest": b(self.latest),
            "steps": [{"mid": b(s.mid), "decision": s.decision.to_dict(), "early": s.early, "late": s.late}
                      for s in self.steps],
            "early": b(self.early), "late": b(self.late), "pending": list(self.pending),
            "commits_left": self.commits_left, "steps_left": self.steps_left,
            "culprit": None if culprit is None else {"commit": culprit.ref, "version": culprit.raw},
        }


def _ref(version: str | None, dut: str) -> str | None:
    return parse_version(version, dut).ref if version else None


def _between(a: str | None, b: str | None, dut: str) -> int | None:
    if not a or not b:
        return None
    return commits_between(parse_version(a, dut), parse_version(b, dut))


def _find(root: Path, name: str) -> Path | None:
    for candidate in (root / name, root / f"csit_{name}"):
        if candidate.is_dir():
            return candidate
    return None


def read_build(path: Path, name: str, report: RunReport, dut: str = "vpp") -> BuildResults:
    """The values and version of one tested build (see the module docstring for the sources)."""
    if not path.is_dir():
        return BuildResults(name, path, (), 0, None, "none")
    version = None
    uti = _read_uti(path, name, report)
    if uti is not None:
        per_test, version = uti
    else:
        per_test = {}
    cache = path / "results.json"
    if cache.is_file():
        per_test = _read_cache(cache, report)
        source = "results.json"
        if version is None:  # the cache has no version; an output.xml next to it may
            version = _read_xml(path, name, RunReport(), dut)[1]
    elif per_test:
        source = "uti-json"
    else:
        per_test, version = _read_xml(path, name, report, dut)
        source = "output.xml" if per_test else "none"
    values = tuple(v for tid in sorted(per_test) for v in per_test[tid])
    return BuildResults(name, path, values, len(per_test), version, source)


def _load_json(file: Path, report: RunReport) -> Any:
    try:
        if file.stat().st_size > MAX_JSON_BYTES:
            report.add("bisect", str(file), f"larger than {MAX_JSON_BYTES} bytes: skipped", "warning")
            return None
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        report.add("bisect", str(file), f"not readable JSON: {exc}", "warning")
        return None


def _read_cache(file: Path, report: RunReport) -> dict[str, list[float]]:
    data = _load_json(file, report)
    out: dict[str, list[float]] = {}
    if not isinstance(data, dict):
        report.add("bisect", str(file), "expected a mapping test id -> list of values")
        return out
    for tid, values in data.items():
        if isinstance(values, list) and values and all(_is_number(v) for v in values):
            out[str(tid)] = [float(v) for v in values]
        else:
            report.add("bisect", f"{file}: {tid}", "expected a non-empty list of numbers: test skipped")
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _uti_values(data: dict[str, Any]) -> list[float] | None:
    if not data.get("passed"):
        return [FAIL_VALUE] * FAIL_COUNT
    result = data.get("result") or {}
    kind = result.get("type")
    try:
        if kind == "mrr":
            values = result["receive_rate"]["rate"]["values"]
        elif kind == "ndrpdr":
            values = [result["pdr"]["lower"]["rate"]["value"]]
        elif kind == "soak":
            values = [result["critical_rate"]["lower"]["rate"]["value"]]
        elif kind == "reconf":
            values = [result["loss"]["time"]["value"]]
        elif kind == "hoststack":
            values = [result["bandwidth"]["value"]]
        else:
            return None
    except (KeyError, TypeError):
        return None
    if not isinstance(values, list) or not values or not all(_is_number(v) for v in values):
        return None
    return [float(v) for v in values]


def _read_uti(path: Path, name: str, report: RunReport) -> tuple[dict[str, list[float]], str | None] | None:
    per_test: dict[str, list[float]] = {}
    version = None
    for file in sorted(path.rglob("*.json")):
        if file.name == "results.json" or not file.is_file():
            continue
        data = _load_json(file, report)
        if not isinstance(data, dict) or "test_id" not in data:
            continue
        tid = str(data["test_id"])
        if tid in per_test:
            report.add("bisect", str(file), f"{name}: duplicate test id {tid}: the later file is skipped")
            continue
        values = _uti_values(data)
        if values is None:
            report.add("bisect", str(file), f"{name}: {tid}: result type {(data.get('result') or {}).get('type')!r} "
                       "has no value CSIT's bisect reads: test skipped")
            continue
        per_test[tid] = values
        if version is None and isinstance(data.get("dut_version"), str) and data["dut_version"].strip():
            version = data["dut_version"].strip()
    return (per_test, version) if per_test else None


def _read_xml(path: Path, name: str, report: RunReport, dut: str) -> tuple[dict[str, list[float]], str | None]:
    from pal.parse import parse_build

    per_test: dict[str, list[float]] = {}
    version = None
    files = sorted(f for f in path.rglob("*") if f.is_file() and _OUTPUT_XML.match(f.name))
    for file in files:
        try:
            result = parse_build(file, f"bisect-{name}", 0, dut=dut)
        except ParseError as exc:
            report.add("bisect", str(file), str(exc))
            continue
        version = version or result.meta.dut_version
        for p in result.problems:
            report.add("bisect", p.item, p.message, "warning")
        for tid, rows in result.samples.groupby("test_id", sort=True):
            if tid in per_test:
                report.add("bisect", str(file), f"{name}: duplicate test id {tid}: the later one is skipped")
                continue
            values = _xml_values(rows)
            if values is None:
                report.add("bisect", str(file), f"{name}: {tid}: no value CSIT's bisect reads: test skipped", "warning")
                continue
            per_test[str(tid)] = values
    return per_test, version


def _xml_values(rows: Any) -> list[float] | None:
    if (rows["status"] == "FAIL").any():
        return [FAIL_VALUE] * FAIL_COUNT
    by_metric = {r.metric: r for r in rows.itertuples()}
    for metric in _METRIC_ORDER:
        row = by_metric.get(metric)
        if row is None:
            continue
        if row.trials is not None and len(row.trials):
            return [float(t) for t in row.trials]
        if not math.isnan(row.value):
            return [float(row.value)]
    return None


def replay(root: Path, report: RunReport | None = None, dut: str = "vpp") -> BisectState:
    """Read every build under ``root`` and redo CSIT's decision for each mid, in order.

    Raises:
        BisectLayoutError: ``earliest/`` or ``latest/`` is missing or holds no results.
    """
    report = report if report is not None else RunReport()
    if not root.is_dir():
        raise BisectLayoutError(f"{root}: not a directory")
    builds = {}
    for end in ("earliest", "latest"):
        d = _find(root, end)
        if d is None:
            raise BisectLayoutError(f"{root}: no {end}/ (or csit_{end}/) directory: not a CSIT bisect archive")
        builds[end] = read_build(d, end, report, dut)
        if not builds[end].values:
            raise BisectLayoutError(f"{d}: no results (results.json, UTI JSON or output.xml) for the {end} build")
    middle = _find(root, "middle")
    numbered = sorted((int(p.name), p) for p in (middle.iterdir() if middle else ()) if p.is_dir() and p.name.isdigit())
    early, late = builds["earliest"], builds["latest"]
    steps: list[Step] = []
    pending: list[str] = []
    for n, d in numbered:
        mid = read_build(d, f"middle/{n}", report, dut)
        if pending or not mid.values:  # a running job: this build (and any after) not measured yet
            pending.append(mid.name)
            continue
        try:
            decision = decide(early.values, mid.values, late.values)
        except MdlInputError as exc:
            raise PalError(f"{mid.path}: {mid.name} against {early.name} and {late.name}: {exc}") from None
        if decision.becomes == "late":
            late = mid
        else:
            early = mid
        steps.append(Step(mid, decision, early.name, late.name))
    return BisectState(builds["earliest"], builds["latest"], tuple(steps), early, late, tuple(pending), dut)
