"""Alert texts in CSIT's layout, pinned by golden files (tests/alerts/golden/).

Regenerate after an intended layout change with ``PAL_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pal.alerts import alert_id, build_alerts, write_alert_outputs
from pal.alerts.text import LEGEND, mask_ipv4, normalise_message
from pal.report import RunReport
from tests.alerts.factory import ALT, ICX, builds_for, make_spec, samples_for
from tests.alerts.scenario import MESSAGES, run_results
from tests.alerts.test_build import ACKED_KEY

GOLDEN = Path(__file__).parent / "golden"
ACKS = {alert_id(ACKED_KEY, 120, "regression"): "known: NIC firmware, CSIT-1234"}


def _write(out: Path, extra: bool = False, previous=None):
    results = run_results(extra)
    builds = builds_for(results, {(ICX, 120): 3})
    samples = samples_for(results, MESSAGES)
    spec = make_spec()
    alerts = build_alerts(results, builds, samples, spec, previous, ACKS)
    paths = write_alert_outputs(out, alerts, results, builds, samples, spec, RunReport())
    return alerts, paths


def _check(path: Path, golden: str) -> None:
    target = GOLDEN / golden
    text = path.read_text(encoding="utf-8")
    if os.environ.get("PAL_UPDATE_GOLDEN"):
        target.write_text(text, encoding="utf-8")
    assert text == target.read_text(encoding="utf-8"), f"{path.name} differs from {target}"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    out1 = tmp_path_factory.mktemp("run1")
    alerts1, paths1 = _write(out1)
    out2 = tmp_path_factory.mktemp("run2")
    alerts2, paths2 = _write(out2, extra=True, previous=[a.to_dict() for a in alerts1])
    return paths1, paths2


@pytest.mark.parametrize("name,golden", [
    ("trending-regressions", "run1-trending-regressions.txt"),
    ("trending-progressions", "run1-trending-progressions.txt"),
    ("trending-failed-tests", "run1-trending-failed-tests.txt"),
    (f"regressions-{ICX}", "run1-regressions-2n-icx.txt"),
])
def test_run1_golden(two_runs, name, golden):
    _check(two_runs[0][name], golden)


@pytest.mark.parametrize("name,golden", [
    ("trending-regressions", "run2-trending-regressions.txt"),
    ("trending-progressions", "run2-trending-progressions.txt"),
])
def test_run2_golden(two_runs, name, golden):
    _check(two_runs[1][name], golden)


def test_per_job_files_hold_only_new_changes(two_runs):
    run1, run2 = two_runs
    icx = run1[f"regressions-{ICX}"].read_text()
    assert icx.startswith(LEGEND + "\n\n")
    assert "2t1c-ethip4-ip4base-mrr" in icx and "l2bdbasemaclrn" not in icx  # acked: not mailed
    assert run1[f"progressions-{ALT}"].read_bytes() == b""
    # Run 2: the only new change is ALT's way back (a progression); every other file is empty.
    per_job = {n: p for n, p in run2.items() if n.startswith(("regressions-", "progressions-"))}
    assert len(per_job) == 4
    assert all(p.read_bytes() == b"" for n, p in per_job.items() if n != f"progressions-{ALT}")
    back = per_job[f"progressions-{ALT}"].read_text()
    assert "2t1c-ethip4-ip4base-mrr" in back and "1518B" not in back


def test_stale_per_job_file_is_removed(tmp_path):
    stale = tmp_path / "alerts" / "regressions-csit-vpp-perf-mrr-daily-master-2n-old.txt"
    stale.parent.mkdir(parents=True)
    stale.write_text("old\n")
    _write(tmp_path)
    assert not stale.exists()


def test_no_regressions_line_for_quiet_job(two_runs):
    text = two_runs[0]["trending-progressions"].read_text()
    block = text.split(f"{ALT}/120, VPP version: 22.02-rc0~120-g88a9c0e02~b820\n", 1)[1]
    assert block.splitlines()[0] == "No progressions"


def test_mask_ipv4():
    assert mask_ipv4("Setup of node TG host 10.30.51.45, port 22 done.") == "Setup of node TG host x.x.x.x, port 22 done."
    assert mask_ipv4("ssh 192.168.0.1:22 and 10.0.0.255") == "ssh x.x.x.x:22 and x.x.x.x"
    # Versions and numbers with fewer or more parts are not addresses.
    assert mask_ipv4("VPP 22.02.1 build 1.2.3.4.5") == "VPP 22.02.1 build 1.2.3.4.5"


def test_normalise_groups_alike_messages():
    a = normalise_message("Traffic generator on 10.30.51.45 timed out after 120 s")
    b = normalise_message("Traffic generator on 10.30.51.46 timed out after  95 s")
    assert a == b == "Traffic generator on x.x.x.x timed out after # s"
    assert normalise_message("mac 3c:fd:fe:aa:bb:01 at 0x7f00dead") == "mac <mac> at <hex>"
    assert normalise_message("Setup of node DUT1 failed") != a


def test_failed_tests_text_masks_every_address(two_runs):
    text = two_runs[0]["trending-failed-tests"].read_text()
    assert "10.30.51" not in text
    assert "[1] 2 tests: Traffic generator on x.x.x.x timed out after 120 s" in text
