"""Accuracy and CPU of pal's detectors against the peers, on CSIT-like labelled series.

Run: ``python -m benchmarks.bench_accuracy [--seed 1] [--hard] [--small]``. Prints the
Markdown table of docs/accuracy.md, then each candidate's CPU time as a ratio to plain jumpavg
(the reference MDL implementation) measured in the same run, and whether pal's alerts meet the
goal: F1 >= 0.95 with <= 0.05 false alarms per 1,000 stationary runs, ahead of every peer.
"""

from __future__ import annotations

import argparse
import logging
import sys

from pal.evaluation.harness import default_candidates, describe, evaluate, format_table, peer_candidates
from pal.evaluation.datasets import csit_like

GOAL_F1, GOAL_FA = 0.95, 0.05
ALERT = "mdl+filters (pal's alerts)"  # the run path of the default test set (MDL, confirm 2, min 1 %)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--margin", type=int, default=3)
    ap.add_argument("--hard", action="store_true", help="steps 2-30 %% with no floor of 3 run-stdevs")
    ap.add_argument("--small", action="store_true", help="a tenth of the series (a quick look)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    scale = 10 if args.small else 1
    series = csit_like(n_changing=100 // scale, n_stationary=200 // scale, seed=args.seed,
                       min_step_sigma=0.0 if args.hard else 3.0)
    peers, missing = peer_candidates(args.seed)
    scores = evaluate(series, default_candidates() + peers, args.margin)
    print(f"data: csit_like(seed={args.seed}{', hard' if args.hard else ''}): {describe(series)}")
    print()
    print(format_table(scores))
    if missing:
        print("\npeers not installed: " + ", ".join(missing))
    ref = next((s for s in scores if s.detector == "jumpavg"), None)
    if ref is not None and ref.cpu_seconds > 0:
        print("\nCPU ratio to plain jumpavg (same run):")
        for s in scores:
            print(f"  {s.detector:22s} {s.cpu_seconds / ref.cpu_seconds:6.2f}")
    alert = next(s for s in scores if s.detector == ALERT)
    ok = alert.f1 >= GOAL_F1 and alert.false_alarms_per_1k <= GOAL_FA
    print(f"\ngoal ({ALERT}: F1 >= {GOAL_F1}, false alarms <= {GOAL_FA}/1k): "
          f"F1 {alert.f1:.3f}, {alert.false_alarms_per_1k:.2f}/1k -> {'met' if ok else 'NOT met'}")
    peer_names = {c.name for c in peers}
    # as a user would run them; then with pal's filters (jumpavg+filters is pal's own MDL again)
    for label, pick in (("peers as shipped", lambda n: "+" not in n),
                        ("peers + pal's filters", lambda n: "+" in n and not n.startswith("jumpavg"))):
        group = [s for s in scores if s.detector in peer_names and pick(s.detector)]
        if not group:
            continue
        best = max(group, key=lambda s: (s.f1, -s.false_alarms_per_1k))
        rel = "ahead of" if alert.f1 > best.f1 else "tied with" if alert.f1 == best.f1 else "behind"
        print(f"{label}: best {best.detector} F1 {best.f1:.3f}, {best.false_alarms_per_1k:.2f}/1k -> {ALERT} is {rel} it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
