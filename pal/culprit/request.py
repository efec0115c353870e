"""From an alert in ``alerts.json`` to its suspect range and bisect request.

Why: ``pal bisect request ALERT_ID`` works from the file a run already wrote, so the engineer
(or a Jenkins step) needs nothing but the alert id. Fields used (docs/alerts.schema.json):
``job``, ``topo_arch``, ``test_id``, ``nic``, ``tags`` (when present), and the evidence's
``dut_version_before/after`` and ``testbed_before/after``. The DUT is the alert's ``dut``
when present, else the second part of a CSIT job name (``csit-dpdk-perf-...``), else vpp.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from pal.culprit.suspect import SuspectRange, suspect_range
from pal.culprit.trigger import BisectRequest, bisect_request
from pal.errors import PalError
from pal.model import topo_arch_of

MAX_ALERTS_BYTES = 256 * 1024 * 1024
_KNOWN_DUTS = ("vpp", "dpdk", "trex")


class AlertNotFound(PalError):
    """No alert (or more than one) has the given id."""


@dataclass(frozen=True)
class AlertRequest:
    """An alert's range and, when the range is bisectable, its bisect request."""

    alert: dict[str, Any]
    suspect: SuspectRange
    request: BisectRequest | None
    why_not: str | None  # set when there is no request


def load_alerts(path: Path) -> list[dict[str, Any]]:
    """The ``alerts`` list of an alerts.json (errors name the file)."""
    try:
        if path.stat().st_size > MAX_ALERTS_BYTES:
            raise PalError(f"{path}: larger than {MAX_ALERTS_BYTES} bytes")
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PalError(f"{path}: no alerts.json (run pal first, or give --out/--spec)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise PalError(f"{path}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != "pal-alerts" or not isinstance(doc.get("alerts"), list):
        raise PalError(f"{path}: not a pal alerts.json (format pal-alerts with an alerts list)")
    return [a for a in doc["alerts"] if isinstance(a, dict)]


def find_alert(alerts: list[dict[str, Any]], alert_id: str, source: str = "alerts.json") -> dict[str, Any]:
    """The alert whose id is ``alert_id`` or starts with it (a unique prefix)."""
    wanted = alert_id.strip().lower()
    exact = [a for a in alerts if str(a.get("id", "")).lower() == wanted]
    if exact:
        return exact[0]
    found = [a for a in alerts if wanted and str(a.get("id", "")).lower().startswith(wanted)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise AlertNotFound(f"{source}: no alert with id {alert_id!r} ({len(alerts)} alerts)")
    raise AlertNotFound(f"{source}: {len(found)} alerts start with {alert_id!r}: "
                        + ", ".join(str(a.get("id")) for a in found[:10]))


def dut_of(alert: Mapping[str, Any]) -> str:
    if isinstance(alert.get("dut"), str) and alert["dut"]:
        return alert["dut"].lower()
    parts = str(alert.get("job", "")).split("-")
    if len(parts) > 2 and parts[0] == "csit" and parts[1] in _KNOWN_DUTS:
        return parts[1]
    return "vpp"


def request_for_alert(alert: Mapping[str, Any], *, url_templates: Mapping[str, str] | None = None,
                      style: str = "jenkins") -> AlertRequest:
    """The suspect range of ``alert`` and its bisect request (None with the reason when not bisectable)."""
    ev = alert.get("evidence") or {}
    dut = dut_of(alert)
    job = str(alert.get("job", ""))
    sr = suspect_range(ev.get("dut_version_before"), ev.get("dut_version_after"), dut=dut,
                       testbed_before=ev.get("testbed_before"), testbed_after=ev.get("testbed_after"),
                       tg_version_before=ev.get("tg_version_before"), tg_version_after=ev.get("tg_version_after"),
                       url_templates=url_templates)
    if not sr.bisectable:
        return AlertRequest(dict(alert), sr, None, f"nothing to bisect: {sr.summary}")
    if dut != "vpp":
        return AlertRequest(dict(alert), sr, None, f"CSIT bisects VPP only; this alert's DUT is {dut}")
    topo_arch = str(alert.get("topo_arch") or topo_arch_of(job))
    tags = alert.get("tags") if isinstance(alert.get("tags"), list) else None
    req = bisect_request(topo_arch, sr.good or "", str(alert.get("test_id", "")), latest=sr.bad, tags=tags,
                         nic=alert.get("nic") or None, style=style)
    return AlertRequest(dict(alert), sr, req, None)
