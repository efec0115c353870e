"""Peak memory of one case, measured in a subprocess of its own (``ru_maxrss`` from ``wait4``).

A case run in the test process would measure the test runner too and could not be stopped
when it eats memory; in a child the figure is the case's alone, and a hard address-space
limit (``RLIMIT_AS``) turns a runaway into a failure instead of a machine in swap.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass

from tests.reliability.runs import REPO

#: The hard limit of a measured case: above this it fails (every bomb must stay under 1 GB).
LIMIT_BYTES = 3 << 30


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: str
    stderr: str
    peak_mb: float
    seconds: float


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def measure(code: str, *args: str, timeout: float = 120) -> Measured:
    """Run ``python -c code args...`` from the repository; its exit code, output and peak RSS."""
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-c", PEAK + code, *args], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=_limit)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"case did not end within {timeout} s (a hang): {err[-2000:]}") from None
    finally:
        if p.returncode is None:
            p.kill()
    # RUSAGE_CHILDREN is a maximum over every child ever reaped, so the child reports its own
    # peak (see PEAK) and that line is read back here
    peak = 0.0
    for line in err.splitlines():
        if line.startswith("PEAK_RSS_KB "):
            peak = int(line.split()[1]) / 1024
    return Measured(p.returncode, out, err, peak, time.monotonic() - t0)


#: Appended to every measured case: the child prints its own peak RSS last, even on an exception.
PEAK = """
import atexit as _a, resource as _r, sys as _s
_a.register(lambda: print("PEAK_RSS_KB", _r.getrusage(_r.RUSAGE_SELF).ru_maxrss, file=_s.stderr))
"""
