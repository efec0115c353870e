"""The job result: exit code 2 when an alert fails the job under ``alerts.fail-on``, else 0.

The seed's rule (CSIT PA design): the job fails if any test's last detection result is a
regression. Policies: ``new-regression`` (default) fails on unacked regressions first reported
by this run, ``any-regression`` on every current unacked regression (until acked or
recovered), ``never`` never. Acked alerts never fail. Errors (exit 1) are the CLI's business.
"""

from __future__ import annotations

from typing import Iterable

from pal.alerts.model import FAIL_ON, Alert

EXIT_OK = 0
EXIT_REGRESSION = 2


def failing(alerts: Iterable[Alert], fail_on: str) -> list[Alert]:
    """The alerts that fail the job under ``fail_on``."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"alerts.fail-on: {fail_on!r} is not one of {', '.join(FAIL_ON)}")
    return [a for a in alerts if a.fails(fail_on)]


def exit_code_for(alerts: Iterable[Alert], fail_on: str = "new-regression") -> int:
    """0, or 2 when some alert fails the job under the policy."""
    return EXIT_REGRESSION if failing(alerts, fail_on) else EXIT_OK
