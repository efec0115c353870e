"""One function per subcommand: argument wiring around library calls, returning an exit code."""

from __future__ import annotations

import argparse
import logging
import sys

from pal.spec import load_spec

log = logging.getLogger("pal")


def cmd_validate(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    sets = ", ".join(f"{t.name} ({t.detector.name}: {'/'.join(t.metrics)})" for t in spec.test_sets)
    print(f"{args.spec}: ok: {len(spec.jobs)} jobs, {len(spec.sources)} sources "
          f"({', '.join(s.name for s in spec.sources)}), test sets: {sets}")
    return 0


def cmd_demo_data(args: argparse.Namespace) -> int:
    from pal.demo import generate

    truth = generate(args.dir, seed=args.seed, small=args.small, builds=args.builds, tests=args.tests)
    log.info("demo history written to %s: %s", args.dir, truth.summary())
    return 0


def cmd_store(args: argparse.Namespace) -> int:
    """``pal store info|vacuum|export``: JSON facts on stdout; export writes ``--output``."""
    import json

    from pal.store import Store

    spec = load_spec(args.spec)
    store = Store(spec.store_dir)
    if args.action == "info":
        print(json.dumps(store.info(), indent=2, sort_keys=True))
    elif args.action == "vacuum":
        print(json.dumps(store.vacuum(), indent=2))
    else:
        if args.output is None:
            log.error("error: pal store export needs --output FILE (.csv or .parquet)")
            return 1
        path = store.export(args.output)
        log.info("exported %d rows to %s", store.info()["rows"], path)
    return 0
