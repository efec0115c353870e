"""Writing every alert output of a run under the output root, atomically and reproducibly.

``<out>/alerts/*.txt`` (text.py), ``<out>/alerts.json`` (json_out.py), ``<out>/junit.xml``
(junit.py), ``<out>/exports/`` (export.py: a file per build and the trend groups, in the
formats ``outputs.exports`` asks). Per-job files of jobs no longer analysed are removed, so Jenkins never mails a stale
one. A file that cannot be written is recorded in the RunReport and the others still are.
"""

from __future__ import annotations

import logging
import re
from concurrent.futures import Executor
from pathlib import Path
from typing import Callable

import pandas as pd

from pal.alerts import export, json_out, junit, text
from pal.atomic import write_bytes_atomic, write_text_atomic
from pal.alerts.build import BuildFacts, group_alerts
from pal.alerts.links import Links
from pal.alerts.model import Alert
from pal.alerts.policy import exit_code_for
from pal.report import RunReport
from pal.model import SeriesResult
from pal.spec import Spec

log = logging.getLogger("pal")

_PER_JOB = re.compile(r"^(regressions|progressions)-.+\.txt$")


def job_file_name(kind_word: str, job: str) -> str:
    """``regressions-<job>.txt``; characters outside [A-Za-z0-9._-] become ``_``."""
    return f"{kind_word}-{re.sub(r'[^A-Za-z0-9._-]', '_', job)}.txt"


def alert_samples(samples: pd.DataFrame | None) -> pd.DataFrame | None:
    """The rows of ``samples`` the alerts and the site read: every failed run (failed tests,
    JUnit messages, the site's failures), the last row of each (job, build) (its facts) and
    every row of each job's newest build (the failed-tests header counts its tests).

    The alert decision, every alert output and the site are the same from these as from the
    whole table; the run keeps these once the series are cut, so the window's samples (a
    million rows at CSIT scale) are not held through the analysis and what follows. Their
    categories are the values they use (``history.used_categories``)."""
    from pal.history import used_categories

    if samples is None or samples.empty or not {"job", "build"} <= set(samples.columns):
        return samples
    keep = ~samples.duplicated(["job", "build"], keep="last").to_numpy()
    if "status" in samples.columns:
        keep |= (samples["status"] == "FAIL").to_numpy(dtype=bool, na_value=False)
    builds = samples["build"].to_numpy()
    newest = samples.groupby("job", observed=True)["build"].transform("max").to_numpy()
    keep |= builds == newest
    return used_categories(samples[keep].reset_index(drop=True))


def write_alert_outputs(out_dir: Path, alerts: list[Alert], results: list[SeriesResult], builds: pd.DataFrame,
                        samples: pd.DataFrame | None, spec: Spec, report: RunReport,
                        generated_at: str | None = None, pool: Executor | None = None) -> dict[str, Path]:
    """Write the alert texts, alerts.json, junit.xml and the exports; return {name: path}.

    Names: ``trending-regressions``, ``trending-progressions``, ``trending-failed-tests``,
    ``regressions-<job>``, ``progressions-<job>`` (one per analysed job, empty when nothing
    new), ``alerts.json``, ``junit.xml``, ``groups.<fmt>`` and ``samples-<fmt>`` (a directory of
    build files) for each format of ``outputs.exports`` (``export.Exports``). ``pool``: the
    render's, which writes some of the exports' build files meanwhile (``Exports.write``).
    """
    out_dir = Path(out_dir)
    alerts_dir = out_dir / "alerts"
    facts = BuildFacts(builds, samples)
    links = Links.from_spec(spec)
    blocks = text.job_blocks(results, facts, builds, links)
    fail_on = spec.alerts.fail_on
    paths: dict[str, Path] = {}

    def put(name: str, target: Path, make: Callable[[], str | bytes | None]) -> None:
        """Write what ``make`` returns (None: ``make`` wrote ``target`` itself, atomically)."""
        try:
            data = make()
            if isinstance(data, str):
                write_text_atomic(target, data)
            elif data is not None:
                write_bytes_atomic(target, data)
            paths[name] = target
        except (OSError, ValueError) as exc:
            report.add("alerts", str(target), f"could not write {name}: {exc}")

    groups = group_alerts(alerts, results)
    put("trending-regressions", alerts_dir / "trending-regressions.txt",
        lambda: text.changes_text(alerts, blocks, "regression", groups=groups, links=links))
    put("trending-progressions", alerts_dir / "trending-progressions.txt",
        lambda: text.changes_text(alerts, blocks, "progression", groups=groups, links=links))
    put("trending-failed-tests", alerts_dir / "trending-failed-tests.txt",
        lambda: text.failed_tests_text(results, samples, blocks, facts, links))
    wanted = set()
    for job in sorted({b.job for b in blocks}):
        for kind, word in (("regression", "regressions"), ("progression", "progressions")):
            name = job_file_name(word, job)
            wanted.add(name)
            put(name[:-4], alerts_dir / name,
                lambda kind=kind, job=job: text.changes_text(alerts, blocks, kind, only_new=True, job=job,
                                                                links=links))
    if alerts_dir.is_dir():
        for stale in sorted(alerts_dir.iterdir()):
            if _PER_JOB.match(stale.name) and stale.name not in wanted:
                stale.unlink(missing_ok=True)
                log.info("alerts: removed %s (job no longer analysed)", stale)
    put("alerts.json", out_dir / "alerts.json",
        lambda: json_out.dumps(json_out.alerts_document(alerts, groups, fail_on, generated_at)))
    put("junit.xml", out_dir / "junit.xml", lambda: junit.junit_xml(results, alerts, fail_on, samples))
    # a file per build, written when its rows change (a daily run: its new builds), and the groups
    exports = export.Exports(out_dir / "exports", results, builds, spec.outputs.exports)
    paths.update(exports.write(lambda target, exc: report.add("alerts", str(target), f"could not write {target}: {exc}"),
                               pool=pool))
    report.count("exports.builds_formatted", len(exports.formatted))
    if exports.by_pool:
        report.count("exports.builds_by_render_worker", exports.by_pool)
    report.count("alerts.alerts", len(alerts))
    report.count("alerts.failing", sum(a.fails(fail_on) for a in alerts))
    log.info("alerts: %d alerts (%d new, %d acked), exit code %d under fail-on %s", len(alerts),
             sum(a.status == "new" for a in alerts), sum(a.acked for a in alerts), exit_code_for(alerts, fail_on), fail_on)
    return paths


def mail_alerts(spec: Spec, paths: dict[str, Path], alerts: list[Alert], report: RunReport,
                env: dict[str, str] | None = None) -> bool:
    """Mail the regressions text (the three trending files attached) when ``alerts.smtp`` is set.

    Returns True when a mail was sent; a delivery problem goes to the report.
    """
    from pal.alerts.mail import MailError, send_alert_mail

    smtp = spec.alerts.smtp
    if smtp is None or "trending-regressions" not in paths:
        return False
    new = sum(a.kind == "regression" and a.alerting and a.status == "new" for a in alerts)
    subject = (f"{spec.outputs.title}: {new} new regression{'s' if new != 1 else ''}" if new
               else f"{spec.outputs.title}: no new regressions")
    files = [paths[n] for n in ("trending-regressions", "trending-progressions", "trending-failed-tests") if n in paths]
    try:
        send_alert_mail(smtp, subject, paths["trending-regressions"].read_text(encoding="utf-8"), files, env=env)
    except (MailError, OSError) as exc:
        report.add("alerts", f"smtp {smtp.host}:{smtp.port}", str(exc))
        return False
    return True
