import math

import numpy as np

from pal.render import dashboard
from pal.render.dashboard import DashRow
from pal.render.naming import build_label, job_label, short_name
from pal.report import RunReport
from tests.render.factory import make_result, samples_for

ICX_MRR = "csit-vpp-perf-mrr-daily-master-2n-icx"
ICX_NDR = "csit-vpp-perf-ndrpdr-weekly-master-2n-icx"


def _row(name, reg=0, prog=0, ltc=0.0):
    return DashRow(name, "s", "", "", "", 1.0, 1, 0.0, ltc, reg, prog)


def test_rows_follow_csit_order():
    rows = [_row("e", ltc=-1.0), _row("a", prog=1), _row("d", ltc=math.nan), _row("b", reg=1, ltc=5.0),
            _row("c", reg=2), _row("f", ltc=-1.0), _row("g", reg=1, ltc=-3.0)]
    order = [r.name for r in sorted(rows, key=dashboard.row_sort_key)]
    # regressions desc, progressions desc, long-term change asc (unknown last), then name
    assert order == ["c", "g", "b", "a", "e", "f", "d"]


def test_tables_per_testbed_type_and_cores_with_display_units():
    mrr1 = make_result([20e6] * 12, test_id="t.v.p.ip4.s.64b-1c-a-mrr")
    mrr2 = make_result([10e6] * 6 + [12e6] * 6, (6,), test_id="t.v.p.ip4.s.64b-2c-b-mrr", attrs={"cores": "2C"})
    ndr = make_result([15e6] * 5, job=ICX_NDR, metric="ndr", test_id="t.v.p.ip4.s.64b-1c-a-ndrpdr")
    lat = make_result([30.0] * 5, job=ICX_NDR, metric="latency_pdr50_d1", test_id="t.v.p.ip4.s.64b-1c-a-ndrpdr")
    alt = make_result([5e6] * 5, job="csit-vpp-perf-mrr-daily-master-3n-alt", test_id="t.v.p.ip4.s.64b-1c-a-mrr")
    tables = dashboard.dashboard_tables([lat, ndr, mrr2, alt, mrr1])
    assert [(t.title, t.unit, len(t.rows)) for t in tables] == [
        ("2n-icx MRR 1C", "Mpps", 1), ("2n-icx MRR 2C", "Mpps", 1), ("2n-icx NDR 1C", "Mpps", 1),
        ("2n-icx Latency 1C", "µs", 1), ("3n-alt MRR 1C", "Mpps", 1),
    ]
    r = tables[1].rows[0]
    assert r.trend == 12.0 and r.runs == 6 and r.progressions == 1 and r.css == "prog"
    # trend[last] 12 vs max(trend before the last 10 runs) 10 -> +20 %
    assert r.long_term == 20.0
    assert tables[3].rows[0].trend == 30.0
    assert tables[3].rows[0].name == "25ge2p1xxv710-64b-1c-a-ndrpdr [d1]"


def test_failed_tests_count_builds_and_report_the_last_failure():
    v = [1e6, np.nan, 1e6, np.nan, np.nan, 1e6]
    r = make_result(v, test_id="t.v.p.ip4.s.64b-1c-x-mrr")
    ok = make_result([1e6] * 6, test_id="t.v.p.ip4.s.64b-1c-y-mrr")
    rows = dashboard.failed_tests(samples_for([r, ok]), [r, ok])
    assert len(rows) == 1
    f = rows[0]
    assert (f.name, f.failures, f.last_build, f.last_build_label) == (
        "25ge2p1xxv710-64b-1c-x-mrr", 3, 104, "mrr-daily-build-104")
    assert f.last_time == "2022-01-05 03:00" and f.last_version == "22.02-rc0~104-g88a9c0e02"
    assert f.slug == r.key.slug() and f.message == "Traffic generator timed out"


def test_summary_counts_series_and_missing_builds():
    reg = make_result([20e6] * 8 + [10e6] * 4, (8,), test_id="t.v.p.ip4.s.64b-1c-r-mrr")
    flat = make_result([20e6] * 12, test_id="t.v.p.ip4.s.64b-1c-f-mrr")
    rep = RunReport()
    rep.add("download", "job/7", "404 on every source")
    rep.add("parse", "job/8", "truncated XML")
    rep.add("parse", "job/9", "odd tag", severity="warning")
    rep.add("analyse", "x", "y")
    s = dashboard.summary([reg, flat], [], rep)
    assert (s.tests, s.series, s.regressions, s.progressions, s.failed, s.builds_missing) == (2, 2, 1, 0, 0, 2)


def test_names_and_labels_match_csit():
    assert job_label(ICX_MRR) == "mrr-daily"
    assert job_label(ICX_NDR) == "ndrpdr-weekly"
    assert build_label(ICX_MRR, 265) == "mrr-daily-build-265"
    key = make_result([1.0]).key
    assert short_name(key, "25ge2p1xxv710") == "25ge2p1xxv710-64b-2t1c-ethip4-ip4base-mrr"


def latency_table_results():
    """Latency rows (lower is better): rises of +23.75 % and +5 % before the short-term window, two flat."""
    test = "tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-ethip4-ip4base-ndrpdr.64b-2t1c-ethip4-{}-ndrpdr"
    rise = make_result([20.0] * 20 + [24.75] * 20, (20,), job=ICX_NDR, metric="latency_pdr50_d1",
                       test_id=test.format("rise"))
    small = make_result([20.0] * 20 + [21.0] * 20, (20,), job=ICX_NDR, metric="latency_pdr50_d1",
                        test_id=test.format("small"))
    flat = [make_result([20.0] * 40, job=ICX_NDR, metric="latency_pdr50_d1", test_id=test.format(f"flat{i}"))
            for i in range(2)]
    return [flat[0], rise, flat[1], small]


def test_latency_rise_sorts_as_bad_and_is_coloured_worse():
    (table,) = dashboard.dashboard_tables(latency_table_results(), {"mrr-daily": 1.0})
    names = [r.name.split("-")[-2] for r in table.rows]
    rows = {r.name.split("-")[-2]: r for r in table.rows}
    assert rows["rise"].long_term == 23.75 and rows["rise"].regressions == 0  # a change before the window
    assert rows["small"].long_term == 5.0
    # worst first; CSIT's raw order (long-term change ascending) puts the flat rows first and the rise last
    assert names == ["rise", "small", "flat0", "flat1"]
    assert (rows["rise"].long_css, rows["small"].long_css, rows["flat0"].long_css) == ("worse", "worse", "")
    # throughput: a fall is worse
    mrr = make_result([20e6] * 20 + [18e6] * 20, (20,), test_id="t.v.p.ip4.s.64b-1c-a-mrr")
    (t,) = dashboard.dashboard_tables([mrr])
    assert t.rows[0].long_term == -10.0 and t.rows[0].long_css == "worse"


def test_changes_below_the_alert_threshold_are_not_coloured():
    assert dashboard.change_css(-0.5, +1, 1.0) == "" and dashboard.change_css(-1.0, +1, 1.0) == "worse"
    assert dashboard.change_css(0.004, -1, 0.0) == ""  # shown as 0.00
    assert dashboard.change_css(math.nan, +1, 0.0) == ""
    assert dashboard.change_css(2.0, -1, 0.0) == "worse" and dashboard.change_css(2.0, +1, 0.0) == "better"


def test_window_notes_state_the_spec_windows_in_runs_and_days():
    from pal.spec import TestSet, Windows

    results = latency_table_results()  # daily runs (factory), test set "mrr-daily"
    sets = [TestSet("unused"), TestSet("mrr-daily", windows=Windows(short_term_runs=4,
                                                                    short_term_runs_single_testbed=2,
                                                                    long_term_runs=26, long_term_days=90))]
    (note,) = dashboard.window_notes(sets, results)
    assert (note.test_set, note.short_runs, note.long_runs, note.long_days, note.run_days) == (
        "mrr-daily", 4, 26, 90, 1.0)
    assert note.text == ("short-term window = the last 4 runs (about 4 days at a run every 1 day), 2 runs on a "
                         "testbed type with one testbed; long-term reference = the best trend from 26 runs or "
                         "90 days back (whichever is shorter) to the start of the short-term window")


def test_graph_sections_follow_csit_metric_order_then_frame_size_and_cores():
    from pal.render.naming import graph_order

    keys = [("latency_pdr50_d1", "64B", "1C"), ("pdr", "64B", "1C"), ("ndr", "64B", "1C"), ("mrr", "IMIX", "1C"),
            ("mrr", "1518B", "1C"), ("mrr", "64B", "10C"), ("mrr", "64B", "2C"), ("zzz", "64B", "1C"),
            ("latency_pdr50_d2", "64B", "1C"), ("soak", "64B", "1C")]
    assert sorted(keys, key=graph_order) == [
        ("mrr", "64B", "2C"), ("mrr", "64B", "10C"), ("mrr", "1518B", "1C"), ("mrr", "IMIX", "1C"),
        ("ndr", "64B", "1C"), ("pdr", "64B", "1C"), ("soak", "64B", "1C"), ("latency_pdr50_d1", "64B", "1C"),
        ("latency_pdr50_d2", "64B", "1C"), ("zzz", "64B", "1C")]


#: the index's rows as ``templates/index.html`` wrote them in a Jinja loop until stop 49
#: (``pal.render.pages.dash_rows`` builds the same text in Python)
JINJA_ROWS = (
    "{% for r in t.rows -%}\n"
    '<tr{% if r.css %} class="{{ r.css }}"{% endif %} data-nic="{{ r.nic }}" data-fs="{{ r.frame_size }}" '
    'data-cores="{{ r.cores }}"><td><a href="s/{{ r.slug }}.html">{{ r.name }}</a></td><td>{{ r.trend | '
    "fmt(2 if t.unit != 'µs' else 1) }}</td><td>{{ r.runs }}</td><td data-sort=\"{{ (r.short_term * r.direction) "
    '| fmt(4) }}"{% if r.short_css %} class="{{ r.short_css }}"{% endif %}>{{ r.short_term | fmt(2) }}</td>'
    '<td data-sort="{{ r.badness | fmt(4) }}"{% if r.long_css %} class="{{ r.long_css }}"{% endif %}>'
    "{{ r.long_term | fmt(2) }}</td><td>{{ r.regressions }}</td><td>{{ r.progressions }}</td></tr>\n"
    "{% endfor -%}\n"
)


def test_the_index_rows_are_the_jinja_loops_text():
    """Names with markup and quotes, a name over the 500 characters a page shows, unknown (NaN)
    values, lower-is-better rows, changes under and over the colouring threshold, the µs unit."""
    from pal.render.dashboard import DashTable
    from pal.render.pages import DEFAULT_TEMPLATES, dash_rows, make_env

    env = make_env(DEFAULT_TEMPLATES)
    reference = env.from_string(JINJA_ROWS)
    rng = np.random.default_rng(5)
    names = ['ip4 <b>"x"</b> & \'y\'', "a" * 600, "plain-64b-1c", ""]
    for unit in ("Mpps", "µs", ""):
        table = DashTable("2n-icx", "mrr", "1c", unit)
        for i in range(40):
            pick = lambda v: math.nan if rng.random() < 0.15 else v  # noqa: E731
            table.rows.append(DashRow(
                name=names[i % 4] + str(i), slug=f"s-{i}<&>", nic=['x710', '<nic "q">', ''][i % 3],
                frame_size=["64B", "IMIX", ""][i % 3], cores=["1C", "2C", ""][i % 3],
                trend=pick(float(rng.normal(10, 5))), runs=int(rng.integers(0, 200)),
                short_term=pick(float(rng.normal(0, 8))), long_term=pick(float(rng.choice([0.001, -0.004, 3.0, -12.5]))),
                regressions=int(rng.integers(0, 2)), progressions=int(rng.integers(0, 2)),
                direction=[1, -1][i % 2], threshold=[0.0, 5.0][i % 2 == 0 and i % 4 == 0]))
        assert str(dash_rows(table)) == reference.render(t=table)
    assert str(dash_rows(DashTable("tb", "mrr", "", "Mpps"))) == ""
