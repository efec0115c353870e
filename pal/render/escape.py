"""Escaping of untrusted text (test names, messages, versions) for every output format.

HTML is escaped by Jinja's autoescape; this module covers the other three places text
lands: JSON inside ``.js`` files, SVG text nodes and CSV cells.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from pal import compiled

_JS_UNSAFE = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}

_XML = {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;", ord('"'): "&quot;", ord("'"): "&#39;"}

#: A spreadsheet treats a cell starting with one of these as a formula (CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


#: ``json.dumps`` with these arguments builds this encoder on every call (a drill-down makes ~20)
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":"))


def js_json(obj: Any) -> str:
    """JSON that is safe inside a ``<script>`` file or block: no ``</script>``, no U+2028/9.

    NaN is not JSON: callers convert it to None first (``allow_nan=False`` catches a miss).
    Keys are sorted so reruns are byte-identical.
    """
    kind = type(obj)
    if kind is str and len(obj) <= _SHORT:
        return _short_json(obj)
    if kind is bool or obj is None:  # a drill-down's payload has a flag and, mostly, no anomalies
        return "true" if obj is True else "false" if obj is False else "null"
    if kind is list and not obj:
        return "[]"
    return _JSON.encode(obj).translate(_JS_UNSAFE)


#: strings up to this long are encoded once per process (``_short_json``)
_SHORT = 200


@functools.lru_cache(maxsize=4096)
def _short_json(text: str) -> str:
    """``js_json`` of a short string, memoised: a drill-down's payload writes about twenty (its
    keys, its job's and metric's names), the same for thousands of pages."""
    return _JSON.encode(text).translate(_JS_UNSAFE)


@dataclass(frozen=True, eq=False)
class Floats:
    """A float array for ``js_assign``: written with fixed ``digits`` decimals, NaN/inf as null.

    One C-level ``%`` format for the whole array instead of ``json``'s per-float repr: graph
    data is most of a site's bytes and the hot part of writing it.
    """

    values: Any  # array-like of float
    digits: int


@dataclass(frozen=True)
class Json:
    """JSON text made already (by ``js_json``), which ``js_encode`` writes as it is: a part many
    payloads share (a job's time labels, its build numbers) is encoded once, not per series."""

    text: str


#: Write number texts in the compiled kernel (pal.render.text_kernel: C, built at install); tests
#: turn it off to check the Python forms (the reference) against it.
USE_COMPILED = True
#: decimals the kernel writes (beyond them a value's digits need more than a float's fraction)
_KERNEL_DIGITS = 15


def text_kernel() -> Any:
    """``pal.render.text_kernel``, or None (not built, or ``USE_COMPILED`` off)."""
    return compiled.load("pal.render.text_kernel") if USE_COMPILED else None


def js_floats(values: Any, digits: int) -> str:
    """``[1.500000,null,...]``: a JSON array of numbers only (nothing in it can end a script)."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    return f"[{_fixed_joined(arr, int(digits))}]" if arr.size else "[]"


def fixed_texts(values: Any, digits: int, missing: str = "") -> list[str]:
    """``"%.{digits}f" % v`` of each value, ``missing`` (no comma in it) where it is NaN or infinite:
    a table's cells."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    if not arr.size:
        return []
    joined = _fixed_joined(arr, int(digits))
    texts = joined.split(",")
    if "null" in joined:  # a value that is not finite (a number's text is digits, a sign and a point)
        texts = [missing if t == "null" else t for t in texts]
    return texts


def _fixed_joined(arr: np.ndarray, digits: int) -> str:
    """``"%.{digits}f"`` of every value of the (non-empty) float64 ``arr``, comma-joined, ``null``
    where it is not finite: by the compiled loop (which prints the values it cannot round itself,
    ties and near ties, as Python does), else (no kernel, a value of 1e16 or more) by one C-level
    ``%`` of the whole array (which the compiled loop matches byte for byte)."""
    kernel = text_kernel() if 0 <= digits <= _KERNEL_DIGITS else None
    if kernel is not None:
        out = np.empty(arr.size * (digits + 22), dtype=np.uint8)
        n = kernel.fixed_list(arr, digits, out)
        if n >= 0:
            return out[:n].tobytes().decode("ascii")
    text = (f"%.{digits}f," * arr.size % tuple(arr.tolist()))[:-1]
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        parts = text.split(",")
        for i in bad.tolist():
            parts[i] = "null"
        text = ",".join(parts)
    return text


def _encode(obj: Any) -> str:
    if isinstance(obj, Floats):
        return js_floats(obj.values, obj.digits)
    if isinstance(obj, Json):
        return obj.text
    if isinstance(obj, dict) and any(isinstance(v, (Floats, Json, dict)) for v in obj.values()):
        items = sorted((str(k), v) for k, v in obj.items())
        return "{" + ",".join(f"{js_json(k)}:{_encode(v)}" for k, v in items) + "}"
    return js_json(obj)


def js_encode(obj: Any) -> str:
    """The JSON text of ``obj``, which may hold ``Floats`` and ``Json`` at any depth of dicts; safe inside a
    ``<script>`` element (nothing in it can end one: see ``js_json``)."""
    return _encode(obj)


_JS_HEAD = "var PAL=window.PAL=window.PAL||{series:{},jobs:{}};"


def js_assign(namespace: str, key: str, obj: Any) -> str:
    """A data file body ``PAL.<namespace>[key] = obj;`` loadable by ``<script src>`` from disk or HTTP.

    ``obj`` may hold ``Floats`` (at any depth of dicts); everything else goes through ``js_json``.
    """
    return f"{_JS_HEAD}PAL.{namespace}[{js_json(key)}]={_encode(obj)};\n"


def js_assign_all(namespace: str, items: Iterable[tuple[str, str]]) -> str:
    """A data file body with one ``PAL.<namespace>[key]=...;`` line per (key, ``js_encode`` text).

    One join of all the pieces: a line made first (an f-string holding a series' whole text)
    copied each text once more, and a year's group file is 15 MB (36 -> 5 us a series)."""
    start = f"PAL.{namespace}["
    parts = [_JS_HEAD]
    for k, text in items:
        parts += (start, js_json(k), "]=", text, ";\n")
    return "".join(parts)


def xml_text(text: str) -> str:
    """Text for an SVG/XML text node or attribute value, in ASCII: other characters as numeric
    references (valid in XML and HTML alike).

    A page whose every character is ASCII is a one-byte string in CPython all along its making
    (templates, SVG, JSON): joining its parts and encoding it to UTF-8 are copies. One character
    beyond ASCII (a legend's "±") makes the whole page wider and its encoding a per-character
    loop: 50 us of a drill-down's 600 (see docs/scaling.md). The templates write theirs as
    references for that reason."""
    escaped = str(text).translate(_XML)
    return escaped if escaped.isascii() else escaped.encode("ascii", "xmlcharrefreplace").decode("ascii")


def csv_cell(text: str | None) -> str:
    """A text cell for CSV that a spreadsheet will not evaluate (OWASP: prefix a quote)."""
    if text is None:
        return ""
    text = str(text)
    return "'" + text if text.startswith(_FORMULA_START) else text


def floats_or_none(values: Iterable[float], digits: int) -> list[float | None]:
    """Rounded floats with NaN/inf as None (JSON null, a gap in graphs, never 0)."""
    arr = np.asarray(values, dtype=np.float64)
    out: list[float | None] = np.round(arr, digits).tolist()
    for i in np.flatnonzero(~np.isfinite(arr)).tolist():
        out[i] = None
    return out
