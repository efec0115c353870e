"""The suspect range of one change: which DUT commits, or which infrastructure, changed.

Why: an alert says which build regressed; what the engineer needs next is the list of
commits to blame (and a bisect to start), or, when the DUT did not change at all, what else
did. This module turns the plain facts of the last good and first bad builds into that
answer, without reading any file: the alerts stage passes the values it already has.

Verdicts:

* ``code``: the DUT versions differ. ``good``/``bad`` are the git refs (hash, else tag),
  ``commits`` the number of commits in ``good..bad`` when both count from the same tag, and
  ``url`` the range link from the spec's template (``outputs.commit-range-url``).
* ``infrastructure``: the same DUT version on both sides; ``changed`` names what did change
  (testbed, TG version, job), empty when nothing known changed.
* ``unknown``: a version is missing, so nothing can be said about the code.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Mapping

from pal.culprit.versions import DutVersion, commits_between, parse_version

CODE, INFRASTRUCTURE, UNKNOWN = "code", "infrastructure", "unknown"
VERDICTS = (CODE, INFRASTRUCTURE, UNKNOWN)
#: The placeholders a range URL template may use.
URL_FIELDS = ("good", "bad", "dut")


@dataclass(frozen=True)
class SuspectRange:
    """The answer for one change (see the module docstring for the verdicts)."""

    verdict: str
    dut: str
    version_before: str | None
    version_after: str | None
    good: str | None = None  # git ref of the last good build (hash, else tag)
    bad: str | None = None  # git ref of the first bad build: the change a bisect comment goes to
    commits: int | None = None  # commits in good..bad (same tag only)
    url: str | None = None
    changed: tuple[str, ...] = field(default_factory=tuple)  # infrastructure: what else changed
    summary: str = ""

    @property
    def bisectable(self) -> bool:
        """A code range with refs on both sides and at least one commit to search."""
        return self.verdict == CODE and bool(self.good) and bool(self.bad) \
            and (self.commits is None or self.commits > 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict, "dut": self.dut, "version_before": self.version_before,
            "version_after": self.version_after, "good": self.good, "bad": self.bad,
            "commits": self.commits, "url": self.url, "changed": list(self.changed), "summary": self.summary,
        }


def check_url_template(template: str) -> str | None:
    """None when ``template`` is usable, else what is wrong with it (for the spec's error)."""
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        return f"not a valid template: {exc}"
    bad = sorted({n for n in names if n not in URL_FIELDS})
    if bad:
        return f"unknown placeholder(s) {', '.join('{' + n + '}' for n in bad)}; use {{good}}, {{bad}}, {{dut}}"
    return None


def range_url(templates: Mapping[str, str] | None, dut: str, good: str, bad: str) -> str | None:
    """The link to ``good..bad`` from the template for this DUT (None without one)."""
    template = (templates or {}).get(dut)
    if not template or check_url_template(template) is not None:
        return None
    return template.format(good=good, bad=bad, dut=dut)


def _present(v: str | None) -> str | None:
    v = (v or "").strip()
    return v or None


def suspect_range(version_before: str | None, version_after: str | None, *, dut: str = "vpp",
                  testbed_before: str | None = None, testbed_after: str | None = None,
                  tg_version_before: str | None = None, tg_version_after: str | None = None,
                  job_before: str | None = None, job_after: str | None = None,
                  url_templates: Mapping[str, str] | None = None) -> SuspectRange:
    """Classify one change from the facts of its last good and first bad builds.

    Args:
        version_before, version_after: DUT version strings (None or "" when not known).
        dut: "vpp", "dpdk", ...: selects the version formats and the URL template.
        testbed_*, tg_version_*, job_*: the other facts that may have changed; None = unknown.
        url_templates: DUT -> link template with ``{good}``, ``{bad}`` (``outputs.commit-range-url``).
    """
    dut = (dut or "vpp").lower()
    before, after = _present(version_before), _present(version_after)
    if before is None or after is None:
        missing = " and ".join(n for n, v in (("last good", before), ("first bad", after)) if v is None)
        return SuspectRange(UNKNOWN, dut, before, after,
                            summary=f"unknown: no {dut.upper()} version for the {missing} build")
    good, bad = parse_version(before, dut), parse_version(after, dut)
    same_commit = before != after and good.ref is not None and good.ref == bad.ref and good.count == bad.count
    if before == after or same_commit:
        changed = _changed(testbed_before, testbed_after, tg_version_before, tg_version_after,
                           job_before, job_after)
        if same_commit:  # only the CI build number differs: the same source, packaged again
            changed.insert(0, f"{dut.upper()} package rebuilt ({before} -> {after})")
        what = "; ".join(changed) if changed else "nothing else known changed"
        same = bad.ref if same_commit else after
        return SuspectRange(INFRASTRUCTURE, dut, before, after, changed=tuple(changed),
                            summary=f"infrastructure: same {dut.upper()} {same}; {what}")
    return _code_range(dut, good, bad, url_templates)


def _code_range(dut: str, good: DutVersion, bad: DutVersion,
                url_templates: Mapping[str, str] | None) -> SuspectRange:
    if not (good.ref and bad.ref):
        return SuspectRange(CODE, dut, good.raw, bad.raw,
                            summary=f"code: {dut.upper()} {good.raw} -> {bad.raw} (version format not understood)")
    n = commits_between(good, bad)
    url = range_url(url_templates, dut, good.ref, bad.ref)
    if n is None:
        count = "commit count unknown" + (" (different tags)" if good.tag and bad.tag and good.tag != bad.tag else "")
    elif n < 0:
        count = f"{-n} commits backwards (a downgrade)"
    else:
        count = f"{n} commit{'s' if n != 1 else ''}"
    return SuspectRange(CODE, dut, good.raw, bad.raw, good=good.ref, bad=bad.ref, commits=n, url=url,
                        summary=f"code: {dut.upper()} {good.ref}..{bad.ref}, {count}")


def _changed(tb0: str | None, tb1: str | None, tg0: str | None, tg1: str | None,
             job0: str | None, job1: str | None) -> list[str]:
    out = []
    for name, a, b in (("testbed", tb0, tb1), ("TG version", tg0, tg1), ("job", job0, job1)):
        a, b = _present(a), _present(b)
        if a is not None and b is not None and a != b:
            out.append(f"{name} {a} -> {b}")
    return out
