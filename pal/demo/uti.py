"""One demo build as CSIT's UTI JSON results: ``<build>/archives.tar.gz`` of robot's output tree.

CSIT's exporter writes one ``*.info.json`` per test under ``<suite path>/`` (suite name lower
case, ``_`` for spaces, one directory per dot) and a ``setup.info.json`` / ``teardown.info.json``
per suite; the job archives that tree. ``UtiBuild`` is the ``sink`` of ``JobWriter.write``: it
gets every test and suite with the times the output.xml carries and writes the same build in
the model (1.5.1), so the demo's UTI job and an output.xml job read the same way. The archive
is byte-identical for the same seed (fixed gzip and tar times, members in write order).
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pal.demo.messages import LATENCY_LOADS, gbps, latency_numbers

if TYPE_CHECKING:
    from pal.demo.build import JobWriter

MODEL_VERSION = "1.5.1"
ARCHIVE = "archives.tar.gz"
ROOT = "archives"


class ResultSink(Protocol):
    def test(self, run: int, slot: int, long_name: str, tags: tuple[str, ...], failure: str,
             start_us: int, end_us: int) -> None: ...

    def suite(self, long_name: str, start_us: int, end_us: int) -> None: ...


def _rfc3339(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _path_of(suite_long_name: str) -> str:
    return "/".join([ROOT, *suite_long_name.lower().replace(" ", "_").split(".")])


class UtiBuild:
    """Collects one build's test and suite files; ``save`` writes the tar.gz."""

    def __init__(self, writer: "JobWriter", run: int):
        self.w = writer
        self.run = run
        plan = writer.plan
        self.tg = plan.tg_ips[run]
        self.hosts = [self.tg, *writer.profile.dut_ips(self.tg)]
        self.version = plan.versions[run]
        self.members: list[tuple[str, bytes]] = []
        self.test_type = writer.profile.test_type.lower()

    def test(self, run: int, slot: int, long_name: str, tags: tuple[str, ...], failure: str,
             start_us: int, end_us: int) -> None:
        suite, _, name = long_name.rpartition(".")
        suite_id, test_part = suite.lower().replace(" ", "_"), name.lower().replace(" ", "_")
        short = test_part.split("-", 2)[-1].rsplit(f"-{self.test_type}", 1)[0]
        doc = {
            "version": MODEL_VERSION, "test_id": f"{suite_id}.{test_part}",
            "test_name_long": f"{suite_id.rsplit('.', 1)[-1].split('-')[1]}-{test_part}".rsplit(
                f"-{self.test_type}", 1)[0],
            "test_name_short": short if len(short) >= 3 else test_part,
            "test_type": self.test_type, "test_documentation": "", "tags": list(tags),
            "passed": not failure, "message": failure,
            "dut_type": "vpp", "dut_version": self.version, "tg_type": "trex", "tg_version": "3.03",
            "hosts": self.hosts, "telemetry": [],
            "start_time": _rfc3339(start_us), "end_time": _rfc3339(end_us),
            "duration": (end_us - start_us) / 1e6,
            "result": {"type": "unknown"} if failure else self._result(slot),
        }
        self.members.append((f"{_path_of(suite)}/{test_part}.info.json", _dump(doc)))

    def suite(self, long_name: str, start_us: int, end_us: int) -> None:
        for kind, t in (("setup", start_us), ("teardown", end_us)):
            self.members.append((f"{_path_of(long_name)}/{kind}.info.json", _dump({
                "version": MODEL_VERSION, "suite_name": long_name, "suite_documentation": "",
                "start_time": _rfc3339(start_us if kind == "setup" else t),
                "end_time": _rfc3339(t), "hosts": self.hosts, "telemetry": [],
            })))

    def _result(self, slot: int) -> dict:
        v, run = self.w.values, self.run
        if v.trials is not None:
            # the same numbers as the message, which writes two decimals
            trials = [float(f"{t:.2f}") for t in v.trials[run][slot].tolist()]
            mean = sum(trials) / len(trials)
            stdev = (sum((t - mean) ** 2 for t in trials) / len(trials)) ** 0.5
            return {"type": "mrr", "receive_rate": {"rate": {"values": trials, "avg": mean, "stdev": stdev,
                                                             "unit": "pps"}}}
        frame = self.w.plan.tests[slot].frame
        out: dict = {"type": "ndrpdr"}
        for metric, arr in (("ndr", v.ndr), ("pdr", v.pdr)):
            pps = float(f"{float(arr[run][slot]):.1f}")
            out[metric] = {"lower": {"rate": {"value": pps, "unit": "pps"},
                                     "bandwidth": {"value": gbps(pps, frame) * 1e9, "unit": "bps"}}}
        d1, d2 = float(v.lat_d1[run][slot]), float(v.lat_d2[run][slot])
        for direction, avg50, offset in (("latency_forward", d1, 0), ("latency_reverse", d2, 1)):
            out[direction] = {}
            for i, (load, factor) in enumerate(LATENCY_LOADS.items()):
                lo, avg, hi, hdrh = latency_numbers(avg50 * factor, slot + 4 + 2 * i + offset)
                out[direction][f"pdr_{load}"] = {"min": lo, "avg": avg, "max": hi, "hdrh": hdrh, "unit": "us"}
        return out

    def save(self, build_dir: Path, mtime: int) -> Path:
        """Write ``build_dir/archives.tar.gz`` (members in the order CSIT's run wrote them)."""
        path = build_dir / ARCHIVE
        with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime,
                                                     compresslevel=6) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tf:
                for name, data in self.members:
                    info = tarfile.TarInfo(name)
                    info.size, info.mtime, info.mode = len(data), mtime, 0o644
                    tf.addfile(info, io.BytesIO(data))
        return path


def _dump(doc: dict) -> bytes:
    return json.dumps(doc, indent=1).encode("utf-8")
