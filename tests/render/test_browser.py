"""The site in a real headless Chromium: interactive over HTTP and file://, readable under Jenkins' CSP."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pal.render.pages import DEFAULT_TEMPLATES

from tests.render.conftest import BISECT, LATENCY_SNIPPET
from tests.render.serve import CHROMIUM, CHROMIUM_ARGS, JENKINS_CSP, serve

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} missing: run `make browser` (Debian chromium) to enable the browser tests",
                allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("dialog", lambda d: (pg.errors.append(f"dialog: {d.message}"), d.dismiss()))
    yield pg
    ctx.close()


GRAPH = """div => {
  const t = (m) => div.data.filter(d => d.meta === m);
  const pts = (tr) => tr.y.filter(v => v !== null).length;
  return {
    samples: pts(t("samples")[0]), nullSamples: t("samples")[0].y.filter(v => v === null).length,
    trendNulls: t("trend")[0].y.map((v, i) => v === null ? i : -1).filter(i => i >= 0),
    regressions: t("anomaly-regression").map(tr => tr.y).flat(),
    progressions: t("anomaly-progression").map(tr => tr.y).flat(),
    bands: t("band").length, text: t("samples")[0].text,
    buttons: div.layout.xaxis.rangeselector.buttons.map(b => b.label), ytitle: div.layout.yaxis.title.text,
    imgHidden: div.parentNode.querySelector("div.static-graph").hidden,
  };
}"""


def test_dashboard_and_drill_down_are_interactive(site, page, tmp_path):
    root, results, _ = site
    with serve(root) as base:
        page.goto(base + "index.html")
        assert page.locator("table.dash tbody tr").count() == 5
        assert page.locator("form#filter").is_visible()
        page.fill("form#filter input[name=q]", "l2bd")
        assert page.locator("table.dash tbody tr:visible").count() == 1
        page.select_option("form#filter select[name=nic]", "10ge2p1x710")
        assert page.locator("table.dash tbody tr:visible").count() == 0
        page.fill("form#filter input[name=q]", "")
        assert page.locator("table.dash tbody tr:visible").count() == 1
        page.select_option("form#filter select[name=nic]", "")
        # sorting: the MRR 1C table holds the regression (now 17 Mpps) above the flat 12 Mpps test
        first = page.locator("table.dash").first
        trends = lambda: [float(t) for t in first.locator("tbody tr td:nth-child(2)").all_inner_texts()]
        assert [round(t) for t in trends()] == [17, 12]
        first.locator("th", has_text="Trend").click()
        assert [round(t) for t in trends()] == [12, 17]
        first.locator("th", has_text="Trend").click()
        assert [round(t) for t in trends()] == [17, 12]
        page.screenshot(path=str(tmp_path / "index.png"), full_page=True)

        page.goto(base + f"s/{results[0].key.slug()}.html")
        page.wait_for_selector("div.pal-graph[data-drawn='1']")
        g = page.eval_on_selector("div.pal-graph", GRAPH)
        assert g["samples"] == 40 and g["nullSamples"] == 0
        assert g["regressions"] == [pytest.approx(results[0].groups[1].avg / 1e6, abs=1e-6)]
        assert g["progressions"] == [] and g["imgHidden"] is True
        assert g["buttons"] == ["2 weeks", "1 month", "3 months", "all"]
        # hover of the first run of the new level: average, stdev of trials, version, job build, testbed
        hover = g["text"][30]
        for part in ("date: 2022-01-31 03:00", "average: ", "stdev: 0.100 Mpps", "DUT version: 22.02-rc0~130",
                     "job build: mrr-daily-build-130", "testbed: tb-0"):
            assert part in hover
        page.screenshot(path=str(tmp_path / "drill-down.png"), full_page=True)

        page.goto(base + f"s/{results[1].key.slug()}.html")
        page.wait_for_selector("div.pal-graph[data-drawn='1']")
        g = page.eval_on_selector("div.pal-graph", GRAPH)
        assert (g["samples"], g["nullSamples"], g["trendNulls"]) == (37, 3, [12, 13, 25])  # gaps, never 0

        page.goto(base + f"s/{results[3].key.slug()}.html")
        page.wait_for_selector("div.pal-graph[data-drawn='1']")
        assert page.eval_on_selector("div.pal-graph", GRAPH)["bands"] == 2

        page.goto(base + f"s/{results[4].key.slug()}.html")
        page.wait_for_selector("div.pal-graph[data-drawn='1']")
        assert page.eval_on_selector("div.pal-graph", GRAPH)["ytitle"] == "Latency [µs] (lower is better)"
    assert page.errors == []


BAND_TRACES = """div => Object.fromEntries(div.data.filter(d => ["band", "tma", "mm"].includes(d.meta))
  .map(d => [d.name === "TMA - 3·TMSD" ? "tma_lo" : d.name === "TMA ± 3·TMSD" ? "tma_hi" : d.meta, d.y]))"""


def _band_array(ys) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in ys], dtype=np.float64)


def test_drill_down_draws_the_rolling_bands_python_draws_and_the_detectors_own(site, page):
    """The page carries the rolling bands' parameters, not the bands: graph.js makes them from the
    payload's values, and Plotly draws what ``drawn_bands`` (the static SVG's) has, in display
    units (the values are written to 1e-6 Mpps, hence the tolerance); the NDR series' own TMA
    bands are drawn as the page carries them."""
    from pal.render.graphs import DRAWN_BANDS, drawn_bands

    root, results, _ = site
    with serve(root) as base:
        for r in (results[0], results[1], results[3]):
            page.goto(base + f"s/{r.key.slug()}.html")
            page.wait_for_selector("div.pal-graph[data-drawn='1']")
            drawn = page.eval_on_selector("div.pal-graph", BAND_TRACES)
            assert sorted(drawn) == sorted(DRAWN_BANDS)
            expected = drawn_bands(r)
            for k in DRAWN_BANDS:
                got, want = _band_array(drawn[k]), expected[k] / 1e6
                assert np.array_equal(np.isnan(got), np.isnan(want)), k
                np.testing.assert_allclose(got, want, rtol=0, atol=2e-6, err_msg=k)
            if r is results[3]:  # TMA's own bands: 15 Mpps, 14.9 and 15.1 around it
                assert drawn["tma"] == [15.0] * 10 and drawn["tma_lo"] == [14.9] * 10
            else:
                assert np.isnan(_band_array(drawn["tma"])[:5]).all() and np.isfinite(_band_array(drawn["tma"])[5])
    assert page.errors == []


#: the rolling bands of several series, by graph.js (loaded without Plotly: it only defines them)
ROLLING = """([ys, size, minHistory, sigma]) => ys.map(y => window.PAL.rollingBands(y, size, minHistory, sigma))"""


def _rolling_cases() -> list[list[float | None]]:
    """Real-looking series in display units: CSIT MRR noise and level steps, gaps, short histories,
    outliers (one and several in a window), constant stretches, a series with no value."""
    rng = np.random.default_rng(2024)
    cases = []
    mrr = np.round(rng.normal(2.75, 0.03, 170), 6)
    mrr[100:] -= 0.4  # a regression
    cases.append(mrr.tolist())
    gaps = np.round(rng.normal(12.0, 0.05, 120), 6).tolist()
    for i in (0, 3, 4, 17, 18, 19, 20, 60, 119):
        gaps[i] = None
    cases.append(gaps)
    spikes = np.round(rng.normal(8.0, 0.04, 90), 6)
    spikes[[10, 30, 31, 55]] = [0.5, 20.0, 19.5, 0.01]  # outliers, two in one window
    cases.append(spikes.tolist())
    cases.append([3.5] * 40)  # constant: IQR 0, every value kept, TMSD 0
    cases.append([3.5] * 20 + [3.6] + [3.5] * 20)  # one value off a constant window: an outlier
    cases.append([21.0] * 6 + [30.0] * 8 + [None] * 3 + [25.5] * 10)  # latency in µs, levels and a gap
    cases.append(np.round(rng.normal(1.2, 0.01, 4), 6).tolist())  # shorter than min_history: no band
    cases.append(np.round(rng.normal(1.2, 0.01, 9), 6).tolist())  # under the window: prefix histories
    cases.append([None, None, 5.0, None, 5.1, 4.9, 5.2, 5.05, 4.95, None, 5.3])
    cases.append([None] * 12)
    cases.append([])
    cases.append(np.round(rng.lognormal(0.0, 1.0, 200) * 1e3, 6).tolist())  # heavy tail, large values
    cases.append(np.round(rng.normal(0.0, 1.0, 60), 6).tolist())  # around zero, negative values
    return cases


def _check_rolling(got: dict, y: list, window: int, min_history: int, sigma: float) -> None:
    from pal.analysis.bands import rolling_bands

    want = rolling_bands(_band_array(y), window=window, min_history=min_history, sigma=sigma)
    for k in ("mm", "tma", "tma_lo", "tma_hi", "tmsd"):
        g = _band_array(got[k])
        assert len(g) == len(y) and np.array_equal(np.isnan(g), np.isnan(want[k])), (k, y)
        np.testing.assert_allclose(g, want[k], rtol=1e-9, atol=1e-12, err_msg=k)


def test_graph_js_makes_the_rolling_bands_of_python(browser):
    """graph.js's rolling bands equal ``pal.analysis.bands.rolling_bands`` (the bands the static
    SVG draws) on the same display values, to 1e-9 relative: full windows, short histories,
    gaps, outliers and constant values; with the drawn parameters and with others."""
    from pal.render.graphs import rolling_params

    js = (DEFAULT_TEMPLATES / "static" / "graph.js").read_text("utf-8")
    ctx = browser.new_context()
    pg = ctx.new_page()
    pg.set_content("<!doctype html><title>bands</title>")
    pg.add_script_tag(content=js)
    cases = _rolling_cases()
    p = rolling_params()
    assert (p["window"], p["min_history"], p["sigma"]) == (14, 5, 3.0)
    for window, min_history, sigma in ((p["window"], p["min_history"], p["sigma"]), (5, 2, 2.0), (20, 25, 3.0)):
        got = pg.evaluate(ROLLING, [cases, window, min_history, sigma])
        for g, y in zip(got, cases):
            _check_rolling(g, y, window, min_history, sigma)
    # by hand: 1..5 then an outlier; history 5 (1..5): MM 3, TMA 3, TMSD sqrt(10/4); history 6 adds
    # 100, beyond Q3 + 1.5·IQR = 4.75 + 3.75: MM 3.5, TMA and TMSD still those of 1..5
    hand = pg.evaluate(ROLLING, [[[1, 2, 3, 4, 5, 100, 6]], 14, 5, 3])[0]
    sd = math.sqrt(2.5)
    assert hand["mm"] == [None] * 5 + [3, 3.5] and hand["tma"] == [None] * 5 + [3, 3]
    assert hand["tmsd"][5:] == [pytest.approx(sd, rel=1e-15)] * 2
    assert hand["tma_hi"][6] == pytest.approx(3 + 3 * sd, rel=1e-15)
    ctx.close()


def test_group_page_draws_one_trace_per_test(site, page):
    root, results, _ = site
    group = next(p for p in (root / "g").iterdir() if "25ge2p1xxv710-ip4" in p.name)
    with serve(root) as base:
        page.goto(base + f"g/{group.name}")
        page.wait_for_selector("div.pal-graph[data-drawn='1']")
        n = page.locator("div.pal-graph").count()
        page.wait_for_function(f"document.querySelectorAll(\"div.pal-graph[data-drawn='1']\").length === {n}")
        names = page.eval_on_selector_all(
            "div.pal-graph", "ds => ds.map(d => d.data.filter(t => t.meta === 'samples').length)")
    assert names == [1, 1, 1]  # ip4 on xxv710: MRR, NDR, latency graphs with one test each
    assert page.errors == []


def test_site_works_opened_from_disk(site, page):
    root, results, _ = site
    page.goto((root / "s" / f"{results[0].key.slug()}.html").as_uri())
    page.wait_for_selector("div.pal-graph[data-drawn='1']")
    assert page.eval_on_selector("div.pal-graph", GRAPH)["samples"] == 40
    assert page.errors == []


def test_pages_are_readable_under_jenkins_csp_without_any_script(site, page, tmp_path):
    root, results, _ = site
    with serve(root, csp=JENKINS_CSP) as base:
        for rel, rows in (("index.html", 5), (f"s/{results[0].key.slug()}.html", None)):
            page.goto(base + rel)
            page.wait_for_load_state("load")
            state = page.evaluate("""() => ({
                js: document.documentElement.getAttribute("data-pal-js"), plotly: typeof window.Plotly,
                pal: typeof window.PAL, drawn: document.querySelectorAll("[data-drawn]").length,
                imgs: Array.from(document.images).map(i => [i.complete, i.naturalWidth]),
                statics: Array.from(document.querySelectorAll("div.static-graph svg")).map(
                    s => [s.width.baseVal.value, s.querySelectorAll("path.samples").length]),
                headerBg: getComputedStyle(document.querySelector("header.top")).backgroundColor,
            })""")
            assert (state["js"], state["plotly"], state["pal"], state["drawn"]) == (None, "undefined", "undefined", 0)
            assert state["headerBg"] == "rgb(36, 52, 71)"  # the external stylesheet applies
            if rows is not None:
                assert page.locator("table.dash tbody tr").count() == rows
                assert page.locator("table.dash").first.is_visible()
                assert not page.locator("form#filter").is_visible()  # controls need scripts: hidden
            else:
                assert state["imgs"] == [] and state["statics"] == [[760, 1]]  # the static SVG graph, inline
                assert page.locator("div.static-graph svg").is_visible() and page.locator("table.anomalies").is_visible()
            page.screenshot(path=str(tmp_path / f"csp-{rel.replace('/', '_')}.png"), full_page=True)


def test_evil_test_name_is_shown_as_text_not_run(site, page):
    root, results, _ = site
    evil = results[2]
    group = next(p for p in (root / "g").iterdir() if "10ge2p1x710-ip4" in p.name)
    with serve(root) as base:
        for rel in ("index.html", f"s/{evil.key.slug()}.html", f"g/{group.name}"):
            page.goto(base + rel)
            page.wait_for_load_state("load")
        page.wait_for_selector("div.pal-graph[data-drawn='1']")
        legend = page.locator("div.pal-graph .legendtext").all_text_contents()
        assert any("<script>alert(1)</script>" in t for t in legend)
        assert "<script>alert(1)</script>" in page.locator("ul.members").inner_text()
    assert page.errors == []  # no alert() dialog, no script error


OVERLAP = """([title, table]) => {
  const bar = document.querySelector("form#filter").getBoundingClientRect();
  const h = document.getElementById(title).getBoundingClientRect();
  const th = document.querySelector(table).tHead.rows[0].cells[0];
  const t = th.getBoundingClientRect();
  const hit = (r) => document.elementFromPoint(r.left + 5, r.top + r.height / 2);
  return {barBottom: bar.bottom, titleTop: h.top, titleBottom: h.bottom, titleHit: hit(h) === document.getElementById(title),
          thTop: t.top, thBottom: t.bottom, thHit: th.contains(hit(t)), viewport: window.innerHeight};
}"""


@pytest.mark.parametrize("width", [1280, 620])  # 620 px: the filter bar wraps onto several lines
def test_sticky_bar_never_hides_titles_or_table_headers(long_site, browser, width):
    root, _ = long_site
    ctx = browser.new_context(viewport={"width": width, "height": 700})
    page = ctx.new_page()
    with serve(root) as base:
        page.goto(base + "index.html")
        page.locator("nav.toc a", has_text="NDR 1C").click()  # the jump a reader makes
        page.wait_for_timeout(100)
        s = page.evaluate(OVERLAP, ["t-2n-icx-NDR-1C", "table.dash"])
        assert s["barBottom"] > 30  # the bar is shown and sticks at the top
        assert s["barBottom"] <= s["titleTop"] < s["titleBottom"] <= s["viewport"] and s["titleHit"], s
        # deep inside the long MRR table: its header sticks right below the bar, whole and on top
        page.evaluate("() => document.querySelector('table.dash').tBodies[0].rows[40].scrollIntoView()")
        page.wait_for_timeout(100)
        s = page.evaluate(OVERLAP, ["t-2n-icx-NDR-1C", "table.dash"])
        assert abs(s["thTop"] - s["barBottom"]) <= 1 and s["thHit"], s
        # a fresh load of the anchor (the browser's own jump) lands below the bar too
        page.goto(base + "index.html#t-2n-icx-Latency-1C")
        page.wait_for_load_state("load")
        page.wait_for_timeout(100)
        s = page.evaluate(OVERLAP, ["t-2n-icx-Latency-1C", "table.dash"])
        assert s["barBottom"] <= s["titleTop"] and s["titleHit"], s
    ctx.close()


def test_latency_rise_is_listed_first_and_coloured(long_site, page):
    root, _ = long_site
    with serve(root) as base:
        page.goto(base + "index.html")
        table = page.locator("h3#t-2n-icx-Latency-1C + table.dash")
        names = [n.split("-")[-2] for n in table.locator("tbody td:first-child").all_inner_texts()]
        assert names == ["rise", "small", "flat0", "flat1"]  # lower is better: the +23.75 % rise is worst
        first = table.locator("tbody tr").first.locator("td").nth(4)
        assert first.inner_text() == "23.75"
        assert first.evaluate("td => [td.className, getComputedStyle(td).backgroundColor]") == [
            "worse", "rgb(255, 233, 214)"]
        assert table.locator("tbody tr").nth(2).locator("td").nth(4).get_attribute("class") is None
        assert page.locator("#shown").inner_text() == "72 of 72 series shown"  # it counts series, not tests
        page.fill("form#filter input[name=q]", "flat")
        assert page.locator("#shown").inner_text() == "2 of 72 series shown"
    assert page.errors == []


def test_copy_buttons_copy_the_ack_snippet_and_bisect_trigger(long_site, browser):
    root, results = long_site
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    with serve(root) as base:
        ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=base.rstrip("/"))
        page = ctx.new_page()
        for rel in ("index.html", f"s/{results[-3].key.slug()}.html"):
            page.goto(base + rel)
            buttons = page.locator("table.alerts button.copy")
            assert buttons.count() == 2 and buttons.first.is_visible()
            buttons.nth(0).click()
            page.wait_for_function("() => document.querySelector('table.alerts button.copy').textContent === 'Copied'")
            assert page.evaluate("() => navigator.clipboard.readText()") == BISECT
            buttons.nth(1).click()
            page.wait_for_timeout(100)
            assert page.evaluate("() => navigator.clipboard.readText()") == LATENCY_SNIPPET  # two lines of YAML
    ctx.close()


def test_alert_cells_read_as_text_under_jenkins_csp(long_site, page):
    root, results = long_site
    with serve(root, csp=JENKINS_CSP) as base:
        for rel in ("index.html", f"s/{results[-3].key.slug()}.html"):
            page.goto(base + rel)
            page.wait_for_load_state("load")
            assert not page.locator("button.copy").first.is_visible()  # no script: no button that does nothing
            pres = page.locator("table.alerts pre.copyable").all_inner_texts()
            assert pres == [BISECT, LATENCY_SNIPPET]
            assert "code" in page.locator("table.alerts span.suspect").inner_text()


def test_sorting_a_change_column_puts_the_worst_first_in_latency_and_throughput(long_site, page):
    root, _ = long_site
    with serve(root) as base:
        page.goto(base + "index.html")
        lat = page.locator("h3#t-2n-icx-Latency-1C + table.dash")
        lat.locator("th", has_text="Long-Term Change").click()
        assert lat.locator("tbody td:nth-child(5)").all_inner_texts() == ["23.75", "5.00", "0.00", "0.00"]
        lat.locator("th", has_text="Long-Term Change").click()
        assert lat.locator("tbody td:nth-child(5)").all_inner_texts() == ["0.00", "0.00", "5.00", "23.75"]
    assert page.errors == []
