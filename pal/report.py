"""The run report: every problem met on the way, so nothing is skipped silently."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One thing that went wrong but did not stop the run."""

    stage: str  # "download", "parse", "analyse", "render", "alerts", ...
    item: str  # what it is about: "job/build", a file, a test id, a spec key
    message: str
    severity: str = "error"  # "error" | "warning"
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunReport:
    """Collected by every stage; written as ``report.json`` and summarised on stderr."""

    problems: list[Problem] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    # download threads report concurrently
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, stage: str, item: str, message: str, severity: str = "error", **details: Any) -> None:
        with self._lock:
            self.problems.append(Problem(stage, item, message, severity, details))

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + n

    def errors(self, stage: str | None = None) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error" and (stage is None or p.stage == stage)]

    def fatal(self) -> list[Problem]:
        """Problems that make the whole run fail (exit 1) even though every stage ran."""
        return [p for p in self.problems if p.details.get("fatal")]

    def merge(self, other: "RunReport") -> None:
        self.problems.extend(other.problems)
        for k, v in other.counts.items():
            self.count(k, v)

    def to_dict(self) -> dict[str, Any]:
        return {"counts": dict(sorted(self.counts.items())), "problems": [asdict(p) for p in self.problems]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, default=str)
