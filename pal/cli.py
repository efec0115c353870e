"""The ``pal`` command: a thin shell over library calls; the only place errors become exit codes.

Exit codes: 0 = no new regression, 2 = regressions found (per the spec's ``alerts.fail-on``),
1 = error (bad spec, store locked, nothing could be read, a bug).
"""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import sys
import threading
from pathlib import Path
from typing import NoReturn, Sequence

from pal import __version__
from pal.errors import PalError
from pal.memory import single_threaded_blas, sparse_gc, use_arrow_allocator

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
    # every subcommand: shared switches, and its description/examples shown as written
    sub.add_parser = lambda *a, **k: add_parser(  # type: ignore[method-assign]
        *a, parents=[common], **{"formatter_class": argparse.RawDescriptionHelpFormatter, **k})

    def with_spec(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--spec", "-s", required=True, type=Path, help="the YAML spec")

    def with_executor(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--executor", choices=["local", "dask"], help="override store.executor")
        sp.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786); none: a LocalCluster")
        sp.add_argument("--workers", type=int, help="worker processes (local pool or LocalCluster)")

    sp = sub.add_parser(
        "run", help="all stages: download, parse, store, analyse, render, alerts",
        description="The whole PA job: validate the spec, download the builds it names, parse new ones into\n"
                    "the store, analyse every series, write the alerts and render the site under outputs.dir.\n"
                    "Exit 0: no new regression; 2: regressions (per alerts.fail-on); 1: error, including a\n"
                    "job that got no build because a source is unusable.",
        epilog="examples:\n"
               "  pal run --spec specs/demo.yaml\n"
               "  pal run --spec specs/csit-trending.yaml --out /srv/trending --trigger timer\n"
               "  pal run --spec S --upstream csit-vpp-perf-mrr-daily-master-2n-icx#265\n"
               "  pal run --spec S --executor dask --scheduler tcp://host:8786 --full")
    with_spec(sp)
    with_executor(sp)
    sp.add_argument("--out", type=Path, help="override outputs.dir")
    sp.add_argument("--full", action="store_true", help="ignore the stored history and recompute everything")
    sp.add_argument("--trigger", default="manual", help="what started the run (upstream, gerrit, timer, manual)")
    sp.add_argument("--upstream", metavar="JOB#BUILD", help="the PT build that triggered the run: checked to be analysed")

    sp = sub.add_parser(
        "download", help="fetch the builds' output.xml files named by the spec",
        description="Validate the spec, then fetch every selected build's output.xml into the cache\n"
                    "(<outputs.dir>/cache). One line per file on stdout: job, build, source, sha256, path\n"
                    "(tab-separated); problems go to stderr.",
        epilog="examples:\n"
               "  pal download --spec specs/demo.yaml\n"
               "  pal download --spec S | cut -f1,2,3        # which source delivered each build")
    with_spec(sp)

    sp = sub.add_parser(
        "parse", help="print or write the samples that builds' results hold",
        description="Read a build's results and write their samples, one row per (build, test, metric):\n"
                    "Robot Framework output.xml (plain, .gz, .xz, .bz2, .zip), CSIT's UTI JSON (*.info.json, or a\n"
                    "directory, .tar.gz or .zip of them). Job and build come from --job/--build, else from a\n"
                    "<job>/<build>/... path, else are left empty. Nothing goes to stdout on error.",
        epilog="examples:\n"
               "  pal parse out.xml.gz --format csv\n"
               "  pal parse demo-data/csit-vpp-perf-mrr-daily-master-2n-icx/100/output.xml.gz\n"
               "  pal parse archives.tar.gz --job csit-vpp-perf-mrr-daily-master-3n-alt --build 7 --format json\n"
               "  pal parse */*/output.xml.gz --format parquet -o samples.parquet --spec specs/demo.yaml")
    sp.add_argument("files", nargs="+", type=Path, metavar="PATH",
                    help="output.xml[.gz|.xz|.bz2|.zip], *.info.json, or a directory/.tar.gz/.zip of UTI JSON")
    sp.add_argument("--job", help="job name (default: from a <job>/<build>/... path, else empty)")
    sp.add_argument("--build", type=int, help="build number (default: from a <job>/<build>/... path, else empty)")
    sp.add_argument("--format", choices=["csv", "json", "parquet"], default="csv",
                    help="csv (default) or json on stdout; parquet needs --output")
    sp.add_argument("--output", "-o", type=Path, help="write here instead of stdout (required for parquet)")
    sp.add_argument("--spec", type=Path, help="take testbed map, renames and ignore list from this spec")

    sp = sub.add_parser(
        "analyse", aliases=["analyze"], help="analyse the stored history, print results",
        description="Analyse every series of the stored history (no download) and print one row per series:\n"
                    "trend, runs, short- and long-term change, anomalies and the last run's verdict.\n"
                    "Exit 2 as the last `pal run` decided (alerts.fail-on, acks, new vs ongoing), else 0;\n"
                    "nothing is saved.",
        epilog="examples:\n"
               "  pal analyse --spec specs/demo.yaml                 # aligned table, Mpps / µs and %\n"
               "  pal analyse --spec S --format json | jq '.[] | select(.verdict == \"regression\")'\n"
               "  pal analyse --spec S --format csv > series.csv")
    with_spec(sp)
    with_executor(sp)
    sp.add_argument("--format", choices=["table", "json", "csv"], default="table",
                    help="table: aligned, for people (default); json, csv: base units (pps, cps, us), full precision")

    sp = sub.add_parser(
        "render", help="render the site and alerts from the stored history",
        description="Analyse what the store holds and write the site and alert files again, without\n"
                    "downloading (after changing a template, the acks or the test sets).",
        epilog="examples:\n"
               "  pal render --spec specs/demo.yaml\n"
               "  pal render --spec S --out /tmp/preview")
    with_spec(sp)
    sp.add_argument("--out", type=Path, help="override outputs.dir")

    sp = sub.add_parser(
        "validate", help="check a spec and print a summary",
        description="Check everything about a spec that can be checked before a download: keys and types,\n"
                    "regexes and tag expressions, URL template placeholders, that local paths (sources,\n"
                    "rename-file, acks) exist and ${VARS} are set, that each test set's jobs match a job, and\n"
                    "that no ack keeps the placeholder reason. Every error is printed (key, line, value,\n"
                    "expectation) on stderr, exit 1; a summary on stdout, exit 0, when all pass.",
        epilog="examples:\n"
               "  pal validate specs/demo.yaml\n"
               "  WORKSPACE=$PWD pal validate specs/csit-trending.yaml")
    sp.add_argument("spec", type=Path, help="the YAML spec")

    sp = sub.add_parser(
        "demo-data", help="write the seeded, realistic demo history",
        description="Write a seeded, realistic CSIT-like history (output.xml.gz per job and build, renames,\n"
                    "and truth.json listing the planted changes) for specs/demo.yaml and the tests.",
        epilog="examples:\n"
               "  pal demo-data demo-data                # what make demo uses\n"
               "  pal demo-data /tmp/small --small --seed 7")
    sp.add_argument("dir", type=Path, help="directory to write (created)")
    sp.add_argument("--seed", type=int, default=1, help="random seed (same seed, same history)")
    sp.add_argument("--builds", type=int, default=None, help="builds per daily job (default 100)")
    sp.add_argument("--tests", type=int, default=None, help="tests per job (default 120)")
    sp.add_argument("--small", action="store_true", help="a small history for tests")
    sp.add_argument("--dialect", choices=["rf7", "rf4", "rf3"], default="rf7", help="Robot Framework output schema")
    sp.add_argument("--keyword-depth", type=int, default=0, help="nested keyword levels per test (TRACE-like size)")
    sp.add_argument("--uti-jobs", default="csit-vpp-perf-mrr-daily-master-3n-alt", metavar="JOB[,JOB]",
                    help="jobs written as CSIT UTI JSON (archives.tar.gz per build) instead of output.xml; '' for none")

    sp = sub.add_parser(
        "store", help="inspect or maintain the history store",
        description="The Parquet history store of a spec (store.path).",
        epilog="actions:\n"
               "  info    JSON on stdout: jobs, builds, rows, size on disk, schema version, per-job counts\n"
               "  vacuum  remove temp files, staged leftovers and unlisted fragments; JSON of what went\n"
               "  export  write every stored sample to --output (.csv or .parquet)\n"
               "examples:\n"
               "  pal store info --spec specs/demo.yaml\n"
               "  pal store export --spec S -o samples.parquet")
    sp.add_argument("action", choices=["info", "vacuum", "export"], help="info, vacuum or export (see below)")
    with_spec(sp)
    sp.add_argument("--output", "-o", type=Path, help="export: file to write (.csv or .parquet)")

    sp = sub.add_parser(
        "bisect", help="from an alert to its culprit: CSIT bisect trigger, and a bisect's results read back",
        description="Start and read CSIT's bisect of a VPP change (see docs/bisect.md).",
        epilog="examples:\n  pal bisect request 3f2a9c01b7de --out out\n  pal bisect classify archives/")
    bisect = sp.add_subparsers(dest="bisect_command", metavar="ACTION", required=True,
                               help="request: the bisect trigger of an alert; classify: read a bisect job's results")
    rq = bisect.add_parser(
        "request", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        help="print (or post) the CSIT bisect trigger of one alert",
        description="Print the CSIT bisect trigger comment of one alert of alerts.json:\n"
                    "  bisecttest-<testbed type> <last good commit> <tag expression of the test>\n"
                    "then its commit range. With --post, post it as a review comment on the Gerrit\n"
                    "change of the first bad commit (user and HTTP password from $PAL_GERRIT_USER and\n"
                    "$PAL_GERRIT_PASSWORD, never printed). Without --post nothing is sent (dry run).",
        epilog="examples:\n"
               "  pal bisect request 3f2a9c01b7de --out out\n"
               "  pal bisect request 3f2a --spec specs/csit.yaml --format json\n"
               "  PAL_GERRIT_USER=me PAL_GERRIT_PASSWORD=... pal bisect request 3f2a9c01b7de --out out --post\n"
               "exit codes: 0 request printed (and posted), 1 no such alert, nothing to bisect, or Gerrit refused")
    rq.add_argument("alert_id", metavar="ALERT_ID", help="an alert id of alerts.json (a unique prefix is enough)")
    rq.add_argument("--out", type=Path, help="the run's output directory holding alerts.json (default: the spec's)")
    rq.add_argument("--spec", "-s", type=Path, help="the spec: outputs.dir and outputs.commit-range-url")
    rq.add_argument("--format", choices=["text", "json"], default="text")
    rq.add_argument("--style", choices=["jenkins", "gha"], default="jenkins",
                    help="jenkins: bisecttest-<tb> ... (default); gha: gha-run csit-vpp-<tb> bisecttest ...")
    rq.add_argument("--post", action="store_true", help="post the comment on Gerrit (default: dry run)")
    rq.add_argument("--gerrit", help="Gerrit base URL (default: $PAL_GERRIT_URL or https://gerrit.fd.io/r)")
    cl = bisect.add_parser(
        "classify", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        help="read a CSIT bisect job's results and replay its decisions",
        description="Read a CSIT bisect job's archive (earliest/, latest/, middle/<n>/, also with a csit_\n"
                    "prefix; results.json, UTI JSON or output.xml in each) and, for every mid build, decide\n"
                    "as CSIT does whether it joins the early or the late group (MDL, fewest bits wins;\n"
                    "when separate wins, the boundary keeping the larger relative difference). Prints the\n"
                    "decisions, the search state, and the culprit once one commit is left.",
        epilog="examples:\n"
               "  pal bisect classify archives/\n"
               "  pal bisect classify vpp-csit-bisect-2n-icx-42/ --format json\n"
               "exit codes: 0 state printed, 1 not a bisect archive (no earliest/ or latest/ results)")
    cl.add_argument("dir", type=Path, help="the bisect job's archive directory")
    cl.add_argument("--format", choices=["text", "json"], default="text")
    cl.add_argument("--dut", default="vpp", help="DUT whose version strings name the commits (default vpp)")

    sp = sub.add_parser(
        "evaluate", help="score the detectors on labelled series (accuracy harness)",
        description="Score every configuration on labelled series. The candidate with path \"run\" is "
                    "exactly what `pal run` alerts on for that test set (without --spec: a test set with "
                    "every default, one per detector); \"detector\" is the raw detector, \"peer\" a peer tool.",
        epilog="examples:\n  pal evaluate\n  pal evaluate --csv labelled.csv --spec specs/demo.yaml --format json\n"
               "  pal evaluate --online --format json   # replayed as a daily job would run",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sp.add_argument("--spec", type=Path, help="the test sets (detector, filters, windows) of this spec")
    sp.add_argument("--csv", type=Path, action="append", default=[],
                    help="a labelled series CSV (columns series,value,label[,direction]; docs/accuracy.md); repeatable")
    sp.add_argument("--peers", action="store_true", help="also score peer tools (bench extras)")
    sp.add_argument("--detector", action="append", default=[], metavar="NAME",
                    help="without --spec: only this registered detector (repeatable; default: all)")
    sp.add_argument("--online", action="store_true",
                    help="replay each series run by run as the daily job would and score the alerts it sends")
    sp.add_argument("--oracle", action="store_true",
                    help="also the bound: what a detector told every other change and every dip finds "
                         "(docs/accuracy.md)")
    sp.add_argument("--margin", type=int, default=3, help="runs a detection may be late or early")
    sp.add_argument("--seed", type=int, default=1, help="seed of the generated data set (without --csv)")
    sp.add_argument("--data", choices=["csit-like", "honest"], default="csit-like",
                    help="the generated data set (without --csv): csit-like (easy) or honest (docs/accuracy.md)")
    sp.add_argument("--format", choices=["table", "json"], default="table",
                    help="table: Markdown for people; json: one object per scored configuration")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.verbose, args.quiet)
    use_arrow_allocator()
    single_threaded_blas()
    try:
        with sparse_gc():  # from the stages' imports on (pal.memory.use_sparse_gc)
            return _dispatch(args)
    except PalError as exc:
        for err in getattr(exc, "errors", None) or [exc]:  # SpecErrors: one line per error
            log.error("error: %s", err)
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


def entry_point() -> None:  # console_scripts, ``python -m pal``
    exit_now(main())


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` without the interpreter's teardown.

    Everything pal writes is closed and in place by now (atomic writes, pools shut down); what
    the teardown would do is free the run's objects one by one: 0.3 s after a daily run of 6,000
    series. Threads still running are waited for, ``atexit`` handlers run and logs and standard
    streams are flushed first, as at a normal exit. A stdout closed by its reader is not an
    error (``pal ... | head``).
    """
    main_thread = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main_thread and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream
            pass
    os._exit(code)


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
