"""Build-wide facts that CSIT logs in suite setups: DUT versions and the TG host.

Only messages of suite-setup keywords are read (the walker hands them over), so the
millions of messages in TRACE-level test bodies cost nothing here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Version messages by DUT, oldest forms last: "VPP version: x", "VPP Version: x",
# "return STDOUT Version: x" (CSIT 2017-2018), "DPDK version: x". Anchored at a line start so
# that TRACE echoes of keyword arguments ("Arguments: [ 'VPP version: ...' ]") do not count.
_VERSION = {
    "vpp": re.compile(r"^[ \t]*(?:VPP [Vv]ersion|return STDOUT Version):\s*(\S+)", re.MULTILINE),
    "dpdk": re.compile(r"^[ \t]*DPDK [Vv]ersion:\s*(\S+)", re.MULTILINE),
}
_TG_HOST = re.compile(r"^[ \t]*Setup of node TG host (\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f:]+), port \d+ done", re.MULTILINE)


@dataclass
class SetupFacts:
    """DUT versions (by DUT name) and the TG IP found so far; the first finding wins."""

    versions: dict[str, str] = field(default_factory=dict)
    tg_ip: str | None = None

    def read(self, text: str | None) -> None:
        """Take what one suite-setup message says."""
        if not text or "ersion" not in text and "TG host" not in text:
            return
        for dut, rx in _VERSION.items():
            if dut not in self.versions:
                m = rx.search(text)
                if m:
                    self.versions[dut] = m.group(1).strip()
        if self.tg_ip is None:
            m = _TG_HOST.search(text)
            if m:
                self.tg_ip = m.group(1)
