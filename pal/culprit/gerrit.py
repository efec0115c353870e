"""Posting a bisect trigger as a Gerrit review comment, through Gerrit's REST API.

Why: CSIT starts a bisect from a comment on the VPP change of the latest commit; pal knows
that commit (the first bad build's) and the comment text, so it can post it. Two requests:

1. ``GET {gerrit}/changes/?q=commit:{commit}&o=ALL_REVISIONS`` (anonymous): the change and
   the full revision id whose hash starts with ``commit``;
2. ``POST {gerrit}/a/changes/{project}~{number}/revisions/{revision}/review`` with
   ``{"message": comment}``, authenticated (HTTP basic, the user's Gerrit HTTP password).

Gerrit prefixes JSON answers with ``)]}'``; it is stripped. Credentials come from the
environment (``PAL_GERRIT_USER``, ``PAL_GERRIT_PASSWORD``) and never appear in a message:
errors name the URL and status, and any echo of the password is masked.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import quote

import requests

from pal.errors import PalError

USER_ENV, PASSWORD_ENV, URL_ENV = "PAL_GERRIT_USER", "PAL_GERRIT_PASSWORD", "PAL_GERRIT_URL"
DEFAULT_GERRIT = "https://gerrit.fd.io/r"
_MAGIC = ")]}'"
TIMEOUT_S = 30.0
MAX_ANSWER_BYTES = 16 * 1024 * 1024


class GerritError(PalError):
    """Gerrit refused, could not be reached, or does not know the commit."""


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str

    def __repr__(self) -> str:  # never shown, even in a traceback's locals
        return f"Credentials(user={self.user!r}, password=***)"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Credentials":
        env = os.environ if env is None else env
        user, password = env.get(USER_ENV, ""), env.get(PASSWORD_ENV, "")
        if not user or not password:
            raise GerritError(f"posting needs {USER_ENV} and {PASSWORD_ENV} in the environment "
                              "(the Gerrit user and its HTTP password)")
        return cls(user, password)


@dataclass(frozen=True)
class Posted:
    """Where the comment went."""

    project: str
    change: int
    revision: str
    url: str  # the review endpoint posted to


def _mask(text: str, creds: Credentials | None) -> str:
    """``text`` without the password or the Basic token made of it (a server may echo either)."""
    if creds and creds.password:
        token = base64.b64encode(f"{creds.user}:{creds.password}".encode()).decode()
        text = text.replace(token, "***").replace(creds.password, "***")
    return text


def _json(resp: requests.Response, creds: Credentials | None) -> Any:
    body = resp.content[:MAX_ANSWER_BYTES].decode("utf-8", "replace")
    if body.startswith(_MAGIC):
        body = body[len(_MAGIC):]
    try:
        return json.loads(body)
    except ValueError:
        raise GerritError(_mask(f"{resp.url}: answer is not JSON: {body[:200]!r}", creds)) from None


def find_change(gerrit: str, commit: str, session: requests.Session | None = None,
                creds: Credentials | None = None) -> tuple[str, int, str]:
    """(project, change number, full revision id) of the change holding ``commit``."""
    s = session or requests.Session()
    url = f"{gerrit.rstrip('/')}/changes/"
    try:
        resp = s.get(url, params={"q": f"commit:{commit}", "o": "ALL_REVISIONS"}, timeout=TIMEOUT_S)
    except requests.RequestException as exc:
        raise GerritError(_mask(f"{url}: {type(exc).__name__}: {exc}", creds)) from None
    if resp.status_code != 200:
        raise GerritError(_mask(f"{url}?q=commit:{commit}: HTTP {resp.status_code}: {resp.text[:200]!r}", creds))
    changes = _json(resp, creds)
    if not isinstance(changes, list) or not changes:
        raise GerritError(f"{gerrit}: no change holds commit {commit}")
    if len(changes) > 1:
        raise GerritError(f"{gerrit}: {len(changes)} changes hold commit {commit} (cherry-picks?): give a longer hash")
    change = changes[0]
    try:
        project, number = str(change["project"]), int(change["_number"])
    except (KeyError, TypeError, ValueError):
        raise GerritError(f"{gerrit}: change of commit {commit} has no project/_number") from None
    revisions = change.get("revisions") or {}
    matching = [r for r in revisions if str(r).startswith(commit)]
    revision = matching[0] if len(matching) == 1 else change.get("current_revision") or commit
    return project, number, str(revision)


def post_comment(gerrit: str, commit: str, message: str, creds: Credentials,
                 session: requests.Session | None = None) -> Posted:
    """Post ``message`` as a review comment on the change of ``commit``; one authenticated request."""
    s = session or requests.Session()
    project, number, revision = find_change(gerrit, commit, s, creds)
    change_id = f"{quote(project, safe='')}~{number}"
    url = f"{gerrit.rstrip('/')}/a/changes/{change_id}/revisions/{revision}/review"
    try:
        resp = s.post(url, json={"message": message}, auth=(creds.user, creds.password), timeout=TIMEOUT_S)
    except requests.RequestException as exc:
        raise GerritError(_mask(f"{url}: {type(exc).__name__}: {exc}", creds)) from None
    if resp.status_code != 200:
        raise GerritError(_mask(f"{url}: HTTP {resp.status_code}: {resp.text[:200]!r}", creds))
    return Posted(project, number, revision, url)
