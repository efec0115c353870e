"""What every data source offers the fetch loop: list a job's builds, resolve aliases, fetch one.

Sources are tried in the spec's order per build. A source answers a fetch with a BuildFile,
or raises ``Missing`` (it simply does not have the build: try the next source quietly) or
``Failed`` (it should have had it but something broke: try the next source, and say so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from pal.model import BuildFile

#: Jenkins results whose builds have no usable output (None = still running).
SKIP_RESULTS = {None: "still running", "ABORTED": "aborted", "NOT_BUILT": "not built"}


@dataclass(frozen=True)
class BuildInfo:
    """What a listing says about one build. ``result`` None means running; ``known`` False: no status."""

    number: int
    result: str | None = "SUCCESS"
    timestamp: datetime | None = None  # build start (Jenkins ``timestamp``), UTC
    known: bool = True


class Missing(Exception):
    """The source does not have this build; ``urls`` are the places looked at."""

    def __init__(self, message: str, urls: list[str] | None = None, errors: list[str] | None = None):
        super().__init__(message)
        self.urls = list(urls or [])
        self.errors = list(errors or [])


class Failed(Missing):
    """The source has (or should have) the build but could not deliver a good file."""


class ListingError(Exception):
    """A source's build list could not be read (unreachable, bad JSON)."""

    def __init__(self, message: str, url: str = ""):
        super().__init__(message)
        self.url = url


class Source(Protocol):
    name: str

    def list_builds(self, job: str) -> dict[int, BuildInfo]:
        """All builds of ``job`` the source knows of; raise ListingError if it cannot say."""

    def resolve(self, job: str, alias: str, listed: dict[int, BuildInfo]) -> int | None:
        """The build number of ``lastCompletedBuild``/``lastSuccessfulBuild``, or None."""

    def fetch(self, job: str, build: int, info: BuildInfo | None) -> BuildFile:
        """Return the build's file (local path) or raise Missing/Failed."""

    def close(self) -> None:
        """Release connections and save caches."""


@dataclass
class Attempts:
    """The per-build trail across sources, for the report when nothing worked."""

    urls: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    damaged: bool = False

    def add(self, source: str, exc: Missing) -> None:
        self.urls.extend(exc.urls)
        self.errors.extend(f"{source}: {e}" for e in (exc.errors or [str(exc)]))
        self.damaged = self.damaged or isinstance(exc, Failed)
