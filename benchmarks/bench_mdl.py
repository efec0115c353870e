"""MDL speed: pal.analysis.mdl against jumpavg 0.4.2 on the same series, in one run.

    python -m benchmarks.bench_mdl          # N=1,000 both; N=5,000 pal only
    python -m benchmarks.bench_mdl --full   # also jumpavg at N=5,000 (~100 s)

Prints times, the speed ratio and whether the outputs are identical (boundaries, labels,
averages, stdevs and bits), plus the cost of appending runs to a saved state.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from pal.analysis.mdl import MdlState, classify


def series(n: int, seed: int = 1) -> list[float]:
    """A CSIT-like MRR series: ~1e7 pps, 2 % noise, a level change every ~100 runs, a few dips."""
    rng = random.Random(seed)
    level, out = 1.2e7, []
    for _ in range(n):
        if rng.random() < 0.01:
            level *= rng.uniform(0.8, 1.2)
        value = level * (1 + rng.gauss(0, 0.02))
        out.append(value * 0.6 if rng.random() < 0.005 else value)
    return out


def _timed(fn, *args, repeat: int = 1):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best, result


def _pal(values):
    return [(g.start, g.end, g.avg, g.stdev, g.samples, g.label, g.bits) for g in classify(values)]


def _jumpavg(values):
    import jumpavg  # the oracle: a bench/test dependency only

    out, pos = [], 0
    for g in jumpavg.classify(values):
        out.append((pos, pos + len(g), g.stats.avg, g.stats.stdev, g.stats.size, g.comment, g.bits))
        pos += len(g)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also run jumpavg at N=5,000 (~100 s)")
    args = parser.parse_args(argv)

    for n in (1000, 5000):
        values = series(n)
        t_pal, got = _timed(_pal, values, repeat=3)
        line = f"N={n:5d}  pal {t_pal * 1e3:9.1f} ms  groups {len(got)}"
        if n == 1000 or args.full:
            t_ref, expected = _timed(_jumpavg, values)
            line += f"  jumpavg {t_ref:7.2f} s  ratio {t_ref / t_pal:6.0f}x  identical {got == expected}"
        print(line, flush=True)

    # Incremental: a saved 5,000-run state, append 1 and 10 runs, versus a full recompute.
    values = series(5010)
    base = json.dumps(MdlState.start(values[:5000]).to_dict())
    for k in (1, 10):
        def append() -> list:
            state = MdlState.from_dict(json.loads(base))
            state.extend(values[5000 : 5000 + k])
            return [(g.start, g.end, g.avg) for g in state.groups()]

        t_inc, got = _timed(append, repeat=3)
        t_full, full = _timed(lambda: [(g.start, g.end, g.avg) for g in classify(values[: 5000 + k])])
        print(
            f"append {k:2d} to N=5000 (with JSON load)  {t_inc * 1e3:7.1f} ms  full {t_full * 1e3:7.1f} ms"
            f"  ratio {t_full / t_inc:5.1f}x  identical {got == full}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
