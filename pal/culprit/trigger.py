"""The CSIT bisect trigger for one change: ``bisecttest-<testbed type> <earliest commit> <tags>``.

Why: CSIT's bisect job is started by a Gerrit comment on the VPP change of the latest
commit (the first bad build's). Its first word names the testbed type, the second the
earliest commit, and the rest are Robot tag expressions choosing the tests (CSIT
``docs/content/methodology/bisecting.md``, ``resources/libraries/bash/function/common.sh``
``get_test_tag_string``). Writing that by hand is where mistakes happen: a missing NIC tag
makes CSIT insert the testbed's default NIC, a missing driver runs every driver.

The tag expression follows CSIT's recommended template for one test case
(``docs/content/methodology/per_patch_testing.md``), lower case so that ``AND`` stands out::

    {test_type}AND{nic_model}AND{nic_driver}AND{cores}AND{frame_size}AND{suite_tag}

Each part comes from the test's tags when they are known, else from its test id
(``tests.vpp.perf.ip4.2n1l-25ge2p1xxv710-avf-ethip4-ip4base-mrr.64b-2t1c-avf-ethip4-ip4base-mrr``):
the NIC code maps to CSIT's NIC tag (CSIT ``Constants.NIC_CODE_TO_NAME``), the suite's driver
prefix to the driver tag (no prefix: vfio-pci), the thread/core part to the core tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

#: CSIT's NIC code (in suite names) -> NIC model name (its tag is ``NIC_<name>``).
NIC_CODE_TO_NAME: dict[str, str] = {
    "10ge2p1x710": "Intel-X710", "40ge2p1xl710": "Intel-XL710", "25ge2p1xxv710": "Intel-XXV710",
    "25ge2p1e810xxv": "Intel-E810XXV", "25ge2p1e822cq": "Intel-E822CQ", "25ge2p1e823c": "Intel-E823C",
    "100ge2p1e810cq": "Intel-E810CQ", "50ge1p1ena": "Amazon-Nitro-50G", "100ge1p1ena": "Amazon-Nitro-100G",
    "200ge1p1ena": "Amazon-Nitro-200G", "100ge2p1cx556a": "Mellanox-CX556A", "100ge2p1cx6dx": "Mellanox-CX6DX",
    "200ge2p1cx7veat": "Mellanox-CX7VEAT", "200ge6p3cx7veat": "Mellanox-CX7VEAT",
    "100ge2p1a063": "Cavium-A063-100G", "1ge1p82540em": "virtual",
    # retired NICs (CSIT Constants.py of 2019), still in old histories
    "10ge2p1x520": "Intel-X520-DA2", "10ge2p1x553": "Intel-X553", "40ge2p1vic1385": "Cisco-VIC-1385",
    "10ge2p1vic1227": "Cisco-VIC-1227",
}
#: Driver prefix of a suite name (CSIT ``NIC_DRIVER_TO_SUITE_PREFIX``) -> driver tag; none = vfio-pci.
DRIVER_PREFIX_TO_TAG: dict[str, str] = {
    "avf": "drv_avf", "rdma": "drv_rdma_core", "mlx5": "drv_mlx5_core", "af-xdp": "drv_af_xdp",
}
DEFAULT_DRIVER_TAG = "drv_vfio_pci"
#: Test type tags, in the order they are looked for, and the test-name suffixes that imply them.
TYPE_TAGS = ("NDRPDR", "MRR", "BMRR", "SOAK", "RECONF")
_TYPE_SUFFIX = re.compile(r"-(ndrpdr|mrr|bmrr|soak|reconf)$")
_NODES_PREFIX = re.compile(r"^\d+n\d+l-")
_NIC_CODE = re.compile(r"^(\d+ge\d+p\d+[a-z0-9]+)-")
_FRAME = re.compile(r"^(\d+b|imix)(?:-|$)")
_THREADS_CORES = re.compile(r"(?:^|-)(\d+)t(\d+)c(?:-|$)")
_CORES = re.compile(r"(?:^|-)(\d+)c(?:-|$)")
_TOPO_ARCH = re.compile(r"^\d+n[a-z]?-[a-z0-9]+$")

STYLES = ("jenkins", "gha")


@dataclass(frozen=True)
class TagParts:
    """The six parts of the tag expression; None where neither tags nor id tell."""

    test_type: str | None
    nic: str | None
    driver: str | None
    cores: str | None
    frame_size: str | None
    suite_tag: str | None

    def expression(self) -> str:
        return "AND".join(p for p in (self.test_type, self.nic, self.driver, self.cores, self.frame_size,
                                      self.suite_tag) if p)

    def missing(self) -> list[str]:
        names = ("test type", "NIC", "driver", "cores", "frame size", "suite tag")
        values = (self.test_type, self.nic, self.driver, self.cores, self.frame_size, self.suite_tag)
        return [n for n, v in zip(names, values) if not v]


@dataclass(frozen=True)
class BisectRequest:
    """One bisect trigger and where it goes.

    ``comment`` is the exact Gerrit comment text; it is posted on the VPP change whose
    commit is ``latest`` (the first bad build's). ``warnings`` say what could not be made
    exact (a missing tag part selects more tests than this one).
    """

    testbed_type: str
    earliest: str
    latest: str | None
    tag_expression: str
    comment: str
    tags_from: str  # "tags" | "test id"
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, object]:
        return {"testbed_type": self.testbed_type, "earliest": self.earliest, "latest": self.latest,
                "tag_expression": self.tag_expression, "comment": self.comment, "tags_from": self.tags_from,
                "warnings": list(self.warnings)}


def suite_tag_of(test_id: str) -> str | None:
    """The CSIT suite tag of a test id: the suite name without nodes, NIC, driver and type."""
    parts = test_id.lower().split(".")
    if len(parts) < 2:
        return None
    suite = _NODES_PREFIX.sub("", parts[-2])
    m = _NIC_CODE.match(suite)
    if m:
        suite = suite[m.end():]
    for prefix in sorted(DRIVER_PREFIX_TO_TAG, key=len, reverse=True):
        if suite.startswith(prefix + "-"):
            suite = suite[len(prefix) + 1:]
            break
    suite = _TYPE_SUFFIX.sub("", suite)
    return suite or None


def parts_from_test_id(test_id: str, nic: str | None = None) -> TagParts:
    """The tag parts that a CSIT test id implies (``nic``: the alert's NIC code when the id has none)."""
    parts = test_id.lower().split(".")
    name = parts[-1]
    suite = _NODES_PREFIX.sub("", parts[-2]) if len(parts) >= 2 else ""
    m = _TYPE_SUFFIX.search(name)
    test_type = m.group(1) if m else None
    m = _FRAME.match(name)
    frame = m.group(1) if m else None
    m = _THREADS_CORES.search(name)
    cores = f"{m.group(2)}c" if m else None
    if cores is None:
        m = _CORES.search(name)
        cores = f"{m.group(1)}c" if m else None
    m = _NIC_CODE.match(suite)
    code = m.group(1) if m else (nic or "").lower() or None
    nic_tag = f"nic_{NIC_CODE_TO_NAME[code].lower()}" if code in NIC_CODE_TO_NAME else None
    driver = None
    if m:
        rest = suite[m.end():]
        driver = next((tag for prefix, tag in sorted(DRIVER_PREFIX_TO_TAG.items(), key=lambda kv: -len(kv[0]))
                       if rest.startswith(prefix + "-")), DEFAULT_DRIVER_TAG)
    return TagParts(test_type, nic_tag, driver, cores, frame, suite_tag_of(test_id))


def parts_from_tags(tags: Iterable[str], test_id: str) -> TagParts:
    """The tag parts from the test's own tags; the suite tag still comes from the id (tags lose case)."""
    up = [t.strip().upper() for t in tags if t and t.strip()]
    test_type = next((t.lower() for t in TYPE_TAGS if t in up), None)
    nic = next((t.lower() for t in up if t.startswith("NIC_")), None)
    driver = next((t.lower() for t in up if t.startswith("DRV_")), None)
    cores = next((t.lower() for t in up if re.fullmatch(r"\d+C", t)), None)
    frame = next((t.lower() for t in up if re.fullmatch(r"\d+B|IMIX(?:_\w+)?", t)), None)
    suite = suite_tag_of(test_id)
    if suite is not None and suite.upper() not in up:
        suite = None  # the id's suite part is not one of this test's tags: do not guess
    return TagParts(test_type, nic, driver, cores, frame, suite)


def bisect_request(topo_arch: str, earliest: str, test_id: str, *, latest: str | None = None,
                   tags: Iterable[str] | None = None, nic: str | None = None,
                   style: str = "jenkins") -> BisectRequest:
    """The trigger comment for bisecting ``earliest..latest`` on ``topo_arch`` for one test.

    Args:
        topo_arch: the testbed type, the last two parts of the job name (``2n-icx``).
        earliest: git ref of the last good build (the bisect's earliest commit).
        test_id: the pal test id; tags: the test's tags when known (preferred).
        latest: ref of the first bad build: the change the comment must be posted on.
        nic: the alert's NIC code, used when the id has none.
        style: "jenkins" (``bisecttest-2n-icx ...``, CSIT's documented trigger) or "gha"
            (``gha-run csit-vpp-2n-icx bisecttest ...``, CSIT's GitHub Actions dispatch).
    """
    if style not in STYLES:
        raise ValueError(f"style: got {style!r}, expected one of {', '.join(STYLES)}")
    warnings = []
    if not _TOPO_ARCH.match(topo_arch):
        warnings.append(f"testbed type {topo_arch!r} does not look like CSIT's <nodes>n-<arch>")
    tags = list(tags or [])
    parts = parts_from_tags(tags, test_id) if tags else parts_from_test_id(test_id, nic)
    if tags:  # fill what the tags lack from the id
        derived = parts_from_test_id(test_id, nic)
        parts = TagParts(*(a or b for a, b in zip(
            (parts.test_type, parts.nic, parts.driver, parts.cores, parts.frame_size, parts.suite_tag),
            (derived.test_type, derived.nic, derived.driver, derived.cores, derived.frame_size, derived.suite_tag))))
    missing = parts.missing()
    if missing:
        warnings.append(f"no {', '.join(missing)} for {test_id}: the expression may select more tests than this one"
                        + (" (CSIT adds the testbed's default NIC)" if "NIC" in missing else ""))
    expr = parts.expression()
    if style == "jenkins":
        comment = f"bisecttest-{topo_arch} {earliest} {expr}".rstrip()
    else:
        comment = f"gha-run csit-vpp-{topo_arch} bisecttest {earliest} {expr}".rstrip()
    return BisectRequest(topo_arch, earliest, latest, expr, comment, "tags" if tags else "test id",
                         tuple(warnings))
