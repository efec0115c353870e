import dataclasses

import numpy as np

from pal.render.buildinfo import BuildIndex
from pal.render.graphs import job_payload, series_payload
from tests.render.factory import builds_for, make_result, samples_for


def test_payload_is_in_display_units_with_gaps_and_anomalies_at_the_new_average():
    v = np.array([20e6, 20.2e6, np.nan, 19.8e6, 15e6, 15.5e6, 14.5e6])
    n = len(v)
    bands = {"mm": np.full(n, 20e6), "tma": np.full(n, 20e6), "tma_lo": np.full(n, 19e6),
             "tma_hi": np.full(n, 21e6), "tmsd": np.full(n, 0.3e6)}
    r = make_result(v, (4,), bands=bands)
    p = series_payload(r)
    assert p["y"] == [20.0, 20.2, None, 19.8, 15.0, 15.5, 14.5]  # Mpps, missing is null (a gap)
    assert p["t"] == [20.0, 20.0, None, 20.0, 15.0, 15.0, 15.0]
    assert p["an"] == [[4, "regression", 15.0]]  # at the new group's average (15.0, 15.5, 14.5)
    assert p["b"] == list(range(100, 107)) and p["x"][0] == "2022-01-01 03:00"
    assert sorted(p["bands"]) == ["mm", "tma", "tma_hi", "tma_lo"] and p["bands"]["tma_lo"] == [19.0] * n
    assert "rolling" not in p  # the detector gave all four bands: none is made from the values
    assert "sd" not in p  # NDR-like series without trial stdevs
    assert p["unit"] == "Mpps" and p["ytitle"] == "Throughput [Mpps]" and p["lower"] is False


def test_latency_payload_keeps_microseconds_and_says_lower_is_better():
    p = series_payload(make_result([10.5, 11.25], metric="latency_pdr50_d2"))
    assert (p["y"], p["unit"], p["lower"]) == ([10.5, 11.25], "µs", True)
    assert p["rolling"] == {"window": 14, "min_history": 5, "sigma": 3.0} and "bands" not in p
    assert p["ytitle"] == "Latency [µs] (lower is better)"


def test_job_payload_has_version_and_testbed_per_build():
    r = make_result([1e6, 2e6, 3e6])
    facts = BuildIndex(builds_for([r]), samples_for([r]))
    p = job_payload(r.key.job, facts.job_table(r.key.job))
    assert p["label"] == "mrr-daily"
    assert p["builds"] == {"100": ["22.02-rc0~100-g88a9c0e02", "tb-0"], "101": ["22.02-rc0~101-g88a9c0e02", "tb-1"],
                           "102": ["22.02-rc0~102-g88a9c0e02", "tb-0"]}


def test_data_file_holds_the_payload_numbers_with_fixed_decimals_and_null_gaps():
    import json
    import re

    from pal.render.escape import js_assign
    from pal.render.graphs import series_data

    v = np.array([20e6, 20.2e6, np.nan, 19.8e6, 15e6, 15.5e6, 14.5e6])
    n = len(v)
    bands = {"mm": np.full(n, 20e6), "tma": np.full(n, 20e6), "tma_lo": np.full(n, 19e6),
             "tma_hi": np.full(n, 21e6), "tmsd": np.full(n, 0.3e6)}
    r = make_result(v, (4,), bands=bands, stdevs=np.full(n, 1234.6))
    body = js_assign("series", "k", series_data(r))
    text = re.fullmatch(r'var PAL=window\.PAL=window\.PAL\|\|\{series:\{\},jobs:\{\}\};PAL\.series\["k"\]=(.*);\n',
                        body, re.S).group(1)
    assert '"y":[20.000000,20.200000,null,19.800000,15.000000,15.500000,14.500000]' in text
    assert '"sd":[0.001235,' in text  # 1234.6 pps in Mpps, 6 decimals
    assert json.loads(text) == series_payload(r)  # the same values as the list payload, key for key


def test_a_cps_ndr_series_is_drawn_in_mcps():
    """An NDR series of a CPS test carries unit cps in its samples: the graph says Mcps, not Mpps."""
    from dataclasses import replace

    from pal.render.naming import scale_for
    from tests.render.factory import make_result

    r = make_result([3e6] * 10 + [2.4e6] * 5, (10,), metric="ndr")
    assert scale_for(r).unit == "Mpps"
    assert scale_for(replace(r, attrs=dict(r.attrs, unit="cps"))).unit == "Mcps"


def test_drawn_bands_are_the_seeds_bands_of_the_values_with_the_detectors_own_over_them():
    """A drill-down draws MM and TMA ± 3·TMSD of the last 14 runs whatever the detector (made at
    render time: the analysis keeps only a detector's own bands), and TMA's own bands where the
    test set's detector is TMA."""
    from pal.analysis.bands import rolling_bands
    from pal.analysis.series import analyse_one
    from pal.render.graphs import BAND_WINDOW, DRAWN_BANDS, drawn_bands
    from pal.spec import DetectorSpec, TestSet
    from tests.analysis.test_series import series

    rng = np.random.default_rng(5)
    values = 1e7 * (1 + rng.normal(0, 0.01, 80))
    values[[7, 30]] = np.nan
    values[50:] *= 0.9
    mdl = analyse_one(series(values), TestSet("s"), False)
    assert mdl.bands == {}  # nothing band-shaped held per series
    expected = rolling_bands(values, window=BAND_WINDOW)
    drawn = drawn_bands(mdl)
    assert sorted(drawn) == sorted(DRAWN_BANDS) and BAND_WINDOW == 14
    for k in DRAWN_BANDS:
        np.testing.assert_array_equal(drawn[k], expected[k])
    assert np.isfinite(drawn["tma"][20:]).all() and np.isnan(drawn["tma"][0])  # 14 runs of history first
    tma = analyse_one(series(values), TestSet("s", detector=DetectorSpec("tma")), False)
    own = {k: v for k, v in tma.bands.items() if k in DRAWN_BANDS}
    assert own  # TMA hands over bands of the drawn names: they are drawn, not the seed's
    drawn = drawn_bands(tma)
    for k, v in own.items():
        np.testing.assert_array_equal(drawn[k], v)
    assert sorted(drawn) == sorted(DRAWN_BANDS)
    assert drawn_bands(dataclasses.replace(mdl, values=np.array([]))) == {}


def test_payload_carries_the_detectors_bands_of_the_drawn_names_and_the_window_of_the_rest():
    """graph.js draws the detector's own bands and makes the missing ones from ``y``: the payload
    holds those bands (drawn names, one value per sample) and the rolling bands' parameters."""
    from pal.render.graphs import drawn_bands, own_bands, rolling_params

    v = np.array([20e6, 20.2e6, 19.9e6, 19.8e6, 20.1e6, 20.3e6, 20.0e6])
    n = len(v)
    r = make_result(v, bands={"tma": np.full(n, 20e6), "tmsd": np.full(n, 0.1e6), "mm": np.full(3, 1.0),
                              "wda_centre": np.full(n, 2.0)})
    assert sorted(own_bands(r)) == ["tma"]  # tmsd and wda_centre are not drawn, a short mm is not a band
    p = series_payload(r)
    assert p["bands"] == {"tma": [20.0] * n} and p["rolling"] == rolling_params()
    drawn = drawn_bands(r)
    assert sorted(drawn) == ["mm", "tma", "tma_hi", "tma_lo"] and drawn["tma"].tolist() == [20e6] * n
    # the rolling ones from the values: history of 5 runs at sample 5, median 20.0e6, mean 20.0e6
    assert np.isnan(drawn["mm"][:5]).all() and drawn["mm"][5] == 20.0e6 and drawn["tma_lo"][5] < 20.0e6
    assert series_payload(r, with_bands=False).keys() == p.keys() - {"bands", "rolling"}
    from pal.render.graphs import bands_data

    assert bands_data(dataclasses.replace(r, values=np.array([]), bands={})) == {}  # nothing to draw


def test_series_json_is_the_text_js_encode_makes_of_series_data():
    """The drill-down's and the group file's graph data are written directly (``series_json``):
    the same bytes as the definition (``series_data`` walked by ``js_encode``), whatever the series."""
    from pal.render.escape import js_encode
    from pal.render.graphs import series_data, series_json
    from pal.render.naming import short_name
    from pal.render.pages import Pages, SiteInfo

    rng = np.random.default_rng(5)
    v = 12e6 + rng.normal(0, 2e5, 60)
    v[30:] -= 2e6
    gappy = v.copy()
    gappy[[0, 7, 8, 59]] = np.nan
    cases = [
        make_result(v, (30,)),
        make_result(gappy, (30,), stdevs=np.where(np.isnan(gappy), np.nan, 1e5)),
        make_result(v[:5], stdevs=np.full(5, np.nan)),
        make_result([11.5, 12.25, 10.0], metric="latency_pdr50_d2"),  # lower is better, µs
        make_result(v, (30,), test_id="tests.a." + "é<script>&'\u2028" * 40, attrs={"nic": "<nic>"}),
        make_result([9.5e6]),  # one run
    ]
    pages = Pages(SiteInfo("t", "2026"))
    for r in cases:
        axis = pages._axis(r)
        name = short_name(r.key, str(r.attrs.get("nic") or ""))
        assert series_json(r, name, axis.x, axis.b) == js_encode(series_data(r, axis.x, with_bands=False, builds=axis.b))
    assert '"lower":true' in series_json(cases[3], "n", *(lambda a: (a.x, a.b))(pages._axis(cases[3])))


def test_a_group_graph_over_its_jobs_shared_times_is_the_same_svg():
    """A group chart given the job's shared times (``Pages.axis_seconds``) draws its lines and
    samples in one compiled call: the same SVG as each series' own times give."""
    from pal.render import svg
    from pal.render.graphs import group_chart
    from pal.render.pages import Pages, SiteInfo

    rng = np.random.default_rng(3)
    members = []
    for k in range(6):
        v = (10 + k) * 1e6 + rng.normal(0, 2e5, 40)
        v[[5, 6]] = np.nan if k % 2 else v[[5, 6]]
        members.append(make_result(v, (20,) if k % 3 == 0 else (), test_id=f"tests.g.t{k}"))
    pages = Pages(SiteInfo("t", "2026"))
    shared = [pages.axis_seconds(m) for m in members]
    assert all(s is shared[0] for s in shared)  # one array for the job's series
    own = svg.render_svg(group_chart("g", members))
    assert svg.render_svg(group_chart("g", members, shared)) == own
    assert own.count("<polyline") >= 6 and own.count('class="anomaly"') >= 2
