"""kill -9 of ``pal run`` inside every stage, render included with its process pool alive.

A history of ~360 series makes the render stage start its worker pool (site.POOL_MIN_SERIES).
Each kill lands at a seeded random moment inside one stage (the stage is read from the run's
``[k/6] stage`` lines on stderr; the moment is a random fraction of that stage's duration in an
uninterrupted run; in render, 0-100 ms after the pool's workers exist). The stage counted is
the one the run was really in when the signal was sent. After each kill: no process of the killed run survives it (a worker that
outlived the run used to keep the store's flock: "store locked by pid <dead pid>" for every
later run), and the next run completes with the data of an uninterrupted run.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.reliability.record import record
from tests.reliability.runs import (REPO, descendants, orphans_of, pal_cmd, pal_env, run_pal, spec_dict,
                                    tiny_history, write_spec)
from tests.reliability.test_crash import _state, check_site_complete

SEED = 20261124
STAGES = ("download", "parse", "analyse", "alerts", "render", "save")
#: kills per stage: 1 in make test, more in make fuzz (PAL_FUZZ_EXAMPLES)
KILLS_PER_STAGE = 1 if not os.environ.get("PAL_FUZZ_EXAMPLES") else 5
_STEP = re.compile(r"^\[(\d)/6\] (\w+)")
_DONE = re.compile(r"^\s+.*\((\d+\.\d+) s\)$")


def _uninterrupted(root: Path, tests: int) -> dict:
    """A history, the outcome of an uninterrupted run and the duration of each of its stages."""
    data = tiny_history(root / "data", tests=tests)
    spec = write_spec(root / "spec.yaml", spec_dict(data, root / "out"))
    r = run_pal("run", "--spec", str(spec))
    assert r.returncode in (0, 2), r.stderr[-2000:]
    durations, current = {}, None
    for line in r.stderr.splitlines():
        if m := _STEP.match(line):
            current = m.group(2)
        elif (m := _DONE.match(line)) and current:
            durations[current] = float(m.group(1))
            current = None
    assert set(durations) == set(STAGES), durations
    reference = _state(root / "out")
    # a second run: the output then holds a spare site (the first run's), as a daily run's does,
    # so a kill in the render may land after the render took the spare's drill-downs
    r = run_pal("run", "--spec", str(spec), "--full")
    assert r.returncode in (0, 2), r.stderr[-2000:]
    assert (root / "out" / ".site-spare" / "s").is_dir() and _state(root / "out") == reference
    return {"data": data, "out": root / "out", "reference": reference, "durations": durations}


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> dict:
    return _uninterrupted(tmp_path_factory.mktemp("kill-small"), 3)


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> dict:
    """~400 series: enough for render to start its worker pool."""
    return _uninterrupted(tmp_path_factory.mktemp("kill-big"), 400)


class _Watched:
    """``pal run`` in a subprocess, its stderr read line by line: the stage it is in, as it goes."""

    def __init__(self, spec: Path):
        self.proc = subprocess.Popen(pal_cmd("run", "--spec", str(spec), "--full"), env=pal_env(), cwd=REPO,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.stage: str | None = None
        self.started: dict[str, float] = {}
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.lines.append(line)
            if m := _STEP.match(line):
                self.stage = m.group(2)
                self.started[self.stage] = time.monotonic()

    def wait_for(self, stage: str, timeout: float = 120) -> bool:
        end = time.monotonic() + timeout
        while stage not in self.started:
            if self.proc.poll() is not None or time.monotonic() > end:
                return False
            time.sleep(0.002)
        return True


def _kill_in(spec: Path, stage: str, delay: float, pool: bool) -> tuple[str | None, list[int]]:
    """Kill the run ``delay`` s into ``stage`` (with ``pool``: ``delay`` s after its worker pool is up).

    Returns the stage the run was in when killed (None: it ended first) and its processes.
    """
    w = _Watched(spec)
    try:
        assert w.wait_for(stage), "".join(w.lines)[-2000:]
        procs: set[int] = set()
        start = w.started[stage]
        if pool:  # wait for the forkserver and a worker below the run
            while w.proc.poll() is None and w.stage == stage and len(kids := descendants(w.proc.pid)) < 2:
                time.sleep(0.001)
            procs.update(kids)
            start = time.monotonic()
        while time.monotonic() < start + delay and w.proc.poll() is None:
            procs.update(descendants(w.proc.pid))
            time.sleep(0.002)
        procs.update(descendants(w.proc.pid))
        hit = w.stage if w.proc.poll() is None else None
        if hit:
            os.kill(w.proc.pid, signal.SIGKILL)
        w.proc.wait()
        return hit, sorted(procs)
    finally:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()


def _gone(pids: list[int], within: float = 10.0) -> list[int]:
    end = time.monotonic() + within
    while (alive := orphans_of(pids)) and time.monotonic() < end:
        time.sleep(0.05)
    return alive


@pytest.mark.slow
@pytest.mark.parametrize("stage", STAGES)
def test_kill_9_in_every_stage_then_next_run_equals_uninterrupted(request, tmp_path, stage):
    rng = random.Random(f"{SEED}-{stage}")
    big = request.getfixturevalue("big" if stage == "render" else "small")
    spec = write_spec(tmp_path / "spec.yaml", spec_dict(big["data"], tmp_path / "out"))
    shutil.copytree(big["out"], tmp_path / "out")  # a complete site and store exist before the kills
    killed, with_pool, tries = 0, 0, 0
    while killed < KILLS_PER_STAGE and tries < 3 * KILLS_PER_STAGE:
        tries += 1
        pool = stage == "render"
        delay = rng.uniform(0, 0.1) if pool else rng.random() * big["durations"][stage]
        hit, procs = _kill_in(spec, stage, delay, pool)
        left = _gone(procs)
        for p in left:  # do not leave them to the next test, but fail
            os.kill(p, signal.SIGKILL)
        assert not left, f"processes of the killed run survived it: {left}"
        if hit is None:
            continue
        killed += 1
        with_pool += pool and hit == "render" and len(procs) >= 2
        check_site_complete(tmp_path / "out" / "site")
        (tmp_path / "out" / "report.json").unlink(missing_ok=True)
        r = run_pal("run", "--spec", str(spec))
        assert r.returncode in (0, 2), r.stderr[-2000:]
        assert (tmp_path / "out" / "report.json").is_file(), "the run after the kill wrote no report"
        assert _state(tmp_path / "out") == big["reference"]
        check_site_complete(tmp_path / "out" / "site")
    assert killed >= 1, f"the run ended before the kill in {stage}"
    if stage == "render":
        assert with_pool >= 1, "no kill landed while the render pool was alive"
    pool = f", {with_pool} with the render pool alive" if stage == "render" else ""
    record("crash safety", f"kill -9 in stage {stage} at seeded random moments (seed {SEED}){pool}",
           "no process of the killed run survives; next run writes its report and equals an uninterrupted one",
           killed=killed, lost=0, stage=stage, no_report=0)
