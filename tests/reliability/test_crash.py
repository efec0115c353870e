"""Crash safety: ``kill -9`` of ``pal run`` at seeded random moments and at the store's crash steps,
and a full disk. After each, the next run completes with the same data as an uninterrupted
one, and the site is always a complete one (every local link in index.html resolves)."""

from __future__ import annotations

import json
import re
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from lxml import html

from tests.reliability.record import record
from tests.reliability.runs import REPO, pal_cmd, pal_env, run_pal, spec_dict, tiny_history, write_spec

SEED = 20240611
KILLS = 4
STORE_STEPS = ("fragment-temp", "fragments-placed", "manifest-temp", "manifest-replaced")


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    return tiny_history(tmp_path_factory.mktemp("crash") / "data")


@pytest.fixture(scope="module")
def reference(history, tmp_path_factory) -> dict:
    """What an uninterrupted run stores and publishes."""
    root = tmp_path_factory.mktemp("crash-ref")
    spec = write_spec(root / "spec.yaml", spec_dict(history, root / "out"))
    r = run_pal("run", "--spec", str(spec))
    assert r.returncode in (0, 2), r.stderr
    return _state(root / "out")


def _state(out: Path) -> dict:
    """Facts that must match between runs: stored builds and rows, alerts, series pages."""
    info = json.loads(run_pal("store", "info", "--spec", str(out.parent / "spec.yaml")).stdout)
    alerts = json.loads((out / "alerts.json").read_text())
    pages = sorted(p.name for p in (out / "site" / "s").glob("*.html"))
    return {"rows": info["rows"], "builds": info.get("builds"), "pages": pages,
            "alerts": sorted(json.dumps({k: v for k, v in a.items() if k not in _RUN_RELATIVE}, sort_keys=True)
                             for a in alerts.get("alerts", alerts) if isinstance(a, dict))}


# alert fields that depend on what earlier runs reported (new vs ongoing), not on the data
_RUN_RELATIVE = {"status", "fresh", "previous_id", "previous_state", "fails_job"}


def check_site_complete(site: Path) -> int:
    """Every local href/src of index.html (and of the pages it links) exists. Returns links checked."""
    assert (site / "index.html").is_file(), f"{site} has no index.html"
    checked = 0
    todo, seen = [site / "index.html"], set()
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        doc = html.fromstring(page.read_bytes())
        for el in doc.iter():
            for name in ("href", "src"):
                v = el.get(name) if isinstance(el.tag, str) else None
                if not v or urlsplit(v).scheme or v.startswith(("#", "//")):
                    continue
                target = (page.parent / urlsplit(v).path).resolve()
                assert target.exists(), f"{page.relative_to(site)} links to missing {v}"
                checked += 1
                if target.suffix == ".html" and len(seen) < 40:
                    todo.append(target)
    return checked


def _run_seconds(history: Path, root: Path) -> float:
    """How long an uninterrupted ``pal run --full`` of ``history`` takes here (process start-up
    included, as for the runs the test kills): the kill moments are drawn inside it."""
    root.mkdir()
    spec = write_spec(root / "spec.yaml", spec_dict(history, root / "out"))
    start = time.monotonic()
    r = run_pal("run", "--spec", str(spec), "--full")
    assert r.returncode in (0, 2), r.stderr
    return time.monotonic() - start


def test_kill_9_at_random_moments_loses_nothing(history, reference, tmp_path):
    spec = write_spec(tmp_path / "spec.yaml", spec_dict(history, tmp_path / "out"))
    rng = random.Random(SEED)
    # moments within a run's measured length (fixed seconds outlasted the runs as they got faster:
    # half the kills came after the run had ended); ``reference`` warmed the compiled kernels' cache
    seconds = _run_seconds(history, tmp_path / "timing")
    # first an uninterrupted run exists only after the kills: the first kills hit an empty out dir
    delays = sorted(rng.uniform(0.05, 0.85) * seconds for _ in range(KILLS))
    killed = 0
    for i, delay in enumerate(delays):
        if i == KILLS // 2:  # half of the kills hit a run that re-renders over a complete site
            r = run_pal("run", "--spec", str(spec), "--full")
            assert r.returncode in (0, 2), r.stderr
        p = subprocess.Popen(pal_cmd("run", "--spec", str(spec), "--full"), env=pal_env(), cwd=REPO,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            killed += 1
        p.wait()
        site = tmp_path / "out" / "site"
        if site.exists():
            check_site_complete(site)
    r = run_pal("run", "--spec", str(spec))
    assert r.returncode in (0, 2), r.stderr
    assert _state(tmp_path / "out") == reference
    assert check_site_complete(tmp_path / "out" / "site") > 0
    leftovers = [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".site-new")]
    assert leftovers == [], leftovers
    assert killed >= KILLS // 2, f"{killed} of {KILLS} kills landed before their run ended ({delays}, {seconds:.1f} s)"
    record("crash safety", f"kill -9 of pal run at {KILLS} seeded random moments (seed {SEED})",
           "site always complete; next run equals an uninterrupted one", killed=killed, lost=0)


@pytest.mark.parametrize("step", STORE_STEPS)
def test_crash_at_each_store_step_then_recover(history, reference, tmp_path, step):
    spec = write_spec(tmp_path / "spec.yaml", spec_dict(history, tmp_path / "out"))
    r = run_pal("run", "--spec", str(spec), env={"PAL_STORE_CRASH_AT": step})
    assert r.returncode == 137, (step, r.returncode, r.stderr[-2000:])
    r = run_pal("run", "--spec", str(spec))
    assert r.returncode in (0, 2), r.stderr
    assert _state(tmp_path / "out") == reference
    check_site_complete(tmp_path / "out" / "site")
    record("crash safety", f"process ends like kill -9 at store step {step}", "next run complete, same data",
           killed=1, lost=0)


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return r.returncode == 0


def test_disk_full_gives_a_clear_error_and_keeps_the_previous_site(history, tmp_path):
    mnt = tmp_path / "small"
    if os.geteuid() != 0 or not _mount_tmpfs(mnt, "24m"):
        pytest.skip("mounting a size-limited tmpfs needs root (mount -t tmpfs)")
    try:
        out = mnt / "out"
        spec = write_spec(tmp_path / "spec.yaml", spec_dict(history, out))
        r = run_pal("run", "--spec", str(spec))
        assert r.returncode in (0, 2), r.stderr[-2000:]
        before = {p.relative_to(out / "site"): p.read_bytes() for p in (out / "site").rglob("*") if p.is_file()}
        # fill the disk, leaving less than a site needs
        free = shutil.disk_usage(mnt).free
        with open(mnt / "filler", "wb") as f:
            f.write(b"\0" * max(0, free - 64 * 1024))
        r = run_pal("run", "--spec", str(spec), "--full")
        assert r.returncode == 1, (r.returncode, r.stderr[-3000:])
        assert "Traceback" not in r.stderr, r.stderr[-3000:]
        assert re.search(r"No space left on device: \S*/", r.stderr), r.stderr[-2000:]  # names the path
        after = {p.relative_to(out / "site"): p.read_bytes() for p in (out / "site").rglob("*") if p.is_file()}
        assert after == before, "the previous site is kept byte for byte"
        check_site_complete(out / "site")
        (mnt / "filler").unlink()
        r = run_pal("run", "--spec", str(spec), "--full")
        assert r.returncode in (0, 2), r.stderr[-2000:]
        assert not [p for p in out.iterdir() if p.name.startswith(".site-new")]
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
    record("crash safety", "disk full during a run (24 MB tmpfs filled)", "exit 1 with 'No space left on device: <the file>', "
           "previous site kept byte for byte; next run completes", faults=1, lost=0)
