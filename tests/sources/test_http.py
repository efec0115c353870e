"""HTTP helpers: redaction, file naming by content, session settings."""

from __future__ import annotations

from pal.sources.http import Deadline, HttpOptions, _file_name, make_session, redact


def test_redact_drops_userinfo_only():
    assert redact("https://bot:s3cret@jenkins.example.org:8443/job/x/1/?a=b") == \
        "https://jenkins.example.org:8443/job/x/1/?a=b"
    assert redact("http://127.0.0.1:8080/logs/x") == "http://127.0.0.1:8080/logs/x"


def test_file_name_follows_content_not_url():
    assert _file_name("http://h/job/j/1/artifact/output.xml.gz", "gzip") == "output.xml.gz"
    assert _file_name("http://h/job/j/1/artifact/output.xml.gz", "xml") == "output.xml"  # decoded on the way
    assert _file_name("http://h/job/j/1/artifact/output.xml", "gzip") == "output.xml.gz"
    assert _file_name("http://h/logs/j/1/archives/output_info.xml.xz", "xz") == "output_info.xml.xz"
    assert _file_name("http://h/job/j/1/robot/report/*zip*/robot-plugin.zip", "zip") == "robot-plugin.zip"


def test_session_verifies_tls_by_default_and_retries_transient_statuses():
    s = make_session(HttpOptions(retries=4, pool=3))
    retry = s.get_adapter("https://x").max_retries
    assert s.verify is True and s.auth is None
    assert (retry.total, retry.status, retry.read, retry.connect) == (4, 4, 4, 4)
    assert set(retry.status_forcelist) == {429, 500, 502, 503, 504} and retry.respect_retry_after_header
    s2 = make_session(HttpOptions(verify_tls=False), auth=("u", "t"))
    assert s2.verify is False and s2.auth == ("u", "t")


def test_an_attempts_deadline_names_the_whole_deadline_not_what_was_left():
    """A download's later attempt gets the time left of its deadline; when it runs out, the
    message names the deadline the user set (3 s), not the remainder (2.99999 s)."""
    watch = Deadline(2.99999, total=3.0)
    watch._expire()
    assert watch.describe(OSError("reset")) == "deadline of 3 s exceeded (a slow or stalled server)"
    alone = Deadline(2.5)
    alone._expire()
    assert alone.describe(OSError("reset")) == "deadline of 2.5 s exceeded (a slow or stalled server)"
