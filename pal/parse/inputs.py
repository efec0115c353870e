"""Which reader a build's results need: output.xml (any compression) or CSIT's UTI JSON.

``parse_build`` is the parse stage's one entry point: the sources hand over a path and do
not say what it holds. A directory, a tar archive, a zip holding ``*.info.json`` files or a
single JSON file goes to ``pal.parse.uti``; everything else (plain, gzip, xz, bzip2 XML and
the robot-plugin zip) to ``pal.parse.build``. A build directory that holds an output.xml is
read through that file, as the local source does. The choice is made from the bytes, not the
name: artifact caches rename files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pal.errors import ParseError
from pal.parse.archive import DEFAULT_MAX_BYTES
from pal.parse.build import ParseResult
from pal.parse.build import parse_build as parse_xml_build
from pal.parse.uti import parse_uti_build
from pal.parse.uti_archive import archive_kind


#: A build directory's output.xml, in the order the local source prefers them (pal.sources.local).
_XML_NAMES = tuple(f"{stem}{ext}" for stem in ("output.xml", "output_info.xml") for ext in (".gz", ".xz", ".zip", ""))


def input_kind(path: str | Path, build: int | str | None = None) -> str:
    """``uti`` when ``path`` holds UTI JSON results, ``xml`` otherwise; ParseError when it does not exist."""
    p = Path(path)
    if not p.exists():
        raise ParseError(str(path), "no such file", build)
    return "uti" if archive_kind(p) is not None else "xml"


def build_input(path: str | Path) -> Path:
    """The file to read for ``path``: a build directory's output.xml when it has one (as the local
    source picks it, also under ``archives/``), else ``path`` itself."""
    p = Path(path)
    if p.is_dir():
        for sub in (p, p / "archives"):
            for name in _XML_NAMES:
                if (sub / name).is_file():
                    return sub / name
    return p


def parse_build(path: str | Path, job: str, build: int, *, testbeds: Mapping[str, str] | None = None,
                rename: Mapping[str, str] | None = None, ignore: Sequence[str] = (), dut: str = "vpp",
                max_bytes: int = DEFAULT_MAX_BYTES, **options: object) -> ParseResult:
    """Parse one build's results, output.xml or UTI JSON, into samples and build facts.

    Arguments as ``pal.parse.build.parse_build``; ``options`` go to the chosen reader only
    (``parsers``/``fast`` for XML, ``max_member``/``engine`` for UTI).

    Raises:
        ParseError: the path does not exist or its results cannot be read at all.
    """
    common = dict(testbeds=testbeds, rename=rename, ignore=ignore, dut=dut, max_bytes=max_bytes)
    path = build_input(path) if Path(path).exists() else path
    if input_kind(path, build) == "uti":
        return parse_uti_build(path, job, build, **common, **options)  # type: ignore[arg-type]
    return parse_xml_build(path, job, build, **common, **options)  # type: ignore[arg-type]
