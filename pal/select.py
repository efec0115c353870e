"""Test selection: tag expressions (Robot Framework style) and id regexes, without ``eval``.

Grammar (case-insensitive, like Robot's ``--include``)::

    expr   := term ("OR" term)*
    term   := factor (("AND" | "NOT") factor)*      # "A NOT B" == "A AND NOT B"
    factor := "NOT" factor | "(" expr ")" | TAG      # TAG may hold * and ? wildcards
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Iterable

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_OPS = {"AND", "OR", "NOT"}


class TagExprError(ValueError):
    pass


@dataclass(frozen=True)
class TagExpr:
    """A parsed tag expression; ``match(tags)`` tells whether a test's tags satisfy it."""

    text: str
    _tree: tuple

    @classmethod
    def parse(cls, text: str) -> "TagExpr":
        tokens = _tokenize(text)
        if not tokens:
            raise TagExprError("empty tag expression")
        tree, pos = _parse_or(tokens, 0)
        if pos != len(tokens):
            raise TagExprError(f"unexpected {tokens[pos]!r} at token {pos + 1}")
        return cls(text, tree)

    def match(self, tags: Iterable[str]) -> bool:
        norm = {t.upper() for t in tags}
        return _eval(self._tree, norm)


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise TagExprError(f"cannot read {text[pos:]!r}")
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def _parse_or(tokens: list[str], pos: int) -> tuple[tuple, int]:
    left, pos = _parse_and(tokens, pos)
    while pos < len(tokens) and tokens[pos].upper() == "OR":
        right, pos = _parse_and(tokens, pos + 1)
        left = ("or", left, right)
    return left, pos


def _parse_and(tokens: list[str], pos: int) -> tuple[tuple, int]:
    left, pos = _parse_factor(tokens, pos)
    while pos < len(tokens) and tokens[pos].upper() in ("AND", "NOT"):
        op = tokens[pos].upper()
        right, pos = _parse_factor(tokens, pos + 1)
        left = ("and", left, right if op == "AND" else ("not", right))
    return left, pos


def _parse_factor(tokens: list[str], pos: int) -> tuple[tuple, int]:
    if pos >= len(tokens):
        raise TagExprError("expression ends where a tag was expected")
    tok = tokens[pos]
    if tok.upper() == "NOT":
        inner, pos = _parse_factor(tokens, pos + 1)
        return ("not", inner), pos
    if tok == "(":
        inner, pos = _parse_or(tokens, pos + 1)
        if pos >= len(tokens) or tokens[pos] != ")":
            raise TagExprError("missing ')'")
        return inner, pos + 1
    if tok == ")" or tok.upper() in _OPS:
        raise TagExprError(f"unexpected {tok!r} at token {pos + 1}")
    return ("tag", tok.upper()), pos + 1


def _eval(node: tuple, tags: set[str]) -> bool:
    op = node[0]
    if op == "tag":
        pat = node[1]
        if any(c in pat for c in "*?["):
            return any(fnmatch.fnmatchcase(t, pat) for t in tags)
        return pat in tags
    if op == "not":
        return not _eval(node[1], tags)
    if op == "and":
        return _eval(node[1], tags) and _eval(node[2], tags)
    return _eval(node[1], tags) or _eval(node[2], tags)


@dataclass(frozen=True)
class Selection:
    """Which tests a test set takes: all given criteria must hold."""

    tags: str | None = None  # a tag expression, see TagExpr
    id_regex: str | None = None  # re.search against the normalised test id

    def compiled(self) -> "CompiledSelection":
        return CompiledSelection(
            TagExpr.parse(self.tags) if self.tags else None,
            re.compile(self.id_regex) if self.id_regex else None,
        )


@dataclass(frozen=True)
class CompiledSelection:
    tags: TagExpr | None
    id_regex: re.Pattern | None

    def match(self, test_id: str, tags: Iterable[str]) -> bool:
        if self.id_regex is not None and not self.id_regex.search(test_id):
            return False
        if self.tags is not None and not self.tags.match(tags):
            return False
        return True
