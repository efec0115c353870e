"""A CSIT-like Robot suite with today's keywords: MLRsearch v7 messages, CPS units, UTI JSON export.

Robot Framework itself runs the suite. The status messages are built the way CSIT's
``performance_display.robot`` / ``performance_utils.robot`` build them (``Set Test Message``
with ``append=yes``, so every line but the last ends with a space), and a small library
writes each test's ``*.info.json`` the way CSIT's ``ExportJson``/``ExportResult`` do: from
the Robot variables (``SUITE_NAME``, ``TEST_NAME``, ``TEST_TAGS``, ``TEST_STATUS``,
``TEST_MESSAGE``) in the test teardown, suite files from a listener. So one run gives the
same tests written both ways: output.xml and the UTI tree.
"""

from __future__ import annotations

import io
import json
import os
from datetime import datetime, timezone
from pathlib import Path

import robot
from robot.libraries.BuiltIn import BuiltIn

MODEL_VERSION = "1.5.1"
_REPO = Path(__file__).resolve().parents[2]
TG_HOST = "10.30.51.45"
DUT_HOST = "10.30.51.44"
DUT_VERSION = "24.10-rc0~57-g3c4d5e6f7~b2210"
TESTBEDS = {TG_HOST: "2n-icx-tb1"}

MRR_TRIALS = [21000000.0, 22000000.0, 23000000.0, 24000000.0]  # mean 22.5e6, pstdev sqrt(1.25e12)
CPS_TRIALS = [100000.0, 110000.0]  # mean 105000, pstdev 5000
NDR_PPS, NDR_GBPS = 19876543.5, 13.357
PDR_PPS, PDR_GBPS = 20123456.25, 13.523
LATENCY = {  # load -> (forward, reverse) min/avg/max/hdrh strings, µs
    90: ("9/14/29/HISTFAAAAAF", "9/15/29/HISTFAAAAAG"),
    50: ("7/11/18/HISTFAAAAAH", "8/12/19/HISTFAAAAAI"),
    10: ("7/10/22/HISTFAAAAAJ", "7/10/21/HISTFAAAAAK"),
    0: ("6/10/20/HISTFAAAAAL", "6/10/20/HISTFAAAAAM"),
}
NDR_CPS, PDR_CPS = 412345.5, 420000.25
SOAK_LOWER, SOAK_UPPER = 9000001.0, 9500001.0
FAIL_MESSAGE = "Traffic generator did not start"

AREA_WITH_SPACE = "ip4_tunnels"
SUITE_NAME_MRR = "2n1l-25ge2p1xxv710-ethip4-ip4base-mrr"
SUITE_NAME_NDR = "2n1l-25ge2p1xxv710-ethip4-ip4base-ndrpdr"


class UtiExport:
    """Robot library and listener writing CSIT's UTI files under ``${UTI_DIR}``."""

    ROBOT_LIBRARY_SCOPE = "GLOBAL"
    ROBOT_LISTENER_API_VERSION = 3

    def __init__(self, out_dir: str):
        self.ROBOT_LIBRARY_LISTENER = self
        self.out_dir = out_dir
        self.data: dict | None = None
        self.start: datetime | None = None

    # -- suite files, from the listener (times exactly as Robot records them) --------------
    def _suite_path(self, long_name: str) -> str:
        return os.path.join(self.out_dir, *long_name.lower().replace(" ", "_").split("."))

    def start_suite(self, data, result):
        self._write(os.path.join(self._suite_path(result.full_name), "setup.info.json"), {
            "version": MODEL_VERSION, "suite_name": result.full_name, "suite_documentation": "",
            "start_time": _rfc3339(result.start_time), "end_time": _rfc3339(result.start_time),
            "hosts": [DUT_HOST, TG_HOST], "telemetry": [],
        })

    def end_suite(self, data, result):
        self._write(os.path.join(self._suite_path(result.full_name), "teardown.info.json"), {
            "version": MODEL_VERSION, "suite_name": result.full_name,
            "start_time": _rfc3339(result.start_time), "end_time": _rfc3339(result.end_time),
            "hosts": [DUT_HOST, TG_HOST], "telemetry": [],
        })

    # -- keywords ------------------------------------------------------------------------
    def start_test_export(self):
        self.start = datetime.now(timezone.utc)
        self.data = {"version": MODEL_VERSION, "result": {"type": "unknown"}, "hosts": [DUT_HOST, TG_HOST],
                     "telemetry": [], "dut_type": "vpp", "dut_version": DUT_VERSION,
                     "tg_type": "trex", "tg_version": "3.03", "test_documentation": ""}

    def append_mrr_value(self, value, unit):
        node = self.data["result"]
        node["type"] = "mrr"
        rate = node.setdefault("receive_rate", {}).setdefault("rate", {"unit": unit, "values": []})
        rate["values"].append(float(value))

    def export_search_bound(self, text, value, unit, bandwidth=None):
        text = str(text).lower()
        kind = "soak" if "plrsearch" in text else "ndrpdr"
        node = self.data["result"]
        node["type"] = kind
        item = {"rate": {"value": float(value), "unit": unit}}
        if bandwidth:
            item["bandwidth"] = {"value": float(bandwidth), "unit": "bps"}
        key = "critical_rate" if kind == "soak" else ("ndr" if "ndr" in text else "pdr")
        node.setdefault(key, {})["upper" if "upper" in text else "lower"] = item

    def export_ndrpdr_latency(self, text, latency):
        percent = next((p for p in (90, 50, 10) if str(p) in text), 0)
        for direction, stream in zip(("forward", "reverse"), latency):
            lo, avg, hi, hdrh = stream.split("/", 3)
            self.data["result"].setdefault(f"latency_{direction}", {})[f"pdr_{percent}"] = {
                "min": int(lo), "avg": int(avg), "max": int(hi), "hdrh": hdrh, "unit": "us"}

    def finalize_test_export(self):
        b = BuiltIn()
        end = datetime.now(timezone.utc)
        suite = b.get_variable_value("${SUITE_NAME}").lower().replace(" ", "_")
        test = b.get_variable_value("${TEST_NAME}").lower().replace(" ", "_")
        tags = list(b.get_variable_value("${TEST_TAGS}"))
        passed = b.get_variable_value("${TEST_STATUS}") == "PASS"
        test_type = next(t for t in ("soak", "ndrpdr", "mrr") if t.upper() in tags)
        self.data.update({
            "test_id": f"{suite}.{test}", "tags": tags, "passed": passed,
            "message": "" if passed else b.get_variable_value("${TEST_MESSAGE}"),
            "start_time": _rfc3339(self.start), "end_time": _rfc3339(end),
            "duration": (end - self.start).total_seconds(), "test_type": test_type,
            "test_name_short": test.split("-", 2)[2].rsplit(f"-{test_type}", 1)[0],
            "test_name_long": "25ge2p1xxv710-" + test.rsplit(f"-{test_type}", 1)[0],
        })
        if self.data["result"]["type"] == "mrr":
            rate = self.data["result"]["receive_rate"]["rate"]
            mean = sum(rate["values"]) / len(rate["values"])
            rate["avg"] = mean
            rate["stdev"] = (sum((v - mean) ** 2 for v in rate["values"]) / len(rate["values"])) ** 0.5
        self._write(os.path.join(self._suite_path(b.get_variable_value("${SUITE_NAME}")), f"{test}.info.json"),
                    self.data)
        self.data = None

    @staticmethod
    def _write(path: str, data: dict) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)


def _rfc3339(t: datetime) -> str:
    if t.tzinfo is None:  # Robot's times are naive local times; the suites run with TZ=UTC
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


INIT = f"""*** Settings ***
Library    tests.parse.csit_today.UtiExport    ${{UTI_DIR}}
Suite Setup    Setup Framework

*** Keywords ***
Setup Framework
    Log    Setup of node TG host {TG_HOST}, port 22 done.
"""

KEYWORDS = f"""*** Settings ***
Library    tests.parse.csit_today.UtiExport    ${{UTI_DIR}}
Suite Setup    Show Vpp Version On All Duts
Test Setup    Start Test Export
Test Teardown    Finalize Test Export

*** Keywords ***
Show Vpp Version On All Duts
    Log    VPP version: {DUT_VERSION}

Show Mrr
    [Arguments]    ${{unit}}    ${{unit_text}}    @{{trials}}
    FOR    ${{t}}    IN    @{{trials}}
        Append Mrr Value    ${{t}}    ${{unit}}
    END
    ${{results}} =    Evaluate    [float(t) for t in $trials]
    Set Test Message    ${{\\n}}Maximum Receive Rate trial results
    Set Test Message    in ${{unit_text}}: ${{results}}    append=yes

Display Single PPS Bound
    [Arguments]    ${{text}}    ${{pps}}    ${{bandwidth}}
    Set Test Message    ${{\\n}}${{text}}: ${{pps}} pps,    append=yes
    Set Test Message    ${{bandwidth}} Gbps (initial)    append=yes
    Export Search Bound    ${{text}}    ${{pps}}    pps    ${{bandwidth * 1e9}}

Display Single CPS Bound
    [Arguments]    ${{text}}    ${{tps}}
    Set Test Message    ${{\\n}}${{text}}: ${{tps}} CPS    append=yes
    Export Search Bound    ${{text}}    ${{tps}}    cps

Measure And Show Latency At Specified Rate
    [Arguments]    ${{message_prefix}}    @{{latency}}
    Set Test Message    ${{\\n}}${{message_prefix}} ${{latency}}    append=${{True}}
    Export Ndrpdr Latency    ${{message_prefix}}    ${{latency}}
"""


def _tags(*extra: str) -> str:
    base = ["1C", "2T1C", "64B", "PERFTEST", "NIC_Intel-XXV710", "DRV_VFIO_PCI", "2_NODE_SINGLE_LINK_TOPO", "ETH",
            "IP4FWD", "IP4BASE"]
    return "    ".join(base + list(extra))


def mrr_suite() -> str:
    trials = "    ".join(repr(t) for t in MRR_TRIALS)
    cps = "    ".join(repr(t) for t in CPS_TRIALS)
    return KEYWORDS + f"""
*** Test Cases ***
64B-1c-ethip4-ip4base-mrr
    [Tags]    {_tags("MRR")}
    Show Mrr    pps    packets per second    {trials}

64B-1c-ethip4tcp-nat44ed-h262144-p63-s16515072-cps-mrr
    [Tags]    {_tags("MRR", "TCP_CPS")}
    Show Mrr    cps    estimated connections per second    {cps}

64B-2c-ethip4-ip4base-mrr
    [Tags]    2C    4T2C    64B    MRR    NIC_Intel-XXV710    DRV_VFIO_PCI
    Fail    {FAIL_MESSAGE}
"""


def ndrpdr_suite() -> str:
    latency = "\n".join(
        f"    Measure And Show Latency At Specified Rate    Latency at {p}% PDR:    {fwd}    {rev}"
        for p, (fwd, rev) in LATENCY.items())
    return KEYWORDS + f"""
*** Test Cases ***
64B-1c-ethip4-ip4base-ndrpdr
    [Tags]    {_tags("NDRPDR")}
    Display Single PPS Bound    NDR    {NDR_PPS!r}    ${{{NDR_GBPS!r}}}
    Display Single PPS Bound    PDR    {PDR_PPS!r}    ${{{PDR_GBPS!r}}}
{latency}

64B-1c-ethip4tcp-nat44ed-h262144-p63-s16515072-cps-ndrpdr
    [Tags]    {_tags("NDRPDR", "TCP_CPS")}
    Display Single CPS Bound    NDR    {NDR_CPS!r}
    Display Single CPS Bound    PDR    {PDR_CPS!r}

64B-1c-ethip4-ip4base-soak
    [Tags]    {_tags("SOAK")}
    Display Single PPS Bound    PLRsearch lower bound    {SOAK_LOWER!r}    ${{6.0}}
    Display Single PPS Bound    PLRsearch upper bound    {SOAK_UPPER!r}    ${{6.3}}
"""


def run_csit_today(root: Path) -> tuple[Path, Path]:
    """Run the suites once; return (output.xml, the UTI tree's directory)."""
    top = root / "tests"
    leaf = top / "vpp" / "perf" / "ip4"
    leaf.mkdir(parents=True, exist_ok=True)
    tunnels = top / "vpp" / "perf" / AREA_WITH_SPACE  # Robot names this suite "Ip4 Tunnels", CSIT's UTI "ip4_tunnels"
    tunnels.mkdir(parents=True, exist_ok=True)
    (top / "__init__.robot").write_text(INIT)
    (leaf / f"{SUITE_NAME_MRR}.robot").write_text(mrr_suite())
    (tunnels / f"{SUITE_NAME_NDR}.robot").write_text(ndrpdr_suite())
    uti = root / "uti"
    out = root / "output.xml"
    old_tz = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    try:
        import time

        time.tzset()
        rc = robot.run(str(top), output=str(out), log=None, report=None, loglevel="INFO",
                       variable=[f"UTI_DIR:{uti}"], pythonpath=[str(_REPO)], stdout=io.StringIO(), stderr=io.StringIO())
    finally:
        if old_tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old_tz
        time.tzset()
    assert out.exists() and uti.is_dir(), f"robot produced no output (rc {rc})"
    return out, uti
