"""The instructions one drill-down costs (``Pages.write_series``), counted by valgrind.

On a shared VM the CPU time of the same page moves by a third from one minute to the next;
the instructions a page executes do not (two counts of one code tree agree within 1 %). The
count is valgrind's (``--tool=callgrind``, every instruction of the process), taken twice:
with ``--pages`` + 1 pages and with 1 page, so the start-up and the imports cancel out.

    python -m benchmarks.page_instructions [--runs 170] [--pages 200] [--anomalies] [--code DIR ...]

``--code``: code trees to count side by side (``git worktree add`` a revision, build its kernels
with ``python setup.py build_ext --inplace``); default: this checkout. The series are
``bench_render.synthesise``'s (one job, one axis); without ``--anomalies`` their changes are
taken off, as in most series of a real run (a page without an anomalies table). Needs valgrind
(Debian: ``apt-get install valgrind``); a count under valgrind takes about a minute.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_pages(runs: int, pages: int, anomalies: bool, out: Path | None = None) -> None:
    """The measured work: ``pages`` drill-downs of synthetic series of ``runs`` runs, into a
    temporary site (``out``: into this directory instead)."""
    import pandas as pd

    from benchmarks.bench_render import synthesise
    from pal.render.buildinfo import BuildIndex
    from pal.render.files import SiteFiles
    from pal.render.pages import Links, Pages, SeriesExtras, SiteInfo

    results = synthesise(1, pages, runs)
    if not anomalies:
        results = [dataclasses.replace(r, changes=[]) for r in results]
    job, builds = results[0].key.job, results[0].builds
    facts = BuildIndex(pd.DataFrame({"job": [job] * runs, "build": builds, "dut_version": ["v1"] * runs,
                                     "testbed": ["tb"] * runs}), None)
    writer = Pages(SiteInfo("t", "2026", Links("{jenkins}/job/{job}/{build}", "https://j")))
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) if out is None else out
        (site / "s").mkdir()
        files = SiteFiles(site)
        for r in results:
            writer.write_series(files, r, facts, SeriesExtras())


def count(code: Path, runs: int, pages: int, anomalies: bool) -> int:
    """Instructions of a process that writes ``pages`` drill-downs with the code at ``code``."""
    # run as a script, not ``-m``: ``-m`` would put the working directory (this checkout) before
    # ``code`` on the path, and every tree would be counted with this checkout's pal
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, str(Path(__file__).resolve()),
            "--inner", str(runs), str(pages), "1" if anomalies else "0"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(code), str(ROOT)]), PYTHONHASHSEED="0")
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"valgrind on {code}: exit {done.returncode}: {done.stderr[-600:]}")
    used = re.search(r"pal from (\S+)", done.stderr)
    if not used or Path(used.group(1)).resolve() != (code / "pal").resolve():
        raise RuntimeError(f"{code}: the count imported pal from {used.group(1) if used else '?'}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Instructions a drill-down costs (valgrind), for code trees side by side.")
    p.add_argument("--runs", type=int, default=170, help="runs per series (default 170: the pipeline benchmark's window)")
    p.add_argument("--pages", type=int, default=200, help="pages counted (default 200)")
    p.add_argument("--anomalies", action="store_true", help="keep the synthetic series' changes (an anomalies table)")
    p.add_argument("--code", type=Path, action="append", help="a code tree (repeatable; default: this checkout)")
    p.add_argument("--inner", nargs=3, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.inner:
        import pal

        print(f"pal from {Path(pal.__file__).parent}", file=sys.stderr)  # the tree counted
        write_pages(int(a.inner[0]), int(a.inner[1]), a.inner[2] == "1")
        return 0
    if shutil.which("valgrind") is None:
        print("page_instructions: valgrind not found (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    for code in a.code or [ROOT]:
        per_page = (count(code, a.runs, a.pages + 1, a.anomalies) - count(code, a.runs, 1, a.anomalies)) / a.pages
        print(f"{code}: {per_page / 1e6:.3f} M instructions a drill-down ({a.runs} runs, "
              f"{'with' if a.anomalies else 'without'} anomalies, {a.pages} pages)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
