"""``junit.xml``: one testcase per series, so Jenkins shows regressions natively.

Layout: ``<testsuites name="pal">``, one ``<testsuite>`` per job, one ``<testcase>`` per
(job = topo-arch, test, metric) with ``classname="<job>.<metric>"`` and ``name=<test id>``.

* failure: the series has an alert that fails the job under ``alerts.fail-on`` (a new unacked
  regression by default), message ``regression -5.2 % from build 265``;
* passed with a ``<system-out>`` note: a regression that is acked or ongoing (already
  reported), a progression, a recovered change;
* skipped: the last run has no value (the test failed; its message, IPv4-masked, is the
  skip message): there is no result to judge;
* passed: everything else.

No timestamps and sorted order: a rerun writes the same bytes.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pandas as pd

from pal.alerts.model import ACTIVE, Alert
from pal.alerts.text import mask_ipv4
from pal.model import SeriesKey, SeriesResult


def _note(a: Alert) -> str:
    ev = a.evidence
    flags = [a.state, a.status] + (["acked: " + (a.ack_reason or "")] if a.acked else [])
    pct = "n/a" if not math.isfinite(ev.change_pct) else f"{ev.change_pct:+.1f} %"
    return (f"{a.kind} {pct} from build {ev.first_bad_build} (last good {ev.last_good_build}), "
            f"{ev.runs} runs; {', '.join(flags)}; id {a.id}")


def _last_failure(samples: pd.DataFrame | None) -> dict[SeriesKey, str]:
    if samples is None or samples.empty:
        return {}
    fails = samples[samples["status"].astype("string") == "FAIL"]
    out: dict[SeriesKey, str] = {}
    for rec in fails.sort_values("build", kind="stable")[["job", "test_id", "metric", "build", "message"]].to_dict("records"):
        msg = rec["message"]
        out[SeriesKey(str(rec["job"]), str(rec["test_id"]), str(rec["metric"]))] = (
            "" if msg is None or pd.isna(msg) else str(msg))
    return out


def junit_xml(results: list[SeriesResult], alerts: list[Alert], fail_on: str, samples: pd.DataFrame | None = None) -> bytes:
    """The junit.xml bytes (UTF-8, with XML declaration)."""
    by_key: dict[SeriesKey, list[Alert]] = {}
    for a in alerts:
        by_key.setdefault(a.key, []).append(a)
    messages = _last_failure(samples)
    root = ET.Element("testsuites", name="pal")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    of_job: dict[str, list[SeriesResult]] = {}
    for r in results:
        of_job.setdefault(r.key.job, []).append(r)
    for job in sorted(of_job):
        suite = ET.SubElement(root, "testsuite", name=job)
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        for r in sorted(of_job[job], key=lambda r: (r.key.metric, r.key.test_id)):
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=f"{job}.{r.key.metric}", name=r.key.test_id)
            mine = sorted(by_key.get(r.key, []), key=lambda a: (a.evidence.first_bad_build, a.id))
            bad = [a for a in mine if a.fails(fail_on)]
            if bad:
                a = bad[-1]
                pct = "n/a" if not math.isfinite(a.evidence.change_pct) else f"{a.evidence.change_pct:+.1f} %"
                fail = ET.SubElement(case, "failure", type=a.kind,
                                     message=f"{a.kind} {pct} from build {a.evidence.first_bad_build}")
                fail.text = _note(a) + (f"\nfirst bad: {a.evidence.first_bad_url}" if a.evidence.first_bad_url else "")
                counts["failures"] += 1
            elif len(r.values) and not math.isfinite(float(r.values[-1])):
                msg = mask_ipv4(messages.get(r.key, "")) or "no value in the last run"
                ET.SubElement(case, "skipped", message=f"last run failed: {msg[:500]}")
                counts["skipped"] += 1
            notes = [_note(a) for a in mine if a not in bad and (a.state == ACTIVE or a.status == "ongoing")]
            if notes:
                ET.SubElement(case, "system-out").text = "\n".join(notes)
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("errors", "0")
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
