"""The SMTP path against a local aiosmtpd server on 127.0.0.1 (login with a password from the env)."""

from __future__ import annotations

import email
import logging
import socket
from email import policy

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from pal.alerts import build_alerts, mail_alerts, write_alert_outputs
from pal.alerts.mail import MailError, send_alert_mail
from pal.report import RunReport
from pal.spec import AlertsSpec, SmtpSpec
from tests.alerts.factory import builds_for, make_spec, samples_for
from tests.alerts.scenario import MESSAGES, run_results

SECRET = "s3cr3t-Pa55"


class Sink:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content, session.authenticated))
        return "250 OK"


def _auth(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login == b"pal-bot" and auth_data.password == SECRET.encode()
    return AuthResult(success=ok, handled=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def smtpd():
    sink = Sink()
    port = _free_port()
    ctl = Controller(sink, hostname="127.0.0.1", port=port, authenticator=_auth, auth_require_tls=False,
                     auth_exclude_mechanism=["LOGIN"])
    ctl.start()
    try:
        yield sink, port
    finally:
        ctl.stop()


def _smtp(port, **kw):
    base = dict(host="127.0.0.1", port=port, sender="pal@example.org", to=["csit@example.org", "vpp@example.org"],
                user_env="PAL_SMTP_USER", password_env="PAL_SMTP_PASSWORD")
    base.update(kw)
    return SmtpSpec(**base)


def test_mail_alerts_delivers_texts(smtpd, tmp_path, caplog):
    sink, port = smtpd
    results = run_results()
    builds, samples = builds_for(results), samples_for(results, MESSAGES)
    spec = make_spec()
    spec = type(spec)(**{**spec.__dict__, "alerts": AlertsSpec(smtp=_smtp(port))})
    alerts = build_alerts(results, builds, samples, spec)
    report = RunReport()
    paths = write_alert_outputs(tmp_path, alerts, results, builds, samples, spec, report)
    env = {"PAL_SMTP_USER": "pal-bot", "PAL_SMTP_PASSWORD": SECRET}
    with caplog.at_level(logging.DEBUG, logger="pal"):
        assert mail_alerts(spec, paths, alerts, report, env=env) is True
    assert report.problems == []
    (mail_from, rcpts, content, authed) = sink.messages[0]
    assert mail_from == "pal@example.org" and rcpts == ["csit@example.org", "vpp@example.org"] and authed
    msg = email.message_from_bytes(content, policy=policy.default)
    assert msg["Subject"] == "CSIT trending: 3 new regressions"
    body = msg.get_body(("plain",)).get_content()
    assert body.replace("\r\n", "\n") == paths["trending-regressions"].read_text()
    names = sorted(part.get_filename() for part in msg.iter_attachments())
    assert names == ["trending-failed-tests.txt", "trending-progressions.txt", "trending-regressions.txt"]
    assert SECRET not in caplog.text


def test_wrong_password_is_reported_without_the_password(smtpd, tmp_path):
    sink, port = smtpd
    with pytest.raises(MailError) as exc:
        send_alert_mail(_smtp(port), "s", "b", env={"PAL_SMTP_USER": "pal-bot", "PAL_SMTP_PASSWORD": "wrong-" + SECRET},
                        timeout=5)
    assert "127.0.0.1" in str(exc.value) and SECRET not in str(exc.value) and "SMTPAuthenticationError" in str(exc.value)
    assert sink.messages == []


def test_missing_password_env(smtpd):
    _, port = smtpd
    with pytest.raises(MailError, match="PAL_SMTP_PASSWORD is not set"):
        send_alert_mail(_smtp(port), "s", "b", env={})


def test_no_server_goes_to_report(tmp_path):
    spec = make_spec()
    spec = type(spec)(**{**spec.__dict__, "alerts": AlertsSpec(smtp=_smtp(_free_port(), password_env=None))})
    p = tmp_path / "trending-regressions.txt"
    p.write_text("Test-name ...\n")
    report = RunReport()
    assert mail_alerts(spec, {"trending-regressions": p}, [], report) is False
    (prob,) = report.errors("alerts")
    assert prob.item.startswith("smtp 127.0.0.1:") and "ConnectionRefusedError" in prob.message
