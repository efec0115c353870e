"""Typed errors. Each carries where it happened; only ``pal.cli`` turns them into exit codes."""

from __future__ import annotations


class PalError(Exception):
    """Base of every error pal raises on purpose."""


class SpecError(PalError):
    """A spec is invalid: names the key path, the value found and what was expected."""

    def __init__(self, path: str, value: object, expected: str, source: str | None = None):
        self.path = path
        self.value = value
        self.expected = expected
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{path}: got {value!r}, expected {expected}")


class SpecErrors(SpecError):
    """Every error found in a spec, reported at once; path/value/expected are the first one's.

    ``spec`` is the spec as far as it could be built (bad optional keys at their defaults),
    or None, so later checks (pal.validate) can still run and add theirs.
    """

    def __init__(self, errors: list[SpecError], spec: object | None = None):
        first = errors[0]
        super().__init__(first.path, first.value, first.expected, first.source)
        self.errors = list(errors)
        self.spec = spec
        self.args = ("\n".join(str(e) for e in self.errors),)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


class SourceError(PalError):
    """A build could not be fetched from any data source."""

    def __init__(self, job: str, build: int | str, message: str, urls: list[str] | None = None):
        self.job = job
        self.build = build
        self.urls = list(urls or [])
        super().__init__(f"{job}/{build}: {message}")


class ParseError(PalError):
    """An output.xml (or its archive) could not be read at all."""

    def __init__(self, file: str, message: str, build: int | str | None = None, line: int | None = None):
        self.file = file
        self.build = build
        self.line = line
        where = file + (f":{line}" if line else "") + (f" (build {build})" if build is not None else "")
        super().__init__(f"{where}: {message}")


class StoreError(PalError):
    """The history store is locked, damaged or of an unknown schema version."""
