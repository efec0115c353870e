"""constraints.txt pins every dependency, and every installer of pal uses it (make, CI, Jenkins)."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess

import pytest

from tests.conftest import REPO

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][A-Za-z0-9.+!-]*)$")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = PIN.match(line)
        assert m, f"not an exact pin: {line!r}"
        assert _norm(m.group(1)) not in out, f"pinned twice: {line}"
        out[_norm(m.group(1))] = m.group(2)
    return out


def test_every_requirement_of_pal_and_its_test_extra_is_pinned_exactly():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    lines = cfg["options"]["install_requires"].splitlines() + cfg["options.extras_require"]["test"].splitlines()
    names = {_norm(re.match(r"[A-Za-z0-9._-]+", line.strip()).group())  # type: ignore[union-attr]
             for line in lines if line.strip() and not line.strip().startswith("#")}
    pinned = pins()
    assert names - set(pinned) == set()
    assert "pal" not in pinned  # the package itself is installed from the checkout
    # transitive dependencies too (what pip resolved), not only the direct ones
    assert {"numpy", "pandas", "pyarrow", "distributed", "dask", "lxml"} <= set(pinned)
    assert len(pinned) > len(names)


@pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
def test_make_venv_and_bench_install_pinned(tmp_path):
    for target in ("venv", "bench"):
        p = subprocess.run(["make", "-n", "-B", target, f"VENV={tmp_path / 'v'}"], cwd=REPO,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        installs = [line for line in p.stdout.splitlines() if "pip install" in line and "-e" in line]
        assert installs and all("-c constraints.txt" in line for line in installs), p.stdout


def test_ci_runs_make_test():
    assert re.search(r"^make test$", (REPO / ".ci" / "run").read_text(), re.M)
