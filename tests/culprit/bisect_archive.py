"""A CSIT bisect archive with a known culprit, in the three forms CSIT's builds leave results.

VPP commits 100..108 after tag v22.02-rc0; commit 105 drops the MRR rate from 20 to 16 Mpps.
git bisect between 100 (earliest) and 108 (latest) tests 104, then 106, then 105.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from pathlib import Path

import robot

CULPRIT = 105
#: (directory, commit) in the order the job measures them.
ORDER = [("earliest", 100), ("latest", 108), ("middle/1", 104), ("middle/2", 106), ("middle/3", 105)]
TEST_ID = "2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.64b-2t1c-ethip4-ip4base-mrr"


def commit(k: int) -> str:
    return hashlib.sha1(str(k).encode()).hexdigest()[:9]


def version(k: int) -> str:
    return f"22.02-rc0~{k}-g{commit(k)}~b{500 + k}"


def trials(k: int, n: int = 10) -> list[float]:
    rng = random.Random(k)
    level = 2.0e7 if k < CULPRIT else 1.6e7
    return [round(level * (1 + rng.gauss(0, 0.005)), 2) for _ in range(n)]


def write_uti(d: Path, k: int, passed: bool = True) -> None:
    leaf = d / "tests" / "vpp" / "perf" / "ip4" / "2n1l-25ge2p1xxv710-ethip4-ip4base-mrr"
    leaf.mkdir(parents=True, exist_ok=True)
    (leaf / "setup.info.json").write_text(json.dumps({"version": "1.5.1", "dut_version": version(k)}))
    values = trials(k)
    result = ({"type": "mrr", "receive_rate": {"rate": {"values": values, "avg": sum(values) / len(values),
                                                         "stdev": 0.0, "unit": "pps"}}}
              if passed else {"type": "unknown"})
    doc = {"version": "1.5.1", "test_id": "tests.vpp.perf.ip4." + TEST_ID, "passed": passed,
           "message": "" if passed else "Traffic generator failed", "dut_type": "VPP", "dut_version": version(k),
           "result": result}
    (leaf / "64b-2t1c-ethip4-ip4base-mrr.info.json").write_text(json.dumps(doc))


def write_results_json(d: Path, k: int) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "results.json").write_text(json.dumps({"tests.vpp.perf.ip4." + TEST_ID: trials(k)}))


_SUITE = """*** Settings ***
Suite Setup    Show Vpp Version On All Duts

*** Keywords ***
Show Vpp Version On All Duts
    Log    VPP version: {version}

*** Test Cases ***
64B-1c-ethip4-ip4base-mrr
    [Tags]    1C    2T1C    64B    MRR    NIC_Intel-XXV710    DRV_VFIO_PCI    ethip4-ip4base
    {body}
"""


def write_output_xml(d: Path, k: int, src: Path, passed: bool = True) -> Path:
    """Genuine Robot Framework output.xml of the build of commit ``k``."""
    top = src / "tests" / "vpp" / "perf" / "ip4"
    top.mkdir(parents=True, exist_ok=True)
    body = (f"Pass Execution    Maximum Receive Rate trial results in packets per second: "
            f"[{', '.join(repr(t) for t in trials(k))}]" if passed else "Fail    Traffic generator failed")
    (top / "2n1l-25ge2p1xxv710-ethip4-ip4base-mrr.robot").write_text(_SUITE.format(version=version(k), body=body))
    d.mkdir(parents=True, exist_ok=True)
    out = d / "output.xml"
    robot.run(str(src / "tests"), output=str(out), log=None, report=None, stdout=io.StringIO(), stderr=io.StringIO())
    assert out.exists()
    return out


def write_archive(root: Path, form: str, upto: int = len(ORDER), prefix: str = "") -> Path:
    """The archive with the first ``upto`` builds of ORDER measured, results in ``form``."""
    for i, (name, k) in enumerate(ORDER[:upto]):
        d = root / (prefix + name)
        if form == "uti":
            write_uti(d, k)
        elif form == "results.json":
            write_results_json(d, k)
        else:
            write_output_xml(d, k, root.parent / f"src-{root.name}-{i}")
    return root
