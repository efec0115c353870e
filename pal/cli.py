"""The ``pal`` command: a thin shell over library calls; the only place errors become exit codes.

Exit codes: 0 = no new regression, 2 = regressions found (per the spec's ``alerts.fail-on``),
1 = error (bad spec, store locked, nothing could be read, a bug).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Sequence

from pal import __version__
from pal.errors import PalError

EXIT_OK, EXIT_ERROR, EXIT_REGRESSION = 0, 1, 2

log = logging.getLogger("pal")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pal",
        description="Performance trending and analysis for data-plane benchmarks (CSIT PAL style).",
        epilog="Exit codes: 0 no new regression, 2 regressions found, 1 error. Logs go to stderr.",
    )
    p.add_argument("--version", action="version", version=f"pal {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only")
    # the same switches after the subcommand (`pal run -q ...`); SUPPRESS keeps the global value
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="debug logging")
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="warnings and errors only")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_parser = sub.add_parser
    sub.add_parser = lambda *a, **k: add_parser(*a, parents=[common], **k)  # type: ignore[method-assign]

    def with_spec(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--spec", "-s", required=True, type=Path, help="the YAML spec")

    def with_executor(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--executor", choices=["local", "dask"], help="override store.executor")
        sp.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786); none: a LocalCluster")
        sp.add_argument("--workers", type=int, help="worker processes (local pool or LocalCluster)")

    sp = sub.add_parser("run", help="all stages: download, parse, store, analyse, render, alerts")
    with_spec(sp)
    with_executor(sp)
    sp.add_argument("--out", type=Path, help="override outputs.dir")
    sp.add_argument("--full", action="store_true", help="ignore the stored history and recompute everything")
    sp.add_argument("--trigger", default="manual", help="what started the run (upstream, gerrit, timer, manual)")
    sp.add_argument("--upstream", metavar="JOB#BUILD", help="the PT build that triggered the run: checked to be analysed")

    sp = sub.add_parser("download", help="fetch the builds' output.xml files named by the spec")
    with_spec(sp)

    sp = sub.add_parser("parse", help="print or write the samples that output.xml files hold")
    sp.add_argument("files", nargs="+", type=Path, help="output.xml[.gz|.xz|.zip] files")
    sp.add_argument("--job", help="job name (default: taken from the path)")
    sp.add_argument("--build", type=int, help="build number (default: taken from the path)")
    sp.add_argument("--format", choices=["csv", "json", "parquet"], default="csv")
    sp.add_argument("--output", "-o", type=Path, help="write here instead of stdout (required for parquet)")
    sp.add_argument("--spec", type=Path, help="take testbed map, renames and ignore list from this spec")

    sp = sub.add_parser("analyse", aliases=["analyze"], help="analyse the stored history, print results")
    with_spec(sp)
    with_executor(sp)
    sp.add_argument("--format", choices=["table", "json", "csv"], default="table")

    sp = sub.add_parser("render", help="render the site and alerts from the stored history")
    with_spec(sp)
    sp.add_argument("--out", type=Path, help="override outputs.dir")

    sp = sub.add_parser("validate", help="check a spec and print a summary")
    sp.add_argument("spec", type=Path)

    sp = sub.add_parser("demo-data", help="write the seeded, realistic demo history")
    sp.add_argument("dir", type=Path)
    sp.add_argument("--seed", type=int, default=1)
    sp.add_argument("--builds", type=int, default=None, help="builds per daily job (default 100)")
    sp.add_argument("--tests", type=int, default=None, help="tests per job (default 120)")
    sp.add_argument("--small", action="store_true", help="a small history for tests")
    sp.add_argument("--dialect", choices=["rf7", "rf4", "rf3"], default="rf7", help="Robot Framework output schema")
    sp.add_argument("--keyword-depth", type=int, default=0, help="nested keyword levels per test (TRACE-like size)")

    sp = sub.add_parser("store", help="inspect or maintain the history store")
    sp.add_argument("action", choices=["info", "vacuum", "export"])
    with_spec(sp)
    sp.add_argument("--output", "-o", type=Path, help="export: file to write (.csv or .parquet)")

    sp = sub.add_parser("evaluate", help="score the detectors on labelled series (accuracy harness)")
    sp.add_argument("--spec", type=Path, help="detectors as configured in this spec")
    sp.add_argument("--csv", type=Path, action="append", default=[], help="a labelled series CSV")
    sp.add_argument("--peers", action="store_true", help="also score peer tools (bench extras)")
    sp.add_argument("--margin", type=int, default=3, help="runs a detection may be late or early")
    sp.add_argument("--seed", type=int, default=1)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.verbose, args.quiet)
    try:
        return _dispatch(args)
    except PalError as exc:
        log.error("error: %s", exc)
        return EXIT_ERROR
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # disk full, permissions, a vanished directory: say which file, no traceback
        where = "" if exc.filename else _path_in_flight(exc)
        log.error("error: %s%s", exc, f": {where}" if where else "")
        return EXIT_ERROR


def _path_in_flight(exc: BaseException) -> str:
    """The file a failed write was going to, when the OSError does not say (``write()`` on an open
    file raises ENOSPC without a name): the innermost frame holding a path or an open file."""
    tb, found = exc.__traceback__, ""
    while tb is not None:
        for name in ("path", "tmp", "target", "dest", "final", "file", "fh", "f", "out", "sink", "where"):
            value = tb.tb_frame.f_locals.get(name)
            text = getattr(value, "name", value) if not isinstance(value, (str, os.PathLike)) else value
            if isinstance(text, (str, os.PathLike)) and ("/" in str(text) or os.sep in str(text)):
                found = str(text)
                break
        tb = tb.tb_next
    return found


def entry_point() -> None:  # console_scripts
    sys.exit(main())


def _setup_logging(verbose: bool, quiet: bool) -> None:
    logger = logging.getLogger("pal")
    logger.handlers.clear()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)
    logger.propagate = False


def _dispatch(args: argparse.Namespace) -> int:
    from pal import commands

    handler = getattr(commands, "cmd_" + args.command.replace("-", "_").replace("analyze", "analyse"))
    return handler(args)


if __name__ == "__main__":  # pragma: no cover
    entry_point()
