"""``pal <command> --help``: every subcommand says what it does, shows examples, and explains every option."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import pytest

from pal.cli import build_parser


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_help_has_description_examples_and_option_help(name):
    sp = subcommands()[name]
    command = sp.prog.split()[-1]
    text = sp.format_help()
    assert sp.description and len(sp.description) > 40, f"pal {command}: no description"
    assert sp.epilog and "examples:\n" in sp.epilog, f"pal {command}: no examples"
    examples = sp.epilog.split("examples:\n", 1)[1].splitlines()
    assert examples and all(re.match(rf"  (\S+=\S+ )?pal {command}\b", e) for e in examples), examples
    undocumented = [a.dest for a in sp._actions if not a.help and not isinstance(a, argparse._HelpAction)]
    assert undocumented == [], f"pal {command}: options without help: {undocumented}"
    # the description keeps its line breaks (RawDescriptionHelpFormatter), examples are shown as written
    assert sp.description.splitlines()[0] in text and examples[0] in text


def test_format_and_store_actions_are_explained():
    cmds = subcommands()
    helps = {a.dest: a.help for a in cmds["analyse"]._actions}
    assert "table" in helps["format"] and "json" in helps["format"]
    store = cmds["store"]
    assert all(f"  {action}  " in store.epilog for action in ("info", "vacuum", "export"))


def test_help_runs_from_the_command_line():
    p = subprocess.run([sys.executable, "-m", "pal", "validate", "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "examples:" in p.stdout and "placeholder reason" in p.stdout


EXIT_NOW = """
import atexit, sys, threading, time
from pathlib import Path
from pal.cli import exit_now
out = Path(sys.argv[1])
def late():
    time.sleep(0.3)
    (out / "thread").write_text("done")
threading.Thread(target=late).start()
atexit.register(lambda: (out / "atexit").write_text("ran"))
sys.stdout.write("x" * int(sys.argv[3]))  # buffered, not flushed
sys.stderr.write("tail without newline")
exit_now(int(sys.argv[2]))
"""


@pytest.mark.parametrize("code", [0, 1, 2])
def test_exit_now_ends_as_a_normal_exit_would(tmp_path, code):
    """No teardown, but the code is the run's, running threads finish, atexit handlers run and
    buffered output is flushed."""
    p = subprocess.run([sys.executable, "-c", EXIT_NOW, str(tmp_path), str(code), "100000"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == code
    assert p.stdout == "x" * 100000 and p.stderr == "tail without newline"
    assert (tmp_path / "thread").read_text() == "done" and (tmp_path / "atexit").read_text() == "ran"


def test_exit_now_with_stdout_closed_by_its_reader(tmp_path):
    """``pal ... | head``: the reader is gone, the exit code stays the run's, no traceback."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the write is buffered, the flush fails
    p = subprocess.Popen([sys.executable, "-c", EXIT_NOW, str(tmp_path), "2", "10"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 2
    assert "Traceback" not in err and err.endswith("tail without newline")


EARLY = """
import sys, types
import pal.executor

HEAVY = ("numpy", "pandas", "pyarrow", "pal.analysis.mdl_kernel", "lxml", "jinja2")

def early(kind, workers):
    print("start", kind, workers, *sorted(m for m in HEAVY if m in sys.modules))

def stop():
    print("stop")

def run(spec, options):
    print("run", options.executor_of(spec)[:2])
    raise SystemExit(0)

pal.executor.start_early = early
pal.executor.stop_forkserver = stop
stages = types.ModuleType("pal.pipeline")  # (the stages, imported after the spec: not imported here)
stages.run = run
sys.modules["pal.pipeline"] = stages
from pal.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_run_starts_its_workers_before_reading_the_spec(tmp_path):
    """``pal run`` starts its forkserver (``start_early``) before it reads its spec, for the executor
    the command line names or else the default (a local pool), and before it imports numpy,
    pandas, pyarrow, the compiled kernels...: the server's preload then runs beside those imports and the spec's
    checks (which import numpy: 0.2 s). A spec whose executor forks no workers stops it and
    starts its own; one that does keeps it."""
    (tmp_path / "builds").mkdir()
    (tmp_path / "acks.yaml").write_text("{}\n")
    (tmp_path / "renames.yaml").write_text("{}\n")
    spec = ("name: t\njobs: [{name: csit-vpp-perf-mrr-daily-master-2n-icx}]\n"
            "sources: [{name: d, type: local, path: builds}]\nrename-file: renames.yaml\n"
            "test-sets: [{name: mrr, select: {tags: MRR}, metrics: [mrr]}]\n"
            "alerts: {acks: acks.yaml}\n")

    def early(store: str, *args: str) -> list[str]:
        (tmp_path / "spec.yaml").write_text(spec + store)
        p = subprocess.run([sys.executable, "-c", EARLY, "run", "--spec", str(tmp_path / "spec.yaml"), *args],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout.strip().splitlines()

    assert early("store: {workers: 3}\n") == ["start local 2", "run ('local', 3)", "stop"]
    assert early("store: {workers: 1}\n") == ["start local 2", "stop", "start local 1 numpy", "run ('local', 1)",
                                               "stop"]
    assert early("store: {workers: 3}\n", "--workers", "1") == ["start local 1", "run ('local', 1)", "stop"]
    assert early("store: {executor: dask, scheduler: 'tcp://127.0.0.1:8786'}\n") == [
        "start local 2", "stop", "start dask 2 numpy", "run ('dask', 2)", "stop"]
    assert early("store: {workers: 3}\n", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:8786") == [
        "start dask 2", "run ('dask', 3)", "stop"]


def test_a_run_that_fails_before_its_executor_leaves_no_forkserver(tmp_path, capsys, monkeypatch):
    """The forkserver ``pal run`` starts early is stopped by the run once it is done with it, and
    by ``cmd_run`` when the run fails before it made its executor (here: another run holds the
    store's lock), so no process is left importing for nothing."""
    import multiprocessing.forkserver as forkserver

    import pal.executor
    from pal.cli import main
    from pal.store import Store

    (tmp_path / "builds").mkdir()
    (tmp_path / "spec.yaml").write_text(
        "name: t\njobs: [{name: csit-vpp-perf-mrr-daily-master-2n-icx}]\n"
        "sources: [{name: d, type: local, path: builds}]\n"
        "test-sets: [{name: mrr, select: {tags: MRR}, metrics: [mrr]}]\n"
        "store: {path: store, workers: 2}\noutputs: {dir: out}\n")
    started = []
    real = pal.executor.start_early

    def early(kind: str, workers: int) -> None:
        real(kind, workers)
        started.append(forkserver._forkserver._forkserver_pid)

    monkeypatch.setattr(pal.executor, "start_early", early)
    with Store(tmp_path / "store").lock():
        assert main(["-q", "run", "--spec", str(tmp_path / "spec.yaml")]) == 1
    assert "locked" in capsys.readouterr().err
    assert started and started[0] is not None  # it was started ...
    assert forkserver._forkserver._forkserver_pid is None  # ... and is gone


def test_the_modules_a_run_with_nothing_new_uses_import_no_later_stage():
    """A run with nothing new stops after the download check and the fingerprint. The modules
    it goes through (the pipeline, the sources, the store, the fingerprint) import neither the
    parse (lxml), the render (jinja2) nor the compiled kernels (C extensions): each is
    imported where its stage runs. (pandas and pyarrow they do need: the window's builds.)"""
    code = ("import sys\nimport pal.pipeline, pal.sources, pal.store, pal.fingerprint, pal.executor, pal.history\n"
            "print(*sorted(m for m in ('lxml', 'jinja2', 'pal.analysis.mdl_kernel', 'pal.analysis.filters_kernel', "
            "'pal.analysis.bands_kernel', 'pal.render.text_kernel', 'pal.render', 'pal.parse.build') "
            "if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""
