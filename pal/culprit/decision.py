"""CSIT's bisect decision for one mid commit: joins the early group, the late group, or stays separate.

Why here: reading a bisect job means redoing, for every mid commit, the choice CSIT made
(``resources/tools/integrated/compare_bisect.py``): the early, mid and late results are
encoded three ways with jumpavg's bit counting, and the cheapest encoding wins:

* ``early``: [early + mid] [late]
* ``late``: [early] [mid + late]
* ``separate``: [early] [mid] [late] as documented; as run, [early] [mid + late] [late] (below)

When ``separate`` is no more expensive than the better of the other two (``<=``), the mid
becomes the boundary that keeps the larger relative difference of averages, each pair's
difference relative to the larger of the two: mid differs more from early -> mid is late;
otherwise (ties included) mid is early. Otherwise the cheaper of ``early``/``late`` wins and
a tie goes to early. Values are plain floats (CSIT flattens MRR trial lists, every trial is
one run); the group list uses unit 1.0 and the largest value of all three sets as maximum,
as CSIT's ``BitCountingGroupList(max_value=...)`` does.

One quirk is reproduced on purpose, because the job's real choices follow it: jumpavg's
``append_group_of_runs`` keeps the list it is given, and compare_bisect's "late" encoding
then extends the mid group by the late results, which extends CSIT's ``mid_results`` list
itself. Its "separate" encoding therefore counts ``[early] [mid + late] [late]``, not the
``[early] [mid] [late]`` its comments and the methodology page describe. A replay that
counted the documented grouping would part from the job's path whenever the two differ
(tests/culprit/test_decision.py shows the mutation with jumpavg itself).

The statistics are merged in jumpavg's order (a Welford merge that re-enters a group's own
statistics whenever jumpavg copies a group or counts its bits), so the bit totals are those
of jumpavg to the last bit; the bits of one group come from :func:`pal.analysis.mdl.group_bits`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from pal.analysis.mdl import MdlInputError, group_bits

EARLY, LATE, SEPARATE = "early", "late", "separate"

_Stats = tuple[int, float, float]  # (size, average, population stdev)


@dataclass(frozen=True)
class Decision:
    """The three encodings of one mid commit and what CSIT does with it.

    ``grouping`` is the cheapest encoding (early, late or separate); ``becomes`` the boundary
    the mid commit replaces: "early" (git bisect old) or "late" (git bisect new).
    """

    grouping: str
    becomes: str
    early_bits: float
    late_bits: float
    separate_bits: float
    early_avg: float
    mid_avg: float
    late_avg: float
    rel_diff_early: float  # |early - mid| / max(early, mid)
    rel_diff_late: float  # |late - mid| / max(late, mid)

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _merge(runs: Sequence[_Stats | float]) -> _Stats:
    """jumpavg ``AvgStdevStats.for_runs``: floats are runs of one sample."""
    size, avg, m2 = 0, 0.0, 0.0
    for run in runs:
        if isinstance(run, tuple):
            r_size, r_avg, r_sd = run
        else:
            r_size, r_avg, r_sd = 1, run, 0.0
        if r_size < 1:
            continue
        old = size
        delta = r_avg - avg
        size += r_size
        avg += delta * r_size / size
        m2 += r_sd * r_sd * r_size
        m2 += delta * delta * old * r_size / size
    if size < 1:
        return 0, 0.0, 0.0
    return size, avg, math.sqrt(m2 / size)


class _GroupList:
    """The part of jumpavg's ``BitCountingGroupList`` that compare_bisect uses, same arithmetic."""

    def __init__(self, max_value: float, unit: float = 1.0) -> None:
        self.max_value, self.unit = max_value, unit
        self.groups: list[tuple[_Stats, float | None]] = []  # (stats, previous group's average)
        self.bits_except_last = 0.0

    def _group_bits(self, i: int) -> float:
        stats, prev = self.groups[i]
        return group_bits(*_merge([stats]), prev, self.max_value, self.unit)

    @property
    def bits(self) -> float:
        return self.bits_except_last + self._group_bits(-1) if self.groups else 0.0

    def copy(self) -> "_GroupList":
        other = _GroupList(self.max_value, self.unit)
        other.groups = [(_merge([s]), p) for s, p in self.groups]  # BitCountingGroup.copy re-enters stats
        other.bits_except_last = self.bits_except_last
        return other

    def append_group(self, values: list[float]) -> "_GroupList":
        prev = self.groups[-1][0][1] if self.groups else None
        self.bits_except_last = self.bits
        self.groups.append((_merge(values), prev))
        return self

    def extend_last(self, values: list[float]) -> "_GroupList":
        stats, prev = self.groups[-1]
        self.groups[-1] = (_merge([stats, *values]), prev)
        return self


def _check(name: str, values: Sequence[float]) -> list[float]:
    out = [float(v) for v in values]
    if not out:
        raise MdlInputError(f"the {name} results are empty")
    if any(math.isnan(v) for v in out):
        raise MdlInputError(f"the {name} results hold NaN")
    return out


def decide(early: Sequence[float], mid: Sequence[float], late: Sequence[float]) -> Decision:
    """Classify the mid results against the current early and late boundaries (CSIT's rule).

    Raises:
        MdlInputError: a set is empty or holds NaN, or the largest value is not positive.
    """
    e, m, lt = _check("early", early), _check("mid", mid), _check("late", late)
    early_avg, mid_avg, late_avg = _merge(e)[1], _merge(m)[1], _merge(lt)[1]
    max_early, abs_diff_early = max(early_avg, mid_avg), abs(early_avg - mid_avg)
    max_late, abs_diff_late = max(late_avg, mid_avg), abs(late_avg - mid_avg)
    rel_early = abs_diff_early / max_early if max_early else 0.0
    rel_late = abs_diff_late / max_late if max_late else 0.0
    max_value = max(e + m + lt)
    if max_value <= 0.0:
        raise MdlInputError(f"the largest result is {max_value}: MDL needs a positive maximum")
    common = _GroupList(max_value).append_group(e)
    early_bits = common.copy().extend_last(m).append_group(lt).bits
    late_bits = common.copy().append_group(m).extend_last(lt).bits
    # CSIT's third encoding sees the mid list already extended by the late results (see above)
    separate_bits = common.copy().append_group(m + lt).append_group(lt).bits
    single = min(early_bits, late_bits)
    if separate_bits <= single:
        grouping, becomes = SEPARATE, (LATE if rel_early > rel_late else EARLY)
    else:
        grouping = becomes = LATE if early_bits > late_bits else EARLY
    return Decision(grouping, becomes, early_bits, late_bits, separate_bits, early_avg, mid_avg, late_avg,
                    rel_early, rel_late)
