"""A minimal, independent reader of generated output.xml files for the demo tests.

Written from CSIT-FORMATS §2-3 only (not from pal.demo), so the tests check the generator
against the format rather than against itself.
"""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

_TC_TAG = re.compile(r"^\d+T\d+C$")


@dataclass(frozen=True)
class Row:
    test_id: str
    name: str
    status: str
    message: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class BuildRead:
    rows: dict[str, Row]  # by normalised test id
    tg_ips: list[str]
    versions: list[str]
    generated: str
    root_attrs: dict[str, str]


def normalised_id(long_name: str, tags: tuple[str, ...]) -> str:
    tid = re.sub(r"(^|\.)tc\d+-", r"\1", long_name.lower())
    tc = [t for t in tags if _TC_TAG.match(t)]
    if len(tc) == 1:
        tid = re.sub(r"-\d+c-", f"-{tc[0].lower()}-", tid, count=1)
    return tid


def read_build(path: Path) -> BuildRead:
    with gzip.open(path) as fh:
        root = ET.parse(fh).getroot()
    rows: dict[str, Row] = {}
    tgs, versions = [], []

    def walk(suite: ET.Element, prefix: str) -> None:
        name = f"{prefix}.{suite.get('name')}" if prefix else suite.get("name")
        for kw in suite.findall("kw"):
            for msg in kw.iter("msg"):
                text = msg.text or ""
                m = re.match(r"Setup of node TG host (\S+), port", text)
                if m:
                    tgs.append(m.group(1))
                if text.startswith("VPP version: "):
                    versions.append(text[len("VPP version: "):])
        for test in suite.findall("test"):
            tags = tuple(t.text for t in test.iter("tag"))
            status = test.find("status")
            long = f"{name}.{test.get('name')}"
            tid = normalised_id(long, tags)
            rows[tid] = Row(tid, test.get("name"), status.get("status"), status.text or "", tags)
        for child in suite.findall("suite"):
            walk(child, name)

    walk(root.find("suite"), "")
    return BuildRead(rows, tgs, versions, root.get("generated"), dict(root.attrib))


def mrr_trials(message: str) -> list[float]:
    m = re.fullmatch(r"Maximum Receive Rate trial results in packets per second: \[(.*)\]", message)
    assert m, message
    return [float(x) for x in m.group(1).split(", ")]
