"""Property-based fuzzing of the CSIT status-message parsers (pal.parse.messages.PARSERS).

The only outcomes allowed: the exact numbers written, or NaN with a problem text. Never an
exception, never a number the message does not say. The oracle for "is this token a number"
is independent of the module: Python's ``float`` restricted to ASCII without underscores.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pal.parse.messages import PARSERS, parse_message
from tests.reliability.record import fuzz_examples, record

pytestmark = pytest.mark.fuzz

SETTINGS = settings(max_examples=fuzz_examples(150), deadline=2000,
                    suppress_health_check=[HealthCheck.too_slow])

MRR = "Maximum Receive Rate trial results in packets per second: "
# Characters a garbled log tends to hold: digits, signs, exponent, letters, blanks, Unicode digits.
GARBAGE = "0123456789.eE+-_x a\t\u0663\uff11n"

rates = st.floats(min_value=0.0, max_value=1e9, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1.0, max_value=1e9, allow_nan=False, allow_infinity=False)


def oracle(token: str) -> float | None:
    """What a careful reader takes a list item for: a float in ASCII notation, else not a number."""
    t = token.strip()
    if not t or not t.isascii() or "_" in t:
        return None
    try:
        return float(t)
    except ValueError:
        return None


@st.composite
def mutated(draw: st.DrawFn, value: float) -> str:
    """``repr(value)`` with one edit (insert, delete or replace a character), or unchanged."""
    text = repr(value)
    op = draw(st.sampled_from(["keep", "insert", "delete", "replace"]))
    if op == "keep":
        return text
    i = draw(st.integers(0, len(text) - (0 if op == "insert" else 1)))
    c = draw(st.sampled_from(GARBAGE))
    if op == "insert":
        return text[:i] + c + text[i:]
    if op == "delete":
        return text[:i] + text[i + 1:]
    return text[:i] + c + text[i + 1:]


@SETTINGS
@given(st.text(max_size=400))
def test_any_text_parses_or_is_declined(text):
    """Random text: every parser returns None or a Measured; values are floats, NaN has a reason."""
    for p in PARSERS:
        m = p.parse(text)
        if m is None:
            continue
        for v in m.values.values():
            assert isinstance(v, float)
            assert math.isnan(v) or v >= 0 or m.kind == "ndrpdr"


@SETTINGS
@given(st.lists(rates, min_size=1, max_size=12))
def test_mrr_list_round_trips_exactly(trials):
    m, name = parse_message(MRR + "[" + ", ".join(repr(t) for t in trials) + "]")
    assert name == "mrr-trials-pps" and m.problem is None
    assert m.trials == trials
    assert m.values["mrr"] == math.fsum(trials) / len(trials)


@SETTINGS
@given(st.data(), st.lists(rates, min_size=1, max_size=10))
def test_mrr_mutated_item_is_that_number_or_nan(data, trials):
    """One trial garbled: the mean uses exactly the numbers written, or is NaN with a problem."""
    k = data.draw(st.integers(0, len(trials) - 1))
    tokens = [repr(t) for t in trials]
    tokens[k] = data.draw(mutated(trials[k]))
    m, name = parse_message(MRR + "[" + ", ".join(tokens) + "]")
    assert name == "mrr-trials-pps"
    read = [oracle(t) for t in tokens]
    if all(v is not None and math.isfinite(v) and v >= 0 for v in read):
        assert m.trials == read
        try:
            mean = math.fsum(read) / len(read)
        except OverflowError:  # the numbers are right but have no mean within the float range
            assert math.isnan(m.values["mrr"]) and "too large" in m.problem
        else:
            assert m.values["mrr"] == mean and m.problem is None and math.isfinite(m.stdev)
    else:
        assert math.isnan(m.values["mrr"]) and m.problem


def _ndrpdr(ndr: str, pdr: str, d1: str, d2: str) -> str:
    return ("\nNDR_LOWER: " + ndr + " pps, 1.5 Gbps (initial) \n"
            "LATENCY [min/avg/max/hdrh] per stream: ['1/2/3/HISTF', '1/2/3/HISTF'] \n"
            "NDR_UPPER: 1.0 pps, 1.6 Gbps (initial) \n"
            "PDR_LOWER: " + pdr + " pps, 1.7 Gbps (initial) \n"
            "PDR_UPPER: 1.0 pps, 1.8 Gbps (initial) \n"
            "Latency at 90% PDR: ['1/2/3/HISTF', '1/2/3/HISTF'] \n"
            f"Latency at 50% PDR: ['5/{d1}/30/HISTFA', '5/{d2}/31/HISTFB'] \n"
            "Latency at 10% PDR: ['1/2/3/HISTF', '1/2/3/HISTF'] \n"
            "Latency at 0% PDR: ['1/2/3/HISTF', '1/2/3/HISTF']")


@SETTINGS
@given(positive, positive, positive, positive)
def test_ndrpdr_round_trips_exactly(ndr, pdr, d1, d2):
    m, name = parse_message(_ndrpdr(repr(ndr), repr(pdr), repr(d1), repr(d2)))
    assert name == "ndrpdr-load-latency" and m.problem is None
    assert m.values == {"ndr": ndr, "pdr": pdr, "latency_pdr50_d1": d1, "latency_pdr50_d2": d2}


@SETTINGS
@given(st.data(), positive, positive, positive)
def test_ndrpdr_mutated_bound_is_that_number_or_nan(data, ndr, pdr, d1):
    token = data.draw(mutated(ndr))
    m, _ = parse_message(_ndrpdr(token, repr(pdr), repr(d1), "7.0"))
    want = oracle(token)
    # a blank inside the token splits it: "12 34 pps" is not one number either
    if want is not None and " " not in token.strip() and "\t" not in token.strip() and want > 0 \
            and math.isfinite(want):
        assert m.values["ndr"] == want and m.problem is None
    else:
        assert math.isnan(m.values["ndr"]) and "NDR_LOWER" in m.problem
    assert m.values["pdr"] == pdr and m.values["latency_pdr50_d1"] == d1


@SETTINGS
@given(st.data(), positive)
def test_soak_mutated_bound_is_that_number_or_nan(data, lower):
    token = data.draw(mutated(lower))
    m, name = parse_message(f"PLRsearch lower bound: {token} pps, 1.0 Gbps \nPLRsearch upper bound: 9.0 pps")
    want = oracle(token)
    if want is not None and not any(c.isspace() for c in token.strip()) and want > 0 and math.isfinite(want):
        assert m.values["soak"] == want and m.problem is None
    elif m is not None:  # "PLRsearch lower bound:  pps" may not even be the SOAK form
        assert name == "soak-plrsearch" and math.isnan(m.values["soak"]) and m.problem


@SETTINGS
@given(st.data(), positive)
def test_mrr_2018_mutated_rx_is_that_number_or_nan(data, rx):
    token = data.draw(mutated(rx))
    m, _ = parse_message(f"MaxReceivedRate_Results [pkts/10sec]: tx 148809520, rx {token}")
    want = oracle(token)
    if want is not None and not any(c.isspace() for c in token.strip()) and math.isfinite(want) and want >= 0:
        assert m.values["mrr"] == want / 10.0
    elif m is not None:
        assert math.isnan(m.values["mrr"]) and m.problem


@pytest.mark.parametrize("text, metric", [
    (MRR + "[1_000.5, 2.0]", "mrr"),  # float() takes underscores
    (MRR + "[\u0661\u0662\u0663, 2.0]", "mrr"),  # ... and Arabic-Indic digits
    (MRR + "[1.0,, 2.0]", "mrr"),  # an empty item used to be dropped silently
    ("NDR_LOWER: 12.5.3 pps, 1 Gbps\nPDR_LOWER: 5.0 pps, 1 Gbps", "ndr"),  # used to read 12.5
    ("NDR_LOWER: 1x23 pps, 1 Gbps\nPDR_LOWER: 5.0 pps, 1 Gbps", "ndr"),  # used to read 1.0
    ("NDR_LOWER: 12.5 Mpps, 1 Gbps\nPDR_LOWER: 5.0 pps, 1 Gbps", "ndr"),  # a unit pal does not know
    ("NDR_LOWER: 123 45 pps, 1 Gbps\nPDR_LOWER: 5.0 pps, 1 Gbps", "ndr"),  # used to read 123
    ("PLRsearch lower bound: 12a34 pps", "soak"),  # used to read 12
    ("MaxReceivedRate_Results [pkts/10sec]: tx 100, rx 50x0", "mrr"),  # used to read 5.0
    (MRR + "[1e308, 1e308]", "mrr"),  # used to crash the parser with OverflowError
])
def test_garbled_numbers_found_by_fuzzing_are_nan(text, metric):
    """The bugs these properties found: each once gave a confident wrong number or a crash."""
    m, _ = parse_message(text)
    assert math.isnan(m.values[metric]) and m.problem
    record("parser fuzzing", f"garbled number {text[-28:]!r}", "NaN + warning (was a wrong number or a crash)")


def test_huge_trials_keep_exact_mean_and_finite_stdev():
    """[0, 1e165]: the mean is representable, the squared deviation is not; the stdev is still right."""
    m, _ = parse_message(MRR + "[0.0, 1e165]")
    assert m.values["mrr"] == 5e164 and m.stdev == 5e164 and m.problem is None


def test_record_fuzz_counts():
    record("parser fuzzing", "random text through every message parser", "None or Measured, no exception",
           inputs=fuzz_examples(150) * len(PARSERS))
    record("parser fuzzing", "MRR/NDRPDR/SOAK/2018 messages, exact and one-character mutations",
           "exact value or NaN + warning", inputs=fuzz_examples(150) * 6)
