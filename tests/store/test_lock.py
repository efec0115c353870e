"""The single-writer lock: a second writer (process or instance) gets StoreError naming the holder's pid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from pal.errors import StoreError
from pal.store import Store
from tests.store.data import make_meta, make_samples

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"

HOLDER = """
import sys, time
from pal.store import Store
store = Store(sys.argv[1])
with store.lock():
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
print("released", flush=True)
"""


def start_holder(path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_second_instance_in_same_process_is_refused(tmp_path):
    first, second = Store(tmp_path / "s"), Store(tmp_path / "s")
    with first.lock():
        with first.lock():  # re-entrant within one instance
            first.insert(make_samples(JOB, 1), make_meta(JOB, 1), "a" * 64)
        with pytest.raises(StoreError, match=rf"store locked by pid {os.getpid()}$"):
            second.insert(make_samples(JOB, 2), make_meta(JOB, 2), "b" * 64)
    assert second.insert(make_samples(JOB, 2), make_meta(JOB, 2), "b" * 64) == "added"
    assert first.builds()["build"].tolist() == [1, 2]


def test_other_process_holds_lock_then_dies(tmp_path):
    path = tmp_path / "s"
    holder = start_holder(path, 60)
    try:
        store = Store(path)
        with pytest.raises(StoreError, match=rf"locked by pid {holder.pid} \(waited 0.2 s\)"):
            with store.lock(timeout=0.2):
                pass
        for write in (lambda: store.insert(make_samples(JOB, 1), make_meta(JOB, 1), "a" * 64),
                      lambda: store.remove_build(JOB, 1), lambda: store.save_state("x", {"k": 1}),
                      lambda: store.save_alerts([]), store.vacuum):
            with pytest.raises(StoreError, match=rf"locked by pid {holder.pid}"):
                write()
        assert store.builds().empty  # reading needs no lock
    finally:
        holder.send_signal(signal.SIGKILL)  # kill -9: the kernel drops the flock, the pid file stays
        holder.communicate()
    assert holder.returncode == -9
    assert Store(path).insert(make_samples(JOB, 1), make_meta(JOB, 1), "a" * 64) == "added"


def test_waits_for_release_with_timeout(tmp_path):
    path = tmp_path / "s"
    holder = start_holder(path, 0.3)
    store = Store(path, lock_timeout=60)
    assert store.insert(make_samples(JOB, 1), make_meta(JOB, 1), "a" * 64) == "added"
    assert holder.communicate()[0].strip() == "released"
