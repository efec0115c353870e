"""The DOCTYPE check reads the prolog in the encoding the parser would use.

A DOCTYPE in UTF-16LE without a BOM used to pass (the check looked for ASCII bytes), and the
parser then saw the declaration; every encoding XML 1.0 allows is tried here.
"""

from __future__ import annotations

import pytest

from pal.parse.archive import check_prolog

DOC = '<?xml version="1.0" encoding="{enc}"?>\n<!DOCTYPE r [<!ENTITY a "b">]>\n<robot>&a;</robot>'
PLAIN = '<?xml version="1.0" encoding="{enc}"?>\n<robot generator="Robot 7.0"></robot>'


@pytest.mark.parametrize("enc", ["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-16", "utf-32",
                                 "utf-7", "iso-8859-1", "windows-1252", "shift_jis"])
def test_doctype_is_refused_in_every_encoding(enc):
    assert "DOCTYPE" in check_prolog(DOC.format(enc=enc).encode(enc))
    assert check_prolog(PLAIN.format(enc=enc).encode(enc)) == "ok"


def test_doctype_without_declaration_in_utf16_and_utf8_bom():
    assert "DOCTYPE" in check_prolog('<!DOCTYPE r SYSTEM "http://x/">\n<r/>'.encode("utf-16-le"))
    assert "DOCTYPE" in check_prolog(b"\xef\xbb\xbf<!-- c --><?pi x?>\n<!DOCTYPE r>\n<r/>")


def test_encodings_without_a_codec_are_refused():
    assert "does not read" in check_prolog(DOC.format(enc="cp037").encode("cp037"))  # EBCDIC
    assert "does not read" in check_prolog(b'<?xml version="1.0" encoding="x-no-such"?>\n<robot/>')
    assert "does not read" in check_prolog(b"\x00\x00<\x00\x00\x00?\x00")  # UCS-4, order 2143


@pytest.mark.parametrize("enc", ["utf-8", "utf-16-le", "utf-32-be", "iso-8859-1", "shift_jis"])
@pytest.mark.parametrize("pad", [0, 1, 2, 3, 4000, 4090, 4093, 4096, 4100, 9000])
@pytest.mark.parametrize("doc", [DOC, PLAIN, "<!-- {fill} -->" + DOC, "<?pi {fill}?>" + PLAIN, "{fill}" + PLAIN,
                                 '<?xml version="1.0" encoding="{enc}"?><!-- ü{fill} --><r/>', "x{fill}<r/>"])
def test_a_long_document_is_judged_as_by_all_its_bytes(enc, pad, doc):
    """The first 4 KB are judged first: whatever the prolog's length, the verdict is the one all
    the bytes give (a comment, a PI or blanks across the 4 KB mark; a multibyte character cut by it)."""
    from pal.parse.archive import _judge_prolog

    text = doc.replace("{fill}", " " * pad).format(enc=enc) + "\n" + "<kw>ü</kw>" * 2000
    data = text.encode(enc, errors="replace")
    assert check_prolog(data) == _judge_prolog(data)
    assert check_prolog(data) is not None
