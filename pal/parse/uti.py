"""CSIT's UTI JSON results (``*.info.json[.gz]``, model major version 1) -> the same samples as output.xml.

Since 2022 CSIT's performance jobs also write every test's result as one JSON file (the
"unified test interface" model, 1.5.1 today; CSIT-FORMATS.md §8). This reader turns one
build's files into exactly the rows the output.xml path makes for the same tests: the id,
attributes, status, values and units come from the same functions (``pal.parse.identity``,
``pal.parse.messages``), so a job whose history switches from output.xml to UTI JSON (or
mixes both) trends as one series.

Decisions:
- Each file is validated against pal's own schema (``schemas/uti_test_case.schema.json``,
  written from CSIT's published schema facts; any 1.x version) before it is read. A file that
  is not UTF-8, not JSON, has duplicate keys, NaN/Infinity, numbers beyond the float range
  (the schemas bound every number), absurd nesting, or does not match the schema is a per-file
  problem (report.json); the rest of the build is still read. A file of another major version
  stops the build (ParseError): its fields may mean something else.
- Validation uses ``jsonschema_rs`` (the JSON Schema validator compiled from Rust, draft
  2020-12) when installed, else the pure-Python ``jsonschema`` with the same schema file; the
  tests check both give the same verdicts. The Python one is ~200x slower per file (0.7-1.1 ms
  against 4-5 µs), which would make a build of thousands of tests slower to validate than to
  download.
- ``setup.info.json`` / ``teardown.info.json`` are suite files: read for their times and
  hosts, never tests. Build time = the end time of the top-most suite teardown (the last
  thing CSIT writes), else the latest end time of any file; the output.xml path uses the top
  suite's end time, the same moment.
- The suite part of ``test_id`` has CSIT's ``_`` for each space of Robot's suite name (Robot
  itself turned the ``_`` of directory and file names into those spaces: ``ip4_tunnels`` ->
  ``Ip4 Tunnels``); pal turns them back, so the id equals the output.xml one.
- The test name is the last part of ``test_id`` (lower case in UTI); its frame-size prefix
  gets CSIT's case back (``64b-`` -> ``64B-``, ``imix-`` -> ``IMIX-``), which is how every
  CSIT test name is written, so ``test_name`` equals the output.xml one.
- Result types: ``mrr`` (unit pps -> metric mrr, cps -> cps; mean and population stdev of the
  trials computed as for the message), ``ndrpdr`` (NDR/PDR lower bounds in their unit, PDR50
  average latency per direction when a latency object is present), ``soak`` (critical rate
  lower bound), ``hoststack`` with a cps rate (metric cps). ``reconf``, other hoststack rates
  and ``unknown`` have no trended metric: the test counts as passed/failed and, when its tags
  give a performance type, a FAIL (or a PASS without a result) gets NaN rows like a test
  whose message says nothing.
- Testbed: the spec's testbed name of the first of the test's ``hosts`` it knows (the map's
  keys are TG addresses), else the hosts, sorted and comma-joined.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from pal.errors import ParseError
from pal.model import METRICS, BuildMeta
from pal.parse.archive import DEFAULT_MAX_BYTES
from pal.parse.build import ParseResult, samples_table
from pal.parse.identity import (
    METRICS_OF_TYPE, TYPE_OF_KIND, TestAttrs, TestId, apply_rename_ignore, attrs_of, normalise_id,
)
from pal.parse.messages import INVALID_LATENCY, Measured, trials_measured
from pal.parse.rows import Rows
from pal.parse.uti_archive import DEFAULT_MAX_MEMBER, Member, Refused, iter_members, member_base
from pal.report import Problem

#: The model major version this reader understands.
MAJOR = 1
#: Suite files (never tests); CSIT's ETL also skips ``suite.info.json`` and the ``*.output.info.json`` forms.
SUITE_FILES = tuple(f"{stem}{mid}.info.json" for stem in ("setup", "teardown", "suite") for mid in ("", ".output"))
_FRAME_PREFIX = re.compile(r"^((?:tc\d+-)?)(\d+b|imix)(?=-)")


class _Hostile(ValueError):
    """A JSON text pal refuses to take in (the message says what was wrong)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _Hostile(f"duplicate key {dup[:60]!r}")
    return out


def _constant(text: str) -> float:
    raise _Hostile(f"{text} is not JSON")


# Numbers beyond the float range decode to inf; the schemas' bounds reject them (a per-number hook
# would cost more than the rest of the decoding) and ``nonfinite`` names them in the problem.
_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)


def nonfinite(node: Any, path: str = "") -> str | None:
    """The path of the first number beyond the float range in a decoded document, or None."""
    if isinstance(node, float):
        return None if math.isfinite(node) else (path or "(top)")
    if isinstance(node, dict):
        items = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return None
    for k, v in items:
        found = nonfinite(v, f"{path}/{k}" if path else str(k))
        if found:
            return found
    return None


def load_json(data: bytes) -> Any:
    """Decode one file strictly: UTF-8, no duplicate keys, finite numbers; raises ValueError saying why."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Hostile(f"not valid UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return _DECODER.decode(text)
    except _Hostile:
        raise
    except RecursionError:
        raise _Hostile("JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise _Hostile(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # an integer of thousands of digits (int max str digits)
        raise _Hostile(f"unusable number ({str(exc)[:80]})") from None


def _schema(name: str) -> dict[str, Any]:
    return json.loads(resources.files("pal.parse").joinpath("schemas", name).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class _Validator:
    """One schema, checked by jsonschema_rs when available, else by jsonschema."""

    check: Any  # callable(doc) -> bool
    explain: Any  # callable(doc) -> str
    engine: str  # "jsonschema_rs" | "jsonschema"

    def problem(self, doc: Any) -> str | None:
        if self.check(doc):
            return None
        where = nonfinite(doc)
        return f"{where}: a number beyond the float range" if where else self.explain(doc)


@lru_cache(maxsize=None)
def validator(name: str, engine: str = "auto") -> _Validator:
    """The validator of schema file ``name``; ``engine`` "rs" / "python" forces one (tests compare them)."""
    schema = _schema(name)
    if engine in ("auto", "rs"):
        try:
            import jsonschema_rs
        except ImportError:
            if engine == "rs":
                raise
        else:
            v = jsonschema_rs.validator_for(schema)

            def explain_rs(doc: Any) -> str:
                err = next(iter(v.iter_errors(doc)))
                where = "/".join(str(p) for p in err.instance_path) or "(top)"
                return f"{where}: {err.message[:200]}"
            return _Validator(v.is_valid, explain_rs, "jsonschema_rs")
    import jsonschema

    py = jsonschema.Draft202012Validator(schema)

    def explain_py(doc: Any) -> str:
        err = jsonschema.exceptions.best_match(py.iter_errors(doc))
        where = "/".join(str(p) for p in err.absolute_path) or "(top)"
        return f"{where}: {err.message[:200]}"
    return _Validator(py.is_valid, explain_py, "jsonschema")


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def test_name_of(test_id: str) -> str:
    """The test's own name from a UTI ``test_id``, with CSIT's upper-case frame prefix (``64B-``, ``IMIX-``)."""
    name = test_id.rsplit(".", 1)[-1]
    return _FRAME_PREFIX.sub(lambda m: m.group(1) + m.group(2).upper(), name, count=1)


test_name_of.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


@dataclass
class _Build:
    job: str
    build: int
    file: str
    rename: Mapping[str, str]
    ignore: list[re.Pattern[str]]
    problems: list[Problem] = field(default_factory=list)
    passed: int = 0
    failed: int = 0
    ends: list[tuple[int, datetime]] = field(default_factory=list)  # (suite depth, end time) of teardowns
    starts: list[tuple[int, datetime]] = field(default_factory=list)
    raw_start: str | None = None  # earliest start_time seen, as written
    raw_end: str | None = None  # latest end_time seen, as written
    versions: dict[str, str] = field(default_factory=dict)  # dut type -> first version seen
    hosts: list[str] | None = None

    def warn(self, member: str, message: str, test: str | None = None) -> None:
        details: dict[str, Any] = {"file": self.file, "member": member, "job": self.job, "build": self.build}
        if test:
            details["test"] = test
        self.problems.append(Problem("parse", f"{self.job}/{self.build}",
                                     f"{self.file}: build {self.build}: {member}: {message}", "warning", details))

    def saw_times(self, doc: Mapping[str, Any]) -> None:
        """Keep the earliest start and latest end; CSIT's one UTC format (``...Z``, fixed width) compares
        as text, anything else is parsed."""
        for key, keep_min in (("start_time", True), ("end_time", False)):
            text = doc.get(key)
            if not isinstance(text, str):
                continue
            best = self.raw_start if keep_min else self.raw_end
            if best is not None and len(text) == len(best) and text[-1:] == best[-1:] == "Z":
                if (text < best) if keep_min else (text > best):
                    best = text
            else:
                t, old = _time(text), _time(best)
                if t is not None and (old is None or ((t < old) if keep_min else (t > old))):
                    best = text
            if keep_min:
                self.raw_start = best
            else:
                self.raw_end = best

    @property
    def any_start(self) -> datetime | None:
        return _time(self.raw_start)

    @property
    def any_end(self) -> datetime | None:
        return _time(self.raw_end)


def parse_uti_build(path: str | Path, job: str, build: int, *, testbeds: Mapping[str, str] | None = None,
                    rename: Mapping[str, str] | None = None, ignore: Sequence[str] = (), dut: str = "vpp",
                    max_bytes: int = DEFAULT_MAX_BYTES, max_member: int = DEFAULT_MAX_MEMBER,
                    engine: str = "auto") -> ParseResult:
    """Parse one build's UTI results (directory, tar(.gz), zip or one ``*.info.json``) into samples.

    Arguments as ``pal.parse.build.parse_build``; ``max_member`` caps one file, ``engine``
    picks the schema validator (see ``validator``).

    Raises:
        ParseError: the results cannot be read at all (damaged archive, no ``*.info.json``,
            over ``max_bytes``) or are of another model major version.
    """
    file = str(path)
    try:
        patterns = [re.compile(p) for p in ignore]
    except re.error as exc:
        raise ParseError(file, f"invalid ignore pattern: {exc}", build) from None
    b = _Build(job, int(build), file, dict(rename or {}), patterns)
    test_schema = validator("uti_test_case.schema.json", engine)
    suite_schema = validator("uti_suite.schema.json", engine)
    rows = Rows()
    for item in iter_members(path, build, max_bytes=max_bytes, max_member=max_member):
        if isinstance(item, Refused):
            b.warn(item.name, f"refused: {item.reason}")
            continue
        doc = _document(item, b, file, build)
        if doc is None:
            continue
        base = member_base(item.name).lower()
        if base in SUITE_FILES:
            why = suite_schema.problem(doc) or (f"{w}: a number beyond the float range" if (w := nonfinite(doc)) else None)
            if why:
                b.warn(item.name, f"does not match the UTI suite schema: {why}")
                continue
            _suite_facts(item.name, base, doc, b)
            continue
        why = test_schema.problem(doc)
        if why:
            b.warn(item.name, f"does not match the UTI test schema: {why}", doc.get("test_id") if isinstance(
                doc.get("test_id"), str) else None)
            continue
        b.saw_times(doc)
        b.versions.setdefault(doc["dut_type"].lower(), doc["dut_version"])
        if b.hosts is None:
            b.hosts = list(doc["hosts"])
        _rows_of(item.name, doc, b, rows)

    build_time = min(b.ends)[1] if b.ends else b.any_end
    start_time = min(b.starts)[1] if b.starts else b.any_start
    meta = BuildMeta(
        job=job, build=int(build), build_time=build_time, start_time=start_time, dut=dut,
        dut_version=b.versions.get(dut.lower()), testbed=testbed_of(b.hosts, testbeds),
        passed=b.passed, failed=b.failed,
        duration_s=(build_time - start_time).total_seconds() if build_time and start_time else None,
        source_file=file,
    )
    return ParseResult(samples_table(rows.cols, meta), meta, b.problems)


def _document(item: Member, b: _Build, file: str, build: int) -> dict[str, Any] | None:
    try:
        doc = load_json(item.data)
    except _Hostile as exc:
        b.warn(item.name, str(exc))
        return None
    if not isinstance(doc, dict):
        b.warn(item.name, f"a JSON {type(doc).__name__}, not an object")
        return None
    version = doc.get("version")
    if isinstance(version, str):
        major = version.split(".", 1)[0]
        if major.isdigit() and int(major) != MAJOR:
            raise ParseError(file, f"{item.name}: UTI model version {version[:20]}; pal reads major version "
                             f"{MAJOR} only", build)
    return doc


def _suite_facts(member: str, base: str, doc: Mapping[str, Any], b: _Build) -> None:
    depth = member.count("/")
    end, start = _time(doc.get("end_time")), _time(doc.get("start_time"))
    if base.startswith("teardown.") and end:
        b.ends.append((depth, end))
    if base.startswith("setup.") and start:
        b.starts.append((depth, start))
    b.saw_times(doc)
    hosts = doc.get("hosts")
    if b.hosts is None and isinstance(hosts, list) and hosts:
        b.hosts = [h for h in hosts if isinstance(h, str)] or None


def testbed_of(hosts: Sequence[str] | None, testbeds: Mapping[str, str] | None) -> str | None:
    """The testbed name of the first host the spec's map knows, else the sorted hosts joined by commas."""
    if not hosts:
        return None
    for h in hosts:
        if testbeds and h in testbeds:
            return testbeds[h]
    return ",".join(sorted(hosts))


@lru_cache(maxsize=1 << 16)
def _identity(uti_id: str, tags: tuple[str, ...]) -> tuple[str, str, TestId, TestAttrs, tuple[str, ...]]:
    """Suite, name, id and attributes of a test; cached: a job's builds run the same tests again and again."""
    suite, _, _ = uti_id.rpartition(".")
    suite = suite.replace("_", " ")  # CSIT wrote SUITE_NAME's spaces as "_"; Robot made them from "_"
    name = test_name_of(uti_id)
    return (suite, name, normalise_id(f"{suite}.{name}", tags), attrs_of(name, suite.rsplit(".", 1)[-1], tags),
            tuple(map(str.upper, tags)))


def _rows_of(member: str, doc: Mapping[str, Any], b: _Build, out: Rows) -> None:
    suite, name, tid, attrs, upper_tags = _identity(doc["test_id"], tuple(doc["tags"]))
    test_id = apply_rename_ignore(tid.value, b.rename, b.ignore)
    if test_id is None:
        return
    status = "PASS" if doc["passed"] else "FAIL"
    message = doc["message"]
    if tid.problem:
        b.warn(member, tid.problem + ": treated as FAIL", doc["test_id"])
        message = f"{tid.problem}; {status}: {message}".strip()
        status = "FAIL"
    if status == "PASS":
        b.passed += 1
    else:
        b.failed += 1
    base = (test_id, name, suite.lower(), attrs.nic, attrs.frame_size, attrs.cores, attrs.threads_cores,
            attrs.driver, attrs.topology, upper_tags, status)
    if status == "FAIL":
        if attrs.test_type is not None:
            for m in METRICS_OF_TYPE[attrs.test_type]:
                out.add(base, attrs.test_type, m, math.nan, message=message)
        return
    measured = measured_of(doc["result"])
    if measured is None:
        if attrs.test_type is None:
            return
        b.warn(member, f"{attrs.test_type} test with no trended result (result type "
               f"{doc['result']['type']!r})", doc["test_id"])
        for m in METRICS_OF_TYPE[attrs.test_type]:
            out.add(base, attrs.test_type, m, math.nan, message="no result in the UTI file")
        return
    if measured.problem:
        b.warn(member, measured.problem, doc["test_id"])
    test_type = attrs.test_type
    if test_type is None or not set(measured.values) <= set(METRICS_OF_TYPE[test_type]):
        test_type = TYPE_OF_KIND[measured.kind]
    stdev = measured.stdev if measured.trials is not None else math.nan
    for metric, value in measured.values.items():
        out.add(base, test_type, metric, value, stdev=stdev, trials=measured.trials,
                message=(measured.problem or "") if math.isnan(value) else "", unit=measured.units.get(metric))


def measured_of(result: Mapping[str, Any]) -> Measured | None:
    """What a (schema-valid) ``result`` object says, in the shape the message parsers give; None: nothing trended."""
    kind = result["type"]
    if kind == "mrr":
        rate = result["receive_rate"]["rate"]
        unit = rate["unit"]
        if unit not in ("pps", "cps"):
            return None
        metric = "mrr" if unit == "pps" else "cps"
        values = [float(v) for v in rate["values"]]
        return trials_measured("mrr" if unit == "pps" else "cps", metric, values, str(values[:5]))
    if kind == "ndrpdr":
        values: dict[str, float] = {}
        units: dict[str, str] = {}
        problems = []
        for metric in ("ndr", "pdr"):
            rate = result[metric]["lower"]["rate"]
            value = float(rate["value"])
            if not value > 0 or rate["unit"] not in ("pps", "cps"):
                problems.append(f"{metric.upper()} lower bound invalid ({rate['value']} {rate['unit']})")
                value = math.nan
            values[metric] = value
            if rate["unit"] != METRICS[metric][0]:
                units[metric] = rate["unit"]
        if "latency_forward" in result or "latency_reverse" in result:
            values["latency_pdr50_d1"] = _latency(result.get("latency_forward"))
            values["latency_pdr50_d2"] = _latency(result.get("latency_reverse"))
        return Measured("ndrpdr", values, problem="; ".join(problems) or None, units=units)
    if kind == "soak":
        rate = result["critical_rate"]["lower"]["rate"]
        value = float(rate["value"])
        unit = rate["unit"]
        if not value > 0 or unit not in ("pps", "cps"):
            return Measured("soak", {"soak": math.nan}, problem=f"invalid critical rate lower bound "
                            f"({rate['value']} {unit})")
        return Measured("soak", {"soak": value}, units={"soak": unit} if unit != "pps" else {})
    if kind == "hoststack":
        rate = result.get("rate")
        if rate and rate["unit"] == "cps":
            return Measured("cps", {"cps": float(rate["value"])}, trials=None)
        return None
    return None  # reconf, unknown


def _latency(direction: Mapping[str, Any] | None) -> float:
    """PDR50 average of one direction in µs; NaN when absent or one of TRex's invalid markers."""
    if not direction:
        return math.nan
    avg = float(direction["pdr_50"]["avg"])
    return math.nan if avg in INVALID_LATENCY or avg < 0 else avg
