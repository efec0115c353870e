"""Accuracy and CPU of pal's alerts, every detector and the peers, on the honest labelled set.

Run: ``python -m benchmarks.bench_accuracy [--seeds 2 3 4 5 6] [--no-online] [--no-peers] [--small]``
(``make bench`` runs the default: every detector and the installed peers offline, MDL's run
path online, seeds 2-6, about half an hour on one core; the thresholds were tuned on seed 1,
``--tune-seed``). Or summarise
saved ``pal evaluate --format json`` outputs: ``--from-json off_2.json off_3.json ...``.

Prints, per candidate, the mean and the spread (sample sd, min-max) over the seeds of
precision, recall, F1, false alarms per 1,000 stationary runs, recall on changes under 2
noise sd and on reverted excursions, CPU per series; then recall by change size and F1 by
series length (means); then whether pal's alerts meet the goals of docs/accuracy.md, and
each candidate's CPU as a ratio to plain jumpavg measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import sys
from typing import Any, Sequence

from pal.evaluation.datasets import LabelledSeries
from pal.evaluation.harness import (
    ORACLE_MIN_CHANGE_PCT, ORACLE_PER_1K, default_candidates, default_test_sets, evaluate, generated,
    peer_candidates, run_candidate_for, score_row,
)
from pal.evaluation.metrics import LENGTH_BINS, SIZE_BINS

ALERT = "mdl+filters (pal's alerts)"  # the run path of the default test set
#: issue goals for the default alert path: (offline, online)
GOALS = {"f1": (0.97, 0.95), "false_alarms_per_1k": (0.05, 0.10), "small": (0.60, 0.60),
         "excursion": (0.85, 0.85), "cpu_ms_per_series": (10.0, None)}


def _get(row: dict, key: str) -> float:
    if key == "small":
        v = row.get("by_size", {}).get("<2", {}).get("recall")
    elif key == "excursion":
        v = row.get("by_category", {}).get("excursion", {}).get("recall")
    else:
        v = row.get(key)
    return math.nan if v is None else float(v)


def _spread(xs: Sequence[float]) -> str:
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return "-"
    if len(xs) == 1:
        return f"{xs[0]:.3f}"
    return f"{statistics.mean(xs):.3f} ± {statistics.stdev(xs):.3f} ({min(xs):.3f}–{max(xs):.3f})"


def summary(runs: Sequence[Sequence[dict]], label: str) -> str:
    """Markdown: mean ± sd (min–max) over the runs (one list of score rows per seed) per candidate."""
    names = [r["name"] for r in runs[0]]
    keys = ("precision", "recall", "f1", "false_alarms_per_1k", "small", "excursion", "cpu_ms_per_series")
    lines = [f"{label}: {len(runs)} seed(s), mean ± sd (min–max)", "",
             "| candidate | path | precision | recall | F1 | false alarms /1k | recall < 2 sd | recall excursions "
             "| CPU ms/series |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in names:
        rows = [next(r for r in run if r["name"] == name) for run in runs if any(r["name"] == name for r in run)]
        lines.append(f"| {name} | {rows[0]['path']} | " + " | ".join(_spread([_get(r, k) for r in rows]) for k in keys)
                     + " |")
    sizes = [b[0] for b in SIZE_BINS]
    lines += ["", "mean recall by change size (noise sd) and F1 by series length (runs)", "",
              "| candidate | " + " | ".join(sizes) + " | " + " | ".join(b[0] for b in LENGTH_BINS) + " |",
              "|---|" + "---:|" * (len(sizes) + len(LENGTH_BINS))]
    for name in names:
        rows = [next(r for r in run if r["name"] == name) for run in runs if any(r["name"] == name for r in run)]

        def mean(path: tuple[str, str, str]) -> str:
            xs = [r.get(path[0], {}).get(path[1], {}).get(path[2]) for r in rows]
            xs = [x for x in xs if x is not None]
            return f"{statistics.mean(xs):.2f}" if xs else "-"

        lines.append(f"| {name} | " + " | ".join(mean(("by_size", s, "recall")) for s in sizes) + " | "
                     + " | ".join(mean(("by_length", b[0], "f1")) for b in LENGTH_BINS) + " |")
    truth = {s: sum(run[0].get("by_size", {}).get(s, {}).get("truth", 0) for run in runs) for s in sizes}
    lines += ["", "true changes per size bin over these seeds: " + ", ".join(f"{s} {n}" for s, n in truth.items())]
    return "\n".join(lines)


def oracle_rows(sets: dict[int, list[LabelledSeries]], z_min: float | None = None, margin: int = 3) -> list[dict]:
    """Per seed (``sets``: its generated series), the oracle bound (``pal.evaluation.oracle``) at
    the threshold that keeps that seed's stationary series within ``pal evaluate --oracle``'s false
    alarms per 1,000 runs (the offline goal; calibrated in-sample, so generous), or at ``z_min``
    for every seed (e.g. the tuning seed's)."""
    from pal.evaluation.oracle import bound, calibrated_z

    out = []
    for seed, series in sets.items():
        z = calibrated_z(series, ORACLE_PER_1K) if z_min is None else z_min
        out.append(dict(bound(series, z, margin, ORACLE_MIN_CHANGE_PCT), seed=seed))
    return out


def oracle_table(rows: Sequence[dict], threshold: str = "calibrated on each seed's stationary series to the "
                 "offline false-alarm goal") -> str:
    """Markdown: what a detector told every other change and every dip could find, per seed and mean."""
    keys = (("z_min", lambda r: r["z_min"]), ("false alarms /1k", lambda r: r["false_alarms_per_1k"]),
            ("recall", lambda r: r["recall"]), ("F1 bound", lambda r: r["f1_bound"]),
            ("recall < 2 sd", lambda r: r["by_size"]["<2"]), ("recall < 1 sd", lambda r: r["by_size"]["<1"]),
            ("recall 1-2 sd", lambda r: r["by_size"]["1-2"]), ("recall excursions", lambda r: r["excursion"]))
    lines = ["oracle bound (pal.evaluation.oracle: the other changes, the dips and the noise known; threshold "
             f"{threshold}; margin {rows[0]['margin']}, minimum change {rows[0]['min_change_pct']} %)", "",
             "| seed | " + " | ".join(k for k, _ in keys) + " |", "|---|" + "---:|" * len(keys)]
    for r in rows:
        lines.append(f"| {r['seed']} | " + " | ".join("-" if get(r) is None else f"{get(r):.3f}" for _, get in keys)
                     + " |")
    lines.append("| mean ± sd | " + " | ".join(_spread([math.nan if get(r) is None else get(r) for r in rows])
                                             .split(" (")[0] for _, get in keys) + " |")
    return "\n".join(lines)


def goals(runs: Sequence[Sequence[dict]], online: bool, oracle: Sequence[dict] = ()) -> str:
    """Whether the default alert path meets each goal (means over the seeds), beside the oracle's
    bound where it has one (no detector keeping the false-alarm goal should pass it)."""
    rows = [next(r for r in run if r["name"] == ALERT) for run in runs if any(r["name"] == ALERT for r in run)]
    if not rows:
        return f"{ALERT}: not scored"
    out = []
    for key, limits in GOALS.items():
        goal = limits[1 if online else 0]
        if goal is None:
            continue
        v = statistics.mean(_get(r, key) for r in rows)
        lower = key in ("false_alarms_per_1k", "cpu_ms_per_series")
        ok = v <= goal if lower else v >= goal
        line = f"  {key}: {v:.3f} (goal {'<=' if lower else '>='} {goal}) -> {'met' if ok else 'NOT met'}"
        bounds = {"f1": [r["f1_bound"] for r in oracle], "small": [r["by_size"]["<2"] for r in oracle],
                  "excursion": [r["excursion"] for r in oracle]}.get(key)
        if bounds:
            b = statistics.mean(bounds)
            line += f"; oracle bound {b:.3f}" + (" (the goal is above it)" if goal > b else "")
        out.append(line)
    return f"goals, {ALERT}, {'online' if online else 'offline'}:\n" + "\n".join(out)


def measure(seeds: Sequence[int], online: bool, peers: bool, small: bool, data: str) -> list[list[dict]]:
    """Score rows per seed: every detector offline (raw and run path), or MDL's run path online."""
    out = []
    for seed in seeds:
        series = generated(data, seed)
        if small:
            series = series[::10]
        if online:
            ts = default_test_sets(["mdl"])[0]
            cands = [run_candidate_for(ts, ALERT, online=True)]
        else:
            cands = default_candidates()
        if peers and not online:
            more, missing = peer_candidates(seed)
            if missing:
                print("peers not installed: " + ", ".join(missing), file=sys.stderr)
            cands += more
        scores = evaluate(series, cands)
        out.append([score_row(c, s) for c, s in zip(cands, scores)])
    return out


def tcpd_table(root: str, peers: bool, margin: int = 5) -> str:
    """Mean TCPD F1 (margin ``margin``) of every detector's raw and run path, the peers and no-change."""
    from pal.evaluation.tcpd import read_tcpd, score

    series = read_tcpd(root)
    cands = default_candidates()
    if peers:
        cands += peer_candidates(1)[0]
    rows = [("no change (zero)", score(series, lambda s: [], margin))]
    for c in cands:
        rows.append((c.name, score(series, lambda s, c=c: [d.index for d in c.find(LabelledSeries(s.name, s.values, ()))],
                                   margin)))
    lines = [f"TCPD ({root}): {len(series)} univariate series, F1 with margin {margin} (the paper's measure)", "",
             "| candidate | mean F1 | series where it beats no-change |", "|---|---:|---:|"]
    zero = rows[0][1]
    for name, per in rows:
        wins = sum(per[k] > zero[k] for k in per)
        lines.append(f"| {name} | {statistics.mean(per.values()):.3f} | {wins} |")
    return "\n".join(lines)


def _saved(path: str) -> Any:
    """One saved ``pal evaluate --format json`` output; an unreadable one names its file."""
    try:
        with open(path, encoding="utf-8") as fh:
            rows = json.load(fh)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"bench_accuracy: {path}: not a saved `pal evaluate --format json` output ({exc})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "name" in r for r in rows):
        raise SystemExit(f"bench_accuracy: {path}: expected a list of scored rows, each with a name")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", choices=["honest", "csit-like"], default="honest")
    ap.add_argument("--seeds", type=int, nargs="+", default=[2, 3, 4, 5, 6])
    ap.add_argument("--tune-seed", type=int, default=1, help="the seed the thresholds were tuned on (not scored)")
    ap.add_argument("--no-online", dest="online", action="store_false",
                    help="skip the daily replay of MDL's run path (minutes per seed)")
    ap.add_argument("--no-peers", dest="peers", action="store_false",
                    help="skip the peers (bench extra; minutes per seed on long series)")
    ap.add_argument("--small", action="store_true", help="a tenth of the series (a quick look)")
    ap.add_argument("--tcpd", metavar="DIR", help="a TCPD checkout (annotations.json, datasets/): score it too")
    ap.add_argument("--oracle-only", action="store_true", help="print the oracle bound for the seeds and stop")
    ap.add_argument("--from-json", nargs="+", default=[], metavar="FILE",
                    help="summarise saved `pal evaluate --format json` outputs (one file per seed) instead")
    ap.add_argument("--replayed", action="store_true", help="with --from-json: the files are --online outputs")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    seeds = [s for s in args.seeds if s != args.tune_seed]
    if args.from_json:
        runs: list[Any] = [_saved(p) for p in args.from_json]
        online = args.replayed
        print(summary(runs, ", ".join(args.from_json)))
        print()
        print(goals(runs, online))
        return 0
    sets = {seed: generated(args.data, seed) for seed in seeds}
    oracle = oracle_rows(sets)
    print(oracle_table(oracle))
    print()
    z_tune = oracle_rows({args.tune_seed: generated(args.data, args.tune_seed)})[0]["z_min"]
    print(oracle_table(oracle_rows(sets, z_min=z_tune),
                       f"{z_tune:.3f}, calibrated on the tuning seed {args.tune_seed} and kept for every seed"))
    print()
    if args.oracle_only:
        return 0
    if args.tcpd:
        print(tcpd_table(args.tcpd, args.peers))
        print()
    offline = measure(seeds, False, args.peers, args.small, args.data)
    print(summary(offline, f"{args.data}, offline, seeds {' '.join(map(str, seeds))}"))
    print()
    print(goals(offline, False, oracle))
    ref = [r for r in offline[0] if r["name"] == "jumpavg"]
    if ref and ref[0]["cpu_s"]:
        print("\nCPU ratio to plain jumpavg (first seed, same run):")
        for r in offline[0]:
            print(f"  {r['name']:30s} {(r['cpu_s'] or 0) / ref[0]['cpu_s']:6.2f}")
    if args.online:
        online_rows = measure(seeds, True, False, args.small, args.data)
        print()
        print(summary(online_rows, f"{args.data}, online (daily replay), seeds {' '.join(map(str, seeds))}"))
        print()
        print(goals(online_rows, True, oracle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
