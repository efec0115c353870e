"""One function per subcommand: argument wiring around library calls, returning an exit code."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from pal.spec import load_spec

log = logging.getLogger("pal")


def cmd_validate(args: argparse.Namespace) -> int:
    """Every check that can be made before a download (pal.validate); all errors on stderr, exit 1."""
    from pal.validate import check_spec_file

    spec, errors = check_spec_file(args.spec)
    for err in errors:
        log.error("error: %s", err)
    if errors or spec is None:
        if len(errors) > 1:
            log.error("%s: %d errors", args.spec, len(errors))
        return 1
    sets = ", ".join(f"{t.name} ({t.detector.name}: {'/'.join(t.metrics)})" for t in spec.test_sets)
    print(f"{args.spec}: ok: {len(spec.jobs)} jobs, {len(spec.sources)} sources "
          f"({', '.join(s.name for s in spec.sources)}), test sets: {sets}")
    return 0


def cmd_demo_data(args: argparse.Namespace) -> int:
    from pal.demo import generate

    uti_jobs = [j for j in args.uti_jobs.split(",") if j]
    truth = generate(args.dir, seed=args.seed, small=args.small, builds=args.builds, tests=args.tests,
                     dialect=args.dialect, keyword_depth=args.keyword_depth, uti_jobs=uti_jobs)
    if uti_jobs:
        log.info("demo: %s written as UTI JSON (archives.tar.gz per build)", ", ".join(uti_jobs))
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


def cmd_download(args: argparse.Namespace) -> int:
    """``pal download``: fetch the spec's builds into the cache; one TSV line per file on stdout.

    Columns: job, build, source, sha256, path. Problems go to the log; exit 1 when builds
    were wanted and none could be fetched, or a job got none because a source is unusable.
    """
    from pal.report import RunReport
    from pal.sources import default_cache_dir, fetch_builds
    from pal.validate import validated_spec

    spec = validated_spec(args.spec)
    report = RunReport()
    files = fetch_builds(spec, default_cache_dir(spec), report)
    for f in files:
        print(f"{f.job}\t{f.build}\t{f.source}\t{f.sha256}\t{f.path}")
    errors = report.errors("download")
    for p in report.problems:
        if p.severity != "error":
            log.info("download: %s: %s", p.item, p.message)
    log.info("download: %d files (%s); %d problems", len(files),
             ", ".join(f"{k.split('.', 2)[-1]}: {v}" for k, v in sorted(report.counts.items())
                       if k.startswith("download.source.")) or "none", len(errors))
    return 1 if (errors and not files) or report.fatal() else 0


def cmd_parse(args: argparse.Namespace) -> int:
    """``pal parse PATH...``: the samples that builds' results hold, as CSV/JSON on stdout or a file.

    A PATH is an output.xml (plain, .gz, .xz, .bz2, robot-plugin .zip), a ``*.info.json``, or a
    directory / .tar.gz / .zip of UTI JSON files. Job and build come from ``--job``/``--build``,
    else from the path (``<job>/<build>/...`` or ``<job>__<build>__<name>``), else are left
    empty. A path that cannot be read is logged and the exit code is 1; then nothing goes to
    stdout (a partial table there would pass for the whole), while ``--output`` still gets
    the builds that were read.
    """
    import pandas as pd

    from pal.errors import ParseError
    from pal.model import empty_samples
    from pal.parse import job_build_from_path, parse_build
    from pal.parse.output import write_samples

    if args.format == "parquet" and args.output is None:
        log.error("error: --format parquet needs --output FILE")
        return 1
    testbeds: dict[str, str] = {}
    rename: dict[str, str] = {}
    ignore: list[str] = []
    if args.spec is not None:
        spec = load_spec(args.spec)
        testbeds, rename, ignore = dict(spec.testbeds), spec.renames(), list(spec.ignore)
    frames, failed = [], 0
    for path in args.files:
        if not path.exists():
            log.error("error: %s: no such file", path)
            failed += 1
            continue
        guessed = job_build_from_path(path)
        job = args.job if args.job is not None else (guessed[0] if guessed else "")
        build = args.build if args.build is not None else (guessed[1] if guessed else None)
        try:
            result = parse_build(path, job, build if build is not None else 0, testbeds=testbeds,
                                 rename=rename, ignore=ignore)
        except ParseError as exc:
            log.error("error: %s", exc)
            failed += 1
            continue
        for p in result.problems:
            log.warning("parse: %s", p.message)
        m = result.meta
        log.info("parse: %s: job %s, build %s: %d rows, %d passed, %d failed, %s %s", path, job or "(none)",
                 build if build is not None else "(none)", len(result.samples), m.passed, m.failed, m.dut,
                 m.dut_version or "version unknown")
        df = result.samples
        if build is None:  # unknown: an empty cell, not a made-up number
            df = df.assign(build=pd.array([pd.NA] * len(df), dtype="Int64"))
        frames.append(df)
    if failed and args.output is None:
        return 1
    df = pd.concat(frames, ignore_index=True) if frames else empty_samples()
    write_samples(df, args.format, args.output, sys.stdout)
    return 1 if failed else 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score the detectors (and peers) on labelled series; the table goes to stdout."""
    from pal.evaluation.harness import run

    spec = load_spec(args.spec) if args.spec is not None else None
    result = run(spec, args.csv, peers=args.peers, margin=args.margin, seed=args.seed, online=args.online,
                 detectors=args.detector or None, data=args.data, oracle=args.oracle)
    if args.format == "json":
        json.dump(result.rows(), sys.stdout, indent=1)
        print()
    else:
        print(result.markdown())
    return 0


def _run_options(args: argparse.Namespace, **extra: object):
    from pal.options import RunOptions

    return RunOptions(
        out_dir=getattr(args, "out", None), executor=getattr(args, "executor", None),
        scheduler=getattr(args, "scheduler", None), workers=getattr(args, "workers", None),
        full=getattr(args, "full", False), trigger=getattr(args, "trigger", "manual"),
        upstream=_upstream(getattr(args, "upstream", None)), **extra,
    )


def _upstream(text: str | None) -> tuple[str, int] | None:
    if not text:
        return None
    job, sep, build = text.rpartition("#")
    if not sep or not job or not build.isdigit():
        from pal.errors import PalError

        raise PalError(f"--upstream: got {text!r}, expected JOB#BUILD (e.g. csit-vpp-perf-mrr-daily-master-2n-icx#265)")
    return job, int(build)


def cmd_run(args: argparse.Namespace) -> int:
    from pal.executor import start_early, starts_forkserver, stop_forkserver
    from pal.validate import validated_spec

    # The forkserver's preload (0.8 s of imports) is what the parse's first build waits for: it
    # starts before the spec is read (0.2 s: checking the detectors' parameters imports numpy),
    # for the executor the command line names or else the default one (local), and the spec's
    # executor keeps it or stops it; either way before the stages' imports (pal.pipeline:
    # pandas, pyarrow...).
    guess = (getattr(args, "executor", None) or "local", getattr(args, "workers", None) or 2)
    start_early(*guess)
    try:
        spec = validated_spec(args.spec)
        options = _run_options(args)
        kind, workers, _ = options.executor_of(spec)
        if starts_forkserver(kind, workers) != starts_forkserver(*guess):
            stop_forkserver()
            start_early(kind, workers)
        from pal.pipeline import run

        return run(spec, options).exit_code
    finally:  # the run stops it once done with it; not when it failed before its executor (the lock)
        stop_forkserver()


def cmd_render(args: argparse.Namespace) -> int:
    """Analyse and render what the store holds, without downloading."""
    from pal.pipeline import run

    outcome = run(load_spec(args.spec), _run_options(args, download=False))
    return outcome.exit_code


def cmd_analyse(args: argparse.Namespace) -> int:
    """Print every series' compliance metrics and last verdict from the stored history.

    The exit code is decided as the last ``pal run`` decided it (``pipeline.decide_alerts``: the
    spec's ``alerts.fail-on``, acks, new vs ongoing against the alerts that run started from);
    nothing is saved. The jobs whose series did not change since that run take its results
    (``pal.analysis.result_cache``, read only).
    """
    from datetime import datetime, timezone

    from pal import summary
    from pal.analysis.result_cache import ResultCache, results_dir, window_inputs
    from pal.analysis.series import single_testbed_jobs
    from pal.history import growing_jobs, window_builds
    from pal.pipeline import analyse_series, decide_alerts, window_series
    from pal.report import RunReport
    from pal.store import Store

    spec = load_spec(args.spec)
    report = RunReport()
    store = Store(spec.store_dir)
    builds = window_builds(spec, store, datetime.now(timezone.utc))
    windows, slides = window_inputs(spec, store, builds)
    cache = ResultCache.open(results_dir(spec.out_dir), spec, single_testbed_jobs(builds, spec), windows=windows,
                             slides=slides, growing=growing_jobs(spec, store, builds))
    history, inputs = window_series(spec, store, builds, report, cache=cache)
    results = analyse_series(spec, inputs, history.builds, report, cache=cache)
    _, code, _ = decide_alerts(spec, store, results, history, again=True)
    rows = summary.series_rows(results)
    formats = {"json": summary.to_json, "csv": summary.to_csv, "table": summary.to_table}
    sys.stdout.write(formats[args.format](rows))
    return code


def cmd_bisect(args: argparse.Namespace) -> int:
    """``pal bisect request|classify``: see docs/bisect.md."""
    if args.bisect_command == "request":
        return _bisect_request(args)
    return _bisect_classify(args)


def _bisect_request(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from pal.culprit import gerrit
    from pal.culprit.request import find_alert, load_alerts, request_for_alert
    from pal.culprit.show import request_text
    from pal.errors import PalError

    templates: dict[str, str] = {}
    out_dir = args.out
    if args.spec is not None:
        spec = load_spec(args.spec)
        templates = dict(spec.outputs.commit_range_url)
        out_dir = out_dir or spec.out_dir
    if out_dir is None:
        raise PalError("pal bisect request needs --out DIR (holding alerts.json) or --spec SPEC")
    path = Path(out_dir) / "alerts.json"
    alert = find_alert(load_alerts(path), args.alert_id, str(path))
    ar = request_for_alert(alert, url_templates=templates, style=args.style)
    if args.format == "json":
        print(json.dumps({"alert": alert.get("id"), "range": ar.suspect.to_dict(),
                          "request": ar.request.to_dict() if ar.request else None, "why_not": ar.why_not},
                         indent=2, sort_keys=True))
    else:
        sys.stdout.write(request_text(ar))
    if ar.request is None:
        log.error("error: alert %s: %s", alert.get("id"), ar.why_not)
        return 1
    for w in ar.request.warnings:
        log.warning("warning: %s", w)
    url = args.gerrit or os.environ.get(gerrit.URL_ENV) or gerrit.DEFAULT_GERRIT
    if not args.post:
        log.info("dry run: not posted; --post comments on the change of commit %s at %s", ar.request.latest, url)
        return 0
    creds = gerrit.Credentials.from_env()
    posted = gerrit.post_comment(url, ar.request.latest or "", ar.request.comment, creds)
    log.info("posted on change %s~%d, revision %s", posted.project, posted.change, posted.revision)
    return 0


def _bisect_classify(args: argparse.Namespace) -> int:
    from pal.culprit.bisect_results import replay
    from pal.culprit.show import state_text
    from pal.report import RunReport

    report = RunReport()
    state = replay(args.dir, report, dut=args.dut)
    for p in report.problems:
        (log.error if p.severity == "error" else log.warning)("bisect: %s: %s", p.item, p.message)
    if args.format == "json":
        print(json.dumps(state.to_dict(), indent=2, sort_keys=True))
    else:
        sys.stdout.write(state_text(state))
    return 0
