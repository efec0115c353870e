"""Whole-run helpers: a tiny demo history, hostile builds, a spec, and ``pal run`` in a subprocess.

A subprocess (not ``cli.main`` in-process) because these tests kill it, limit its disk, and
grep everything it prints.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import yaml

from pal.demo import generate
from pal.demo.rfxml import attr, esc

REPO = Path(__file__).resolve().parents[2]
JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"

#: Hostile strings planted in names, tags, messages, versions and the title.
SCRIPT = "<script>alert(1)</script>"
BREAKOUT = "</script><svg onload=alert(2)>"
QUOTES = "\"'><img src=x onerror=alert(3)>"
JS_URL = "javascript:alert(4)"
FORMULA = "=cmd|' /C calc'!A0"
RTL = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
ZW = "\u200b"  # ZERO WIDTH SPACE
TABS = "\t\t"  # TABs: columns shifted (a CR would also split the row of the pandas-style CSV exports)
HOSTILE_NAMES = (
    f"64b-2t1c-{SCRIPT}{QUOTES}-mrr",
    f"{FORMULA}{RTL}gnp-exe{ZW}-{BREAKOUT}-{JS_URL}-mrr",
    f"64b-2t1c-cr{TABS}fake-line-mrr",
)


def _xml_controls(text: str) -> str:
    """CR and TAB as character references: written raw, XML would normalise them away."""
    return text.replace("\r", "&#13;").replace("\t", "&#9;")
HOSTILE_MESSAGE = f"{SCRIPT} {BREAKOUT} {QUOTES} {FORMULA} {RTL}evil{ZW} {JS_URL} {{{{7*7}}}}"
# no blank: the version is read up to the first one
HOSTILE_VERSION = f'=HYPERLINK("http://evil/")27.02-rc0{SCRIPT}"\'>{RTL}'

HOSTILE_TITLE = f"Trending {SCRIPT}{QUOTES}{BREAKOUT}{RTL}"


def tiny_history(root: Path, *, seed: int = 3, builds: int = 10, tests: int = 3) -> Path:
    """One daily MRR job, ``builds`` builds of ``tests`` tests, RF 7 output.xml.gz."""
    generate(root, seed=seed, builds=builds, tests=tests, jobs=[JOB])
    return root


def build_files(root: Path) -> list[Path]:
    return sorted((root / JOB).glob("*/output.xml.gz"), key=lambda p: int(p.parent.name))


def plant_hostile(root: Path) -> None:
    """Add two hostile tests to every build (a PASS with a regression half way, a FAIL) and a hostile version."""
    files = build_files(root)
    for i, path in enumerate(files):
        xml = gzip.decompress(path.read_bytes()).decode()
        rate = 10_000_000.0 if i < len(files) // 2 else 5_000_000.0
        extra = "".join(
            f'<test id="s1-s1-s1-s1-s1-t9{k}" name="{_xml_controls(attr(name))}" line="1">\n'
            f"<tag>1C</tag>\n<tag>2T1C</tag>\n<tag>64B</tag>\n<tag>MRR</tag>\n<tag>{esc(name[:20])}</tag>\n"
            + (f'<status status="PASS" start="2026-11-11T02:13:48.400000" elapsed="1.0">Maximum Receive Rate '
               f"trial results in packets per second: [{rate + k}, {rate + k}]</status>\n"
               if k == 0 or (i + (k == 2)) % 2 else
               f'<status status="FAIL" start="2026-11-11T02:13:48.400000" elapsed="1.0">{esc(HOSTILE_MESSAGE)}'
               "</status>\n")
            + "</test>\n"
            for k, name in enumerate(HOSTILE_NAMES))
        first_end = xml.index("</test>\n") + len("</test>\n")
        xml = xml[:first_end] + extra + xml[first_end:]
        start = xml.index("VPP version: ") + len("VPP version: ")
        xml = xml[:start] + esc(HOSTILE_VERSION) + xml[xml.index("</msg>", start):]
        path.write_bytes(gzip.compress(xml.encode()))


def spec_dict(data: Path | None, out: Path, *, title: str = "pal reliability", sources: list | None = None,
              **extra) -> dict:
    spec = {
        "name": "reliability",
        "jobs": [{"name": JOB}],
        "sources": sources or [{"name": "dir", "type": "local", "path": str(data)}],
        "test-sets": [{"name": "mrr", "select": {"tags": "MRR"}, "metrics": ["mrr"]}],
        "outputs": {"dir": str(out), "title": title, "exports": ["csv", "parquet"],
                    "build-url": "https://jenkins.example.org/job/{job}/{build}"},
        "store": {"path": str(out / "store"), "workers": 1},
    }
    spec.update(extra)
    return spec


def write_spec(path: Path, spec: dict) -> Path:
    path.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def pal_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAL_STORE_CRASH", "JENKINS_"))}
    env.update(extra or {})
    return env


def pal_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pal", *args]


def run_pal(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    """``pal ARGS`` to completion; stdout and stderr captured as text."""
    return subprocess.run(pal_cmd(*args), capture_output=True, text=True, env=pal_env(env), timeout=timeout,
                          cwd=REPO)


#: Tests whose DUT forwards nothing (every MRR trial 0.0) in all builds, in the first half, in the second half.
DEAD_TESTS = {"dead-all": lambda i, n: True, "dead-first": lambda i, n: i < n // 2,
              "dead-last": lambda i, n: i >= n // 2}


def plant_dead(root: Path) -> None:
    """Add the DEAD_TESTS to every build: MRR trials all 0.0 where the DUT is dead, 7 Mpps elsewhere."""
    files = build_files(root)
    for i, path in enumerate(files):
        xml = gzip.decompress(path.read_bytes()).decode()
        extra = ""
        for k, (name, dead) in enumerate(DEAD_TESTS.items()):
            rate = 0.0 if dead(i, len(files)) else 7_000_000.0 + k
            extra += (f'<test id="s1-s1-s1-s1-s1-t8{k}" name="64b-2t1c-ethip4-ip4base-{name}-mrr" line="1">\n'
                      "<tag>1C</tag>\n<tag>2T1C</tag>\n<tag>64B</tag>\n<tag>MRR</tag>\n"
                      '<status status="PASS" start="2026-11-11T02:13:48.400000" elapsed="1.0">Maximum Receive Rate '
                      f"trial results in packets per second: [{rate}, {rate}, {rate}]</status>\n</test>\n")
        first_end = xml.index("</test>\n") + len("</test>\n")
        path.write_bytes(gzip.compress((xml[:first_end] + extra + xml[first_end:]).encode()))


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, grandchildren...), from /proc."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":
            parent[int(d.name)] = int(fields[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def orphans_of(pids: list[int]) -> list[int]:
    """Those of ``pids`` still alive (not zombies)."""
    alive = []
    for p in pids:
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2:].split()[0] != "Z":
            alive.append(p)
    return alive
