"""Run hostile case files, each in a forked child of its own: outcome, peak RSS, time, hang or crash.

    python -m tests.reliability.hostile_runner DIR [--timeout S]

Prints one JSON line per file of DIR (sorted): ``outcome`` is "ok ..." (samples or a valid
spec), "error: ..." (ParseError / SpecError: the clear refusal the project promises), "crash:
..." (any other exception, a bug) or "hang" (the child outlived ``--timeout`` and was killed);
``peak_mb`` is the child's own peak RSS (``wait4``), under a hard 3 GB address-space limit.
Importing pal happens once, in the parent, so each case costs a fork, not an interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import sys
import time
from pathlib import Path

from pal.errors import ParseError, SpecError
from pal.parse import parse_build
from pal.spec import load_spec

LIMIT_BYTES = 3 << 30


def _one(path: Path) -> str:
    try:
        if path.suffix == ".yaml":
            spec = load_spec(path)
            return f"ok: spec {spec.name!r}"
        result = parse_build(path, "csit-vpp-perf-mrr-daily-master-2n-icx", 1)
        return f"ok: {len(result.samples)} samples, {len(result.problems)} warnings"
    except (ParseError, SpecError) as exc:
        return f"error: {str(exc)[:160]}"
    except MemoryError:
        return "crash: MemoryError (over the 3 GB limit)"
    except Exception as exc:  # noqa: BLE001 - a crash is what this looks for
        return f"crash: {type(exc).__name__}: {str(exc)[:160]}"


def run_case(path: Path, timeout: float) -> dict:
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(max(1, int(timeout)))
            out = _one(path)
        except BaseException as exc:  # noqa: BLE001
            out = f"crash: {type(exc).__name__}"
        os.write(w, out.encode("utf-8", errors="replace")[:4000])
        os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 4096):
        chunks.append(chunk)
    os.close(r)
    _, status, usage = os.wait4(pid, 0)
    outcome = b"".join(chunks).decode("utf-8", errors="replace")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        outcome = "hang" if sig == signal.SIGALRM else f"crash: killed by signal {sig}"
    return {"file": path.name, "outcome": outcome, "peak_mb": round(usage.ru_maxrss / 1024, 1),
            "seconds": round(time.monotonic() - t0, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", type=Path)
    p.add_argument("--timeout", type=float, default=60.0)
    args = p.parse_args(argv)
    for path in sorted(args.dir.iterdir()):
        print(json.dumps(run_case(path, args.timeout)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
