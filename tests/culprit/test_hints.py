"""Grouped hints: changes of one run with the same range need one bisect."""

from __future__ import annotations

from pal.culprit.hints import group_by_range
from pal.culprit.suspect import suspect_range

A, B = "22.02-rc0~500-g1111111aa~b850", "22.02-rc0~508-g88a9c0e02~b851"
C = "22.02-rc0~520-g3333333cc~b852"


def test_same_range_grouped_once():
    changes = [
        ("a1", "2n-icx", suspect_range(A, B)),
        ("a2", "3n-icx", suspect_range(A, B)),
        ("a3", "2n-icx", suspect_range(B, C)),
        ("a4", "2n-icx", suspect_range(A, B)),
        ("a5", "2n-icx", suspect_range(B, B, testbed_before="t1", testbed_after="t2")),  # infrastructure
        ("a6", "2n-icx", suspect_range(None, B)),  # unknown
    ]
    groups = group_by_range(changes)
    assert [(g.good, g.bad, g.members, g.topo_archs) for g in groups] == [
        ("1111111aa", "88a9c0e02", ("a1", "a2", "a4"), ("2n-icx", "3n-icx")),
        ("88a9c0e02", "3333333cc", ("a3",), ("2n-icx",)),
    ]
    assert groups[0].hint == ("3 changes share VPP 1111111aa..88a9c0e02: one bisect serves them all "
                              "(testbed types: 2n-icx, 3n-icx)")
    assert groups[1].hint == "code: VPP 88a9c0e02..3333333cc, 12 commits"
    assert groups[0].to_dict()["members"] == ["a1", "a2", "a4"]


def test_nothing_to_group():
    assert group_by_range([]) == []
