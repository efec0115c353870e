"""pa-job.sh driving the real ``pal run`` on the small seeded demo history."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.jenkins.conftest import PA_JOB, REPO, VENV

PAL = Path(sys.executable).parent / "pal"


@pytest.mark.slow
def test_pa_job_runs_real_pal_on_the_demo_history(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "specs").mkdir(parents=True)
    data = tmp_path / "demo-data"
    p = subprocess.run([str(PAL), "demo-data", str(data), "--small"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    spec = yaml.safe_load((REPO / "specs" / "demo.yaml").read_text())
    spec["sources"] = [{"name": "demo-dir", "type": "local", "path": str(data)}]
    if "rename-file" in spec:
        spec["rename-file"] = str(data / "renames.yaml")
    spec["outputs"]["dir"] = "../out"  # overridden by --out anyway
    spec["store"] = {"path": str(tmp_path / "store")}
    spec["alerts"]["regression-result"] = "UNSTABLE"
    (ws / "specs" / "csit-trending.yaml").write_text(yaml.safe_dump(spec))

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "WORKSPACE": str(ws), "PAL_VENV": str(VENV),
           "PAL_SKIP_INSTALL": "1", "BUILD_CAUSE": "TIMERTRIGGER", "BUILD_NUMBER": "1", "JOB_NAME": "pal-trending"}
    r = subprocess.run(["bash", str(PA_JOB)], env=env, cwd=ws, capture_output=True, text=True, timeout=600)
    result = (ws / "pal-result.txt").read_text().strip()
    # the small demo history plants last-run regressions: a first run finds them new -> exit 2 -> UNSTABLE
    assert (r.returncode, result) == (3, "UNSTABLE"), r.stdout + r.stderr
    assert "--trigger timer" in r.stdout
    out = ws / "out"
    assert (out / "site" / "index.html").is_file()
    report = json.loads((out / "report.json").read_text())
    assert "counts" in report and "problems" in report
    assert isinstance(json.loads((out / "alerts.json").read_text()), (list, dict))
    # pal's exit code reached the result and the mail subject consistently.
    subject = (ws / "pal-email-subject.txt").read_text()
    assert "pal exit code 2 -> UNSTABLE" in r.stdout
    assert subject.startswith("Performance trending: regressions in ")
