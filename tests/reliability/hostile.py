"""A seeded generator of hostile inputs, by attack class: output.xml files and spec files.

Each class is a way real files go wrong or are made to go wrong; ``cases(kind, seed, n)`` draws
``n`` cases round-robin over the classes of ``kind`` ("xml" or "spec"), every random choice from
``random.Random(seed)``, so a failing case is named by (seed, index) and comes back exactly.
``make test`` runs a fixed small sample; ``make fuzz`` (PAL_FUZZ_EXAMPLES) runs many.
"""

from __future__ import annotations

import gzip
import lzma
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import yaml


@dataclass(frozen=True)
class Case:
    kind: str  # "xml" | "spec"
    attack: str  # the class
    index: int
    data: bytes
    suffix: str  # file name suffix: ".xml", ".xml.gz", ".xml.xz", ".yaml"


# --------------------------------------------------------------------------- output.xml

_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<robot generator="Robot 7.0 (Python 3.11.2 on linux)" generated="2026-11-11T02:00:00.000000" rpa="false" schemaversion="5">\n'
_SUITE = '<suite id="s1" name="Tests" source="/x">\n<suite id="s1-s1" name="Vpp">\n'
_TAIL = '<status status="PASS" start="2026-11-11T02:00:00.000000" elapsed="10.0"/>\n</suite>\n<status status="PASS" start="2026-11-11T02:00:00.000000" elapsed="10.0"/>\n</suite>\n<statistics/>\n<errors/>\n</robot>\n'


def _test(i: int, name: str, message: str, status: str = "PASS", tags: tuple[str, ...] = ("MRR", "64B", "1C")) -> str:
    return (f'<test id="s1-s1-t{i}" name="{name}" line="1">\n' + "".join(f"<tag>{t}</tag>\n" for t in tags)
            + f'<status status="{status}" start="2026-11-11T02:00:01.000000" elapsed="1.0">{message}</status>\n</test>\n')


def _mrr(rate: float) -> str:
    return f"Maximum Receive Rate trial results in packets per second: [{rate}, {rate}]"


def _valid(rng: random.Random, tests: int = 3) -> str:
    body = "".join(_test(i, f"64b-2t1c-ethip4-ip4base-t{i}-mrr", _mrr(rng.uniform(1e6, 2e7))) for i in range(tests))
    return _HEAD + _SUITE + body + _TAIL


def x_doctype(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    enc = rng.choice(["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-16", "utf-7", "latin-1"])
    decl = rng.choice([f'<?xml version="1.0" encoding="{enc}"?>\n', ""]) if enc in ("utf-8", "utf-16-le", "utf-16-be") \
        else f'<?xml version="1.0" encoding="{enc}"?>\n'
    ent = rng.choice(['<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
                      '<!DOCTYPE r SYSTEM "http://127.0.0.1:9/x.dtd">', '<!DOCTYPE r [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>'])
    text = decl + rng.choice(["", "<!-- c -->\n", "<?pi x?>\n"]) + ent + "\n" + _valid(rng).split("\n", 1)[1]
    return text.encode(enc), ".xml"


def x_deep(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    depth = rng.choice([300, 5000, 100_000, 1_000_000] if heavy else [300, 5000, 100_000])
    where = rng.choice(["kw", "suite", "test"])
    nest = ("<kw name='k'>" * depth + "</kw>" * depth) if where == "kw" else ("<x>" * depth + "</x>" * depth)
    doc = _valid(rng).replace("<tag>MRR</tag>", "<tag>MRR</tag>" + nest, 1) if where != "suite" else \
        _valid(rng).replace(_SUITE, _SUITE + nest, 1)
    return gzip.compress(doc.encode(), 6), ".xml.gz"


def x_huge_node(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    size = rng.choice([1 << 20, 12 << 20, 40 << 20] if heavy else [1 << 20, 12 << 20])
    what = rng.choice(["name", "message", "tag", "doc"])
    big = "A" * size
    doc = _valid(rng)
    if what == "name":
        doc = doc.replace('name="64b-2t1c-ethip4-ip4base-t0-mrr"', f'name="{big}"', 1)
    elif what == "message":
        doc = doc.replace("Maximum Receive Rate", big + " Maximum Receive Rate", 1)
    elif what == "tag":
        doc = doc.replace("<tag>MRR</tag>", f"<tag>{big}</tag>", 1)
    else:
        doc = doc.replace("<tag>MRR</tag>", f"<doc>{big}</doc><tag>MRR</tag>", 1)
    return gzip.compress(doc.encode(), 6), ".xml.gz"


def x_controls(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    bad = rng.choice(["\x00", "\x01", "\x1b[2J", "\r", "\t", "&#0;", "&#1;", "&#xD800;", "\ufffe", "\u202e", "&#13;&#9;"])
    doc = _valid(rng).replace("t1-mrr", f"t1{bad}-mrr", 1)
    return doc.encode("utf-8", errors="surrogatepass"), ".xml"


def x_bad_utf8(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    data = bytearray(_valid(rng).encode())
    for _ in range(rng.randint(1, 5)):
        data[rng.randrange(200, len(data))] = rng.choice([0xFF, 0xC0, 0x80, 0xED, 0xF8])
    return bytes(data), ".xml"


def x_duplicates(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    doc = _valid(rng)
    n = rng.randint(2, 50)
    dup = _test(0, "64b-2t1c-ethip4-ip4base-t0-mrr", _mrr(rng.uniform(1e6, 2e7)))
    return doc.replace(_TAIL, dup * n + _TAIL).encode(), ".xml"


def x_entities(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    ref = rng.choice(["&undefined;", "&amp", "&#99999999;", "&#x110000;", "&lt;script&gt;", "<![CDATA[</test><test>]]>"])
    return _valid(rng).replace("Maximum Receive Rate", f"Maximum {ref} Receive Rate", 1).encode(), ".xml"


def x_truncated(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    data = _valid(rng).encode()
    cut = rng.randrange(1, len(data) - 1)
    packed = rng.choice(["xml", "gz", "xz"])
    if packed == "gz":
        return gzip.compress(data)[: max(1, cut * 2 // 10)], ".xml.gz"
    if packed == "xz":
        return lzma.compress(data)[: max(1, cut * 2 // 10)], ".xml.xz"
    return data[:cut], ".xml"


def x_flips(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    data = bytearray(_valid(rng, tests=5).encode())
    for _ in range(rng.randint(1, 40)):
        op = rng.random()
        i = rng.randrange(len(data))
        if op < 0.4:
            data[i] = rng.randrange(256)
        elif op < 0.7:
            del data[i: i + rng.randint(1, 30)]
        else:
            data[i:i] = data[rng.randrange(len(data)):][: rng.randint(1, 60)]
    return bytes(data), ".xml"


def x_numbers(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    v = rng.choice(["nan", "inf", "-inf", "1e309", "-5", "0.0", "0", "1" * 400, "0x10", "١٢٣", "", "None"])
    msg = f"Maximum Receive Rate trial results in packets per second: [{v}, {v}]"
    return _valid(rng).replace(_TAIL, _test(90, "64b-2t1c-num-mrr", msg) + _TAIL).encode(), ".xml"


def x_many_tests(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    n = rng.choice([2000, 20_000, 100_000] if heavy else [2000, 20_000])
    tests = "".join(_test(i, f"t{i}-mrr", _mrr(1e6)) for i in range(n))
    return gzip.compress((_HEAD + _SUITE + tests + _TAIL).encode(), 6), ".xml.gz"


def x_bomb(rng: random.Random, heavy: bool = False) -> tuple[bytes, str]:
    """Compressed filler where Robot Framework writes bulk (a keyword body, or blanks between
    elements): parsed in bounded memory, or refused at a limit. Elements among a test's tags are
    held as bytes until the test ends (test_element_bomb_in_a_test_is_held_a_chunk_at_a_time)."""
    mb = rng.choice([64, 256, 1024] if heavy else [64, 128])
    filler = rng.choice([b" ", b"<kw/>", b"<msg>x</msg>"])
    head, tail = _valid(rng).encode().split(b"<tag>MRR</tag>", 1)
    head += b'<kw name="setup">' if filler != b" " else b""
    tail = (b"</kw>" if filler != b" " else b"") + b"<tag>MRR</tag>" + tail
    packed = rng.choice(["gz", "xz"])
    comp = zlib_gzip() if packed == "gz" else lzma.LZMACompressor(preset=0)
    block = filler * ((1 << 22) // len(filler))
    out = [comp.compress(head)]
    out += [comp.compress(block) for _ in range(mb // 4)]
    out += [comp.compress(tail), comp.flush()]
    return b"".join(out), ".xml.gz" if packed == "gz" else ".xml.xz"


def zlib_gzip():  # noqa: ANN201 - a zlib compressobj writing the gzip format
    import zlib

    return zlib.compressobj(6, zlib.DEFLATED, 31)


XML_ATTACKS: dict[str, Callable[[random.Random], tuple[bytes, str]]] = {
    "DOCTYPE/entities in any encoding": x_doctype, "deep nesting": x_deep, "huge node": x_huge_node,
    "control characters": x_controls, "invalid UTF-8": x_bad_utf8, "duplicate test ids": x_duplicates,
    "entity and CDATA tricks": x_entities, "truncated file or archive": x_truncated, "random byte damage": x_flips,
    "hostile numbers": x_numbers, "many tests": x_many_tests, "decompression bomb": x_bomb,
}


# --------------------------------------------------------------------------- specs

_SPEC = {
    "name": "t",
    "jobs": [{"name": "csit-vpp-perf-mrr-daily-master-2n-icx"}],
    "sources": [{"name": "d", "type": "local", "path": "data"}],
    "test-sets": [{"name": "mrr", "select": {"tags": "MRR AND NOT SOAK"}, "metrics": ["mrr"]}],
}


def _spec_text() -> str:
    return yaml.safe_dump(_SPEC, sort_keys=False)


def s_alias_bomb(rng: random.Random, heavy: bool = False) -> bytes:
    width, depth = rng.randint(2, 12), rng.randint(3, 12)
    lines = ["l0: &l0 [" + ",".join(["x"] * width) + "]"]
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * width) + "]" for i in range(1, depth)]
    where = rng.choice(["top", "ignore", "rename"])
    if where == "top":
        return (_spec_text() + "\n".join(lines) + "\n").encode()
    key = "ignore" if where == "ignore" else "rename"
    inner = "\n".join("  " + ln for ln in lines)
    return (_spec_text() + f"x-anchors:\n{inner}\n{key}: *l{depth - 1}\n").encode()


def s_deep(rng: random.Random, heavy: bool = False) -> bytes:
    n = rng.choice([100, 1000, 10_000, 100_000] if heavy else [100, 1000, 10_000])
    style = rng.choice(["flow-list", "flow-map", "block"])
    if style == "flow-list":
        return (_spec_text() + "x: " + "[" * n + "]" * n + "\n").encode()
    if style == "flow-map":
        return (_spec_text() + "x: " + "{a: " * n + "1" + "}" * n + "\n").encode()
    return (_spec_text() + "".join("  " * i + f"k{i}:\n" for i in range(min(n, 400)))).encode()


def s_tags(rng: random.Random, heavy: bool = False) -> bytes:
    n = rng.choice([10, 100, 5000, 20_000])
    expr = rng.choice(["(" * n + "MRR" + ")" * n, "NOT " * n + "MRR", " AND ".join(["MRR"] * n),
                       " OR ".join(["X"] * n), "(" * n + "MRR"])
    return _spec_text().replace("MRR AND NOT SOAK", expr).encode()


def s_bytes(rng: random.Random, heavy: bool = False) -> bytes:
    base = bytearray(_spec_text().encode())
    for _ in range(rng.randint(1, 30)):
        i = rng.randrange(len(base))
        op = rng.random()
        if op < 0.4:
            base[i] = rng.randrange(256)
        elif op < 0.7:
            del base[i: i + rng.randint(1, 10)]
        else:
            base[i:i] = rng.choice([b"\xff", b"\x00", b"&a ", b"*a ", b"!!python/object ", b"? ", b"- ", b": ", b"{", b"[",
                                    b"\t", b"%YAML 1.1\n", b"---\n", b"<<: *x\n", b"\xe2\x80\xae"])
    return bytes(base)


def s_duplicates(rng: random.Random, heavy: bool = False) -> bytes:
    lines = _spec_text().splitlines()
    i = rng.randrange(len(lines))
    return ("\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1:]) + "\n").encode()


def s_values(rng: random.Random, heavy: bool = False) -> bytes:
    key = rng.choice(["name", "jobs.0.name", "test-sets.0.name", "sources.0.path", "test-sets.0.select.tags"])
    value = rng.choice(["x" * (1 << 20), 10 ** 400, -1, 1e309, None, True, [], {}, "\u202e", "$(rm -rf /)",
                        "../../../../etc/passwd", "{jenkins}" * 1000, "(?P<x>" * 100])
    spec = yaml.safe_load(_spec_text())
    node = spec
    parts = key.split(".")
    for p in parts[:-1]:
        node = node[int(p)] if p.isdigit() else node[p]
    node[parts[-1]] = value
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True).encode()


def s_size(rng: random.Random, heavy: bool = False) -> bytes:
    return (_spec_text() + "#" * rng.choice([1 << 20, 5 << 20]) + "\n").encode()


SPEC_ATTACKS: dict[str, Callable[[random.Random], bytes]] = {
    "YAML alias bomb": s_alias_bomb, "deep nesting": s_deep, "hostile tag expression": s_tags,
    "random byte damage": s_bytes, "duplicate keys": s_duplicates, "hostile values": s_values, "oversized file": s_size,
}


def cases(kind: str, seed: int, n: int, heavy: bool = False) -> Iterator[Case]:
    """``n`` hostile cases of ``kind``, round-robin over its attack classes (``heavy``: also the
    largest sizes, seconds to minutes per case: for ``make fuzz``)."""
    rng = random.Random(f"{kind}-{seed}")
    attacks = list(XML_ATTACKS.items()) if kind == "xml" else list(SPEC_ATTACKS.items())
    for i in range(n):
        name, make = attacks[i % len(attacks)]
        if kind == "xml":
            data, suffix = make(rng, heavy)  # type: ignore[misc]
        else:
            data, suffix = make(rng, heavy), ".yaml"  # type: ignore[assignment]
        yield Case(kind, name, i, data, suffix)
