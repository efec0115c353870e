"""The test status messages CSIT writes, where the results live (CSIT-FORMATS §2).

MRR: one line with the trial results. NDRPDR: a message that starts with a newline and
whose lines, all but the last, end with a space; rates in pps and Gbps, latencies as
``min/avg/max/hdrh`` per direction in microseconds.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

from pal.demo.catalog import IMIX_BYTES

MRR_PREFIX = "Maximum Receive Rate trial results in packets per second: "


@lru_cache(maxsize=8)
def _trials_format(n: int) -> str:
    return MRR_PREFIX + "[" + ", ".join(["%.2f"] * n) + "]"


def mrr_message(trials: list[float]) -> str:
    """``Maximum Receive Rate trial results in packets per second: [a, b, ...]`` (2 decimals)."""
    return _trials_format(len(trials)) % tuple(trials)


def frame_bytes(frame: str) -> float:
    """Bytes per frame for the Gbps formula: 64B -> 64, IMIX -> 353.83."""
    return IMIX_BYTES if frame.upper() == "IMIX" else float(frame.upper().rstrip("B"))


def gbps(pps: float, frame: str) -> float:
    """Gbps = pps × (frame + 20) × 8 / 1e9 (20 B of preamble and inter-frame gap)."""
    return pps * (frame_bytes(frame) + 20.0) * 8.0 / 1e9


@lru_cache(maxsize=64)
def fake_hdrh(key: int) -> str:
    """A stand-in for an encoded HdrHistogram: the right prefix and alphabet, not decodable."""
    raw = hashlib.sha256(f"hdrh-{key}".encode()).digest() * 2
    return "HISTFAAAA" + base64.b64encode(raw).decode()[:52]


def latency_numbers(avg: float, key: int) -> tuple[int, int, int, str]:
    """``(min, avg, max, hdrh)`` of one direction's latency measurement, whole µs as TRex reports them."""
    a = max(1, round(avg))
    return max(1, round(avg * 0.55)), a, round(avg * 3.1) + 4, fake_hdrh(key % 64)


def _lat(avg: float, key: int) -> str:
    return "/".join(str(x) for x in latency_numbers(avg, key))


def _lat_line(prefix: str, d1: float, d2: float, key: int) -> str:
    return f"{prefix}['{_lat(d1, key)}', '{_lat(d2, key + 1)}']"


def _rate(label: str, pps: float, frame: str) -> str:
    return f"{label}: {pps:.1f} pps, {gbps(pps, frame):.2f} Gbps (initial)"


def ndrpdr_message(ndr: float, pdr: float, lat50_d1: float, lat50_d2: float, frame: str, key: int = 0) -> str:
    """The NDRPDR message: NDR/PDR bounds, latency at NDR/PDR and at 90/50/10/0 % of PDR.

    ``ndr`` and ``pdr`` are the lower bounds (the trended values); upper bounds are 0.5 %
    above them. ``lat50_*`` are the average latencies at 50 % PDR per direction (µs).
    """
    lines = [
        _rate("NDR_LOWER", ndr, frame),
        _lat_line("LATENCY [min/avg/max/hdrh] per stream: ", lat50_d1 * 2.4, lat50_d2 * 2.4, key),
        _rate("NDR_UPPER", ndr * 1.005, frame),
        _rate("PDR_LOWER", pdr, frame),
        _lat_line("LATENCY [min/avg/max/hdrh] per stream: ", lat50_d1 * 3.9, lat50_d2 * 3.9, key + 2),
        _rate("PDR_UPPER", pdr * 1.005, frame),
        _lat_line("Latency at 90% PDR: ", lat50_d1 * 1.6, lat50_d2 * 1.6, key + 4),
        _lat_line("Latency at 50% PDR: ", lat50_d1, lat50_d2, key + 6),
        _lat_line("Latency at 10% PDR: ", lat50_d1 * 0.7, lat50_d2 * 0.7, key + 8),
        _lat_line("Latency at 0% PDR: ", lat50_d1 * 0.6, lat50_d2 * 0.6, key + 10),
    ]
    return "\n" + " \n".join(lines)


#: Load (% of PDR) -> factor on the 50 % latency, as the NDRPDR messages write them.
LATENCY_LOADS = {90: 1.6, 50: 1.0, 10: 0.7, 0: 0.6}


def ndrpdr_message_v7(ndr: float, pdr: float, lat50_d1: float, lat50_d2: float, frame: str, key: int = 0) -> str:
    """The NDRPDR message since CSIT's MLRsearch v7 (2023-10): ``NDR: <pps> pps, <Gbps> Gbps (initial)``,
    the same for PDR (conditional throughput, no upper bounds, no per-bound latency), then latency at
    90/50/10/0 % of PDR. Same numbers as ``ndrpdr_message``, so a history spanning both trends as one."""
    lines = [_rate("NDR", ndr, frame), _rate("PDR", pdr, frame)]
    lines += [_lat_line(f"Latency at {load}% PDR: ", lat50_d1 * f, lat50_d2 * f, key + 4 + 2 * i)
              for i, (load, f) in enumerate(LATENCY_LOADS.items())]
    return "\n" + " \n".join(lines)


#: Failure messages seen in CSIT runs, with the node addresses filled in.
FAILURES = (
    "Traffic generator on {tg} failed: no packets received in 1.0 s trial, "
    "expected at least 1 (TRex port 1 link down?)",
    "Setup failed:\nSSH command 'sudo service vpp restart' failed on {dut} (rc 1): "
    "Job for vpp.service failed because the control process exited with error code.",
    "Teardown failed:\nVPP API socket on {dut} did not answer within 20 s: show runtime",
    "Interface avf-0/86/1/0 on {dut} did not come up within 30 s",
)


def failure_message(which: int, tg_ip: str, dut_ip: str) -> str:
    return FAILURES[which % len(FAILURES)].format(tg=tg_ip, dut=dut_ip)
