"""Values from the data are one field of one line in the text alerts, whatever they hold."""

from pal.alerts.text import field, plain


def test_field_neutralises_line_breaks_tabs_and_controls():
    assert field("a\rb\tc\nd\x1be\u202ef\u2028g") == "a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\ufffdg"
    assert field("64b-2t1c-ethip4-ip4base-mrr") == "64b-2t1c-ethip4-ip4base-mrr"
    # the layout itself keeps its newlines: plain() is for whole texts
    assert plain("a\nb") == "a\nb"
