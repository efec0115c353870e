"""Parse stage: Robot Framework output.xml (any RF 3-7 dialect, any CSIT message generation) -> samples.

Public entry point: ``parse_build(path, job, build, *, testbeds, rename, ignore, dut)`` returning
``ParseResult(samples, meta, problems)``. See docs/parse.md.
"""

from pal.parse.build import ParseResult, parse_build
from pal.parse.paths import job_build_from_path

__all__ = ["ParseResult", "parse_build", "job_build_from_path"]
