"""``pal.model``: a series' slug keeps letters and digits of any script, "-" and "_", and nothing else."""

from __future__ import annotations

import hashlib
import random

from pal.model import SeriesKey


def slug_by_definition(key: SeriesKey) -> str:
    digest = hashlib.sha1(f"{key.job}|{key.test_id}|{key.metric}".encode()).hexdigest()[:10]
    tail = key.test_id.rsplit(".", 1)[-1]
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in tail)[:80]
    return f"{safe}-{key.metric}-{digest}"


def test_slug_is_its_definition_on_any_text():
    rng = random.Random(7)
    alphabet = [chr(i) for i in range(0x3000)] + list("ab9-_. /") * 40
    keys = [SeriesKey("job", "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))), "mrr")
            for _ in range(3000)]
    keys.append(SeriesKey("j", "tests.vpp.perf.ip4.64b-1t1c-ethip4-ip4base-mrr", "mrr"))
    assert [k.slug() for k in keys] == [slug_by_definition(k) for k in keys]
    assert keys[-1].slug().startswith("64b-1t1c-ethip4-ip4base-mrr-mrr-")
    assert SeriesKey("j", "a.x/y z\u00e9", "ndr").slug().startswith("x-y-z\u00e9-ndr-")


def test_slug_kept_on_the_key_leaves_equality_hashing_and_pickling_to_the_three_names():
    import pickle

    key = SeriesKey("job", "tests.a.64b-1t1c-x", "mrr")
    plain = SeriesKey("job", "tests.a.64b-1t1c-x", "mrr")
    first = key.slug()
    assert key.slug() is first  # made once
    assert first == slug_by_definition(plain)
    assert key == plain and hash(key) == hash(plain) and {key: 1}[plain] == 1
    copy = pickle.loads(pickle.dumps(key))
    assert copy == plain and copy.slug() == first
    assert SeriesKey("job", "tests.a.64b-1t1c-y", "mrr").slug() != first
