"""Everything about a spec that can be checked before a download, reported all at once.

``pal.spec`` checks the document itself (types, keys, regexes, tag expressions, URL
templates). This module adds the checks against the world the run will meet, each a
mistake that used to pass ``pal validate`` and fail late or silently:

- the local paths exist (local sources' directories, ``rename-file``, ``alerts.acks``),
  resolved as the run resolves them (relative to the spec file, ``${VARS}`` and ``~``
  expanded), and every ``${VAR}`` a path or URL names is set;
- the rename file is a YAML mapping, the acks file is valid, and no ack keeps the
  placeholder reason of the snippet pal prints (an alert is not acknowledged by pasting);
- every test set's ``jobs`` regex matches a job of the spec (else its series vanish);
- ``outputs.build-url`` uses ``{jenkins}`` only when there is a Jenkins source to fill it.

``pal validate`` prints every error; ``pal run`` and ``pal download`` call ``validated_spec``
first, so a bad setup fails before the first byte is downloaded.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pal.errors import SpecError, SpecErrors
from pal.spec import Spec, load_spec

#: the reason ``Alert.ack_snippet`` writes for the user to replace (pal.alerts.model)
PLACEHOLDER_REASON = "reason, e.g. a ticket or change number"

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def check_spec_file(path: str | os.PathLike[str]) -> tuple[Spec | None, list[SpecError]]:
    """Load the spec at ``path`` and run every check; the spec (None if unreadable) and all errors."""
    try:
        spec: Spec | None = load_spec(path)
        errors: list[SpecError] = []
    except SpecErrors as exc:
        spec, errors = exc.spec, list(exc.errors)  # type: ignore[assignment]
    except SpecError as exc:
        return None, [exc]
    if spec is not None:
        errors += check_spec(spec, source=str(path))
    return spec, errors


def validated_spec(path: str | os.PathLike[str]) -> Spec:
    """The spec at ``path`` if every check passes; else SpecErrors naming each mistake."""
    spec, errors = check_spec_file(path)
    if errors:
        raise SpecErrors(errors, spec)
    return spec  # type: ignore[return-value]


def check_spec(spec: Spec, source: str | None = None) -> list[SpecError]:
    """The pre-download checks of a loaded spec (see the module docstring); [] when all pass."""
    return _Checks(spec, source).run()


class _Checks:
    def __init__(self, spec: Spec, source: str | None):
        self.spec = spec
        self.source = source
        self.errors: list[SpecError] = []

    def error(self, path: str, value: object, expected: str) -> None:
        self.errors.append(SpecError(self.spec.where(path), value, expected, self.source))

    def run(self) -> list[SpecError]:
        self.sources()
        self.rename_file()
        self.acks()
        self.test_set_jobs()
        self.build_url()
        self.vars("outputs.dir", self.spec.outputs.dir)
        self.vars("store.path", self.spec.store.path)
        return self.errors

    def vars(self, path: str, text: str | None) -> bool:
        """Every ``${VAR}`` of ``text`` is set (else the run would use the text literally or stop)."""
        unset = [a or b for a, b in _VAR.findall(text or "") if (a or b) not in os.environ]
        for name in dict.fromkeys(unset):
            self.error(path, text, f"environment variable {name} to be set")
        return not unset

    def existing(self, path: str, value: str, kind: str) -> Path | None:
        """The resolved path if it exists as a ``kind`` ("directory" or "file"); else record why not."""
        if not self.vars(path, value):
            return None
        resolved = self.spec.resolve(value)
        assert resolved is not None
        ok = resolved.is_dir() if kind == "directory" else resolved.is_file()
        if not ok:
            what = "does not exist" if not resolved.exists() else f"is not a {kind}"
            self.error(path, value, f"an existing {kind} ({resolved} {what})")
            return None
        return resolved

    def sources(self) -> None:
        for i, src in enumerate(self.spec.sources):
            if src.type == "local" and src.path:
                self.existing(f"sources[{i}].path", src.path, "directory")
            elif src.type == "jenkins":
                self.vars(f"sources[{i}].url", src.url)

    def rename_file(self) -> None:
        if self.spec.rename_file is None or self.existing("rename-file", self.spec.rename_file, "file") is None:
            return
        try:
            self.spec.renames()
        except SpecError as exc:
            self.error("rename-file", exc.value, exc.expected)

    def acks(self) -> None:
        from pal.alerts.acks import load_acks

        raw = self.spec.alerts.acks
        if raw is None:
            return
        path = self.existing("alerts.acks", raw, "file")
        if path is None:
            return
        try:
            acks = load_acks(path)
        except SpecError as exc:
            self.errors.append(exc)  # names the acks file and its line
            return
        lines = path.read_text(encoding="utf-8").splitlines()
        for ack_id, reason in acks.items():
            if reason.strip().strip("\"'").strip().lower() == PLACEHOLDER_REASON:
                line = next((n for n, text in enumerate(lines, 1)
                             if re.match(rf"\s*['\"]?{ack_id}['\"]?\s*:", text, re.I)), None)
                where = f"{ack_id} (line {line})" if line else ack_id
                self.errors.append(SpecError(where, reason, "a real reason (a ticket, a change, who looked), "
                                             "not the placeholder of the ack snippet", str(path)))

    def test_set_jobs(self) -> None:
        names = [j.name for j in self.spec.jobs]
        for i, ts in enumerate(self.spec.test_sets):
            for j, pattern in enumerate(ts.jobs or []):
                try:
                    rx = re.compile(pattern)
                except re.error:
                    continue  # reported by pal.spec
                if not any(rx.fullmatch(n) for n in names):
                    self.error(f"test-sets[{i}].jobs[{j}]", pattern,
                               "a regex matching (in full) at least one of the spec's jobs: " + ", ".join(names))

    def build_url(self) -> None:
        url = self.spec.outputs.build_url
        if url and "{jenkins" in url and not any(s.type == "jenkins" for s in self.spec.sources):
            self.error("outputs.build-url", url, "no {jenkins} placeholder: the spec has no jenkins source to "
                       "fill it in (write the Jenkins URL itself)")
