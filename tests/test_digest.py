"""pal.digest: the bulk-data digests that decide what a run keeps."""

import numpy as np
import pytest

from pal.digest import arrays_digest, data_hasher


def test_the_algorithm_is_xxh3_128_of_its_published_vectors():
    # XXH3_128bits of no input, seed 0 (the xxHash specification's test vector), in canonical
    # (big-endian) order: digests kept in a run's state files must read the same in the next
    # install, whatever the library's version
    assert data_hasher().hexdigest() == "99aa06d3014798d86001c324468d497f"
    assert arrays_digest([]).hex() == "99aa06d3014798d86001c324468d497f"


def test_arrays_digest_is_the_digest_of_the_head_and_the_arrays_bytes_in_order():
    a = np.array([1.5, -0.0, np.nan])
    b = np.array([3, 4], dtype=np.int64)
    t = np.array(["2026-11-01T08:00", "2026-11-02T08:00"], dtype="datetime64[ns]")
    whole = data_hasher(b"head" + a.tobytes() + b.tobytes() + t.tobytes()).digest()
    assert arrays_digest([a, b, t], head=b"head") == whole
    assert len(whole) == 16
    # the same bytes given in pieces, incrementally
    h = data_hasher(b"he")
    for piece in (b"ad", a.tobytes()[:5], a.tobytes()[5:], b, t):
        h.update(piece)
    assert h.digest() == whole


def test_a_strided_array_is_hashed_as_its_values():
    x = np.arange(12.0)
    assert arrays_digest([x[::3]]) == arrays_digest([np.array([0.0, 3.0, 6.0, 9.0])])
    assert arrays_digest([x.reshape(3, 4).T]) == arrays_digest([np.ascontiguousarray(x.reshape(3, 4).T)])


@pytest.mark.parametrize("change", ["one ulp", "sign of zero", "nan payload", "order", "one more value"])
def test_any_change_of_the_values_changes_the_digest(change):
    rng = np.random.default_rng(7)
    v = rng.random(358) * 1e7
    v[10] = 0.0
    w = v.copy()
    if change == "one ulp":
        w[200] = np.nextafter(w[200], np.inf)
    elif change == "sign of zero":
        w[10] = -0.0
    elif change == "nan payload":
        v[20] = np.nan
        w[20] = np.frombuffer(np.array([0x7FF8000000000001], dtype=np.uint64).tobytes(), dtype=np.float64)[0]
    elif change == "order":
        w[[3, 4]] = w[[4, 3]]
    else:
        w = np.append(w, 1.0)
    assert arrays_digest([v]) != arrays_digest([w])


def test_digests_of_many_similar_series_are_distinct():
    # a day's series: the same axis, values a thousandth of a unit apart
    base = np.round(np.linspace(6.0e6, 6.5e6, 358), 3)
    digests = {arrays_digest([base + i * 0.001]) for i in range(20_000)}
    assert len(digests) == 20_000
