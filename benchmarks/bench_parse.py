"""Parse speed and memory: pal against Robot Framework's reader and a bare lxml loop.

Generates three RF 7 output.xml files: a keyword-heavy one with TRACE-like keyword trees
(>= 200 MB), an INFO-level one, and a CSIT-shaped one (thousands of small tests with a few
short keywords each, as a CSIT perf job's output.xml has), then times in separate processes,
on the same file in the same run:

- pal: ``pal.parse.parse_build``;
- rf: ``robot.api.ExecutionResult(path, include_keywords=False)`` with a ResultVisitor
  collecting the same test fields (name, status, message, tags);
- bare: an lxml ``iterparse`` loop that touches and clears every element (the floor).

Each measurement runs in a child of a launcher process, which reports the child's peak
RSS through ``resource.getrusage(RUSAGE_CHILDREN)``. The child imports the readers' modules,
then times its first and only read of the file: a fresh process, as a pool worker starts
(no warm-up pass, no caches of an earlier parse); the fastest of ``--repeat`` children is
reported. Run: ``python -m benchmarks.bench_parse`` (``--mb 200`` sets the TRACE file size,
``--csit-tests 3000`` the CSIT-shaped file's tests, ``--keep DIR`` keeps the files).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# ---------------------------------------------------------------------------
# Generator: an RF 7 output.xml shaped like a CSIT perf run
# ---------------------------------------------------------------------------

_T = "2022-01-24T03:09:00.000000"


def _kw_tree(depth: int, fanout: int, msgs: int, label: str) -> str:
    """A keyword with ``msgs`` TRACE/INFO messages and ``fanout`` children, ``depth`` levels deep."""
    body = "".join(
        f'<msg time="{_T}" level="{"TRACE" if i % 2 == 0 else "INFO"}">{label} step {i}: '
        f"Arguments: [ node={{'host': '10.30.51.17', 'port': 22}} | cmd='vppctl show int' ]</msg>\n"
        for i in range(msgs)
    )
    kids = "".join(_kw_tree(depth - 1, fanout, msgs, f"{label}.{j}") for j in range(fanout)) if depth > 1 else ""
    return (f'<kw name="{label}" owner="performance">\n{body}{kids}<arg>${{nodes}}</arg>\n'
            f"<doc>Run one step of the traffic profile.</doc>\n"
            f'<status status="PASS" start="{_T}" elapsed="0.012"/>\n</kw>\n')


def write_output(path: Path, target_mb: float, depth: int, fanout: int, msgs: int, tops: int,
                 n_tests: int | None = None) -> dict:
    """Write an output.xml of about ``target_mb`` MB (or of ``n_tests`` tests); returns the number of tests and suites."""
    test_kws = "".join(_kw_tree(depth, fanout, msgs, f"Traffic Step {i}") for i in range(tops))
    setup = (f'<kw name="Show Vpp Version On All Duts" owner="performance" type="SETUP">\n'
             f'<msg time="{_T}" level="INFO">VPP version: 22.02-rc0~508-g88a9c0e02~b851</msg>\n'
             f'{_kw_tree(2, 2, msgs, "Vpp Show Version")}'
             f'<status status="PASS" start="{_T}" elapsed="1.0"/>\n</kw>\n')
    per_suite = 10
    test_bytes = len(test_kws) + 600
    n_tests = n_tests or max(per_suite, int(target_mb * 1e6 / test_bytes))
    n_suites = (n_tests + per_suite - 1) // per_suite
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<robot generator="Robot 7.0 (Python 3.11)" generated="{_T}" rpa="false" schemaversion="5">\n'
                '<suite id="s1" name="Tests" source="/csit/tests">\n'
                '<kw name="Setup Framework" owner="setup_framework" type="SETUP">\n'
                f'<msg time="{_T}" level="INFO">Setup of node TG host 10.30.51.45, port 22 done.</msg>\n'
                f'<status status="PASS" start="{_T}" elapsed="20.0"/>\n</kw>\n')
        t = 0
        for s in range(n_suites):
            f.write(f'<suite id="s1-s{s + 1}" name="2N1L-25Ge2P1Xxv710-Ethip4-Ip4Base{s}-Mrr" source="/x.robot">\n')
            f.write(setup)
            for k in range(per_suite):
                t += 1
                trials = ", ".join(f"{21e6 + 1000 * ((t + i) % 97):.2f}" for i in range(10))
                status = ("FAIL\">Traffic generator failed" if t % 50 == 0 else
                          f"PASS\">Maximum Receive Rate trial results in packets per second: [{trials}]")
                f.write(f'<test id="s1-s{s + 1}-t{k + 1}" name="64B-1c-ethip4-ip4base{k}-mrr" line="90">\n'
                        f'<kw name="Setup Test" owner="default" type="SETUP">\n<msg time="{_T}" level="INFO">'
                        f"setup</msg>\n<status status=\"PASS\" start=\"{_T}\" elapsed=\"1.0\"/>\n</kw>\n")
                f.write(test_kws)
                f.write("<tag>1C</tag><tag>2T1C</tag><tag>64B</tag><tag>MRR</tag><tag>PERFTEST</tag>"
                        "<tag>NIC_Intel-XXV710</tag><tag>DRV_VFIO_PCI</tag><tag>2_NODE_SINGLE_LINK_TOPO</tag>\n")
                f.write(f'<status status="{status}</status>\n</test>\n')
            f.write(f'<status status="PASS" start="{_T}" elapsed="700.0"/>\n</suite>\n')
        f.write(f'<status status="PASS" start="{_T}" elapsed="86000.0"/>\n</suite>\n'
                "<statistics></statistics>\n<errors></errors>\n</robot>\n")
    return {"tests": t, "suites": n_suites, "mb": path.stat().st_size / 1e6}


# ---------------------------------------------------------------------------
# The three readers (run in a child process each)
# ---------------------------------------------------------------------------


def work_pal(path: str) -> dict:
    from pal.parse import parse_build

    r = parse_build(path, "csit-vpp-perf-mrr-daily-master-2n-icx", 1)
    return {"tests": r.meta.passed + r.meta.failed, "failed": r.meta.failed, "rows": len(r.samples),
            "version": r.meta.dut_version}


def work_rf(path: str) -> dict:
    from robot.api import ExecutionResult, ResultVisitor

    class Collect(ResultVisitor):
        def __init__(self) -> None:
            self.tests: list[tuple] = []

        def visit_test(self, test) -> None:
            self.tests.append((test.full_name, test.status, test.message, tuple(test.tags)))

    result = ExecutionResult(path, include_keywords=False)
    c = Collect()
    result.visit(c)
    return {"tests": len(c.tests), "failed": sum(1 for t in c.tests if t[1] == "FAIL")}


def work_bare(path: str) -> dict:
    from lxml import etree

    n = 0
    for _, el in etree.iterparse(path, events=("end",), resolve_entities=False, no_network=True):
        n += 1
        el.clear(keep_tail=True)
    return {"elements": n}


WORKERS = {"pal": work_pal, "rf": work_rf, "bare": work_bare}


def measure(kind: str, path: Path, repeat: int = 3) -> dict:
    """Run one reader ``repeat`` times, each in a fresh child of a launcher: the fastest run's
    seconds (inside the child: the least disturbed by other load, as timeit reports) and the
    largest peak RSS."""
    launcher = [sys.executable, "-m", "benchmarks.bench_parse", "--launch", kind, str(path)]
    runs = []
    for _ in range(max(1, repeat)):
        out = subprocess.run(launcher, check=True, capture_output=True, text=True, cwd=Path(__file__).parent.parent)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}


def _launch(kind: str, path: str) -> None:
    child = subprocess.run([sys.executable, "-m", "benchmarks.bench_parse", "--work", kind, path],
                           check=True, capture_output=True, text=True)
    result = json.loads(child.stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(result))


def _work(kind: str, path: str) -> None:
    import lxml.etree  # noqa: F401  imports are not part of the parse time
    import pal.parse  # noqa: F401
    import robot.api  # noqa: F401

    # The first read in this process is the one timed: lazy set-up (regex compiles, caches) counts,
    # as it does for every fresh worker of a PA run.
    t0 = time.perf_counter()
    result = WORKERS[kind](path)
    result["seconds"] = time.perf_counter() - t0
    print(json.dumps(result))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=220.0, help="size of the TRACE-level file (MB)")
    ap.add_argument("--csit-tests", type=int, default=3000, help="tests in the CSIT-shaped file")
    ap.add_argument("--keep", type=Path, help="write the files here and keep them")
    ap.add_argument("--skip-rf", action="store_true", help="do not time the RF API (slow)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per reader; the fastest is reported")
    ap.add_argument("--launch", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--work", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.launch:
        _launch(*args.launch)
        return 0
    if args.work:
        _work(*args.work)
        return 0

    tmp = None
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        where = args.keep
    else:
        tmp = tempfile.TemporaryDirectory(prefix="bench_parse_")
        where = Path(tmp.name)
    files = {
        "TRACE": (where / "output_trace.xml", dict(target_mb=args.mb, depth=3, fanout=4, msgs=2, tops=12)),
        "INFO": (where / "output_info.xml", dict(target_mb=args.mb / 8, depth=2, fanout=4, msgs=1, tops=8)),
        "CSIT": (where / "output_csit.xml", dict(target_mb=0, depth=1, fanout=0, msgs=1, tops=2,
                                                 n_tests=args.csit_tests)),
    }
    print(f"{'file':6} {'MB':>6} {'tests':>6} {'reader':6} {'seconds':>8} {'MB/s':>7} {'peak RSS MB':>11}")
    for label, (path, shape) in files.items():
        info = write_output(path, **shape)
        got = {}
        for kind in ("bare", "pal") + (() if args.skip_rf else ("rf",)):
            got[kind] = r = measure(kind, path, args.repeat)
            print(f"{label:6} {info['mb']:6.0f} {info['tests']:6d} {kind:6} {r['seconds']:8.2f} "
                  f"{info['mb'] / r['seconds']:7.1f} {r['peak_rss_mb']:11.0f}")
        assert got["pal"]["tests"] == info["tests"], (got["pal"], info)
        if "rf" in got:
            assert (got["rf"]["tests"], got["rf"]["failed"]) == (got["pal"]["tests"], got["pal"]["failed"])
            print(f"{label:6} ratio RF API / pal = {got['rf']['seconds'] / got['pal']['seconds']:.1f}x  (goal >= 5)")
        print(f"{label:6} ratio pal / bare loop = {got['pal']['seconds'] / got['bare']['seconds']:.2f}  (goal <= 2)")
        print(f"{label:6} pal peak RSS = {got['pal']['peak_rss_mb']:.0f} MB  (goal < 300)")
        if not args.keep:
            os.unlink(path)
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
