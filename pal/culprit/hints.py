"""Changes that share one suspect range: one bisect serves them all.

Why: a bad VPP commit usually moves many tests of a run at once; listing the same range and
a bisect request under every one of them hides that one bisect answers the lot. Grouping is
by (DUT, good ref, bad ref) of code ranges; infrastructure and unknown verdicts have no range
to share and are left out. Within a group the testbed types are listed, since a bisect job
runs on one testbed type (one request per type, the rest of the group's tests ride along).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from pal.culprit.suspect import CODE, SuspectRange


@dataclass(frozen=True)
class RangeGroup:
    """The changes (by id, in input order) that share one code range."""

    dut: str
    good: str
    bad: str
    suspect: SuspectRange  # the first member's range (all members have the same refs)
    members: tuple[str, ...]
    topo_archs: tuple[str, ...]  # testbed types of the members, first-seen order

    @property
    def hint(self) -> str:
        n = len(self.members)
        where = ", ".join(self.topo_archs)
        if n == 1:
            return f"{self.suspect.summary}"
        return (f"{n} changes share {self.dut.upper()} {self.good}..{self.bad}: one bisect serves them all"
                + (f" (testbed types: {where})" if where else ""))

    def to_dict(self) -> dict[str, object]:
        return {"dut": self.dut, "good": self.good, "bad": self.bad, "members": list(self.members),
                "topo_archs": list(self.topo_archs), "hint": self.hint, "range": self.suspect.to_dict()}


def group_by_range(changes: Iterable[tuple[str, str, SuspectRange]]) -> list[RangeGroup]:
    """Group ``(change id, topo_arch, suspect range)`` triples of one run by their code range.

    Returns one group per distinct range, in the order each range is first seen; a group of
    one is a change whose range nobody else shares.
    """
    order: list[tuple[str, str, str]] = []
    members: dict[tuple[str, str, str], list[str]] = {}
    archs: dict[tuple[str, str, str], list[str]] = {}
    first: dict[tuple[str, str, str], SuspectRange] = {}
    for change_id, topo_arch, sr in changes:
        if sr.verdict != CODE or not sr.good or not sr.bad:
            continue
        key = (sr.dut, sr.good, sr.bad)
        if key not in members:
            order.append(key)
            members[key], archs[key], first[key] = [], [], sr
        members[key].append(change_id)
        if topo_arch and topo_arch not in archs[key]:
            archs[key].append(topo_arch)
    return [RangeGroup(k[0], k[1], k[2], first[k], tuple(members[k]), tuple(archs[k])) for k in order]
