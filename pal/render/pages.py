"""Jinja2 pages of the site (autoescape on) and the drill-down page of one series.

A ``Pages`` object compiles the templates once; the drill-down writer is called for
thousands of series, possibly in worker processes, each with its own ``Pages``.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import jinja2
import numpy as np
from markupsafe import Markup, escape

import pal
from pal.model import AlertView, SeriesKey, SeriesResult
from pal.render import evidence, graphs, svg
from pal.render.buildinfo import BuildIndex
from pal.render.dashboard import DashTable, change_css
from pal.render.escape import Json, fixed_texts, js_encode, js_json
from pal.render.files import SiteFiles
from pal.render.naming import Scale, build_label, group_key, safe_slug, scale_for, short_name, topo_of

#: runs listed under a drill-down graph (all runs are in the job's CSV)
RECENT_RUNS = 30
MISSING_CLASS = ' class="missing"'
def _default_templates() -> Path:
    """The repository's ``templates/`` (source checkout, editable install), else the installed copy."""
    in_repo = Path(__file__).resolve().parents[2] / "templates"
    if in_repo.is_dir():
        return in_repo
    return Path(sys.prefix) / "share" / "pal" / "templates"


DEFAULT_TEMPLATES = _default_templates()


def fmt(value: object, digits: int = 2) -> str:
    """A number with fixed decimals; empty for None/NaN (unknown is blank, never 0)."""
    if value is None:
        return ""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    return f"{v:.{digits}f}" if math.isfinite(v) else ""


#: Longest text a page shows for one value (a test name, a message); the data files keep it whole.
MAX_SHOWN = 500


def cap_text(value: object, limit: int = MAX_SHOWN) -> object:
    """A plain text longer than ``limit`` cut, with its length said; markup and non-text as they are.

    A 9.9 MB test name once made a 111 MB site: it was printed on every page that lists it.
    """
    if type(value) is str and len(value) > limit:
        return f"{value[:limit]}\u2026 ({len(value)} characters)"
    return value


def make_env(templates_dir: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        finalize=cap_text,
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=True,  # every template, whatever its extension: all text is untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        keep_trailing_newline=True,
        auto_reload=False,  # a run never edits its templates: no stat of base.html at every page
    )
    env.filters["fmt"] = fmt
    return env


@dataclass(frozen=True)
class Links:
    """Jenkins build links from ``spec.outputs.build_url`` ({jenkins} {job} {build})."""

    template: str | None = None
    jenkins: str = ""

    def build(self, job: str, build: int | None) -> str | None:
        if not self.template or build is None:
            return None
        return self.template.format_map({"jenkins": self.jenkins.rstrip("/"), "job": job, "build": build})


@dataclass(frozen=True)
class SiteInfo:
    """Context shared by every page."""

    site_title: str
    data_until: str
    links: Links = field(default_factory=Links)
    version: str = pal.__version__


@dataclass(frozen=True)
class SeriesExtras:
    """What a drill-down page shows beside the result: alerts and failure messages."""

    alerts: tuple[AlertView, ...] = ()
    failures: tuple[tuple[int, str, str], ...] = ()  # (build, time, message)


def misaligned(result: SeriesResult) -> str | None:
    """Why a result cannot be drawn (arrays of different lengths, bad anomaly index), or None."""
    n = len(result.values)
    for name in ("builds", "times", "stdevs", "trend"):
        if len(getattr(result, name)) != n:
            return f"{name} has {len(getattr(result, name))} entries, values has {n}"
    for a in result.changes:
        if not 0 <= a.index < n:
            return f"anomaly at sample {a.index} outside the {n} samples"
    return None


def alert_context(a: AlertView) -> dict:
    """What the alert tables (index and drill-down) show of one alert; texts are escaped by Jinja.

    The ack snippet and the bisect trigger keep their lines (a <pre> each) so they paste as
    they are; ``dom`` is the alert id made safe for element ids (copy buttons point at them).
    """
    verdict = a.suspect_verdict if a.suspect_verdict in ("code", "infrastructure") else "unknown"
    summary = a.suspect_summary
    if summary.startswith(f"{verdict}: "):  # the verdict is shown beside it already
        summary = summary[len(verdict) + 2:]
    elif summary == verdict:
        summary = ""
    return {
        "id": a.id,
        "dom": safe_slug(a.id),
        "kind": a.kind,
        "state": a.state,
        "status": a.status,
        "acked": a.acked,
        "ack_reason": a.ack_reason or "",
        "ack_snippet": a.ack_snippet,
        "change_pct": a.change_pct,
        "verdict": verdict,
        "summary": summary,
        "range_url": a.suspect_url if a.suspect_url and a.suspect_url.startswith(("https://", "http://")) else None,
        "bisect": a.bisect_comment or "",
    }


def group_slug(result: SeriesResult) -> str:
    return safe_slug(*group_key(result))


def group_label(key: tuple[str, str, str]) -> str:
    topo, nic, area = key
    return " ".join(p for p in (topo, nic, area) if p)


@dataclass(frozen=True)
class Axis:
    """The time axis of the series of a job: its labels (``graphs.time_labels``), as JSON too,
    its build numbers as JSON and its times in seconds (``graphs.epoch_seconds``, what charts draw)."""

    labels: list[str | None]
    x: Json
    b: Json
    key: bytes  # its times and builds (what ``Pages._axis`` tells axes apart by)
    seconds: np.ndarray


#: the drill-down's per-series texts, each of which ``series.html`` (and ``base.html``) only writes
#: as a plain ``{{ name }}`` (``plain_slots`` checks it): what ``Frame`` leaves out
FRAME_SLOTS = ("page_title", "testbed", "group_slug", "group_label", "head", "runs")
#: the lists of the drill-down's rare sections: a page with none of them can be written from its ``Frame``
RARE_SECTIONS = ("anomalies", "alerts", "failures")


def plain_slots(env: jinja2.Environment, names: Sequence[str], templates: Sequence[str]) -> bool:
    """Whether ``templates`` use each of ``names`` only as a whole ``{{ name }}`` output: then what
    they write is the same around any value of it, and a page can be cut there (``Frame``)."""
    for name in templates:
        source = env.loader.get_source(env, name)[0]  # type: ignore[union-attr]
        tree = env.parse(source)
        plain = {id(n) for out in tree.find_all(jinja2.nodes.Output) for n in out.nodes
                 if isinstance(n, jinja2.nodes.Name)}
        if any(n.name in names and id(n) not in plain for n in tree.find_all(jinja2.nodes.Name)):
            return False
    return True


@dataclass(frozen=True)
class Frame:
    """``series.html`` rendered once with a marker for each of ``FRAME_SLOTS``, cut at them: a
    drill-down without rare sections is its parts with the slots' texts between (what Jinja
    writes for them: ``cap_text``, then escaped), not a render of the template each.

    Jinja's fixed cost per render (its context, the inherited blocks, the chrome's expressions)
    was a tenth of a drill-down's. A marker (``<`` and a NUL) cannot come out of escaped text or
    a template, so the cut is exact; ``plain_slots`` makes sure no template tests or filters a
    slot (else no frame is used)."""

    parts: tuple[str, ...]
    slots: tuple[int, ...]  # the slot (index into FRAME_SLOTS) after each part but the last

    MARK = "<\x00{}>"

    @classmethod
    def of(cls, template: jinja2.Template, ctx: dict) -> Frame:
        marked = dict(ctx, **{k: Markup(cls.MARK.format(i)) for i, k in enumerate(FRAME_SLOTS)})
        pieces = _MARKS.split(template.render(marked))
        return cls(tuple(pieces[0::2]), tuple(int(i) for i in pieces[1::2]))

    def fill(self, values: Sequence[object]) -> str:
        texts = [v if isinstance(v, Markup) else escape(cap_text(v)) for v in values]
        out = [self.parts[0]]
        for slot, part in zip(self.slots, self.parts[1:]):
            out += (texts[slot], part)
        return "".join(out)


_MARKS = re.compile("<\x00([0-9]+)>")


#: what stops one drill-down (``Pages.write_all``) and not the others: reported as its problem
DRAW_ERRORS = (ValueError, TypeError, IndexError, KeyError, OSError)
#: drill-downs ``Pages.write_all`` draws step by step together: 8 to 64 measured alike
DRAW_BATCH = 32


@dataclass(eq=False, slots=True)
class _Drawing:
    """One drill-down as ``Pages.write_all`` draws it: its input, then each step's result."""

    result: SeriesResult
    extras: SeriesExtras
    error: Exception | None = None
    slug: str = ""
    name: str = ""
    axis: Axis | None = None
    sc: Scale | None = None
    bands: dict = field(default_factory=dict)
    common: str = ""
    data: str = ""
    svg: str = ""
    head: Markup | None = None
    page: bytes = b""


class Pages:
    def __init__(self, info: SiteInfo, templates_dir: Path = DEFAULT_TEMPLATES):
        self.info = info
        self.env = make_env(templates_dir)
        self._series = self.env.get_template("series.html")
        self._cells: BuildCells | None = None
        self._axes: dict[bytes, Axis] = {}
        self._frames: dict[tuple, Frame] | None = \
            {} if plain_slots(self.env, FRAME_SLOTS, ("series.html", "base.html")) else None

    def _axis(self, result: SeriesResult) -> Axis:
        """A series' time labels and their JSON, its build numbers' JSON and its times in seconds,
        once per distinct axis: the series of a job share theirs (the JSON 70 us a page, a quarter of
        its graph data's encoding; the seconds 10 us)."""
        t = np.asarray(result.times).astype("datetime64[ns]", copy=False)
        b = np.asarray(result.builds, dtype=np.int64)
        k = len(t).to_bytes(8, "little") + t.tobytes() + b.tobytes()
        axis = self._axes.get(k)
        if axis is None:
            if len(self._axes) > 256:
                self._axes.clear()
            labels = graphs.time_labels(t)
            seconds = graphs.epoch_seconds(t)
            seconds.flags.writeable = False  # shared by the charts of the job's series
            axis = self._axes[k] = Axis(labels, Json(js_json(labels)), Json(js_json(b.tolist())), k, seconds)
        return axis

    def axis_seconds(self, result: SeriesResult) -> np.ndarray:
        """The series' times in seconds, the array its job's series share (``_axis``)."""
        return self._axis(result).seconds

    def _series_json(self, result: SeriesResult, axis: Axis | None = None, name: str | None = None) -> str:
        """``js_encode(graphs.series_data(...))`` without the bands (``graphs.series_json``): what the
        group's data file holds (``axis``, ``name``: the series' ``_axis`` and ``short_name``, when
        the caller has them)."""
        axis = axis if axis is not None else self._axis(result)
        if name is None:
            name = short_name(result.key, str(result.attrs.get("nic") or ""))
        return graphs.series_json(result, name, axis.x, axis.b)

    def render(self, name: str, root: str, page_title: str, scripts: list[str] | None = None, **ctx: object) -> str:
        return self.env.get_template(name).render(
            root=root,
            page_title=page_title,
            site_title=self.info.site_title,
            data_until=self.info.data_until,
            version=self.info.version,
            scripts=scripts or [],
            **ctx,
        )

    def group_json(self, result: SeriesResult) -> str:
        """The graph data of one series for its group's page, as JSON text: ``graphs.series_data``
        without the bands (a group graph draws none; they were 40 % of a group's data file)."""
        return self._series_json(result)

    def write_series(self, files: SiteFiles, result: SeriesResult, facts: BuildIndex, extras: SeriesExtras) -> str:
        """The drill-down of one series, s/<slug>.html (``write_all`` of one): returns its
        ``group_json``, or raises what stopped it."""
        done = self.write_all(files, [(result, extras)], facts)[0]
        if isinstance(done, Exception):
            raise done
        return done

    def write_all(self, files: SiteFiles, items: Sequence[tuple[SeriesResult, SeriesExtras]],
                  facts: BuildIndex) -> list[str | Exception]:
        """The drill-downs of ``items``, s/<slug>.html each: its static SVG and its graph data
        inline (one file per series: creating a file is most of a page's cost on some file
        systems). Returns, per item, its ``group_json`` (which its group's data file carries: the
        page's own data is that and its bands, formatted once), or the exception (one of
        ``DRAW_ERRORS``) that stopped it: the others are drawn all the same.

        Drawn ``DRAW_BATCH`` at a time, each step for all of them before the next (``_DRAW_STEPS``):
        a page drawn from start to end ran through so much code that the processor's caches kept
        little of it from one page to the next; step by step, each step's code stays warm.
        427 -> 349 us a daily drill-down at best over twenty alternations (docs/scaling.md,
        thirty-second round)."""
        out: list[str | Exception] = []
        for i in range(0, len(items), DRAW_BATCH):
            drawings = [_Drawing(result, extras) for result, extras in items[i:i + DRAW_BATCH]]
            live = drawings
            for step in _DRAW_STEPS:
                kept = []
                for d in live:
                    try:
                        step(self, d, files, facts)
                        kept.append(d)
                    except DRAW_ERRORS as exc:
                        d.error = exc
                live = kept
            out += [d.error if d.error is not None else d.common for d in drawings]
        return out

    def _draw_start(self, d: _Drawing, files: SiteFiles, facts: BuildIndex) -> None:
        r = d.result
        problem = misaligned(r)
        if problem:
            raise ValueError(problem)
        d.slug = r.key.slug()
        d.name = short_name(r.key, str(r.attrs.get("nic") or ""))
        d.axis = self._axis(r)
        d.sc = scale_for(r)

    def _draw_bands(self, d: _Drawing, files: SiteFiles, facts: BuildIndex) -> None:
        d.bands = graphs.drawn_bands(d.result)  # for the SVG: graph.js makes the rolling ones from the payload

    def _draw_data(self, d: _Drawing, files: SiteFiles, facts: BuildIndex) -> None:
        d.common = common = self._series_json(d.result, d.axis, d.name)
        drawn = graphs.bands_data(d.result)
        d.data = f'{common[:-1]},{js_encode(drawn)[1:]}' if drawn else common  # ``series_data`` with them

    def _draw_chart(self, d: _Drawing, files: SiteFiles, facts: BuildIndex) -> None:
        d.svg = svg.render_svg(graphs.detail_chart(d.result, f"{d.name} ({d.result.key.metric})", d.bands,
                                                   d.axis.seconds))

    def _draw_head(self, d: _Drawing, files: SiteFiles, facts: BuildIndex) -> None:
        # the SVG is built from escaped text only (xml_text); the data is JSON with <, > and &
        # escaped: nothing in it ends its <script> element
        d.head = series_head(d.result, d.slug, d.name, d.sc, d.data, d.svg, bool(d.bands))

    def _draw_page(self, d: _Drawing, files: SiteFiles, facts: BuildIndex) -> None:
        ctx = self._series_context(d.result, d.name, facts, d.extras, d.axis, d.sc, d.head)
        d.page = self._series_page(ctx).encode("utf-8")

    def _draw_write(self, d: _Drawing, files: SiteFiles, facts: BuildIndex) -> None:
        files.write_bytes(f"s/{d.slug}.html", d.page)
        d.page = b""

    def _series_page(self, ctx: dict) -> str:
        """``series.html`` of ``ctx``: from the frame of its other values when it has no rare section."""
        if self._frames is None or any(ctx[k] for k in RARE_SECTIONS):
            return self._series.render(ctx)
        shared = tuple((k, v if not isinstance(v, list) else tuple(v)) for k, v in sorted(ctx.items())
                       if k not in FRAME_SLOTS and k not in RARE_SECTIONS)
        frame = self._frames.get(shared)
        if frame is None:
            if len(self._frames) > 64:
                self._frames.clear()
            frame = self._frames[shared] = Frame.of(self._series, ctx)
        return frame.fill([ctx[k] for k in FRAME_SLOTS])

    def _series_context(self, r: SeriesResult, name: str, facts: BuildIndex, extras: SeriesExtras, axis: Axis,
                        sc: Scale, head: Markup) -> dict:
        key, links = r.key, self.info.links
        times = axis.labels
        anomalies = []
        builds = np.asarray(r.builds)

        def build_of(i: int) -> int | None:
            return int(builds[i]) if 0 <= i < len(builds) else None

        for a in r.changes:
            idx = a.index if 0 <= a.index < len(times) else None
            anomalies.append({
                "kind": a.kind,
                "label": build_label(key.job, a.first_bad_build),
                "url": links.build(key.job, a.first_bad_build),
                "time": times[idx] if idx is not None else "",
                "good_label": build_label(key.job, a.last_good_build) if a.last_good_build is not None else "",
                "good_url": links.build(key.job, a.last_good_build),
                "before_avg": a.before / sc.divisor,
                "before_stdev": a.before_stdev / sc.divisor,
                "after_avg": a.after / sc.divisor,
                "after_stdev": a.after_stdev / sc.divisor,
                "change": a.change * 100.0,
                "runs": a.runs,
                "detector": a.detector,
                "evidence": evidence.describe(a.evidence, sc, key.job, build_of),
            })
        if self._cells is None or self._cells.facts is not facts:
            self._cells = BuildCells(links, facts)
        gkey = group_key(r)
        return {
            "root": "../",
            "page_title": name,
            "site_title": self.info.site_title,
            "data_until": self.info.data_until,
            "version": self.info.version,
            "scripts": ["../static/plotly.min.js", f"../data/jobs/{safe_slug(key.job)}.js",
                        "../static/graph.js", "../static/pal.js"],
            "testbed": topo_of(r),
            "group_slug": safe_slug(*gkey),
            "group_label": group_label(gkey),
            "unit": sc.unit,
            "digits": sc.digits,
            "head": head,
            "anomalies": anomalies,
            "alerts": [alert_context(a) for a in extras.alerts],
            "failures": [{"label": build_label(key.job, b), "time": t, "message": m} for b, t, m in extras.failures],
            "runs": series_runs(r, axis, self._cells, sc),
        }


#: the steps of a drill-down, in order (``Pages.write_all``)
_DRAW_STEPS = (Pages._draw_start, Pages._draw_bands, Pages._draw_data, Pages._draw_chart, Pages._draw_head,
               Pages._draw_page, Pages._draw_write)


def _h(value: object) -> str:
    """What a template's ``{{ value }}`` writes: ``cap_text``, then escaped."""
    return escape(cap_text(value))


def _class(css: str) -> str:
    return f' class="{_h(css)}"' if css else ""


def series_head(r: SeriesResult, slug: str, name: str, sc: Scale, data: str, svg_text: str, has_bands: bool) -> Markup:
    """A drill-down's head, as one ready piece of HTML: title, key, verdict, the graph (its data
    and static SVG, both ready markup) and the compliance table, up to the anomalies' heading.

    Built here rather than in ``series.html``: written for every series of every run (a fifth of
    a page's cost as a Jinja block of 40 expressions). Every text is what the template's
    ``{{ }}`` made of it (``_h``); ``data`` and ``svg_text`` are markup already (``write_series``).
    Any change is coloured here: the page's digest does not cover the spec's thresholds."""
    key, comp, unit, digits = r.key, r.compliance, _h(sc.unit), sc.digits
    lower = " (lower is better)" if r.direction < 0 else ""
    bands = "; dashed: moving median; band: TMA &#177; 3&#183;TMSD" if has_bands else ""
    short_css = change_css(comp.short_term_change, r.direction, 0.0)
    long_css = change_css(comp.long_term_change, r.direction, 0.0)
    return Markup(
        f'\n<h1>{_h(name)}</h1>\n'
        f'<p class="key">{_h(key.test_id)} &#183; {_h(key.metric)} &#183; job {_h(key.job)} &#183; test set '
        f'{_h(r.test_set)} &#183; detector {_h(r.detector)}</p>\n'
        f'<p class="verdict {_h(r.verdict)}">Last run: <strong>{_h(r.verdict)}</strong>{lower}</p>\n'
        f'<figure class="graph">\n<div class="pal-graph" data-mode="detail" data-series="{_h(slug)}"></div>\n'
        f'<script type="application/json" class="pal-data" data-series="{_h(slug)}">{data}</script>\n'
        f'<div class="static-graph" role="img" aria-label="trend graph of {_h(name)}">{svg_text}</div>\n'
        f'<figcaption>Dots: samples; line: trend (group averages); open circles: first run of a new group (red '
        f'regression, green progression){bands}. Missing runs are gaps.</figcaption>\n</figure>\n'
        f'<h2>Trend compliance</h2>\n<table class="compliance">\n<tr><th>Trend [{unit}]</th><th>Runs [#]</th>'
        f'<th>Short-Term Change [%]</th><th>Long-Term Change [%]</th><th>Regressions [#]</th>'
        f'<th>Progressions [#]</th></tr>\n'
        # numbers: digits, a sign and a point (``fmt``: blank when unknown), nothing to escape
        f'<tr><td>{fmt(comp.trend / sc.divisor, digits)}</td><td>{int(comp.runs)}</td>'
        f'<td{_class(short_css)}>{fmt(comp.short_term_change, 2)}</td>'
        f'<td{_class(long_css)}>{fmt(comp.long_term_change, 2)}</td><td>{int(comp.regressions)}</td>'
        f'<td>{int(comp.progressions)}</td></tr>\n</table>\n<h2>Anomalies</h2>\n')


def series_runs(r: SeriesResult, axis: Axis, cells: BuildCells, sc: Scale) -> Markup:
    """A drill-down's last runs: heading, the link to its job's CSV, the table (``runs_table``)."""
    has_stdev = bool(np.isfinite(np.asarray(r.stdevs, dtype=float)).any())
    count, rows = runs_table(r, axis, cells, sc.divisor, sc.digits + 2, has_stdev)
    unit, job = _h(sc.unit), r.key.job
    stdev = f"<th>Stdev of trials [{unit}]</th>" if has_stdev else ""
    return Markup(
        f'<h2>Last {count} runs</h2>\n<p>All runs: <a href="../downloads/{_h(safe_slug(job))}.csv" download>CSV of '
        f'job {_h(job)}</a>.</p>\n<table class="runs">\n<tr><th>Build</th><th>Time [UTC]</th><th>Value [{unit}]</th>'
        f'{stdev}<th>Trend [{unit}]</th><th>DUT version</th><th>Testbed</th></tr>\n{rows}</table>\n')


class BuildCells:
    """Escaped HTML cells of one (job, build): its link, DUT version and testbed.

    The same few hundred builds appear in the runs table of thousands of series; their cells
    are escaped once per ``Pages`` instead of once per row.
    """

    def __init__(self, links: Links, facts: BuildIndex):
        self._links = links
        self.facts = facts
        self._cache: dict[tuple[str, int], tuple[str, str]] = {}
        self._times: dict[str | None, str] = {}
        self._recent: dict[tuple[str, bytes], list[tuple[str, str]]] = {}

    def get(self, job: str, build: int) -> tuple[str, str]:
        """(``<td>build link</td>``, ``<td>version</td><td>testbed</td>``)."""
        k = (job, build)
        cells = self._cache.get(k)
        if cells is None:
            label = escape(build_label(job, build))
            url = self._links.build(job, build)
            link = f'<a href="{escape(url)}">{label}</a>' if url else label
            f = self.facts.get(job, build)
            tail = f"<td>{escape(f.version)}</td><td>{escape(f.testbed)}</td>"
            cells = self._cache[k] = (f"<td>{link}</td>", tail)
        return cells

    def time(self, label: str | None) -> str:
        """``<td>label</td>``, escaped once per distinct label (a job's runs share theirs)."""
        cell = self._times.get(label)
        if cell is None:
            cell = self._times[label] = f"<td>{escape(label or '')}</td>"
        return cell

    def recent(self, job: str, axis: Axis, builds: np.ndarray) -> list[tuple[str, str]]:
        """The runs table's cells before and after the numbers (``get``'s, with the ``time``
        between) of the last ``RECENT_RUNS`` runs on ``axis`` (whose builds are ``builds``), newest
        first: once per axis, which the series of a job share (two lookups a row were a third of
        the table's cost)."""
        k = (job, axis.key)
        heads = self._recent.get(k)
        if heads is None:
            if len(self._recent) > 256:
                self._recent.clear()
            n = len(axis.labels)
            heads = []
            for i in range(n - 1, max(0, n - RECENT_RUNS) - 1, -1):
                build, tail = self.get(job, int(builds[i]))
                heads.append((build + self.time(axis.labels[i]), tail))
            self._recent[k] = heads
        return heads


def runs_table(r: SeriesResult, axis: Axis, cells: BuildCells, divisor: float,
               digits: int, has_stdev: bool) -> tuple[int, Markup]:
    """How many runs, and the rows of the last RECENT_RUNS runs, newest first, as one ready piece
    of HTML (a row a line).

    Built here rather than in the template: it is the hot part of thousands of pages (one piece,
    not a Jinja loop over 30 rows). Texts are escaped (build cells by ``BuildCells``; time
    labels are digits from numpy, escaped all the same, once per label by ``BuildCells``).
    """
    n = len(r.values)
    lo = max(0, n - RECENT_RUNS)
    sel = slice(n - 1, lo - 1 if lo > 0 else None, -1)
    k = n - lo
    # the shown columns' texts in one call (each call's fixed cost was more than its 30 numbers')
    columns = (r.values, r.trend, r.stdevs) if has_stdev else (r.values, r.trend)
    texts = fixed_texts(np.concatenate([np.asarray(c, dtype=float)[sel] for c in columns]) / divisor, digits)
    shown, trend = texts[:k], texts[k:2 * k]
    sds = [f"<td>{t}</td>" for t in texts[2 * k:]] if has_stdev else [""] * k
    rows = [f"<tr{MISSING_CLASS}>{head}<td>missing</td>{sd}<td>{t}</td>{tail}</tr>\n" if not value else
            f"<tr>{head}<td>{value}</td>{sd}<td>{t}</td>{tail}</tr>\n"
            for (head, tail), value, sd, t in zip(cells.recent(r.key.job, axis, np.asarray(r.builds)), shown, sds, trend)]
    return len(rows), Markup("".join(rows))


@dataclass(frozen=True)
class GroupGraph:
    """One graph of a group page: its title, static SVG file and height, and its series (slug,
    short name, verdict), in trace order."""

    title: str
    svg: str
    height: int
    members: list[tuple[str, str, str]]


def group_sections(graphs: Sequence[GroupGraph], root: str = "../") -> Markup:
    """A group page's graphs, a ``<section>`` each: heading, the graph's element (its series'
    slugs, which name their data in the group's data file), the static SVG and the list of its
    series with their verdicts, as one ready piece of HTML.

    Built here rather than in ``group.html``, whose loop over every series (a year's groups list
    800) cost 4 us a member more, and whose ``finalize`` cut the slug list past 500 characters
    like any long text it shows. Each text is what the template's ``{{ }}`` made of it (``_h``)."""
    out = []
    top = _h(root)
    for g in graphs:
        title = _h(g.title)
        slugs = " ".join(str(escape(slug)) for slug, _, _ in g.members)
        items = "".join(
            f'<li><a href="{top}s/{_h(slug)}.html">{_h(name)}</a></li>' if verdict == "normal" else
            f'<li><a href="{top}s/{_h(slug)}.html">{_h(name)}</a> <span class="{_h(verdict)}">{_h(verdict)}</span></li>'
            for slug, name, verdict in g.members)
        out.append(
            f'\n<section class="group-graph">\n<h2>{title}</h2>\n<figure class="graph">\n'
            f'<div class="pal-graph" data-mode="group" data-title="{title}" data-series="{slugs}"></div>\n'
            f'<img src="{top}svg/{_h(g.svg)}" alt="trend graph: {title}" width="760" height="{_h(g.height)}" '
            f'loading="lazy">\n</figure>\n<ul class="members">{items}</ul>\n</section>\n')
    return Markup("".join(out))


def dash_rows(table: DashTable) -> Markup:
    """The rows of a dashboard table of the index, a line each, as one ready piece of HTML.

    Built here rather than in ``index.html``: the index lists every series (6,000 rows at CSIT
    scale, 36,000 in a year's run). Each text is what the template's ``{{ }}`` made of it:
    ``cap_text``, then escaped; numbers (``fmt``'s digits, counts) need neither.
    """
    digits = 2 if table.unit != "µs" else 1

    def text(value: object) -> str:
        return str(escape(cap_text(value)))

    def klass(css: str) -> str:
        return f' class="{text(css)}"' if css else ""

    out = []
    for r in table.rows:
        out.append(
            f'<tr{klass(r.css)} data-nic="{text(r.nic)}" data-fs="{text(r.frame_size)}" data-cores="{text(r.cores)}">'
            f'<td><a href="s/{text(r.slug)}.html">{text(r.name)}</a></td><td>{fmt(r.trend, digits)}</td>'
            f'<td>{int(r.runs)}</td><td data-sort="{fmt(r.short_term * r.direction, 4)}"{klass(r.short_css)}>'
            f'{fmt(r.short_term, 2)}</td><td data-sort="{fmt(r.badness, 4)}"{klass(r.long_css)}>'
            f'{fmt(r.long_term, 2)}</td><td>{int(r.regressions)}</td><td>{int(r.progressions)}</td></tr>\n')
    return Markup("".join(out))


def series_key_text(key: SeriesKey) -> str:
    return f"{key.job}/{key.test_id}/{key.metric}"
