"""Digests of bulk data: a series' arrays, a job's inputs, an export's rows (XXH3, 128 bits).

These digests decide what a run may keep: a job's analyses (``result_cache.job_digest``), an
MDL search's state (``mdl.MdlSaved``), a drill-down (``render.site.page_content``), an export's
row (``alerts.export``, ``render.downloads``). They are taken over every series' arrays in
every run: about 40 KB a series, 1.4 GB in a year's daily run (36,000 series), where sha1 and
blake2b read 0.3-0.7 GB/s on this project's machines and took about 5 % of the run's CPU.
XXH3 reads several GB/s. A 128-bit non-cryptographic digest is what change detection needs:
what is hashed is the run's own store and results, not input chosen to collide. Digests of
small texts (the spec, the code, a run's fingerprint) stay hashlib's.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import xxhash

__all__ = ["data_hasher", "arrays_digest"]


def data_hasher(head: bytes = b"") -> xxhash.xxh3_128:
    """An incremental digest (``update``, ``digest``, ``hexdigest``, as hashlib's) started with ``head``."""
    return xxhash.xxh3_128(head)


def arrays_digest(arrays: Iterable[np.ndarray], head: bytes = b"") -> bytes:
    """The digest of ``head`` and the arrays' bytes, one after the other (16 bytes). The caller's
    arrays have known lengths and types (they are part of what it hashes otherwise), so the
    bytes are not framed."""
    h = data_hasher(head)
    for a in arrays:
        h.update(np.ascontiguousarray(a))
    return h.digest()
