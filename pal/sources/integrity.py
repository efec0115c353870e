"""Container checks for fetched output.xml files: detect the format by magic bytes, prove it whole.

A file that a server truncated, or a log server replaced by an HTML error page, must be
caught here (and reported) rather than half-parsed later. The check runs in the same pass
that hashes and writes the bytes, so it costs no extra read: gzip and xz are decompressed
to the end (into nothing) to prove the stream complete; zip is checked at the end through
its central directory (it must hold an output*.xml member); plain XML must start with ``<``
and end with ``>``.

Decompression is bounded twice: every call yields at most ``OUT_CHUNK`` bytes (a 2 MB gzip of
zeros once became 2 GB in one call), and the total is capped by the parse stage's cap
(``pal.parse.archive.DEFAULT_MAX_BYTES``), so a bomb is refused here before anything parses it.
"""

from __future__ import annotations

import hashlib
import lzma
import zipfile
import zlib
from pathlib import Path

from pal.parse.archive import DEFAULT_MAX_BYTES

GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"
ZIP_MAGIC = b"PK\x03\x04"

#: Most bytes one decompression call may produce (memory per call stays at this).
OUT_CHUNK = 1 << 20

#: container kind -> the file name suffix pal stores it under
SUFFIXES = {"gzip": ".gz", "xz": ".xz", "zip": ".zip", "xml": ""}


class IntegrityError(ValueError):
    """The bytes are not a complete output.xml container; the message says why."""


def sniff(head: bytes) -> str:
    """The container kind of a file from its first bytes: gzip | xz | zip | xml | unknown."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(XZ_MAGIC):
        return "xz"
    if head.startswith(ZIP_MAGIC):
        return "zip"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"<"):
        return "xml" if not stripped[:200].lower().startswith((b"<!doctype html", b"<html")) else "html"
    return "unknown"


class ContainerCheck:
    """Feed the bytes of a file in order; ``finish()`` raises IntegrityError if it is not whole.

    Also computes the sha256 of the bytes fed, so hashing and checking are one pass.
    ``max_output`` caps the decompressed size of gzip/xz (default: the parse stage's cap).
    """

    def __init__(self, max_output: int = DEFAULT_MAX_BYTES) -> None:
        self.sha256 = hashlib.sha256()
        self.size = 0
        self.max_output = max_output
        self.output = 0  # decompressed bytes so far (gzip, xz)
        self.kind: str | None = None
        self._head = b""
        self._decomp: "zlib._Decompress | lzma.LZMADecompressor | None" = None
        self._tail = b""

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.sha256.update(chunk)
        self.size += len(chunk)
        if self.kind is None:
            self._head += chunk
            if len(self._head) < 8 and not self._head.lstrip().startswith(b"<"):
                return
            self.kind = sniff(self._head)
            if self.kind in ("html", "unknown"):
                raise IntegrityError(
                    "not an output.xml container (" + ("an HTML page" if self.kind == "html"
                                                       else f"unknown magic bytes {self._head[:4]!r}") + ")")
            if self.kind == "gzip":
                self._decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
            elif self.kind == "xz":
                self._decomp = lzma.LZMADecompressor()
            chunk, self._head = self._head, b""
        self._tail = (self._tail + chunk)[-64:]
        if self.kind == "gzip":
            self._feed_gzip(chunk)
        elif self.kind == "xz":
            self._feed_xz(chunk)

    def _count(self, produced: int) -> None:
        self.output += produced
        if self.output > self.max_output:
            raise IntegrityError(f"decompressed size exceeds the cap of {self.max_output} bytes "
                                 f"({self.size} bytes compressed so far): a decompression bomb?")

    def _feed_xz(self, chunk: bytes) -> None:
        # Concatenated xz streams are legal too (xz(1) reads them; stream padding is zero bytes).
        while chunk:
            dec: lzma.LZMADecompressor = self._decomp  # type: ignore[assignment]
            try:
                self._count(len(dec.decompress(chunk, max_length=OUT_CHUNK)))
                while not dec.eof and not dec.needs_input:
                    self._count(len(dec.decompress(b"", max_length=OUT_CHUNK)))
            except lzma.LZMAError as exc:
                raise IntegrityError(f"corrupt xz data ({exc})") from None
            chunk = dec.unused_data if dec.eof else b""
            chunk = chunk.lstrip(b"\x00")
            if chunk:
                self._decomp = lzma.LZMADecompressor()
            else:
                chunk = b""

    def _feed_gzip(self, chunk: bytes) -> None:
        # Concatenated gzip members are legal (and what `cat a.gz b.gz` makes): restart on unused data.
        while chunk:
            dec: zlib._Decompress = self._decomp  # type: ignore[assignment]
            try:
                self._count(len(dec.decompress(chunk, OUT_CHUNK)))
                while dec.unconsumed_tail and not dec.eof:
                    self._count(len(dec.decompress(dec.unconsumed_tail, OUT_CHUNK)))
            except zlib.error as exc:
                raise IntegrityError(f"corrupt gzip data ({exc})") from None
            if dec.eof:
                chunk = dec.unused_data
                if chunk.strip(b"\x00"):
                    self._decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
                else:
                    chunk = b""
            else:
                chunk = b""

    def finish(self, path: Path | None = None) -> str:
        """Raise IntegrityError unless the container is complete; return its kind."""
        if self.kind is None:
            if self.size == 0:
                raise IntegrityError("empty file")
            self.kind = sniff(self._head)
            if self.kind not in ("xml",):
                raise IntegrityError(f"not an output.xml container ({self.size} bytes)")
        if self.kind == "gzip" and not self._decomp.eof:  # type: ignore[union-attr]
            raise IntegrityError(f"truncated gzip data ({self.size} bytes)")
        if self.kind == "xz" and not self._decomp.eof:  # type: ignore[union-attr]
            raise IntegrityError(f"truncated xz data ({self.size} bytes)")
        if self.kind == "xml" and not self._tail.rstrip().endswith(b">"):
            raise IntegrityError(f"truncated XML ({self.size} bytes, does not end with '>')")
        if self.kind == "zip":
            if path is None:
                raise IntegrityError("a zip archive can only be checked on disk")
            check_zip(path)
        return self.kind


def check_zip(path: Path) -> str:
    """Open the central directory and return the output*.xml (else first ``*.info.json``) member's name, or raise."""
    try:
        with zipfile.ZipFile(path) as zf:
            listed = zf.namelist()
            names = [n for n in listed if n.rsplit("/", 1)[-1].startswith("output") and ".xml" in n]
            names += [n for n in listed if n.lower().endswith((".info.json", ".info.json.gz"))]  # CSIT UTI JSON
    except (zipfile.BadZipFile, OSError) as exc:
        raise IntegrityError(f"damaged zip archive ({exc})") from None
    if not names:
        raise IntegrityError("zip archive holds no output*.xml nor *.info.json")
    return names[0]


def check_file(path: Path, chunk_size: int = 1 << 20, max_output: int = DEFAULT_MAX_BYTES) -> tuple[str, str]:
    """Check a file on disk; return (sha256 hex, container kind) or raise IntegrityError."""
    check = ContainerCheck(max_output)
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_size):
            check.feed(chunk)
    kind = check.finish(path)
    return check.sha256.hexdigest(), kind
