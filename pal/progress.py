"""Numbered step lines for CI logs (``[3/6] parse: 180 builds``) and periodic progress lines.

Everything goes to the ``pal`` logger, which the CLI sends to stderr; stdout stays free for
machine output.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

log = logging.getLogger("pal")


@dataclass
class Steps:
    """Announces the stages of a run in order, with their elapsed time."""

    total: int
    logger: logging.Logger = log
    _n: int = 0
    _t0: float = field(default_factory=time.monotonic)

    def start(self, name: str, what: str = "") -> None:
        self._n += 1
        self._t0 = time.monotonic()
        self.logger.info("[%d/%d] %s%s", self._n, self.total, name, f": {what}" if what else "")

    def done(self, what: str) -> None:
        self.logger.info("      %s (%.1f s)", what, time.monotonic() - self._t0)


@dataclass
class Progress:
    """Logs one line every ``every`` items (and at the end), never a carriage-return bar."""

    label: str
    total: int
    every: int = 20
    logger: logging.Logger = log
    done: int = 0

    def advance(self, n: int = 1) -> None:
        before = self.done
        self.done += n
        if self.done == self.total or self.done // self.every > before // self.every:
            self.logger.info("      %s %d/%d", self.label, self.done, self.total)
