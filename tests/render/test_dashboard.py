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
