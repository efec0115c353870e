"""The YAML spec: what to fetch, which tests to trend, how to analyse them and what to publish.

The YAML is read with pyyaml (safe loader) and validated into frozen dataclasses. Keys are
kebab-case in YAML (``max-builds``) and snake_case here (``max_builds``). Every error names
the key path, the line, the value found and what was expected. See docs/spec.md.
"""

from __future__ import annotations

import dataclasses
import os
import re
import string
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

import yaml

from pal.culprit.suspect import check_url_template
from pal.errors import SpecError, SpecErrors
from pal.model import METRICS
from pal.select import Selection, TagExpr, TagExprError

BuildRef = int | str  # a build number, or "lastCompletedBuild" / "lastSuccessfulBuild"
BUILD_ALIASES = ("lastCompletedBuild", "lastSuccessfulBuild")
#: the placeholders of the spec's URL templates (``sources[].artifacts``, ``outputs.build-url``):
#: what pal.sources.jenkins and the build links (pal.alerts.links, pal.render.pages) fill in
URL_PLACEHOLDERS = ("jenkins", "job", "build")

#: Bounds on a spec document (real specs are a few KB, a dozen levels, a few hundred values):
#: a YAML alias bomb or a deeply nested document is refused before it is expanded or recursed.
MAX_SPEC_BYTES = 4 << 20
MAX_SPEC_DEPTH = 64
MAX_SPEC_VALUES = 200_000
MAX_TAG_EXPR_DEPTH = 64
MAX_TAG_EXPR_OPS = 256
#: libyaml's parser where PyYAML was built with it (the same YAML, 10x faster: a rename file of
#: hundreds of entries is read by every run); its events and nodes are PyYAML's
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class JobSpec:
    """One PT job and the builds of it to analyse."""

    name: str
    builds: list[int] | None = None  # an explicit list; overrides start/end
    start: int = 1
    end: BuildRef = "lastCompletedBuild"
    max_builds: int | None = None  # keep only the newest N builds of the range
    period_days: int | None = None  # drop builds older than this many days
    testbeds: int | None = None  # physical testbeds of this topo-arch (None: count from data)
    dut: str = "vpp"


@dataclass(frozen=True)
class SourceSpec:
    """A place output.xml files can come from; sources are tried in order per build."""

    name: str
    type: Literal["local", "jenkins"]
    path: str | None = None  # local: the directory (DIR/<job>/<build>/output.xml[.gz] or flat)
    url: str | None = None  # jenkins: base URL, e.g. https://jenkins.fd.io (may start with ${VAR})
    artifacts: list[str] = field(default_factory=list)  # jenkins: ordered URL templates
    verify_tls: bool = True
    timeout: float = 30.0  # seconds, connect and read
    deadline: float = 900.0  # seconds for one file in all: connect, headers, body, retries
    retries: int = 3
    max_size_mb: int = 2048
    workers: int = 4


@dataclass(frozen=True)
class DetectorSpec:
    """Which change detector a test set uses, with its parameters (see pal.analysis)."""

    name: str = "mdl"  # a name in pal.analysis.registry.DETECTORS
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AlertFilters:
    """Post-filters on what is alerted (graphs still show every anomaly)."""

    # Defaults chosen by docs/accuracy.md (best F1 with the fewest false alarms per 1k runs);
    # a spec can still ask for CSIT's raw behaviour with {min-change-pct: 0, confirm-runs: 1}.
    min_change_pct: float = 1.0  # relative change below this is not alerted
    confirm_runs: int = 2  # alert only when the new level has held this many runs


@dataclass(frozen=True)
class Windows:
    """Compliance windows in runs (the seeds: 1 week = 10 runs, 5 for a single-testbed topo-arch)."""

    short_term_runs: int = 10
    short_term_runs_single_testbed: int = 5
    long_term_runs: int = 180
    long_term_days: int = 180


@dataclass(frozen=True)
class TestSet:
    """A named group of series analysed the same way."""

    __test__ = False  # not a pytest class

    name: str
    jobs: list[str] | None = None  # job names (regexes, full match); None = all jobs
    select: Selection = field(default_factory=Selection)
    metrics: list[str] = field(default_factory=lambda: ["mrr"])
    detector: DetectorSpec = field(default_factory=DetectorSpec)
    alert_filters: AlertFilters = field(default_factory=AlertFilters)
    windows: Windows = field(default_factory=Windows)
    direction: Literal["auto", "higher-is-better", "lower-is-better"] = "auto"

    def direction_of(self, metric: str) -> int:
        if self.direction == "higher-is-better":
            return +1
        if self.direction == "lower-is-better":
            return -1
        return METRICS.get(metric, ("", +1))[1]


@dataclass(frozen=True)
class SmtpSpec:
    host: str
    port: int = 25
    sender: str = "pal@localhost"
    to: list[str] = field(default_factory=list)
    starttls: bool = False
    user_env: str | None = None  # name of the env variable holding the user
    password_env: str | None = None  # name of the env variable holding the password


@dataclass(frozen=True)
class AlertsSpec:
    enabled: bool = True
    fail_on: Literal["new-regression", "any-regression", "never"] = "new-regression"
    regression_result: Literal["UNSTABLE", "FAILURE"] = "FAILURE"  # Jenkins result for exit 2
    acks: str | None = None  # path of acks.yaml
    smtp: SmtpSpec | None = None


@dataclass(frozen=True)
class OutputsSpec:
    dir: str = "out"  # root of everything the run writes: site/, alerts/, exports/, report.json
    title: str = "Performance trending"
    dashboards: bool = True
    graphs: bool = True
    exports: list[Literal["csv", "parquet", "json"]] = field(default_factory=lambda: ["csv", "parquet"])
    build_url: str | None = None  # link template for builds, e.g. "{jenkins}/job/{job}/{build}"
    # where site/ is published (e.g. the PA job's artifact URL); alert texts link each series' page
    site_url: str | None = None
    # DUT -> link template of a suspect commit range, {good}..{bad} (pal.culprit.suspect)
    commit_range_url: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StoreSpec:
    path: str = "out/store"  # the Parquet history
    executor: Literal["local", "dask"] = "local"
    scheduler: str | None = None  # tcp://host:8786 for an existing Dask cluster
    workers: int = 2


@dataclass(frozen=True)
class Spec:
    """A whole PA job."""

    name: str
    jobs: list[JobSpec]
    sources: list[SourceSpec]
    test_sets: list[TestSet]
    outputs: OutputsSpec = field(default_factory=OutputsSpec)
    alerts: AlertsSpec = field(default_factory=AlertsSpec)
    store: StoreSpec = field(default_factory=StoreSpec)
    testbeds: dict[str, str] = field(default_factory=dict)  # TG IP -> testbed name
    rename: dict[str, str] = field(default_factory=dict)  # old test id -> new test id
    rename_file: str | None = None  # a YAML mapping old id -> new id, merged under ``rename``
    ignore: list[str] = field(default_factory=list)  # test ids (or regexes) to leave out
    base_dir: str = "."  # directory relative paths are resolved against (the spec's directory)
    # line of every key path in the spec file (for messages of later checks, pal.validate);
    # the leading underscore keeps it out of the YAML keys
    _lines: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def where(self, path: str) -> str:
        """``path (line N)`` for messages: the line of the key path or of its nearest parent."""
        line = _line_of(self._lines, path)
        return f"{path} (line {line})" if line else path

    def resolve(self, path: str | None) -> Path | None:
        """A path from the spec, with ${VARS} expanded, relative to the spec file's directory."""
        if path is None:
            return None
        p = Path(os.path.expandvars(os.path.expanduser(path)))
        return Path(os.path.normpath(p if p.is_absolute() else (Path(self.base_dir) / p)))

    @property
    def out_dir(self) -> Path:
        return self.resolve(self.outputs.dir)  # type: ignore[return-value]

    @property
    def store_dir(self) -> Path:
        return self.resolve(self.store.path)  # type: ignore[return-value]

    def renames(self) -> dict[str, str]:
        """The rename mapping: ``rename-file`` entries overridden by inline ``rename`` ones."""
        merged: dict[str, str] = {}
        path = self.resolve(self.rename_file)
        if path is not None:
            try:
                data = load_yaml(path) or {}
            except OSError as exc:
                raise SpecError("rename-file", str(path), f"a readable YAML mapping ({exc.strerror})") from None
            if not isinstance(data, dict):
                raise SpecError("rename-file", str(path), "a YAML mapping old-id: new-id")
            merged.update({str(k).lower(): str(v).lower() for k, v in data.items()})
        merged.update({k.lower(): v.lower() for k, v in self.rename.items()})
        return merged

    def job(self, name: str) -> JobSpec | None:
        return next((j for j in self.jobs if j.name == name), None)


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------


def load_spec(path: str | os.PathLike[str]) -> Spec:
    """Read and validate a spec file; raise SpecError naming the key, line and value."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecError("(file)", str(path), f"a readable spec file ({exc.strerror})") from None
    return parse_spec(_decode(raw, str(path)), source=str(path), base_dir=str(path.resolve().parent))


def _decode(raw: bytes, source: str) -> str:
    if len(raw) > MAX_SPEC_BYTES:
        raise SpecError("(file)", f"more than {MAX_SPEC_BYTES} bytes", f"a spec under {MAX_SPEC_BYTES >> 20} MB", source)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(f"line {line}", raw[exc.start: exc.start + 4], "UTF-8 text (byte offset "
                        f"{exc.start} is not)", source) from None


def parse_spec(text: str, source: str = "<spec>", base_dir: str = ".") -> Spec:
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError("(document)", f"{len(text)} characters", f"a spec under {MAX_SPEC_BYTES >> 20} MB", source)
    try:
        _check_shape(text, source)
        node = _compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(document)"
        raise SpecError(where, getattr(exc, "problem", None) or str(exc)[:200], "valid YAML", source) from None
    if node is None:
        raise SpecError("(document)", None, "a mapping with name, jobs, sources, test-sets", source)
    lines: dict[str, int] = {}
    try:
        data = _to_python(node, "", lines, [MAX_SPEC_VALUES], source)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(document)"
        raise SpecError(where, getattr(exc, "problem", None) or str(exc)[:200], "a plain YAML value", source) from None
    if not isinstance(data, dict):
        raise SpecError("(document)", _short(data), "a mapping at the top level", source)
    data.setdefault("base-dir", base_dir)
    return _Builder(source, lines).spec(data)


def load_yaml(path: Path) -> Any:
    """A YAML file other than the spec (rename-file), read within the spec's bounds.

    Raises SpecError (too big, not UTF-8, not YAML, too deep, too many values, a duplicate key)
    or OSError.
    """
    with open(path, "rb") as fh:
        text = _decode(fh.read(MAX_SPEC_BYTES + 1), str(path))
    try:
        _check_shape(text, str(path))
        node = _compose(text)
        return None if node is None else _to_python(node, "", {}, [MAX_SPEC_VALUES], str(path))
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(document)"
        raise SpecError(where, getattr(exc, "problem", None) or str(exc)[:200], "valid YAML", str(path)) from None


def _compose(text: str) -> Any:
    """The document's node tree (libyaml where PyYAML has it); errors as the pure parser words them."""
    try:
        return yaml.compose(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        raise _plain_error(exc, lambda loader: yaml.compose(text, Loader=loader)) from None


def _check_shape(text: str, source: str) -> None:
    """Refuse nesting deeper than MAX_SPEC_DEPTH from the event stream, before anything recurses.

    PyYAML's parser keeps its own stack, so reading events is safe at any depth; its composer
    (and ``_to_python``) recurse, and 10,000 levels ended in a RecursionError traceback.
    """
    def too_deep(line: int) -> SpecError:
        return SpecError(f"line {line}", f"nesting deeper than {MAX_SPEC_DEPTH}",
                         f"at most {MAX_SPEC_DEPTH} nested mappings/lists", source)

    depth = 0
    try:
        for event in yaml.parse(text, Loader=_YAML_LOADER):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_SPEC_DEPTH:
                    raise too_deep(event.start_mark.line + 1)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:  # libyaml stops at its own depth (1,000) before ours is counted
        mark = getattr(exc, "problem_mark", None)
        if "nesting depth" in str(getattr(exc, "problem", "")) and mark is not None:
            raise too_deep(mark.line + 1) from None
        raise _plain_error(exc, lambda loader: sum(1 for _ in yaml.parse(text, Loader=loader))) from None


def _plain_error(exc: yaml.YAMLError, again: Callable[[type], object]) -> yaml.YAMLError:
    """The error PyYAML's own (pure Python) parser gives for what libyaml refused.

    libyaml words and places its errors differently ("line 2: did not find expected ','" where
    the pure parser says "line 1: expected ',' or ']', but got '<stream end>'"): a user sees the
    same message whether or not PyYAML was built with libyaml. Only the error path runs the
    slow parser, on a document whose depth ``_check_shape`` has bounded (or on its events).
    """
    if _YAML_LOADER is yaml.SafeLoader:
        return exc
    try:
        again(yaml.SafeLoader)
    except yaml.YAMLError as plain:
        return plain
    except (ValueError, TypeError, OverflowError, RecursionError):
        pass  # the pure parser failed otherwise: libyaml's own message stands
    return exc


def _short(value: Any, limit: int = 200) -> Any:
    """A value as shown in an error: long strings and containers cut to ``limit`` characters."""
    text = value if isinstance(value, str) else repr(value) if isinstance(value, (list, dict)) else None
    if text is None or len(text) <= limit:
        return value
    return text[:limit] + f"... ({len(text)} characters)"


def _to_python(node: yaml.Node, path: str, lines: dict[str, int], budget: list[int], source: str,
               scalars: yaml.SafeLoader | None = None) -> Any:
    """YAML node tree -> plain Python, remembering the line of every key path.

    ``budget`` counts the values built: an alias re-enters the node it names, so a few lines of
    nested aliases ("billion laughs") would otherwise expand to billions of values. A key
    given twice in one mapping is an error (YAML says keys are unique; PyYAML keeps the last).
    ``scalars`` constructs the scalars (one loader for the whole tree).
    """
    if scalars is None:
        scalars = yaml.SafeLoader("")
        try:
            return _to_python(node, path, lines, budget, source, scalars)
        finally:
            scalars.dispose()
    budget[0] -= 1
    if budget[0] < 0:
        raise SpecError(f"line {node.start_mark.line + 1}", f"more than {MAX_SPEC_VALUES} values",
                        "a spec of fewer values (aliases expanding into each other?)", source)
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                raise SpecError(f"line {knode.start_mark.line + 1}", _short(f"{knode.tag} key"), "a plain key", source)
            key = knode.value
            sub = f"{path}.{key}" if path else str(key)
            if str(key) in out:
                raise SpecError(f"{sub} (line {knode.start_mark.line + 1})", _short(str(key)),
                                f"a key given once (also on line {lines.get(sub, '?')})", source)
            out[str(key)] = _to_python(vnode, sub, lines, budget, source, scalars)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(v, f"{path}[{i}]", lines, budget, source, scalars) for i, v in enumerate(node.value)]
    return scalars.construct_object(node, deep=True)


def _line_of(lines: dict[str, int], path: str) -> int | None:
    """The line of ``path`` or of its nearest parent key."""
    while path:
        if path in lines:
            return lines[path]
        parent = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", path)
        if parent == path:
            break
        path = parent
    return None


class _Recorded(Exception):
    """A value could not be built; its errors are already in ``_Builder.errors``."""


class _Builder:
    """Turns plain data into the dataclasses above, checking types against the annotations.

    Errors are collected, not raised one by one, so that a spec's every mistake is reported
    at once: a bad optional key is recorded and left at its default; a value whose required
    keys are missing cannot be built (``_Recorded``) and its parent leaves it out.
    """

    def __init__(self, source: str, lines: dict[str, int]):
        self.source = source
        self.lines = lines
        self.errors: list[SpecError] = []

    def spec(self, data: dict[str, Any]) -> Spec:
        """The Spec of ``data``, or SpecErrors with every error (and the spec, when it could be built)."""
        spec: Spec | None = None
        try:
            spec = dataclasses.replace(self.build(Spec, data, ""), _lines=dict(self.lines))
        except SpecError as exc:
            self.errors.append(exc)
        except _Recorded:
            pass
        if spec is not None:
            _check_semantics(spec, self)
        if self.errors:
            raise SpecErrors(self.errors, spec)
        return spec  # type: ignore[return-value]

    def _error(self, path: str, value: Any, expected: str) -> SpecError:
        line = _line_of(self.lines, path)
        shown = f"{path} (line {line})" if line else (path or "(document)")
        return SpecError(shown, value, expected, self.source)

    def fail(self, path: str, value: Any, expected: str) -> typing.NoReturn:
        raise self._error(path, value, expected)

    def error(self, path: str, value: Any, expected: str) -> None:
        """Record an error and go on."""
        self.errors.append(self._error(path, value, expected))

    def build(self, cls: type, data: Any, path: str) -> Any:
        if not isinstance(data, dict):
            self.fail(path, data, f"a mapping ({cls.__name__})")
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        broken: set[str] = set()
        for key, value in data.items():
            name = key.replace("-", "_")
            sub = f"{path}.{key}" if path else key
            if name not in fields or name.startswith("_"):
                known = ", ".join(sorted(f.replace("_", "-") for f in fields if not f.startswith("_")))
                self.error(sub, key, f"one of the keys: {known}")
                continue
            try:
                kwargs[name] = self.convert(hints[name], value, sub)
            except SpecError as exc:
                self.errors.append(exc)
                broken.add(name)
            except _Recorded:
                broken.add(name)
        incomplete = False
        for name, f in fields.items():
            missing = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if missing and name not in kwargs:
                incomplete = True
                if name not in broken:
                    sub = f"{path}.{name.replace('_', '-')}" if path else name.replace("_", "-")
                    self.error(sub, None, "a value (this key is required)")
        if incomplete:
            raise _Recorded()
        return cls(**kwargs)

    def convert(self, tp: Any, value: Any, path: str) -> Any:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if tp is Any:
            return value
        if origin in (typing.Union, types.UnionType):
            if value is None and type(None) in args:
                return None
            errors = []
            for arg in args:
                if arg is type(None):
                    continue
                try:
                    return self.convert(arg, value, path)
                except SpecError as exc:
                    errors.append(exc.expected)
            self.fail(path, value, " or ".join(errors))
        if origin is Literal:
            if value not in args:
                self.fail(path, value, "one of " + ", ".join(repr(a) for a in args))
            return value
        if origin is list:
            if not isinstance(value, list):
                self.fail(path, value, "a list")
            if not dataclasses.is_dataclass(args[0]):
                return [self.convert(args[0], v, f"{path}[{i}]") for i, v in enumerate(value)]
            items, bad = [], False
            for i, v in enumerate(value):  # every item's errors, not only the first item's
                try:
                    items.append(self.convert(args[0], v, f"{path}[{i}]"))
                except SpecError as exc:
                    self.errors.append(exc)
                    bad = True
                except _Recorded:
                    bad = True
            if bad:
                raise _Recorded()
            return items
        if origin is dict:
            if not isinstance(value, dict):
                self.fail(path, value, "a mapping")
            return {
                self.convert(args[0], k, f"{path}.{k}"): self.convert(args[1], v, f"{path}.{k}")
                for k, v in value.items()
            }
        if dataclasses.is_dataclass(tp):
            return self.build(tp, value, path)
        if tp is bool:
            if not isinstance(value, bool):
                self.fail(path, value, "true or false")
            return value
        if tp is int:
            if isinstance(value, bool) or not isinstance(value, int):
                self.fail(path, value, "an integer")
            return value
        if tp is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.fail(path, value, "a number")
            return float(value)
        if tp is str:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return str(value)  # YAML turns 10.30.51.45-like keys into strings anyway
            if not isinstance(value, str):
                self.fail(path, value, "a string")
            return value
        raise TypeError(f"spec annotation not handled: {tp!r}")  # a bug in this module, not the spec


def _check_semantics(spec: Spec, b: _Builder) -> None:
    """Checks that need more than one value or a compiler: regexes, windows, references."""
    if not spec.jobs:
        b.error("jobs", spec.jobs, "at least one job")
    if not spec.sources:
        b.error("sources", spec.sources, "at least one data source")
    if not spec.test_sets:
        b.error("test-sets", spec.test_sets, "at least one test set")
    seen: set[str] = set()
    for i, job in enumerate(spec.jobs):
        p = f"jobs[{i}]"
        if job.name in seen:
            b.error(f"{p}.name", job.name, "a job name not listed before")
        seen.add(job.name)
        if isinstance(job.end, str) and job.end not in BUILD_ALIASES:
            b.error(f"{p}.end", job.end, "a build number or one of " + ", ".join(BUILD_ALIASES))
        if job.start < 1:
            b.error(f"{p}.start", job.start, "a build number >= 1")
        if isinstance(job.end, int) and job.end < job.start:
            b.error(f"{p}.end", job.end, f"a build number >= start ({job.start})")
        if job.max_builds is not None and job.max_builds < 1:
            b.error(f"{p}.max-builds", job.max_builds, "an integer >= 1")
        if job.period_days is not None and job.period_days < 1:
            b.error(f"{p}.period-days", job.period_days, "an integer >= 1 (days)")
        if job.builds is not None and (not job.builds or min(job.builds) < 1):
            b.error(f"{p}.builds", job.builds, "a non-empty list of build numbers >= 1")
    for dut, tmpl in spec.outputs.commit_range_url.items():
        problem = check_url_template(tmpl)
        if problem:
            b.error(f"outputs.commit-range-url.{dut}", tmpl, f"a link template with {{good}}, {{bad}} ({problem})")
    names: set[str] = set()
    for i, src in enumerate(spec.sources):
        p = f"sources[{i}]"
        if src.name in names:
            b.error(f"{p}.name", src.name, "a source name not used before")
        names.add(src.name)
        if src.type == "local" and not src.path:
            b.error(f"{p}.path", src.path, "a directory (required for a local source)")
        if src.type == "jenkins":
            if not src.url or not re.match(r"^(https?://|\$\{)", src.url):
                b.error(f"{p}.url", src.url, "an http(s):// URL (required for a jenkins source)")
            if not src.artifacts:
                b.error(f"{p}.artifacts", src.artifacts, "a non-empty list of URL templates")
            for j, tmpl in enumerate(src.artifacts):
                _check_template(b, f"{p}.artifacts[{j}]", tmpl)
        if src.timeout <= 0:
            b.error(f"{p}.timeout", src.timeout, "a number of seconds > 0")
        if src.deadline <= 0:
            b.error(f"{p}.deadline", src.deadline, "a number of seconds > 0")
        for key in ("retries", "max_size_mb", "workers"):
            val = getattr(src, key)
            if val < (0 if key == "retries" else 1):
                b.error(f"{p}.{key.replace('_', '-')}", val, "a positive integer")
    set_names: set[str] = set()
    for i, ts in enumerate(spec.test_sets):
        p = f"test-sets[{i}]"
        if ts.name in set_names:
            b.error(f"{p}.name", ts.name, "a test-set name not used before")
        set_names.add(ts.name)
        if ts.select.tags:
            # parsing and matching recurse once per parenthesis, NOT and operator in a chain
            depth = _paren_depth(ts.select.tags)
            ops = len(re.findall(r"(?i)\b(?:and|or|not)\b", ts.select.tags))
            if depth > MAX_TAG_EXPR_DEPTH or ops > MAX_TAG_EXPR_OPS:
                b.error(f"{p}.select.tags", _short(ts.select.tags),
                        f"a tag expression at most {MAX_TAG_EXPR_DEPTH} parentheses deep with at most "
                        f"{MAX_TAG_EXPR_OPS} operators (found {depth} and {ops})")
            else:
                try:
                    TagExpr.parse(ts.select.tags)
                except (TagExprError, RecursionError) as exc:
                    b.error(f"{p}.select.tags", _short(ts.select.tags), f"a tag expression ({str(exc)[:200]})")
        _check_regex(b, f"{p}.select.id-regex", ts.select.id_regex)
        for j, pat in enumerate(ts.jobs or []):
            _check_regex(b, f"{p}.jobs[{j}]", pat)
        if not ts.metrics:
            b.error(f"{p}.metrics", ts.metrics, "at least one metric")
        for j, m in enumerate(ts.metrics):
            if m not in METRICS:
                b.error(f"{p}.metrics[{j}]", m, "one of " + ", ".join(METRICS))
        w = ts.windows
        if w.short_term_runs < 1 or w.short_term_runs_single_testbed < 1:
            b.error(f"{p}.windows.short-term-runs", w.short_term_runs, "an integer >= 1")
        if w.long_term_runs <= w.short_term_runs:
            b.error(f"{p}.windows.long-term-runs", w.long_term_runs,
                   f"more runs than short-term-runs ({w.short_term_runs})")
        if w.long_term_days < 1:
            b.error(f"{p}.windows.long-term-days", w.long_term_days, "an integer >= 1 (days)")
        _check_detector(b, p, ts.detector)
        if ts.alert_filters.confirm_runs < 1:
            b.error(f"{p}.alert-filters.confirm-runs", ts.alert_filters.confirm_runs, "an integer >= 1")
        if ts.alert_filters.min_change_pct < 0:
            b.error(f"{p}.alert-filters.min-change-pct", ts.alert_filters.min_change_pct, "a percentage >= 0")
    for i, pat in enumerate(spec.ignore):
        _check_regex(b, f"ignore[{i}]", pat)
    if spec.outputs.build_url is not None:
        _check_template(b, "outputs.build-url", spec.outputs.build_url)
    if spec.outputs.site_url is not None and not re.match(r"^(https?|file)://\S+$", spec.outputs.site_url):
        b.error("outputs.site-url", spec.outputs.site_url, "an http(s):// or file:// URL of the published site/")
    if spec.store.executor == "dask" and spec.store.scheduler and not re.match(r"^(tcp|tls|inproc)://", spec.store.scheduler):
        b.error("store.scheduler", spec.store.scheduler, "a Dask scheduler address like tcp://host:8786")


def _paren_depth(text: str) -> int:
    depth = top = 0
    for c in text:
        depth += c == "("
        depth -= c == ")"
        top = max(top, depth)
    return top


def _check_detector(b: _Builder, path: str, det: DetectorSpec) -> None:
    """Build the detector once so that a bad parameter fails ``pal validate``, not the run's analysis."""
    from pal.analysis.registry import get_detector

    try:
        get_detector(det.name, det.params)
    except SpecError as exc:
        b.error(f"{path}.{exc.path}", exc.value, exc.expected)


def template_problem(template: str) -> str | None:
    """Why ``template`` is not a URL template of the spec (None: it is): unknown placeholders, bad syntax."""
    allowed = ", ".join(f"{{{n}}}" for n in URL_PLACEHOLDERS)
    try:
        names = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        return f"a template using only {allowed} ({exc})"
    unknown = [n for n in names if n not in URL_PLACEHOLDERS]  # no {job.attr}, {build[0]}, {}
    if unknown:
        return f"a template using only {allowed} ({', '.join(repr(n) for n in dict.fromkeys(unknown))})"
    try:
        template.format_map({"jenkins": "https://jenkins.example.org", "job": "job", "build": 1})
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as exc:
        return f"a template using only {allowed} ({type(exc).__name__}: {exc})"
    return None


def _check_template(b: _Builder, path: str, template: str) -> None:
    problem = template_problem(template)
    if problem:
        b.error(path, template, problem)


def _check_regex(b: _Builder, path: str, pattern: str | None) -> None:
    if pattern is None:
        return
    try:
        re.compile(pattern)
    except re.error as exc:
        b.error(path, pattern, f"a valid regular expression ({exc})")
