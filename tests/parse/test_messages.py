"""Each CSIT message generation, with values computed by hand."""

from __future__ import annotations

import math

import hypothesis
import hypothesis.strategies
import pytest

from pal.parse.messages import PARSERS, parse_message

NDRPDR_2020 = (
    "\nNDR_LOWER: 18123456.5 pps, 12.179 Gbps (initial) \n"
    "LATENCY [min/avg/max/hdrh] per stream: ['10/15/30/HISTFAAAAAB', '11/16/31/HISTFAAAAAC'] \n"
    "NDR_UPPER: 18200000.0 pps, 12.23 Gbps (initial) \n"
    "PDR_LOWER: 18500000.0 pps, 12.432 Gbps (initial) \n"
    "LATENCY [min/avg/max/hdrh] per stream: ['12/20/40/HISTFAAAAAD', '13/21/41/HISTFAAAAAE'] \n"
    "PDR_UPPER: 18600000.0 pps, 12.499 Gbps (initial) \n"
    "Latency at 90% PDR: ['9/14/29/HISTFAAAAAF', '9/14/29/HISTFAAAAAG'] \n"
    "Latency at 50% PDR: ['8/12/25/HISTFAAAAAH', '7/11/24/HISTFAAAAAI'] \n"
    "Latency at 10% PDR: ['7/11/22/HISTFAAAAAI', '7/10/21/HISTFAAAAAJ'] \n"
    "Latency at 0% PDR: ['6/10/20/HISTFAAAAAK', '6/10/20/HISTFAAAAAL']"
)


def test_every_parser_names_its_generation():
    names = [p.name for p in PARSERS]
    assert len(names) == len(set(names))
    for p in PARSERS:
        assert p.generation, p.name


def test_mrr_trials_mean_and_population_stdev():
    m, name = parse_message("Maximum Receive Rate trial results in packets per second: "
                            "[21000000.0, 22000000.0, 23000000.0, 24000000.0]")
    assert name == "mrr-trials-pps"
    assert m.values == {"mrr": 22500000.0}
    # population stdev: sqrt(((1.5e6)^2 + (0.5e6)^2) * 2 / 4) = sqrt(1.25e12)
    assert m.stdev == pytest.approx(1118033.988749895)
    assert m.trials == [21e6, 22e6, 23e6, 24e6]
    assert m.problem is None


def test_mrr_csit_example_from_formats_doc():
    text = ("Maximum Receive Rate trial results in packets per second: [21752588.29, 21712091.77, 21836008.33, "
            "21921193.52, 21553586.16, 21723548.35, 21880236.21, 21578999.96, 21571842.47, 21662055.49]")
    m, _ = parse_message(text)
    assert len(m.trials) == 10
    assert m.values["mrr"] == pytest.approx(217192150.05 / 10)


@pytest.mark.parametrize("text", [
    "Maximum Receive Rate trial results in connections per second: [100000.0, 110000.0]",
    "Maximum Receive Rate trial results in estimated connections per second: [100000.0, 110000.0]",
])
def test_cps_forms(text):
    m, name = parse_message(text)
    assert name == "mrr-trials-cps"
    assert m.values == {"cps": 105000.0}
    assert m.stdev == 5000.0


def test_mrr_2018_rate_is_rx_over_seconds():
    m, name = parse_message("MaxReceivedRate_Results [pkts/10sec]: tx 148809520, rx 120000005")
    assert name == "mrr-tx-rx-2018"
    assert m.values == {"mrr": 12000000.5}
    assert m.trials == [12000000.5]


@pytest.mark.parametrize("join", [" \n", "\n"])
def test_ndrpdr_with_load_latency(join):
    m, name = parse_message(NDRPDR_2020.replace(" \n", join))
    assert name == "ndrpdr-load-latency"
    assert m.values == {"ndr": 18123456.5, "pdr": 18500000.0, "latency_pdr50_d1": 12.0, "latency_pdr50_d2": 11.0}
    assert m.problem is None


@pytest.mark.parametrize("bad", ["-1/-1/-1/", "0/0/0/", "4294967295/4294967295/4294967295/HISTF"])
def test_invalid_latency_markers_are_missing(bad):
    text = NDRPDR_2020.replace("'7/11/24/HISTFAAAAAI'", f"'{bad}'")
    m, _ = parse_message(text)
    assert m.values["latency_pdr50_d1"] == 12.0
    assert math.isnan(m.values["latency_pdr50_d2"])
    assert m.values["ndr"] == 18123456.5


def test_ndrpdr_2018_bounds_only():
    text = ("\nNDR_LOWER: 12345678.5 pps, 8.296 Gbps (initial) \n"
            "LATENCY [min/avg/max] per stream: ['5/10/20', '6/11/21'] \n"
            "NDR_UPPER: 12400000.0 pps, 8.333 Gbps (initial) \n"
            "PDR_LOWER: 13000000.0 pps, 8.736 Gbps (initial) \n"
            "LATENCY [min/avg/max] per stream: ['7/12/30', '8/13/31'] \n"
            "PDR_UPPER: 13100000.0 pps, 8.803 Gbps (initial)")
    m, name = parse_message(text)
    assert name == "ndrpdr-bounds"
    assert m.values == {"ndr": 12345678.5, "pdr": 13000000.0}


def test_ndrpdr_missing_pdr_lower_is_nan_with_problem():
    m, _ = parse_message("NDR_LOWER: 1000.0 pps, 0.1 Gbps (initial)\nNDR_UPPER: 1100.0 pps, 0.1 Gbps")
    assert m.values["ndr"] == 1000.0
    assert math.isnan(m.values["pdr"])
    assert "PDR_LOWER" in m.problem


def test_soak_lower_bound():
    m, name = parse_message("PLRsearch lower bound: 10500000.25 pps, 7.056 Gbps \n"
                            "PLRsearch upper bound: 10700000.75 pps, 7.19 Gbps")
    assert name == "soak-plrsearch"
    assert m.values == {"soak": 10500000.25}
    assert m.extra == {"upper": 10700000.75}


@pytest.mark.parametrize("text, why", [
    ("Maximum Receive Rate trial results in packets per second: [abc, 1.0]", "no usable trial"),
    ("Maximum Receive Rate trial results in packets per second: []", "no usable trial"),
    ("Maximum Receive Rate trial results in packets per second: [1.0, -5.0]", "invalid trial"),
    ("Maximum Receive Rate trial results in packets per second: [1.0, nan]", "invalid trial"),
    ("Maximum Receive Rate trial results in packets per second: [nan, -1.0]", "invalid trial values [nan, -1.0]"),
    ("Maximum Receive Rate trial results in packets per second: [inf, 2.0]", "invalid trial values [inf]"),
    # good values whose sum overflows: not invalid, too large to average
    ("Maximum Receive Rate trial results in packets per second: [1e308, 1e308]", "too large to average"),
])
def test_malformed_numbers_give_nan_and_a_reason(text, why):
    m, _ = parse_message(text)
    assert math.isnan(m.values["mrr"])
    assert why in m.problem


@pytest.mark.parametrize("text", ["", "Test passed", "Traffic looked fine, NDR unknown", "PLRsearch done"])
def test_unknown_messages_match_nothing(text):
    assert parse_message(text) == (None, None)


# --- generations added for CSIT 2020-10 (CPS) and 2023-10 (MLRsearch v7) --------------------------

NDRPDR_V7 = (
    "\nNDR: 19876543.5 pps, 13.357 Gbps (initial) \n"
    "PDR: 20123456.25 pps, 13.523 Gbps (initial) \n"
    "Latency at 90% PDR: ['9/14/29/HISTFAAAAAF', '9/15/29/HISTFAAAAAG'] \n"
    "Latency at 50% PDR: ['7/11/18/HISTFAAAAAH', '8/12/19/HISTFAAAAAI'] \n"
    "Latency at 10% PDR: ['7/10/22/HISTFAAAAAJ', '7/10/21/HISTFAAAAAK'] \n"
    "Latency at 0% PDR: ['6/10/20/HISTFAAAAAL', '6/10/20/HISTFAAAAAM']"
)


def test_ndrpdr_mlrsearch_v7():
    m, name = parse_message(NDRPDR_V7)
    assert name == "ndrpdr-mlrsearch-v7"
    assert m.values == {"ndr": 19876543.5, "pdr": 20123456.25, "latency_pdr50_d1": 11.0, "latency_pdr50_d2": 12.0}
    assert m.units == {} and m.problem is None


def test_ndrpdr_mlrsearch_v7_without_latency_lines_has_no_latency_rows():
    m, name = parse_message("\nNDR: 19876543.5 pps, 13.357 Gbps (initial) \nPDR: 20123456.25 pps, 13.523 Gbps (initial)")
    assert name == "ndrpdr-mlrsearch-v7"
    assert m.values == {"ndr": 19876543.5, "pdr": 20123456.25}


def test_ndrpdr_mlrsearch_v7_bad_pdr_is_nan_with_problem():
    m, _ = parse_message("\nNDR: 19876543.5 pps, 13.357 Gbps (initial) \nPDR: 12x3 pps, 1 Gbps (initial)")
    assert m.values["ndr"] == 19876543.5 and math.isnan(m.values["pdr"])
    assert m.problem == "PDR missing or invalid"


def test_ndrpdr_mlrsearch_v7_cps_has_unit_cps():
    m, name = parse_message("\nNDR: 412345.5 CPS \nPDR: 420000.25 CPS")
    assert name == "ndrpdr-mlrsearch-v7-cps"
    assert m.values == {"ndr": 412345.5, "pdr": 420000.25}
    assert m.units == {"ndr": "cps", "pdr": "cps"}


def test_ndrpdr_bounds_cps_2020():
    m, name = parse_message("\nNDR_LOWER: 412345.5 CPS \nNDR_UPPER: 413000.0 CPS \n"
                            "PDR_LOWER: 420000.25 CPS \nPDR_UPPER: 421000.0 CPS")
    assert name == "ndrpdr-bounds-cps"
    assert m.values == {"ndr": 412345.5, "pdr": 420000.25}
    assert m.units == {"ndr": "cps", "pdr": "cps"}


def test_soak_cps():
    m, name = parse_message("\nPLRsearch lower bound: 300000.5 CPS \nPLRsearch upper bound: 310000.0 CPS")
    assert name == "soak-plrsearch-cps"
    assert (m.values, m.units, m.extra) == ({"soak": 300000.5}, {"soak": "cps"}, {"upper": 310000.0})


def test_soak_today_with_gbps_and_initial():
    m, name = parse_message("\nPLRsearch lower bound: 9000001.0 pps, 6.0 Gbps (initial) \n"
                            "PLRsearch upper bound: 9500001.0 pps, 6.3 Gbps (initial)")
    assert name == "soak-plrsearch"
    assert m.values == {"soak": 9000001.0} and m.extra == {"upper": 9500001.0}


def test_one_measurement_in_every_ndrpdr_generation_gives_the_same_values():
    """A history spanning the generations trends as one series: same metric names, values and units."""
    ndr, pdr = "18123456.5", "18500000.0"
    lat = ("Latency at 90% PDR: ['9/14/29/H', '9/14/29/H'] \nLatency at 50% PDR: ['8/12/25/H', '7/11/24/H'] \n"
           "Latency at 10% PDR: ['7/11/22/H', '7/10/21/H'] \nLatency at 0% PDR: ['6/10/20/H', '6/10/20/H']")
    old = (f"\nNDR_LOWER: {ndr} pps, 12.179 Gbps (initial) \nLATENCY [min/avg/max/hdrh] per stream: ['1/2/3/H', "
           f"'1/2/3/H'] \nNDR_UPPER: 18200000.0 pps, 12.23 Gbps (initial) \nPDR_LOWER: {pdr} pps, 12.432 Gbps "
           f"(initial) \nLATENCY [min/avg/max/hdrh] per stream: ['1/2/3/H', '1/2/3/H'] \nPDR_UPPER: 18600000.0 pps, "
           f"12.499 Gbps (initial) \n{lat}")
    new = f"\nNDR: {ndr} pps, 12.179 Gbps (initial) \nPDR: {pdr} pps, 12.432 Gbps (initial) \n{lat}"
    (a, na), (b, nb) = parse_message(old), parse_message(new)
    assert (na, nb) == ("ndrpdr-load-latency", "ndrpdr-mlrsearch-v7")
    assert a.values == b.values == {"ndr": 18123456.5, "pdr": 18500000.0, "latency_pdr50_d1": 12.0,
                                    "latency_pdr50_d2": 11.0}
    assert a.units == b.units == {}


def test_generations_table_in_the_docs_names_every_parser():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    for p in PARSERS:
        assert f"`{p.name}`" in doc, p.name


def _floats_item_by_item(text: str):
    """The list reading as it was, item by item: the reference for the one-match fast path."""
    from pal.parse.messages import _number

    if not text.strip():
        return None
    values = [_number(s.strip()) for s in text.split(",")]
    return None if any(v is None for v in values) else values


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(hypothesis.strategies.text(alphabet="0123456789.,+-eEnaifNIty \t\u00a0\u0663_x", max_size=40))
def test_trial_lists_read_by_one_match_as_item_by_item(text):
    """A trial list is read with one match when it is plain; any text gives the same verdict
    and the same numbers as reading each item strictly (NaN compared as NaN)."""
    from pal.parse.messages import _floats

    got, want = _floats(text), _floats_item_by_item(text)
    assert (got is None) == (want is None)
    if got is not None:
        assert len(got) == len(want)
        assert all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(got, want))


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(hypothesis.strategies.text(alphabet="0123456789., \t", max_size=40))
def test_plain_trial_lists_read_by_float_as_item_by_item(text):
    """Texts of digits, dots, commas and blanks (the ``float()`` fast path, or its fallback when
    an item is "", "1.2.3" or "1 2"): the same verdict and numbers as the strict item-by-item reading."""
    from pal.parse.messages import _floats

    assert _floats(text) == _floats_item_by_item(text)


@pytest.mark.parametrize("text", ["", " ", ",", "1,", ",1", "1.2.3", "1 2", ".", "1.", ".5", " 1.5 , 2 ", "1,,2",
                                  "3231611.36, 3258427.18", "1e5, 2", "1_0", "\u0663", "1\t, 2"])
def test_plain_trial_lists_examples(text):
    from pal.parse.messages import _floats

    assert _floats(text) == _floats_item_by_item(text)
