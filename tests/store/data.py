"""Known sample tables and build metadata for the store tests (and the crash-test writer)."""

from __future__ import annotations

import math
import os
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd

from pal.model import BuildMeta, coerce_samples
from pal.parse import ParseResult
from pal.store.schema import samples_to_arrow

T0 = datetime(2022, 1, 24, 3, 0, tzinfo=timezone.utc)


def make_meta(job: str, build: int, sha256: str = "") -> BuildMeta:
    return BuildMeta(
        job=job, build=build, build_time=T0 + timedelta(days=build), start_time=T0 + timedelta(days=build, hours=-2),
        dut="vpp", dut_version=f"22.02-rc0~{500 + build}-g88a9c0e02~b{build}", testbed="tb-1",
        passed=2, failed=1, duration_s=7200.5, source_file=f"/data/{job}/{build}/output.xml.gz", sha256=sha256,
    )


def make_samples(job: str, build: int, scale: float = 1.0) -> pd.DataFrame:
    """Three rows: an MRR PASS with trials, an MRR FAIL (value NaN, no trials), an NDR PASS with NaN stdev."""
    t = T0 + timedelta(days=build)
    trials = [21752588.29 * scale, 21712091.77 * scale, 21836008.33 * scale]
    mean = sum(trials) / 3
    stdev = math.sqrt(sum((x - mean) ** 2 for x in trials) / 3)
    base = dict(job=job, build=build, build_time=t, topo_arch="2n-icx", testbed="tb-1", dut="vpp",
                dut_version="22.02", suite="tests.vpp.perf.ip4", nic="25ge2p1xxv710", frame_size="64B",
                cores="1C", threads_cores="2T1C", driver="vfio-pci", topology="2_NODE_SINGLE_LINK_TOPO",
                source_file=f"/data/{job}/{build}/output.xml.gz")
    rows = [
        dict(base, test_id="tests.vpp.perf.ip4.b-mrr", test_name="64b-2t1c-b-mrr", test_type="MRR", metric="mrr",
             unit="pps", value=mean, stdev=stdev, trials=trials, status="PASS", message="",
             tags=("2T1C", "64B", "MRR")),
        dict(base, test_id="tests.vpp.perf.ip4.a-mrr", test_name="64b-2t1c-a-mrr", test_type="MRR", metric="mrr",
             unit="pps", value=float("nan"), stdev=float("nan"), trials=None, status="FAIL",
             message="Traffic lost: 100 %", tags=("MRR",)),
        dict(base, test_id="tests.vpp.perf.ip4.c-ndrpdr", test_name="64b-2t1c-c-ndrpdr", test_type="NDRPDR",
             metric="ndr", unit="pps", value=18123456.5 * scale, stdev=float("nan"), trials=None, status="PASS",
             message="", tags=(), driver=None),
    ]
    return coerce_samples(pd.DataFrame(rows))


def fake_parse(path: str, job: str, build: int, **options: object) -> ParseResult:
    """A stand-in for pal.parse.parse_build: the known samples, scaled by the number in the file.

    A file holding "bad" raises ParseError; ``options`` are accepted and ignored.
    """
    from pal.errors import ParseError

    text = Path(path).read_text(encoding="utf-8").strip()
    if text == "bad":
        raise ParseError(path, "not an output.xml", build=build)
    meta = make_meta(job, build)
    return ParseResult(samples_to_arrow(make_samples(job, build, float(text))), meta)


def main(argv: list[str]) -> int:
    """The crash tests' writer, run in a subprocess.

    ``python -m tests.store.data insert STORE JOB BUILD SHA SCALE``: insert one build;
    ``python -m tests.store.data commit STORE FILE...``: parse files named JOB--BUILD.txt and commit them;
    ``python -m tests.store.data vacuum STORE``: compact and vacuum.
    """
    from pal.model import BuildFile
    from pal.store import Store
    from pal.store.ingest import parse_to_fragment

    mode, path, *rest = argv
    store = Store(path)
    if mode == "insert":
        job, build, sha, scale = rest
        print(store.insert(make_samples(job, int(build), float(scale)), make_meta(job, int(build)), sha))
        return 0
    if mode == "vacuum":
        print(store.vacuum(target_rows=int(rest[0]) if rest else 500_000)["compacted"])
        return 0
    frags = []
    for f in rest:
        job, build = os.path.basename(f)[:-4].split("--")
        bf = BuildFile(job, int(build), Path(f), "test")
        frags.append(parse_to_fragment(bf, str(store.staging_dir()), {}, parse_fn=fake_parse))
    print(store.commit_fragments(frags))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
