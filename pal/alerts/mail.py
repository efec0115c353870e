"""Sending the alert texts by SMTP (optional: Jenkins usually mails the files itself).

Settings come from ``spec.alerts.smtp`` (``pal.spec.SmtpSpec``); the user and password come
from the environment variables it names, so no secret sits in the spec. The password is never
logged, not even its length. Delivery problems are returned as a ``MailError`` for the caller
to record in the RunReport.
"""

from __future__ import annotations

import logging
import os
import smtplib
import ssl
from email.message import EmailMessage
from pathlib import Path
from typing import Mapping

from pal.errors import PalError
from pal.spec import SmtpSpec

log = logging.getLogger("pal")


class MailError(PalError):
    """The alert mail could not be sent (names the server, never the password)."""

    def __init__(self, host: str, port: int, message: str):
        self.host = host
        self.port = port
        super().__init__(f"smtp {host}:{port}: {message}")


def alert_message(smtp: SmtpSpec, subject: str, body: str, attachments: list[Path] | None = None) -> EmailMessage:
    """The mail: ``body`` as text, each attachment as text/plain."""
    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = smtp.sender
    msg["To"] = ", ".join(smtp.to)
    msg.set_content(body)
    for path in attachments or []:
        msg.add_attachment(Path(path).read_text(encoding="utf-8"), subtype="plain", filename=Path(path).name)
    return msg


def send_alert_mail(smtp: SmtpSpec, subject: str, body: str, attachments: list[Path] | None = None,
                    env: Mapping[str, str] | None = None, timeout: float = 30.0) -> None:
    """Send the mail to ``smtp.to``; raise MailError when it cannot be delivered."""
    if not smtp.to:
        raise MailError(smtp.host, smtp.port, "no recipients (alerts.smtp.to is empty)")
    env = os.environ if env is None else env
    user = env.get(smtp.user_env) if smtp.user_env else None
    password = env.get(smtp.password_env) if smtp.password_env else None
    if smtp.password_env and password is None:
        raise MailError(smtp.host, smtp.port, f"the environment variable {smtp.password_env} is not set")
    msg = alert_message(smtp, subject, body, attachments)
    try:
        with smtplib.SMTP(smtp.host, smtp.port, timeout=timeout) as client:
            if smtp.starttls:
                client.starttls(context=ssl.create_default_context())
            if password is not None:
                client.login(user or smtp.sender, password)
            refused = client.send_message(msg)
    except (OSError, smtplib.SMTPException) as exc:
        raise MailError(smtp.host, smtp.port, f"{type(exc).__name__}: {_safe(exc, password)}") from None
    if refused:
        raise MailError(smtp.host, smtp.port, f"refused recipients: {', '.join(sorted(refused))}")
    log.info("alerts: mail %r sent to %d recipients via %s:%d", subject, len(smtp.to), smtp.host, smtp.port)


def _safe(exc: BaseException, password: str | None) -> str:
    text = str(exc)
    return text.replace(password, "***") if password else text
