"""The text ``pal bisect request`` and ``pal bisect classify`` print (stdout: the machine part)."""

from __future__ import annotations

import math

from pal.culprit.bisect_results import BisectState, BuildResults
from pal.culprit.request import AlertRequest


def _num(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.6g}"


def request_text(ar: AlertRequest) -> str:
    """The trigger line first (copy-paste ready), then what it rests on."""
    a, sr = ar.alert, ar.suspect
    lines = []
    if ar.request is not None:
        lines.append(ar.request.comment)
    lines += [
        f"alert:   {a.get('id')} {a.get('kind', '')} {a.get('test_id', '')} ({a.get('metric', '')}, job {a.get('job', '')})",
        f"range:   {sr.summary}",
    ]
    if sr.url:
        lines.append(f"log:     {sr.url}")
    if sr.commits == 1:
        lines.append(f"suspect: {sr.bad}, the only commit in the range (a bisect would only confirm it)")
    if ar.request is not None:
        r = ar.request
        lines.append(f"post on: the change of commit {r.latest} (the first bad build's)")
        lines.append(f"tags:    {r.tag_expression} (from the {r.tags_from})")
        lines += [f"warning: {w}" for w in r.warnings]
    else:
        lines.append(f"no bisect: {ar.why_not}")
    return "\n".join(lines) + "\n"


def _build(b: BuildResults) -> str:
    return (f"{b.name:<10} {b.version or 'version unknown':<34} {len(b.values):>4} values of {b.tests} test(s), "
            f"avg {_num(b.avg)} [{b.source}]")


def state_text(state: BisectState) -> str:
    """Builds, one line per decision, then the search state and the culprit when found."""
    lines = [_build(state.earliest), _build(state.latest)]
    for s in state.steps:
        d = s.decision
        how = (f"separate wins, mid is {d.becomes} (relative difference to early {d.rel_diff_early:.2%}, "
               f"to late {d.rel_diff_late:.2%})" if d.grouping == "separate" else f"joins {d.grouping}")
        lines.append(_build(s.mid))
        lines.append(f"{'':<10} bits: early {d.early_bits:.3f}, late {d.late_bits:.3f}, separate {d.separate_bits:.3f}"
                     f" -> {how}")
    for name in state.pending:
        lines.append(f"{name:<10} not measured yet (the job is running, or stopped here)")
    left, steps = state.commits_left, state.steps_left
    size = ("unknown size (versions do not tell)" if left is None
            else f"{left} commit{'s' if left != 1 else ''}" + (f", about {steps} more step(s)" if steps else ""))
    lines.append(f"range: early {state.early.name} ({state.early.version or '?'}) .. "
                 f"late {state.late.name} ({state.late.version or '?'}): {size}")
    culprit = state.culprit
    if culprit is not None:
        lines.append(f"culprit: {culprit.ref} ({culprit.raw}), the first bad commit")
    elif left is not None and left > 1:
        lines.append("culprit: not yet (more than one commit left)")
    return "\n".join(lines) + "\n"
