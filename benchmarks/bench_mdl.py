"""MDL speed: pal.analysis.mdl (compiled kernel and NumPy fallback) against jumpavg 0.4.2, in one run.

    python -m benchmarks.bench_mdl          # N=1,000 vs jumpavg; N=5,000 pal only; daily case
    python -m benchmarks.bench_mdl --full   # also jumpavg at N=5,000 (~100 s), NumPy on all 6,000

Prints times, speed ratios and whether the outputs are identical (boundaries, labels, averages,
stdevs and bits); the daily case: 6,000 series of 180 runs fully classified (compiled vs the
NumPy fallback) against extending a state held in memory by one run (what a saved state could at
best give; pal keeps none for a window that slides), plus the first-call cost (the compiled
kernel's import and first call, in a fresh process); the growing case: 3,000 series of 365 runs
(a job of the year's benchmark, whose window grows) searched in full against going on from the
states the last run kept (``MdlState.saved``, through the states file's encoding and decoding:
what ``pal run`` does for such a job).
"""

from __future__ import annotations

import argparse
import random
import time

from pal.analysis import mdl
from pal.analysis.mdl import MdlState, classify


def series(n: int, seed: int = 1, dips: float = 0.005) -> list[float]:
    """A CSIT-like MRR series: ~1e7 pps, 2 % noise, a level change every ~100 runs, a few dips
    (``dips``: the chance a run is one)."""
    rng = random.Random(seed)
    level, out = 1.2e7, []
    for _ in range(n):
        if rng.random() < 0.01:
            level *= rng.uniform(0.8, 1.2)
        value = level * (1 + rng.gauss(0, 0.02))
        out.append(value * 0.6 if rng.random() < dips else value)
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


def _numpy_path(fn, *args):
    """fn(*args) on the NumPy fallback (the module's switch, restored afterwards)."""
    saved, mdl.USE_COMPILED = mdl.USE_COMPILED, False
    try:
        return fn(*args)
    finally:
        mdl.USE_COMPILED = saved


def daily_case(count: int, runs: int, numpy_count: int) -> None:
    """The PA job's case: every series recomputed in full vs continued from a saved state."""
    data = [series(runs + 1, seed=10_000 + k) for k in range(count)]

    def full(items) -> list:
        return [[(g.start, g.end, g.avg, g.bits) for g in classify(v)] for v in items]

    t_full, got = _timed(full, data, repeat=2)
    subset = data[:numpy_count]
    t_np, expected = _timed(lambda: _numpy_path(full, subset))
    t_np_all = t_np * count / numpy_count
    same = got[:numpy_count] == expected
    scope = "" if numpy_count == count else f" (measured on {numpy_count}, scaled)"
    print(f"{count:,} series of {runs} runs, full classify: compiled {t_full:6.2f} s"
          f"  NumPy path {t_np_all:6.2f} s{scope}  ratio {t_np_all / t_full:5.1f}x  identical {same}", flush=True)

    held = [MdlState.start(v[:runs]) for v in data]

    def via_state() -> list:
        return [[(g.start, g.end, g.avg, g.bits) for g in st.extend(v[runs:]).groups()] for st, v in zip(held, data)]

    t_state, from_state = _timed(via_state, repeat=1)
    print(f"{count:,} series, a state in memory + 1 run (extend, groups): {t_state:6.2f} s"
          f"  full recompute / in-memory state {t_full / t_state:5.2f}  identical {from_state == got}", flush=True)


def growing_case(count: int, runs: int) -> None:
    """A job whose window grows: each series searched in full, against resumed from the state kept
    when it had one run less, read back from the bytes of a states file."""
    from pal.analysis import mdl_states
    from pal.model import SeriesKey

    data = [series(runs, seed=20_000 + k) for k in range(count)]
    keys = [SeriesKey("job", f"t{k}", "mrr") for k in range(count)]
    blob = mdl_states.encode("ctx", "job", [(k, MdlState.start(v[:-1]).saved()) for k, v in zip(keys, data)])

    def full() -> list:
        return [[(g.start, g.end, g.avg, g.bits) for g in classify(v)] for v in data]

    def resumed() -> list:
        kept = mdl_states._decode(blob, "ctx", "job")
        return [[(g.start, g.end, g.avg, g.bits) for g in MdlState.resume(kept[k], v).groups()]
                for k, v in zip(keys, data)]

    t_full, got = _timed(full, repeat=2)
    t_res, back = _timed(resumed, repeat=2)
    went_on = sum(MdlState.resume(s, v).saved().resumed > 0
                  for s, v in zip(mdl_states._decode(blob, "ctx", "job").values(), data))
    print(f"{count:,} series of {runs} runs whose window grows: full {t_full:6.2f} s"
          f"  from the kept states {t_res:6.2f} s ({went_on:,} went on; file {len(blob) / 1e6:.1f} MB)"
          f"  ratio {t_full / t_res:5.2f}x  identical {back == got}", flush=True)


def growing_analysis_case(count: int, runs: int) -> None:
    """The whole analysis of a growing job's series (``analyse_one``: the detector's search, the
    alert filters' second search of the series with its transient runs masked, the filters and
    compliance) from no state, from the detector's state only (the masked series searched in full,
    as the last release did) and from both (``SearchStates``). One series in eight has dips to
    mask (the year's benchmark: 4,801 of 36,000)."""
    import dataclasses

    import numpy as np

    from pal.analysis.series import SeriesInput, analyse_one
    from pal.model import SearchStates, SeriesKey
    from pal.spec import TestSet

    test_set = TestSet("mrr")  # the default alert filters: confirm-runs 2, transient runs masked
    t0 = np.datetime64("2026-01-01T00:00:00", "ns")
    axis = (np.arange(1000, 1000 + runs), t0 + np.arange(runs) * np.timedelta64(86_400, "s"))

    def cut(k: int, n: int, values: np.ndarray) -> SeriesInput:
        return SeriesInput(SeriesKey("job", f"t{k}", "mrr"), "mrr", axis[0][:n], axis[1][:n], values[:n],
                           np.full(n, np.nan), {})

    data = [np.array(series(runs, seed=40_000 + k, dips=0.005 if k % 8 == 0 else 0.0)) for k in range(count)]
    kept = [analyse_one(dataclasses.replace(cut(k, runs - 1, v), keep=True), test_set, False).resume
            for k, v in enumerate(data)]
    asked = {"no state": [cut(k, runs, v) for k, v in enumerate(data)],
             "the detector's state": [dataclasses.replace(cut(k, runs, v), resume=SearchStates(s.detector), keep=True)
                                      for k, (v, s) in enumerate(zip(data, kept))],
             "both states": [dataclasses.replace(cut(k, runs, v), resume=s, keep=True)
                             for k, (v, s) in enumerate(zip(data, kept))]}

    def analysed(inputs: list[SeriesInput]) -> list:
        out = []
        for s in inputs:
            r = analyse_one(s, test_set, False)
            out.append((r.trend.tobytes(), r.changes, r.alertable, repr(r.compliance)))
        return out

    times = {}
    for name, inputs in asked.items():
        times[name], got = _timed(analysed, inputs, repeat=2)
        if name == "no state":
            expected = got
        times[name] = (times[name], got == expected)
    masked = sum(s.masked is not None for s in kept)
    line = ", ".join(f"{name} {t:5.2f} s (identical {same})" for name, (t, same) in times.items())
    ratio = times["both states"][0] / times["the detector's state"][0]
    print(f"{count:,} series of {runs} runs whose window grows, whole analysis ({masked:,} with a masked search): "
          f"{line}; both states / the detector's only {ratio:.2f}", flush=True)


def first_call() -> float:
    """Seconds of the first classify in a fresh interpreter (the compiled kernel's import included)."""
    import subprocess
    import sys

    code = ("import time, pal.analysis.mdl as m\n"
            "t = time.perf_counter(); m.classify([1.0, 2.0]); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also run jumpavg at N=5,000 (~100 s)")
    args = parser.parse_args(argv)

    print(f"first classify in a fresh process (kernel import included): {first_call() * 1e3:.1f} ms", flush=True)
    for n in (1000, 5000):
        values = series(n)
        t_pal, got = _timed(_pal, values, repeat=3)
        t_np, plain = _timed(lambda: _numpy_path(_pal, values))
        line = (f"N={n:5d}  compiled {t_pal * 1e3:8.2f} ms  NumPy path {t_np * 1e3:8.1f} ms"
                f"  ({t_np / t_pal:4.0f}x)  groups {len(got)}  paths identical {got == plain}")
        if n == 1000 or args.full:
            t_ref, expected = _timed(_jumpavg, values)
            line += f"  jumpavg {t_ref:7.2f} s  ratio {t_ref / t_pal:6.0f}x  identical {got == expected}"
        print(line, flush=True)

    daily_case(6000, 180, 6000 if args.full else 600)
    growing_case(3000, 365)
    growing_analysis_case(3000, 365)

    # Incremental: a 5,000-run state in memory, append 1 and 10 runs, versus a full recompute.
    values = series(5010)
    for k in (1, 10):
        def append() -> list:
            state = MdlState.start(values[:5000])
            t0 = time.perf_counter()
            state.extend(values[5000 : 5000 + k])
            return time.perf_counter() - t0, [(g.start, g.end, g.avg) for g in state.groups()]

        t_inc, got = append()
        t_full, full = _timed(lambda: [(g.start, g.end, g.avg) for g in classify(values[: 5000 + k])])
        print(f"append {k:2d} to N=5000 in memory  {t_inc * 1e3:7.1f} ms  full {t_full * 1e3:7.1f} ms"
              f"  ratio {t_full / t_inc:5.1f}x  identical {got == full}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
