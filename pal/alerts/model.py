"""What an alert is: one change of one series, and the group of series that changed together.

Why dataclasses of their own: the text mails, ``alerts.json``, ``junit.xml``, the site and the
job result all read the same decisions (new or ongoing, acked, recovered, does it fail the
job); they are taken once in ``pal.alerts.build`` and carried here.

Ids (documented in docs/alerts.md, stable across runs and machines):

* alert id = first 12 hex digits of sha1(``"<job>|<test_id>|<metric>|<first bad build>|<kind>"``);
* group id = first 12 hex digits of sha1(``"group|<job>|<kind>|<first bad build>"``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from pal.culprit.suspect import SuspectRange
from pal.culprit.trigger import BisectRequest
from pal.model import ACTIVE, RECOVERED, SUPERSEDED, AlertView, SeriesKey

REGRESSION = "regression"
PROGRESSION = "progression"

#: ``Alert.state`` is the change's state (pal.model: active | recovered | superseded)
#: ``Alert.status``: first reported by this run / reported by the previous run too.
NEW, ONGOING = "new", "ongoing"
#: ``AlertGroup.scope``: where the same change was seen at about the same time.
ALL_TESTBEDS, SOME_TESTBEDS, ONE_TESTBED = "all-testbeds", "some-testbeds", "one-testbed"

FAIL_ON = ("new-regression", "any-regression", "never")

__all__ = ["ACTIVE", "RECOVERED", "SUPERSEDED", "NEW", "ONGOING", "ALL_TESTBEDS", "SOME_TESTBEDS", "ONE_TESTBED",
           "FAIL_ON", "Alert", "AlertGroup", "Evidence", "alert_id", "group_id"]


def _short_sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def alert_id(key: SeriesKey, first_bad_build: int, kind: str) -> str:
    """The stable id of a change: series key, first build of the new level, and its kind."""
    return _short_sha1(f"{key.job}|{key.test_id}|{key.metric}|{int(first_bad_build)}|{kind}")


def group_id(job: str, kind: str, first_bad_build: int) -> str:
    """The stable id of the changes of one job starting at one build."""
    return _short_sha1(f"group|{job}|{kind}|{int(first_bad_build)}")


@dataclass(frozen=True)
class Evidence:
    """The numbers behind an alert, so a reader can check it without pal."""

    before_avg: float  # trend of the old level (group average, detector's units)
    before_stdev: float
    after_avg: float  # trend of the new level
    after_stdev: float
    change_pct: float  # (after - before) / |before| * 100
    runs: int  # valid runs in the new level so far
    last_good_build: int | None
    first_bad_build: int
    first_bad_time: str  # ISO-8601 UTC of the first run of the new level
    last_good_url: str | None
    first_bad_url: str | None
    dut_version_before: str | None  # from the builds table
    dut_version_after: str | None
    testbed_before: str | None
    testbed_after: str | None
    trend: float  # the series' trend now (Compliance.trend)
    long_term_change_pct: float
    short_term_change_pct: float
    restores_build: int | None = None  # the way back: first bad build of the change it undoes
    reported_at_build: int | None = None  # the build at which the change was (or will be) reported


@dataclass(frozen=True)
class Alert:
    """One alertable change of one series.

    ``acked``: listed in acks.yaml (shown on graphs, never mailed, never fails the job).
    ``fresh``: the change is reported at the series' last run (CSIT's "last sample is
    anomalous"); a change that appears late is not fresh but still new the first time.
    """

    id: str
    key: SeriesKey
    kind: str  # regression | progression
    state: str  # active | recovered | superseded
    status: str  # new | ongoing
    acked: bool
    ack_reason: str | None
    fresh: bool
    test_set: str
    topo_arch: str
    test_name: str  # the short test name shown in mails (frame size dropped)
    nic: str
    frame_size: str
    unit: str  # of the trend numbers: pps | cps | us
    evidence: Evidence
    testbeds: tuple[str, ...] = ()  # physical testbeds of the runs at the new level
    previous_id: str | None = None  # id under which the previous run reported this change
    previous_state: str | None = None  # its state in the previous run (None: not reported)
    group: str = ""  # AlertGroup.id
    suspect: SuspectRange | None = None  # the commit range (code) or what else changed (infrastructure)
    bisect: BisectRequest | None = None  # CSIT's bisect trigger, for a bisectable code range

    @property
    def restores_build(self) -> int | None:
        """For the way back after an earlier change (a fix): that change's first bad build."""
        return self.evidence.restores_build

    @property
    def alerting(self) -> bool:
        """Mailed as a current change: active and not acked."""
        return self.state == ACTIVE and not self.acked

    def fails(self, fail_on: str) -> bool:
        """Whether this alert makes the job fail under the ``alerts.fail-on`` policy."""
        if fail_on == "never" or self.kind != REGRESSION or not self.alerting:
            return False
        return fail_on == "any-regression" or self.status == NEW

    @property
    def ack_snippet(self) -> str:
        """The lines to paste into acks.yaml to acknowledge this alert."""
        ev = self.evidence
        return (f"# {self.key.job} {self.key.test_id} {self.key.metric}: {self.kind} "
                f"{_pct(ev.change_pct)} from build {ev.first_bad_build}\n"
                f"{self.id}: \"reason, e.g. a ticket or change number\"\n")

    def view(self) -> AlertView:
        """The typed view the site renders."""
        sr = self.suspect
        return AlertView(self.id, self.key, self.kind, self.state, self.status, self.acked, self.ack_reason,
                         self.ack_snippet, self.evidence.change_pct, self.evidence.first_bad_build,
                         sr.verdict if sr else "unknown", sr.summary if sr else "", sr.url if sr else None,
                         self.bisect.comment if self.bisect else None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "group": self.group, "job": self.key.job, "test_id": self.key.test_id,
            "metric": self.key.metric, "kind": self.kind, "state": self.state, "status": self.status,
            "acked": self.acked, "ack_reason": self.ack_reason, "fresh": self.fresh,
            "fails_job": {p: self.fails(p) for p in FAIL_ON}, "previous_id": self.previous_id,
            "previous_state": self.previous_state,
            "test_set": self.test_set, "topo_arch": self.topo_arch, "test_name": self.test_name,
            "nic": self.nic, "frame_size": self.frame_size, "unit": self.unit,
            "evidence": {k: _jsonable(v) for k, v in self.evidence.__dict__.items()},
            "testbeds": list(self.testbeds),
            "ack_snippet": self.ack_snippet,
            "suspect": (self.suspect or SuspectRange("unknown", "vpp", None, None, summary="unknown")).to_dict(),
            "bisect": self.bisect.to_dict() if self.bisect else None,
        }


@dataclass(frozen=True)
class AlertGroup:
    """The alerts of one job whose new level starts at the same build.

    ``seen_on`` lists every topo-arch with an active change of the same kind starting within
    the correlation window of this one; ``scope`` says whether that is every topo-arch
    analysed (points at the DUT or the infrastructure), several, or this one only.
    """

    id: str
    job: str
    topo_arch: str
    kind: str
    first_bad_build: int
    last_good_build: int | None  # the earliest last good build of the members
    first_bad_url: str | None
    last_good_url: str | None
    dut_version_before: str | None
    dut_version_after: str | None
    alerts: tuple[str, ...]  # member alert ids, sorted
    tests: tuple[str, ...]  # member test ids, sorted
    testbeds: tuple[str, ...]  # physical testbeds of the members' runs at the new level
    seen_on: tuple[str, ...]
    scope: str

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _pct(x: float) -> str:
    return "n/a %" if x != x else f"{x:+.1f} %"


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and v != v:
        return None
    return v
