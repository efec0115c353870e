"""Two consecutive analysis runs of two jobs, with hand-computable numbers.

Run 1 (builds 100..120, 21 runs; the old level of every test is 20 runs alternating level -/+
wiggle, so its average is the level and its stdev the wiggle):

* ICX 64b ip4base: 30 Mpps -> 27 Mpps at build 120 (-10 %), fresh regression.
* ICX 64b avf l2bd (nic 10ge2p1x710): 29.6 -> 25.9 Mpps at 120 (-12.5 %), acked in ACKS.
* ICX 1518b ip4base: 10 -> 11 Mpps at 120 (+10 %), fresh progression.
* ICX 64b ip4scale20k: 20 Mpps, 16 Mpps at builds 114..116, back to 20 from 117: a recovered
  regression (inside the short-term window); its way back is a progression that names the build
  it restores.
* ICX 64b/2c/imix ip6base: fail at build 120 (two alike "timed out" messages, one other).
* ALT 64b ip4base: 30 -> 27.3 Mpps at 120 (-9 %): same time as ICX, so "all testbeds".

Run 2 (one more build, 121): ICX 64b ip4base stays at 27 (ongoing), ALT comes back to 30
(recovered, and the way back is a new progression restoring build 120), the others keep their
last level.
"""

from __future__ import annotations

import math

from tests.alerts.factory import ALT, ICX, flat, make_result

L2_SUITE = "tests.vpp.perf.l2.2n1l-10ge2p1x710-avf-eth-l2bdbasemaclrn-mrr"
IP6_SUITE = "tests.vpp.perf.ip6.2n1l-25ge2p1xxv710-ethip6-ip6base-mrr"
NAN = math.nan

MESSAGES = {
    ("64b-1c-ethip6-ip6base-mrr", 120): "Traffic generator on 10.30.51.45 timed out after 120 s",
    ("64b-2c-ethip6-ip6base-mrr", 120): "Traffic generator on 10.30.51.46 timed out after 95 s",
    ("imix-2c-ethip6-ip6base-mrr", 120): "Setup of node DUT1 failed: ssh 10.30.51.44 refused",
}


def run_results(extra: bool = False) -> list:
    """The analysed series of run 1, or of run 2 with ``extra``."""
    more = 1 if extra else 0
    reg = flat(30e6, 20, 0.1e6) + [27e6] * (1 + more)
    acked = flat(29.6e6, 20, 0.1e6) + [25.9e6] * (1 + more)
    prog = flat(10e6, 20, 0.05e6) + [11e6] * (1 + more)
    rec = flat(20e6, 14, 0.1e6) + [16e6] * 3 + flat(20e6, 4 + more, 0.1e6)
    alt = flat(30e6, 20, 0.1e6) + [27.3e6] + ([30e6] if extra else [])
    out = [
        make_result(reg, (20,)),
        make_result(acked, (20,), name="64b-4t2c-avf-eth-l2bdbasemaclrn-mrr", nic="10ge2p1x710", suite=L2_SUITE),
        make_result(prog, (20,), name="1518b-2t1c-ethip4-ip4base-mrr", frame_size="1518B"),
        make_result(rec, (14, 17), name="64b-2t1c-ethip4-ip4scale20k-mrr"),
        make_result(alt, (20, 21) if extra else (20,), job=ALT, nic="10ge2p1x710"),
    ]
    for name, fs in (("64b-1c-ethip6-ip6base-mrr", "64B"), ("64b-2c-ethip6-ip6base-mrr", "64B"),
                     ("imix-2c-ethip6-ip6base-mrr", "IMIX")):
        vals = flat(20e6, 20, 0.1e6) + [NAN] + ([20e6] if extra else [])
        out.append(make_result(vals, (), name=name, suite=IP6_SUITE, frame_size=fs))
    return out


def by_name(alerts, name: str, job: str = ICX):
    return [a for a in alerts if a.key.job == job and a.key.test_id.endswith("." + name)]
