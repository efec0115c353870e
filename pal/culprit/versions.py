"""DUT version strings -> the source revision they were built from.

Why: an alert knows the DUT versions of its last good and first bad builds; the suspect
commit range, the bisect trigger and the link to the commit log all start from the git
revision those strings encode. VPP's ``src/scripts/version`` writes ``git describe`` as a
package version; the forms CSIT has logged (``VPP version: ...``):

======================================  ============================================
``22.02-rc0~508-g88a9c0e02~b851``       508 commits after tag v22.02-rc0, commit 88a9c0e02,
                                        Jenkins build 851 (the ``~b`` part is optional)
``22.02-rc2~b3`` / ``22.02-rc2``        exactly at tag v22.02-rc2 (``git describe`` = the tag)
``22.02.1-5~g1a2b3c4d5~b35``            5 commits after a point-release tag v22.02.1 (stable branch)
``22.02-release`` / ``22.02.1-release``  exactly at the release tag v22.02 / v22.02.1
======================================  ============================================

DPDK (``DPDK version: 21.11.0``) logs releases only: the ref is the release tag
(v21.11 for 21.11.0, v21.11.1 for 21.11.1, v22.03-rc1 for 22.03.0-rc1), with no commit count.
Anything else is kept as the raw string with no revision (``kind == "unknown"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HASH = r"[0-9a-f]{7,40}"
_REL = r"\d{2}\.\d{2}(?:\.\d+)?"
_BUILD = r"(?:~b(?P<build>\d+))?"
_DIRTY = r"(?:-(?:X|dirty))?"

_VPP_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("vpp-describe", re.compile(rf"^(?P<tag>{_REL}-rc\d+)~(?P<count>\d+)-g(?P<hash>{_HASH}){_DIRTY}{_BUILD}$")),
    ("vpp-stable", re.compile(rf"^(?P<tag>{_REL})-(?P<count>\d+)~g(?P<hash>{_HASH}){_DIRTY}{_BUILD}$")),
    ("vpp-rc-tag", re.compile(rf"^(?P<tag>{_REL}-rc\d+){_BUILD}$")),
    ("vpp-release", re.compile(rf"^(?P<tag>{_REL})-release$")),
)
_DPDK = re.compile(r"^(?:DPDK\s+)?(?P<major>\d{2}\.\d{2})\.(?P<patch>\d+)(?P<rc>-rc\d+)?$")


@dataclass(frozen=True)
class DutVersion:
    """What one DUT version string says about its source revision.

    ``tag`` is the git tag the count starts from (``v22.02-rc0``), ``count`` the number of
    commits after it (0 exactly at the tag), ``commit`` the abbreviated hash when the string
    has one, ``build`` the CI build number of the package. ``ref`` is what git understands:
    the hash, else the tag; None for an unknown format.
    """

    raw: str
    dut: str
    kind: str  # vpp-describe | vpp-stable | vpp-rc-tag | vpp-release | dpdk-release | unknown
    tag: str | None = None
    count: int | None = None
    commit: str | None = None
    build: int | None = None

    @property
    def ref(self) -> str | None:
        return self.commit or self.tag

    @property
    def known(self) -> bool:
        return self.kind != "unknown"


def parse_version(raw: str, dut: str = "vpp") -> DutVersion:
    """Read a DUT version string; formats not listed in the module docstring give ``kind="unknown"``."""
    text = raw.strip()
    d = dut.lower()
    if d == "dpdk":
        m = _DPDK.match(text)
        if m:
            patch = int(m.group("patch"))
            tag = "v" + m.group("major") + (f".{patch}" if patch else "") + (m.group("rc") or "")
            return DutVersion(raw, d, "dpdk-release", tag=tag, count=0)
        return DutVersion(raw, d, "unknown")
    for kind, rx in _VPP_FORMS:
        m = rx.match(text)
        if m:
            groups = m.groupdict()
            build = groups.get("build")
            return DutVersion(raw, d, kind, tag="v" + groups["tag"], count=int(groups.get("count") or 0),
                              commit=groups.get("hash"), build=int(build) if build else None)
    return DutVersion(raw, d, "unknown")


def commits_between(good: DutVersion, bad: DutVersion) -> int | None:
    """Commits after ``good`` up to and including ``bad``, when both count from the same tag.

    Counts from different tags (a release branched in between) say nothing about the
    distance, so the answer is None; so it is for unknown formats.
    """
    if not (good.known and bad.known) or good.tag != bad.tag or good.count is None or bad.count is None:
        return None
    return bad.count - good.count
