"""``pal.render.pages``: a drill-down written from its job's ``Frame`` is the page Jinja renders."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import jinja2
import numpy as np

from pal.render.buildinfo import BuildIndex
from pal.render.files import SiteFiles
from pal.render.pages import FRAME_SLOTS, GroupGraph, Pages, SeriesExtras, SiteInfo, Links, group_sections, plain_slots
from tests.render.factory import builds_for, make_alert, make_result, samples_for

EVIL = "<script>alert('x')</script>&\""


def _series() -> list:
    rng = np.random.default_rng(11)
    v = 12e6 + rng.normal(0, 2e5, 50)
    flat = make_result(v, test_id="tests.vpp.perf.ip4.64b-1t1c-flat-mrr")
    gappy = v.copy()
    gappy[[3, 4, 40]] = np.nan
    return [
        flat,
        make_result(gappy, test_id="tests.vpp.perf.ip4.64b-1t1c-gappy-mrr", stdevs=np.where(np.isnan(gappy), np.nan, 1e5)),
        make_result(v[:20], test_id="tests.x." + EVIL + "y" * 600, attrs={"nic": EVIL, "topo_arch": EVIL}),
        make_result([11.5, 12.25, 10.0, 10.5], metric="latency_pdr50_d2"),  # lower is better, µs
        dataclasses.replace(flat, key=dataclasses.replace(flat.key, test_id="tests.c.coloured"), compliance=dataclasses.replace(flat.compliance, short_term_change=-7.5,
                                                                 long_term_change=12.25)),
        make_result(np.concatenate([v[:25], v[25:] - 3e6]), (25,), test_id="tests.d.step"),  # an anomaly: a rare section
        make_result(v, job="csit-vpp-perf-mrr-daily-master-3n-alt"),  # another job: another frame
    ]


def _site(tmp: Path, frames: bool) -> dict[str, bytes]:
    results = _series()
    pages = Pages(SiteInfo("site " + EVIL, "2026-11-21 08:15", Links("{jenkins}/job/{job}/{build}", "https://j")))
    if not frames:
        pages._frames = None
    (tmp / "s").mkdir(parents=True)
    facts = BuildIndex(builds_for(results), samples_for(results))
    for i, r in enumerate(results):
        alerts = (make_alert("a1", r.key, "regression", ack_snippet=EVIL),) if i == 1 else ()
        failures = ((int(r.builds[0]), "2022-01-01 03:00", EVIL),) if i == 3 else ()
        pages.write_series(SiteFiles(tmp), r, facts, SeriesExtras(alerts, failures))
    # one frame per job (the µs series has a failure: a rare section, rendered whole)
    assert frames == (pages._frames is not None and len(pages._frames) == 2)
    return {p.name: p.read_bytes() for p in sorted((tmp / "s").iterdir())}


def test_a_page_from_its_frame_is_the_page_jinja_renders(tmp_path):
    framed, rendered = _site(tmp_path / "a", True), _site(tmp_path / "b", False)
    assert framed == rendered and len(framed) == 7
    evil = next(t for t in framed.values() if b"yyyy" in t).decode()
    assert "<script>alert" not in evil and "&lt;script&gt;alert(&#39;x&#39;)" in evil
    assert "\u2026 (" in evil  # a test name past MAX_SHOWN is cut in the title, as Jinja's finalize does


def test_the_shipped_templates_write_the_frame_slots_plainly():
    env = Pages(SiteInfo("t", "2026")).env
    assert plain_slots(env, FRAME_SLOTS, ("series.html", "base.html"))


def test_a_slot_that_a_template_tests_or_filters_is_not_plain():
    env = jinja2.Environment(loader=jinja2.DictLoader({
        "plain.html": "<h1>{{ head }}</h1>{% if other %}{{ other|upper }}{% endif %}",
        "tested.html": "{% if testbed %}<p>{{ testbed }}</p>{% endif %}",
        "filtered.html": "<p>{{ runs | upper }}</p>",
        "attr.html": "<p>{{ head.x }}</p>",
    }))
    assert plain_slots(env, FRAME_SLOTS, ("plain.html",))
    for name in ("tested.html", "filtered.html", "attr.html"):
        assert not plain_slots(env, FRAME_SLOTS, (name,)), name
    assert not plain_slots(env, FRAME_SLOTS, ("plain.html", "tested.html"))


def test_runs_table_columns_by_hand_with_stdevs_missing_values_and_a_short_series():
    """The last runs' value, stdev and trend cells (written by one call for the three columns):
    each "%.{digits}f" of its own column, a missing value a "missing" row, a missing stdev or trend
    a blank cell; newest first, fewer than RECENT_RUNS rows for a short series."""
    from pal.render.pages import BuildCells, runs_table

    values = np.array([2.0e6, np.nan, 2.25e6, 2.5e6, 3.0e6])
    stdevs = np.array([1.0e4, 2.0e4, np.nan, 0.0, 5.5e4])
    r = make_result(values, stdevs=stdevs)
    r.trend[3] = np.nan
    facts = BuildIndex(builds_for([r]), samples_for([r]))
    cells = BuildCells(Links("{jenkins}/job/{job}/{build}", "https://j"), facts)
    pages = Pages(SiteInfo("t", "2026-11-21 08:15", Links("{jenkins}/job/{job}/{build}", "https://j")))
    count, rows = runs_table(r, pages._axis(r), cells, 1e6, 3, True)
    assert count == 5
    cols = re.findall(r"<tr( class=\"missing\")?>.*?</td><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>",
                      str(rows))
    trend = ["" if np.isnan(t) else f"{t / 1e6:.3f}" for t in r.trend[::-1]]
    assert [c[1:] for c in cols] == [("3.000", "0.055", trend[0]), ("2.500", "0.000", ""),
                                     ("2.250", "", trend[2]), ("missing", "0.020", trend[3]),
                                     ("2.000", "0.010", trend[4])]
    assert [bool(c[0]) for c in cols] == [False, False, False, True, False]


def test_a_group_graph_section_by_hand_with_its_texts_escaped():
    g = GroupGraph("2n-icx x710 <ip4>", "g-a-0.svg", 348, [("s-1", "64b-1c", "normal"),
                                                         ("s<2>", "a&b", "regression")])
    assert group_sections([g]) == (
        '\n<section class="group-graph">\n<h2>2n-icx x710 &lt;ip4&gt;</h2>\n<figure class="graph">\n'
        '<div class="pal-graph" data-mode="group" data-title="2n-icx x710 &lt;ip4&gt;" data-series="s-1 s&lt;2&gt;">'
        '</div>\n<img src="../svg/g-a-0.svg" alt="trend graph: 2n-icx x710 &lt;ip4&gt;" width="760" height="348" '
        'loading="lazy">\n</figure>\n<ul class="members"><li><a href="../s/s-1.html">64b-1c</a></li><li>'
        '<a href="../s/s&lt;2&gt;.html">a&amp;b</a> <span class="regression">regression</span></li></ul>\n'
        '</section>\n')
    assert group_sections([]) == ""


def test_a_group_graph_names_every_series_however_long_their_slugs():
    """The template cut the slug list past 500 characters (as any long text it shows): graph.js
    then drew the first nine of ten series of a graph of long test names."""
    slugs = [f"64b-2t1c-avf-ethip4ipsec{i:04d}tnlsw-ip4base-int-aes256gcm-mrr-mrr-{i:010x}" for i in range(10)]
    html = group_sections([GroupGraph("t", "g.svg", 100, [(s, s[:20], "normal") for s in slugs])])
    assert re.search(r'data-series="([^"]*)"', html).group(1).split(" ") == slugs
    assert sum(len(s) + 1 for s in slugs) > 500


def test_drawing_together_writes_what_drawing_one_by_one_writes_and_a_failure_stops_only_its_page(tmp_path,
                                                                                                  monkeypatch):
    from pal.render import graphs, pages as pages_mod

    results = _series()
    facts = BuildIndex(builds_for(results), samples_for(results))
    info = SiteInfo("t", "2026-11-21 08:15")
    items = [(r, SeriesExtras()) for r in results]
    (tmp_path / "one" / "s").mkdir(parents=True)
    single = [Pages(info).write_series(SiteFiles(tmp_path / "one"), r, facts, e) for r, e in items]
    bad = results[4].key
    real = graphs.drawn_bands

    def drawn_bands(result):
        if result.key == bad:
            raise KeyError("tma")
        return real(result)

    monkeypatch.setattr(graphs, "drawn_bands", drawn_bands)
    monkeypatch.setattr(pages_mod, "DRAW_BATCH", 3)  # a failure inside the second of three batches
    (tmp_path / "all" / "s").mkdir(parents=True)
    done = Pages(info).write_all(SiteFiles(tmp_path / "all"), items, facts)
    assert isinstance(done[4], KeyError) and done[:4] + done[5:] == single[:4] + single[5:]
    one = {p.name: p.read_bytes() for p in (tmp_path / "one" / "s").iterdir()}
    together = {p.name: p.read_bytes() for p in (tmp_path / "all" / "s").iterdir()}
    assert together == {k: v for k, v in one.items() if k != f"{bad.slug()}.html"} and len(together) == 6
