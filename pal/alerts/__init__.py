"""Alerts: what changed, told without crying wolf (texts Jenkins mails, job result, JSON, JUnit, exports).

Entry points for the pipeline::

    alerts = build_alerts(results, builds, samples, spec, previous, acks)
    paths = write_alert_outputs(out_dir, alerts, results, builds, samples, spec, report)
    code = exit_code_for(alerts, spec.alerts.fail_on)      # 0 or 2
    acks = load_acks(spec.resolve(spec.alerts.acks))       # {id: reason}

See docs/alerts.md for the rules and file layouts.
"""

from pal.alerts.acks import load_acks, parse_acks
from pal.alerts.build import build_alerts, group_alerts
from pal.alerts.model import Alert, AlertGroup, Evidence, alert_id, group_id
from pal.alerts.policy import exit_code_for, failing
from pal.alerts.write import alert_samples, mail_alerts, write_alert_outputs

__all__ = [
    "Alert", "AlertGroup", "Evidence", "alert_id", "group_id", "build_alerts", "group_alerts", "load_acks",
    "parse_acks", "exit_code_for", "failing", "write_alert_outputs", "mail_alerts", "alert_samples",
]
