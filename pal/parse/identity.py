"""Test identity and attributes as CSIT derived them (CSIT-FORMATS.md §3).

The id is the test's long name lower-cased, without ``tcNN-`` prefixes, with the first
``-<n>c-`` replaced by the test's single ``<n>T<m>C`` tag; then the spec's rename map and
ignore list apply. Attributes come from tags first and from the names where CSIT did so
(the NIC is the suite-name part like ``25ge2p1xxv710``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_TC_PREFIX = re.compile(r"(?:^|(?<=\.))tc\d+-")
_CORES_IN_NAME = re.compile(r"-\d+c-")
_THREADS_CORES_TAG = re.compile(r"^\d+T\d+C$")
_CORES_TAG = re.compile(r"^\d+C$")
_FRAME_TAG = re.compile(r"^(?:\d+B|IMIX)$")
_FRAME_NAME = re.compile(r"^(\d+b|imix)-")
_TOPOLOGY_TAG = re.compile(r"^\d+_NODE_\w*_TOPO$")
_NIC_IN_SUITE = re.compile(r"(?:^|-)(\d+ge\d+p\d+[a-z0-9]+)(?=-|$)")


@dataclass(frozen=True)
class TestId:
    """The normalised id of a test, or why it could not be made."""

    __test__ = False  # not a pytest class

    value: str
    problem: str | None = None  # set when the test must be treated as FAIL (e.g. two NTNC tags)


@dataclass(frozen=True)
class TestAttrs:
    """What the tags and names say about a test."""

    __test__ = False

    test_type: str | None
    frame_size: str | None
    cores: str | None
    threads_cores: str | None
    nic: str | None
    driver: str | None
    topology: str | None


def normalise_id(long_name: str, tags: Iterable[str]) -> TestId:
    """CSIT's id: lower-cased long name, ``tcNN-`` removed, ``-<n>c-`` -> ``-<tag>-`` for a single NTNC tag."""
    test_id = _TC_PREFIX.sub("", long_name.lower())
    ntnc = sorted({u for u in map(str.upper, tags) if u[-1:] == "C" and _THREADS_CORES_TAG.match(u)})
    if len(ntnc) == 1:
        test_id = _CORES_IN_NAME.sub(f"-{ntnc[0].lower()}-", test_id, count=1)
        return TestId(test_id)
    if len(ntnc) > 1:
        return TestId(test_id, f"ambiguous test id: {len(ntnc)} thread/core tags ({', '.join(ntnc)})")
    return TestId(test_id)


def apply_rename_ignore(test_id: str, rename: Mapping[str, str],
                        ignore: Sequence[re.Pattern[str]]) -> str | None:
    """Rename the id through the map, then drop it (None) when an ignore pattern matches."""
    test_id = rename.get(test_id, test_id)
    if any(p.search(test_id) for p in ignore):
        return None
    return test_id


def type_from_tags(tags: Iterable[str]) -> str | None:
    """MRR | BMRR | NDRPDR | SOAK | CPS from the tags (None for tests that are not performance tests).

    CPS is the MRR-like family of TCP_CPS/UDP_CPS tests; an NDRPDR or SOAK tag wins over it.
    """
    t = {x.upper() for x in tags}
    if "SOAK" in t:
        return "SOAK"
    if "NDRPDR" in t:
        return "NDRPDR"
    if "TCP_CPS" in t or "UDP_CPS" in t:
        return "CPS"
    if "MRR" in t:
        return "MRR"
    if "BMRR" in t:
        return "BMRR"
    return None


#: Metrics produced per test type (FAIL tests get one NaN row per metric of their type).
METRICS_OF_TYPE: dict[str, tuple[str, ...]] = {
    "MRR": ("mrr",),
    "BMRR": ("mrr",),
    "CPS": ("cps",),
    "NDRPDR": ("ndr", "pdr", "latency_pdr50_d1", "latency_pdr50_d2"),
    "SOAK": ("soak",),
}

#: The test family a message parser reports -> the test type it implies when tags say nothing.
TYPE_OF_KIND = {"mrr": "MRR", "cps": "CPS", "ndrpdr": "NDRPDR", "soak": "SOAK"}


#: Rate metrics whose unit follows the transaction type: cps for CPS tests, pps otherwise.
_RATE_METRICS = frozenset({"ndr", "pdr", "soak"})


def unit_of(metric: str, default: str, tags: tuple[str, ...]) -> str:
    """The unit of a metric for a test (``tags`` upper-cased): ``cps`` for the rate metrics of
    TCP_CPS/UDP_CPS tests, else ``default``.

    A failed CPS test has no message to tell its unit; its NaN rows still carry the unit its
    passing runs have, so that one series never mixes two units.
    """
    if metric in _RATE_METRICS and ("TCP_CPS" in tags or "UDP_CPS" in tags):
        return "cps"
    return default


def driver_of(tags: Iterable[str]) -> str | None:
    """DRV_AVF -> avf, DRV_VFIO_PCI -> vfio-pci, DRV_RDMA_CORE -> rdma-core."""
    for u in tags:
        if u[:4].upper() == "DRV_" and len(u) > 4:
            return u[4:].lower().replace("_", "-")
    return None


def nic_of(suite_name: str, tags: Iterable[str]) -> str | None:
    """The NIC part of the suite name (``25ge2p1xxv710``), else the ``NIC_`` tag as written."""
    m = _NIC_IN_SUITE.search(suite_name.lower())
    if m:
        return m.group(1)
    for t in tags:
        if t[:4].upper() == "NIC_":
            return t
    return None


def attrs_of(test_name: str, suite_name: str, tags: Sequence[str]) -> TestAttrs:
    """Type, frame size, cores, NIC, driver and topology of one test (one pass over the tags)."""
    upper = list(map(str.upper, tags))
    frame = cores = threads_cores = topology = None
    for t in upper:
        last = t[-1:]
        if last == "B" and frame is None and _FRAME_TAG.match(t):
            frame = t
        elif t == "IMIX" and frame is None:
            frame = t
        elif last == "C":
            if cores is None and _CORES_TAG.match(t):
                cores = t
            elif threads_cores is None and _THREADS_CORES_TAG.match(t):
                threads_cores = t
        elif last == "O" and topology is None and _TOPOLOGY_TAG.match(t):
            topology = t
    if frame is None:
        m = _FRAME_NAME.match(_TC_PREFIX.sub("", test_name.lower()))
        frame = m.group(1).upper() if m else None
    return TestAttrs(
        test_type=type_from_tags(upper),
        frame_size=frame,
        cores=cores,
        threads_cores=threads_cores,
        nic=nic_of(suite_name, tags),
        driver=driver_of(upper),
        topology=topology,
    )
