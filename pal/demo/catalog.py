"""What a demo job runs: its testbeds and a catalogue of CSIT-like tests with base rates.

The catalogue mimics CSIT's naming: suites ``2n1l-<nic>[-<driver>]-<feature>-<type>`` under
area folders, tests ``<frame>-<threads/cores>-[<driver>-]<feature>-<type>`` with the tags a
parser reads (frame, ``\\d+T\\d+C``, NIC, driver, topology, test type, feature tags).
"""

from __future__ import annotations

import itertools
import re
import zlib
from dataclasses import dataclass
from typing import Iterator

import numpy as np

IMIX_BYTES = 353.83  # CSIT's IMIX average frame size, used for Gbps and line rate

DEFAULT_JOBS = (
    "csit-vpp-perf-mrr-daily-master-2n-icx",
    "csit-vpp-perf-mrr-daily-master-3n-alt",
    "csit-vpp-perf-ndrpdr-weekly-master-2n-icx",
)
#: Appended when more jobs than the defaults are asked for (``jobs=4`` in a benchmark).
EXTRA_JOBS = (
    "csit-vpp-perf-mrr-daily-master-2n-spr",
    "csit-vpp-perf-mrr-daily-master-3n-icx",
    "csit-vpp-perf-ndrpdr-weekly-master-3n-alt",
)

#: Four daily MRR jobs: ``generate(dir, jobs=PIPELINE_BENCH_JOBS, builds=180, tests=1500)`` is
#: the 4 × 180 × 1,500 history of the pipeline benchmark (a weekly job would have 47 builds).
PIPELINE_BENCH_JOBS = (DEFAULT_JOBS[0], DEFAULT_JOBS[1], EXTRA_JOBS[0], EXTRA_JOBS[1])


@dataclass(frozen=True)
class Nic:
    name: str  # as in suite names: 25ge2p1xxv710
    tag: str  # NIC_Intel-XXV710
    gbps: float  # port speed
    max_pps: float  # what the NIC forwards at most, both ports together


NICS = {
    n.name: n
    for n in (
        Nic("10ge2p1x710", "NIC_Intel-X710", 10, 2.4e7),
        Nic("25ge2p1xxv710", "NIC_Intel-XXV710", 25, 3.6e7),
        Nic("40ge2p1xl710", "NIC_Intel-XL710", 40, 3.7e7),
        Nic("100ge2p1e810cq", "NIC_Intel-E810CQ", 100, 6.0e7),
        Nic("100ge2p1cx556a", "NIC_Mellanox-CX556A", 100, 7.0e7),
    )
}
DRIVER_NAME = {"DRV_VFIO_PCI": "", "DRV_AVF": "avf", "DRV_RDMA_CORE": "rdma"}


@dataclass(frozen=True)
class JobProfile:
    """The facts of one PT job the generator needs; derived from the job name's parts."""

    name: str
    test_type: str  # MRR | NDRPDR
    period_days: int  # 1 daily, 7 weekly
    nodes: int  # 2 or 3 (2n-icx, 3n-alt)
    tg_ips: tuple[str, ...]  # one per physical testbed
    nics: tuple[tuple[str, str], ...]  # (nic, driver tag) combinations run by the job
    smt: bool  # hyper-threading: 2T1C naming; without it 1T1C
    speed: float  # CPU speed factor against 2n-icx
    first_build: int  # the first build number of the history
    start_hour: int  # UTC hour the job usually starts

    @property
    def metrics(self) -> list[str]:
        if self.test_type == "MRR":
            return ["mrr"]
        return ["ndr", "pdr", "latency_pdr50_d1", "latency_pdr50_d2"]

    def dut_ips(self, tg_ip: str) -> list[str]:
        """DUT addresses of the testbed whose TG is ``tg_ip`` (used in messages)."""
        head, last = tg_ip.rsplit(".", 1)
        n = int(last)
        if self.nodes == 2:
            return [f"{head}.{n - 1}"]
        return [f"{head}.{n + 1}", f"{head}.{n + 2}"]


_KNOWN_TGS = {
    "2n-icx": ("10.30.51.45", "10.30.51.46", "10.30.51.47"),
    "3n-alt": ("10.30.51.90",),
    "2n-spr": ("10.30.51.60", "10.30.51.61"),
    "3n-icx": ("10.30.51.80", "10.30.51.81"),
}
_ARM = ("alt", "tx2")


def profile_for(job: str) -> JobProfile:
    """Profile of a job named like ``csit-vpp-perf-<type>-<period>-<branch>-<Nn>-<arch>``."""
    parts = job.split("-")
    if len(parts) < 4:
        raise ValueError(f"job name {job!r} is not like csit-vpp-perf-mrr-daily-master-2n-icx")
    topo_arch = "-".join(parts[-2:])
    nodes = 3 if parts[-2].startswith("3") else 2
    arch = parts[-1]
    test_type = "NDRPDR" if "ndrpdr" in parts else "MRR"
    period = 7 if "weekly" in parts else 1
    tgs = _KNOWN_TGS.get(topo_arch)
    if tgs is None:
        h = zlib.crc32(topo_arch.encode()) % 90
        tgs = (f"10.30.52.{100 + h}",)
    if arch in _ARM:
        nics = (("10ge2p1x710", "DRV_VFIO_PCI"), ("40ge2p1xl710", "DRV_AVF"),
                ("100ge2p1cx556a", "DRV_RDMA_CORE"), ("10ge2p1x710", "DRV_AVF"))
    else:
        nics = (("25ge2p1xxv710", "DRV_VFIO_PCI"), ("100ge2p1e810cq", "DRV_AVF"),
                ("100ge2p1cx556a", "DRV_RDMA_CORE"), ("25ge2p1xxv710", "DRV_AVF"),
                ("10ge2p1x710", "DRV_VFIO_PCI"), ("100ge2p1e810cq", "DRV_VFIO_PCI"))
    crc = zlib.crc32(job.encode())
    return JobProfile(
        name=job,
        test_type=test_type,
        period_days=period,
        nodes=nodes,
        tg_ips=tgs,
        nics=nics,
        smt=arch not in _ARM,
        speed=0.65 if arch in _ARM else 1.0,
        first_build=(40 if period == 7 else 180) + crc % 120,
        start_hour=(2 if nodes == 2 else 5) + (6 if period == 7 else 0),
    )


# ---------------------------------------------------------------------------
# Features: (area folder, feature slug, feature tags, 1-core 64B rate on 2n-icx in pps)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Feature:
    area: str  # suite folder name as RF shows it: "Ip4", "Ip4 Tunnels"
    slug: str  # the feature part of suite and test names
    tags: tuple[str, ...]
    rate: float  # pps of one core at 64B
    legacy: str | None = None  # the slug before a CSIT rename, if any


#: The first features of the order matter: small histories take the first few suites, and
#: the planted patterns are placed on them (ip4/ip6 base, l2 for the all-testbeds step,
#: nat44 for the rename).
_FEATURES = (
    Feature("Ip4", "ethip4-ip4base", ("ETH", "IP4FWD", "BASE", "IP4BASE"), 1.15e7),
    Feature("L2", "eth-l2xcbase", ("ETH", "L2XCFWD", "BASE", "L2XCBASE"), 1.55e7),
    Feature("Nat44", "ethip4udp-nat44ed-h1024-p63-s64512",
            ("ETH", "IP4FWD", "NAT44", "NAT44_ENDPOINT_DEPENDENT", "BASE", "UDP", "HOSTS_1024"), 4.2e6,
            legacy="ethip4udp-nat44-h1024-p63-s64512"),
    Feature("Ip6", "ethip6-ip6base", ("ETH", "IP6FWD", "BASE", "IP6BASE"), 9.8e6),
    Feature("Ip4", "ethip4-ip4scale20k", ("ETH", "IP4FWD", "FIB_20K", "SCALE"), 8.7e6),
    Feature("L2", "eth-l2bdbasemaclrn", ("ETH", "L2BDMACLRN", "BASE", "L2BDBASE"), 1.08e7),
    Feature("Ip4 Tunnels", "ethip4vxlan-l2xcbase", ("ETH", "IP4FWD", "ENCAP", "VXLAN", "L2XCFWD"), 6.1e6),
    Feature("Crypto", "ethip4ipsec1tnlsw-ip4base-int-aes256gcm",
            ("ETH", "IP4FWD", "IPSEC", "IPSECSW", "IPSECINT", "TNL_1", "AES_256_GCM", "AES"), 3.1e6),
    Feature("Ip6", "ethip6-ip6scale20k", ("ETH", "IP6FWD", "FIB_20K", "SCALE"), 7.9e6),
    Feature("L2", "eth-l2bdscale10kmaclrn", ("ETH", "L2BDMACLRN", "FIB_10K", "SCALE"), 8.8e6),
    Feature("Ip4", "ethip4-ip4scale200k", ("ETH", "IP4FWD", "FIB_200K", "SCALE"), 7.4e6),
    Feature("Ip4", "ethip4-ip4base-iacldstbase", ("ETH", "IP4FWD", "ACL", "IACL", "ACL_PERMIT"), 7.0e6),
)


def _suites(nics: tuple[tuple[str, str], ...]) -> Iterator[tuple[Feature, tuple[str, str]]]:
    """(feature, (nic, driver)) per suite: the listed features on every NIC in rounds, so the
    same test name appears in several suites as in CSIT; then scale variants without end."""
    for k in range(len(_FEATURES) * len(nics)):
        rnd, i = divmod(k, len(_FEATURES))
        yield _FEATURES[i], nics[(i + rnd) % len(nics)]
    for k, feature in enumerate(_scale_variants()):
        yield feature, nics[k % len(nics)]


def _scale_variants() -> Iterator[Feature]:
    """Tunnel and FIB scale variants without end, for catalogues of thousands of tests."""
    for n in itertools.count(1):
        tnl = 4 ** n
        yield Feature("Crypto", f"ethip4ipsec{tnl}tnlsw-ip4base-int-aes256gcm",
                      ("ETH", "IP4FWD", "IPSEC", "IPSECSW", "IPSECINT", f"TNL_{tnl}", "AES_256_GCM", "AES"),
                      3.1e6 / (1 + 0.08 * n))
        yield Feature("Ip6", f"ethip6-ip6scale{200 * n}k", ("ETH", "IP6FWD", f"FIB_{200 * n}K", "SCALE"),
                      7.9e6 / (1 + 0.05 * n))
        yield Feature("L2", f"eth-l2bdscale{n}mmaclrn", ("ETH", "L2BDMACLRN", f"FIB_{n}M", "SCALE"),
                      8.8e6 / (1 + 0.1 * n))


# (frame, cores) of each suite in an order that varies both, so 3 tests of a suite
# already cover every frame size and core count.
_FRAME_CORES = (("64B", 1), ("1518B", 2), ("IMIX", 4), ("64B", 2), ("1518B", 4),
                ("IMIX", 1), ("64B", 4), ("1518B", 1), ("IMIX", 2))
_CORE_SCALE = {1: 1.0, 2: 1.9, 4: 3.5}


@dataclass(frozen=True)
class TestDef:
    """One test of a job's catalogue. ``slot`` is its position in the job's test list."""

    slot: int
    area: str
    feature: Feature
    suite_file: str  # 2n1l-25ge2p1xxv710-avf-ethip4-ip4base-mrr (the .robot file stem)
    name: str  # 64b-2t1c-avf-ethip4-ip4base-mrr
    tags: tuple[str, ...]  # sorted as RF sorts them
    frame: str
    cores: int
    threads_cores: str  # 2T1C
    nic: str
    driver: str
    base: float  # pps (MRR, PDR) at the start of the history
    noise: float  # relative stdev of a run's average
    latency: float  # avg latency at 50 % PDR, µs

    @property
    def suite_name(self) -> str:
        return suite_display_name(self.suite_file)

    def renamed_from(self) -> "tuple[str, str, tuple[str, ...]] | None":
        """(old suite file, old test name, old tags) if this test's feature was renamed, else None."""
        legacy = self.feature.legacy
        if legacy is None:
            return None
        slug = self.feature.slug
        tags = tuple(sorted((legacy if t == slug else t for t in self.tags), key=_rf_tag_key))
        return self.suite_file.replace(slug, legacy), self.name.replace(slug, legacy), tags


def suite_display_name(file_stem: str) -> str:
    """The suite name Robot Framework makes of a lower-case file stem (str.title of it)."""
    return file_stem.replace("_", " ").title() if file_stem.islower() else file_stem


def long_name(profile: JobProfile, area: str, suite_file: str, test_name: str) -> str:
    return f"Tests.Vpp.Perf.{area}.{suite_display_name(suite_file)}.{test_name}"


_TC = re.compile(r"(^|\.)tc\d+-")
_CORES = re.compile(r"-\d+c-")
_TC_TAG = re.compile(r"^\d+T\d+C$", re.IGNORECASE)


def normalise_test_id(long: str, tags: tuple[str, ...] | list[str]) -> str:
    """CSIT test id (CSIT-FORMATS §3): lower-cased long name, no ``tcNN-``, ``-Nc-`` -> tag."""
    tid = _TC.sub(r"\1", long.lower())
    tc = [t for t in tags if _TC_TAG.match(t)]
    if len(tc) == 1:
        tid = _CORES.sub(f"-{tc[0].lower()}-", tid, count=1)
    return tid


def _rf_tag_key(tag: str) -> str:
    return tag.lower().replace(" ", "").replace("_", "")


def _line_rate(nic: Nic, frame: str) -> float:
    size = IMIX_BYTES if frame == "IMIX" else float(frame[:-1])
    return min(nic.max_pps, 2 * nic.gbps * 1e9 / ((size + 20) * 8))


def build_catalog(profile: JobProfile, n_tests: int, rng: np.random.Generator, per_suite: int = 9) -> list[TestDef]:
    """The first ``n_tests`` tests of the job, ``per_suite`` per suite, features interleaved.

    Base rates follow the CPU rate of the feature times the core scaling, capped by the
    NIC's line rate, then kept within 1.5e6..2.3e7 pps so planted ±30 % steps stay realistic.
    """
    topo_prefix = "2n1l-" if profile.nodes == 2 else ""
    type_slug = profile.test_type.lower()
    topo_tag = "2_NODE_SINGLE_LINK_TOPO" if profile.nodes == 2 else "3_NODE_SINGLE_LINK_TOPO"
    tests: list[TestDef] = []
    for feature, (nic_name, driver) in _suites(profile.nics):
        if len(tests) >= n_tests:
            break
        nic = NICS[nic_name]
        drv = DRIVER_NAME[driver]
        mid = f"{drv}-{feature.slug}" if drv else feature.slug
        suite_file = f"{topo_prefix}{nic_name}-{mid}-{type_slug}"
        for frame, cores in _FRAME_CORES[: min(per_suite, n_tests - len(tests))]:
            threads = 2 * cores if profile.smt else cores
            tc = f"{threads}T{cores}C"
            # 2n (SMT) jobs use the new-style "-2t1c-" names, 3n-alt the old "-1c-" ones.
            core_part = tc.lower() if profile.smt else f"{cores}c"
            name = f"{frame}-{core_part}-{mid}-{type_slug}"  # CSIT writes the frame upper case: 64B-, IMIX-
            tags = {f"{cores}C", tc, frame, profile.test_type, "PERFTEST", "HW_ENV", nic.tag, driver,
                    topo_tag, *feature.tags, f"{feature.slug}"}
            cpu = feature.rate * profile.speed * _CORE_SCALE[cores] * (0.95 if frame == "1518B" else 1.0)
            base = min(cpu, _line_rate(nic, frame)) * rng.uniform(0.92, 1.06)
            base = float(np.clip(base, 1.5e6, 2.3e7))
            noise = float(0.005 * 10 ** (rng.uniform(0, 1) ** 2))  # 0.5 % .. 5 %, mostly low
            tests.append(TestDef(
                slot=len(tests), area=feature.area, feature=feature, suite_file=suite_file, name=name,
                tags=tuple(sorted(tags, key=_rf_tag_key)), frame=frame, cores=cores, threads_cores=tc,
                nic=nic_name, driver=driver, base=base, noise=noise,
                latency=float(rng.uniform(9.0, 38.0)),
            ))
    return tests
