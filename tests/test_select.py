"""Tag expressions select tests like Robot's --include, without eval."""

import pytest

from pal.select import Selection, TagExpr, TagExprError

TAGS = ["MRR", "64B", "2T1C", "1C", "NIC_Intel-XXV710", "DRV_AVF", "IP4FWD"]


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("MRR", True),
        ("mrr", True),
        ("NDRPDR", False),
        ("MRR AND 64B", True),
        ("MRR AND 1518B", False),
        ("MRR NOT 1C", False),
        ("MRR AND NOT 2C", True),
        ("NDRPDR OR 64B", True),
        ("(NDRPDR OR MRR) AND NOT (1518B OR IMIX)", True),
        ("NOT MRR", False),
        ("NIC_Intel-*", True),
        ("DRV_?VF", True),
        ("IP6*", False),
        ("NDRPDR OR MRR AND 1518B", False),  # AND binds tighter than OR
    ],
)
def test_tag_expressions(expr, expected):
    assert TagExpr.parse(expr).match(TAGS) is expected


@pytest.mark.parametrize("bad", ["", "MRR AND", "(MRR", "AND MRR", "MRR )", "__import__('os') OR"])
def test_bad_expressions_raise(bad):
    with pytest.raises(TagExprError):
        TagExpr.parse(bad)


def test_selection_combines_regex_and_tags():
    sel = Selection(tags="MRR", id_regex=r"ip4base").compiled()
    assert sel.match("tests.vpp.perf.ip4.x.64b-2t1c-ethip4-ip4base-mrr", TAGS)
    assert not sel.match("tests.vpp.perf.ip6.x.64b-2t1c-ethip6-ip6base-mrr", TAGS)
    assert not sel.match("tests.vpp.perf.ip4.x.64b-2t1c-ethip4-ip4base-ndrpdr", ["NDRPDR"])
