"""Alerts: what changed, told without crying wolf (texts Jenkins mails, job result, JSON, JUnit, exports).

Entry points for the pipeline::

    alerts = build_alerts(results, builds, samples, spec, previous, acks)
    paths = write_alert_outputs(out_dir, alerts, results, builds, samples, spec, report)
    code = exit_code_for(alerts, spec.alerts.fail_on)      # 0 or 2
    acks = load_acks(spec.resolve(spec.alerts.acks))       # {id: reason}

See docs/alerts.md for the rules and file layouts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pal.lazy import lazy_names

if TYPE_CHECKING:
    from pal.alerts.acks import load_acks, parse_acks
    from pal.alerts.build import build_alerts, group_alerts
    from pal.alerts.model import Alert, AlertGroup, Evidence, alert_id, group_id
    from pal.alerts.policy import exit_code_for, failing
    from pal.alerts.write import alert_samples, mail_alerts, write_alert_outputs

#: each name's module, imported at the name's first use: ``pal validate`` (and ``pal run``
#: before it starts its workers) reads the acks file without importing the alerts' pandas
_HOME = {
    "load_acks": "acks", "parse_acks": "acks", "build_alerts": "build", "group_alerts": "build",
    "Alert": "model", "AlertGroup": "model", "Evidence": "model", "alert_id": "model", "group_id": "model",
    "exit_code_for": "policy", "failing": "policy",
    "alert_samples": "write", "mail_alerts": "write", "write_alert_outputs": "write",
}

__all__ = list(_HOME)

__getattr__ = lazy_names(__name__, _HOME)
