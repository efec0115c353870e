"""Property-based fuzzing of ``pal.parse.parse_build``: truncated, garbled and random inputs.

Allowed outcomes: a ParseResult, or a ParseError that names the file and the build. A hang is
caught by an alarm per example; a crash (any other exception) fails the property. Two more
properties: the byte-level fast path agrees with the full parse on every mutated file, and
every value that comes out is exactly what an independent reading of the message says.
"""

from __future__ import annotations

import gzip
import io
import lzma
import math
import re
import signal
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pal.errors import ParseError
from pal.parse import parse_build
from tests.reliability.record import fuzz_examples, record

pytestmark = pytest.mark.fuzz

DATA = Path(__file__).resolve().parent.parent / "data" / "parse"
JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"


def _csit_shaped() -> bytes:
    """A build as the demo generator writes CSIT's (Robot Framework 7, suites of MRR tests): the
    fast path reads each of its tests whole from its bytes (``pal.parse.tails.read_usual_test``)."""
    from pal.demo.generate import generate

    with tempfile.TemporaryDirectory() as d:
        generate(d, jobs=[JOB], builds=10, tests=6)
        return gzip.decompress(sorted(Path(d).glob(f"{JOB}/*/output.xml.gz"))[0].read_bytes())


SEEDS = [(DATA / n).read_bytes() for n in ("rf6_output.xml", "rf3_output.xml")] + [_csit_shaped()]
SETTINGS = settings(max_examples=fuzz_examples(60), deadline=5000,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
HANG_S = 20


@contextmanager
def no_hang(seconds: int = HANG_S):
    """Fail the example if parsing takes longer than ``seconds`` (a hang, not a slow machine)."""
    def alarm(*_):
        raise TimeoutError(f"parse_build did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def outcome(data: bytes, fast: bool = True) -> tuple[str, object]:
    """("ok", rows) or ("error", message) for ``data`` written to a file and parsed."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "output.xml"
        path.write_bytes(data)
        with no_hang():
            try:
                r = parse_build(path, JOB, 7, fast=fast)
            except ParseError as exc:
                assert exc.file == str(path) and exc.build == 7, exc
                assert str(exc).startswith(str(path))
                return "error", str(exc).replace(d, "")
    rows = r.samples.drop(columns=["source_file"]).to_dict("records")
    return "ok", (repr(rows), r.meta.passed, r.meta.failed, r.meta.dut_version, [p.message.replace(d, "")
                                                                                  for p in r.problems])


@st.composite
def mutated_xml(draw: st.DrawFn) -> bytes:
    """A seed output.xml with 1-3 edits: truncate, delete a span, insert bytes, flip a byte, repeat a span."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "delete", "insert", "flip", "repeat"]))
        i = draw(st.integers(0, len(data)))
        if op == "truncate":
            del data[i:]
        elif op == "delete":
            del data[i:i + draw(st.integers(1, 200))]
        elif op == "insert":
            data[i:i] = draw(st.sampled_from([b"<", b">", b"&", b"</test>", b"<test>", b"<!--", b"]]>", b"\x00",
                                              b"\xff\xfe", b"<![CDATA[", b"&amp;", b'"', b"<status status=\"PASS\">",
                                              b"</kw>", b"<tag>x</tag>", b'<test id="t" name="n">'])
                             | st.binary(max_size=16))
        elif op == "flip" and i < len(data):
            data[i] ^= draw(st.integers(1, 255))
        elif op == "repeat":
            j = draw(st.integers(i, min(len(data), i + 500)))
            data[i:i] = data[i:j]
    return bytes(data)


@SETTINGS
@given(mutated_xml())
def test_mutated_xml_parses_or_raises_parse_error(data):
    kind, _ = outcome(data)
    assert kind in ("ok", "error")


def _inside_test(data: bytes, line: int) -> bool:
    """Whether ``line`` (1-based) lies between a ``<test`` start and the next ``</test>``."""
    lines = data.split(b"\n")
    opened = False
    for text in lines[:line]:
        if b"<test" in text:
            opened = True
        if b"</test>" in text:
            opened = False
    return opened or b"</test>" in lines[line - 1] if line - 1 < len(lines) else opened


@SETTINGS
@given(mutated_xml())
def test_fast_path_agrees_with_full_parse(data):
    """The byte-level test-body filter never changes what a file says, however damaged it is.

    The one difference allowed: damage inside a test's keyword body, which the fast path never
    reads, is reported by the full parse only (the tags and status pal reads are intact).
    """
    fast, full = outcome(data, fast=True), outcome(data, fast=False)
    if fast[0] == "ok" and full[0] == "error":
        line = int(re.search(r"output\.xml:(\d+)", full[1]).group(1))
        assert _inside_test(data, line), (fast, full)
        return
    assert fast[0] == full[0], (fast, full)
    if fast[0] == "ok":
        assert fast == full


def test_damaged_tag_list_is_not_cut_by_the_fast_path():
    """Found by the property above: a broken closing tag among the tags (``</ag>``) made the filter
    take it for the body's end and silently drop the tags before it; now both paths refuse the file."""
    data = SEEDS[0].replace(b"NIC_Intel-XXV710</tag>", b"NIC_Intel-XXV710</ag>", 1)
    fast, full = outcome(data, fast=True), outcome(data, fast=False)
    assert fast == full and fast[0] == "error" and "Opening and ending tag mismatch" in fast[1]
    record("parser fuzzing", "broken closing tag among a test's tags", "ParseError both ways (fast path used to "
           "drop the tags silently)", inputs=1, faults=1)


@SETTINGS
@given(mutated_xml())
def test_values_out_are_what_the_message_says(data):
    """Every PASS MRR value is the mean of the trials in its row; trials are finite and >= 0."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "output.xml"
        path.write_bytes(data)
        try:
            with no_hang():
                r = parse_build(path, JOB, 7)
        except ParseError:
            return
    for row in r.samples.itertuples():
        if row.metric == "mrr" and not math.isnan(row.value):
            assert row.status == "PASS"
            assert all(math.isfinite(t) and t >= 0 for t in row.trials)
            assert row.value == math.fsum(row.trials) / len(row.trials)
        if row.status == "FAIL":
            assert math.isnan(row.value)


def _zip(data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("robot-plugin/output.xml", data)
    return buf.getvalue()


CONTAINERS = {"gzip": gzip.compress, "xz": lzma.compress, "zip": _zip, "plain": lambda b: b}
MAGIC = {"gzip": b"\x1f\x8b", "xz": b"\xfd7zXZ\x00", "zip": b"PK\x03\x04", "bzip2": b"BZh"}


@SETTINGS
@given(st.sampled_from(sorted(MAGIC)), st.binary(max_size=2000))
def test_random_bytes_behind_archive_magic(kind, tail):
    """Random bytes that start like gzip/xz/zip/bzip2: a ParseError naming the file, never a crash."""
    kind_seen, msg = outcome(MAGIC[kind] + tail)
    assert kind_seen == "error", msg


@SETTINGS
@given(st.sampled_from(sorted(CONTAINERS)), mutated_xml(), st.data())
def test_damaged_archives_of_mutated_xml(kind, xml, data):
    """A mutated XML in a container, then the container itself cut or flipped."""
    packed = bytearray(CONTAINERS[kind](xml))
    if data.draw(st.booleans()) and len(packed) > 10:
        i = data.draw(st.integers(0, len(packed) - 1))
        if data.draw(st.booleans()):
            del packed[i:]
        else:
            packed[i] ^= 0x5A
    assert outcome(bytes(packed))[0] in ("ok", "error")


@SETTINGS
@given(st.binary(max_size=3000))
def test_random_bytes(data):
    assert outcome(data)[0] in ("ok", "error")


def test_container_does_not_change_the_result():
    """Same seed XML in every container: the same samples."""
    want = outcome(SEEDS[0])
    assert want[0] == "ok"
    for name, pack in CONTAINERS.items():
        assert outcome(pack(SEEDS[0])) == want, name


def test_record_xml_fuzz_counts():
    n = fuzz_examples(60)
    record("parser fuzzing", "mutated output.xml (truncate/delete/insert/flip/repeat), fast vs full parse",
           "same result both ways; ParseError naming file and build", inputs=3 * n)
    record("parser fuzzing", "random bytes, alone and behind gzip/xz/zip/bzip2 magic; damaged archives",
           "ParseError naming file and build, no crash, no hang", inputs=3 * n)


def test_test_start_written_twice_is_not_hidden_by_the_fast_path():
    """Found by the property above: a span repeated across a ``<test ...>`` start left one test
    open inside another; the filter dropped the inner start with the body and parsed the file as
    good. Tests never nest, so now the filter gives up and both paths report the damage."""
    seed = SEEDS[0]
    start = seed.index(b"<test ")
    data = seed[:start] + seed[start:seed.index(b"</kw>", start) + 5] + b"\n" + seed[start:]
    fast, full = outcome(data, fast=True), outcome(data, fast=False)
    assert fast == full and fast[0] == "error" and "Opening and ending tag mismatch" in fast[1], (fast, full)
    record("parser fuzzing", "a <test> start written twice (nested tests)", "ParseError both ways (fast path "
           "used to parse it as good)", inputs=1, faults=1)
