"""The compiled kernels: every one setup.py lists is built by the install, and a tree without them
still runs (the NumPy forms), saying so."""

from __future__ import annotations

import ast
import logging
import re
import subprocess
import sys

import pytest

from pal import compiled
from tests.conftest import REPO


def _listed() -> list[str]:
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "KERNELS" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    raise AssertionError("setup.py lists no KERNELS")


@pytest.mark.parametrize("name", _listed())
def test_every_kernel_setup_py_lists_is_built_and_has_its_source(name):
    assert (REPO / (name.replace(".", "/") + ".c")).is_file()
    module = compiled.load(name)
    assert module is not None, f"{name} is not built: run make venv"
    assert module.__file__.endswith(".so")  # the extension, not a leftover Python module


def test_setup_py_builds_every_kernel_the_stages_load():
    loaded = {m for path in (REPO / "pal").rglob("*.py")
              for m in re.findall(r'compiled\.load\("([\w.]+)"\)', path.read_text())}
    assert loaded and loaded == set(_listed())


def test_a_kernel_not_built_gives_none_and_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="pal"):
        assert compiled.load("pal.analysis.no_such_kernel") is None
    assert "pal.analysis.no_such_kernel not built" in caplog.text


ANALYSE_AND_DRAW = """
import sys, tempfile
from pathlib import Path
import numpy as np
from pal.analysis.series import SeriesInput, analyse_one
from pal.model import SeriesKey
from pal.render.buildinfo import BuildIndex
from pal.render.files import SiteFiles
from pal.render.pages import Pages, SeriesExtras, SiteInfo
from pal.spec import TestSet
from tests.render.factory import builds_for, samples_for

n = 60
rng = np.random.default_rng(7)
values = rng.normal(10e6, 1e5, n)
values[40:] *= 0.9
times = np.datetime64("2025-01-01", "ns") + np.arange(n) * np.timedelta64(1, "D")
key = SeriesKey("csit-vpp-perf-mrr-daily-master-2n-icx", "tests.vpp.perf.x.64b-1c-mrr", "mrr")
series = SeriesInput(key, "mrr", np.arange(1, n + 1, dtype=np.int64), times, values, np.full(n, 5e4), {"nic": "x710"})
result = analyse_one(series, TestSet("mrr"), False)
site = Path(tempfile.mkdtemp())
(site / "s").mkdir()
Pages(SiteInfo("t", "2025")).write_series(SiteFiles(site), result, BuildIndex(builds_for([result]), samples_for([result])),
                                          SeriesExtras())
print(len(result.changes), sorted(m for m in sys.modules if m.endswith("_kernel") or m == "numba"))
"""


def test_a_series_analysed_and_drawn_runs_the_c_kernels_and_never_numba():
    """The analysis (MDL, filters, bands) and a drill-down (its texts) in a fresh process: the four
    kernels are the extensions, and Numba is never imported (pal no longer needs it)."""
    p = subprocess.run([sys.executable, "-c", ANALYSE_AND_DRAW], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "not built" not in p.stderr
    assert p.stdout.split(None, 1)[1].strip() == str(sorted(_listed()))
    assert int(p.stdout.split()[0]) >= 1  # the 10 % drop at run 40 is found
