"""A tiny CSIT-like Robot suite, run by Robot Framework itself to get genuine RF 7 output.xml.

The tests pass or fail with CSIT's status messages and tags; the numbers depend on the
build so that a multi-build history has known values per build.
"""

from __future__ import annotations

import io
from pathlib import Path

import robot

INIT = """*** Settings ***
Suite Setup    Setup Framework

*** Keywords ***
Setup Framework
    Log    Setup of node TG host 10.30.51.45, port 22 done.
"""

LEAF = """*** Settings ***
Suite Setup    Show Vpp Version On All Duts

*** Keywords ***
Show Vpp Version On All Duts
    Log    VPP version: {version}

*** Test Cases ***
{tests}
"""


def mrr_trials(build: int) -> list[float]:
    return [build * 1e6 + 1e5 * i for i in range(3)]  # mean build*1e6 + 1e5


def ndr(build: int) -> float:
    return 1.0e7 + build


def pdr(build: int) -> float:
    return 1.1e7 + build * 0.5


def version(build: int) -> str:
    return f"22.02-rc0~{build}-g88a9c0e02~b{build}"


def _ndrpdr_message(build: int) -> str:
    lines = [
        "",
        f"NDR_LOWER: {ndr(build)} pps, 6.72 Gbps (initial)",
        "LATENCY [min/avg/max/hdrh] per stream: ['10/15/30/HISTFAAAAAB', '11/16/31/HISTFAAAAAC']",
        f"NDR_UPPER: {ndr(build) + 100} pps, 6.73 Gbps (initial)",
        f"PDR_LOWER: {pdr(build)} pps, 7.39 Gbps (initial)",
        "LATENCY [min/avg/max/hdrh] per stream: ['12/20/40/HISTFAAAAAD', '13/21/41/HISTFAAAAAE']",
        f"PDR_UPPER: {pdr(build) + 100} pps, 7.40 Gbps (initial)",
        "Latency at 90% PDR: ['9/14/29/HISTFAAAAAF', '9/14/29/HISTFAAAAAG']",
        f"Latency at 50% PDR: ['8/{build + 10}/25/HISTFAAAAAH', '4294967295/4294967295/4294967295/']",
        "Latency at 10% PDR: ['7/11/22/HISTFAAAAAI', '7/10/21/HISTFAAAAAJ']",
        "Latency at 0% PDR: ['6/10/20/HISTFAAAAAK', '6/10/20/HISTFAAAAAL']",
    ]
    # CSIT ends every line but the last with a space (" \n"); this suite uses bare "\n" joins.
    return "\\n".join(lines)


def _test(name: str, tags: list[str], body: str) -> str:
    return f"{name}\n    [Tags]    {'    '.join(tags)}\n    Log    measuring\n    {body}\n"


def write_suite(root: Path, build: int) -> Path:
    """Write the suite tree under ``root/tests`` for one build; return the top directory."""
    top = root / "tests"
    leaf_dir = top / "vpp" / "perf" / "ip4"
    leaf_dir.mkdir(parents=True, exist_ok=True)
    (top / "__init__.robot").write_text(INIT)
    trials = ", ".join(repr(t) for t in mrr_trials(build))
    mrr_tests = [
        _test("tc01-64B-1c-ethip4-ip4base-mrr",
              ["1C", "2T1C", "64B", "MRR", "PERFTEST", "NIC_Intel-XXV710", "DRV_VFIO_PCI", "2_NODE_SINGLE_LINK_TOPO"],
              f"Pass Execution    Maximum Receive Rate trial results in packets per second: [{trials}]"),
        _test("tc02-64B-2c-ethip4-ip4base-mrr", ["2C", "4T2C", "64B", "MRR"],
              "Fail    Traffic generator did not start" if build % 2 else
              f"Pass Execution    Maximum Receive Rate trial results in packets per second: [{trials}]"),
    ]
    (leaf_dir / "2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.robot").write_text(
        LEAF.format(version=version(build), tests="\n".join(mrr_tests)))
    ndr_tests = [
        _test("64B-1c-ethip4-ip4base-ndrpdr", ["1C", "2T1C", "64B", "NDRPDR", "DRV_AVF"],
              f"Pass Execution    {_ndrpdr_message(build)}"),
        _test("64B-1c-ethip4-ip4base-soak", ["1C", "2T1C", "64B", "SOAK"],
              f"Pass Execution    PLRsearch lower bound: {9e6 + build} pps, 6.0 Gbps \\n"
              f"PLRsearch upper bound: {9.5e6 + build} pps, 6.3 Gbps"),
        _test("64B-1c-ethip4tcp-nat44ed-cps-mrr", ["1C", "2T1C", "64B", "MRR", "TCP_CPS"],
              "Pass Execution    Maximum Receive Rate trial results in estimated connections per second: "
              f"[{1000.0 * build}, {1000.0 * build + 200}]"),
    ]
    (leaf_dir / "2n1l-25ge2p1xxv710-avf-ethip4-ip4base-ndrpdr.robot").write_text(
        LEAF.format(version=version(build), tests="\n".join(ndr_tests)))
    return top


def run_robot(root: Path, build: int, out: Path, loglevel: str = "TRACE") -> Path:
    """Run Robot Framework on the suite of ``build``; return the output.xml path."""
    top = write_suite(root, build)
    out.parent.mkdir(parents=True, exist_ok=True)
    rc = robot.run(str(top), output=str(out), log=None, report=None, loglevel=loglevel,
                   stdout=io.StringIO(), stderr=io.StringIO())
    assert out.exists(), f"robot produced no output (rc {rc})"
    return out
