"""The MDL states file of a job (``pal.analysis.mdl_states``): what is written is read back to the
bit, and a file that is not this run's or is damaged gives no state (logged), never an error."""

from __future__ import annotations

import dataclasses
import logging
import pickle
import random

import pytest

from pal.analysis import mdl_states
from pal.analysis.mdl import MdlState
from pal.model import SearchStates, SeriesKey

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"


def states() -> list[tuple[SeriesKey, SearchStates]]:
    """Series of 1 to 365 runs; some with a masked search's state too, one with that only."""
    rng = random.Random(3)
    out = []
    for i, n in enumerate((1, 2, 57, 365)):
        values = [rng.uniform(1e6, 2e6) for _ in range(n)]
        sbps = 10.0 if i == 2 else None
        masked = MdlState.start(values[: n // 2 + 1], sbps=sbps).saved() if i % 2 else None
        out.append((SeriesKey(JOB, f"tests.t{i}", "mrr"), SearchStates(MdlState.start(values, sbps=sbps).saved(),
                                                                          masked)))
    unit_state = MdlState.start([[1.0, 1.5], [2.0], [1.2, 1.1, 0.9]], unit=0.01).saved()
    out.append((SeriesKey(JOB, "tests.trials \"quoted\" ü", "latency_pdr50_d1"), SearchStates(unit_state)))
    out.append((SeriesKey(JOB, "tests.masked.only", "mrr"), SearchStates(None, unit_state)))
    out.append((SeriesKey(JOB, "tests.tma", "mrr"), SearchStates("another detector's", None)))  # not MDL's: left out
    return out


def same(back, saved) -> None:
    for name in ("count", "digest", "max_value", "unit", "unit_arg", "sbps_arg"):
        assert getattr(back, name) == getattr(saved, name), name
    for name in ("win", "c_avg", "c_sd"):
        assert getattr(back, name).dtype == getattr(saved, name).dtype
        assert getattr(back, name).tobytes() == getattr(saved, name).tobytes(), name


def test_written_states_read_back_to_the_bit(tmp_path):
    path = tmp_path / "job.states"
    kept = states()
    mdl_states.write(path, "ctx", JOB, kept)
    got = mdl_states.read(path, "ctx", JOB)
    assert list(got) == [k for k, _ in kept[:-1]]  # the other detector's state is not kept
    for key, saved in kept[:-1]:
        for role in ("detector", "masked"):
            if getattr(saved, role) is None:
                assert getattr(got[key], role) is None
            else:
                same(getattr(got[key], role), getattr(saved, role))
    assert sum(s.masked is not None for s in got.values()) == 3
    assert mdl_states.read(tmp_path / "none.states", "ctx", JOB) == {}


def test_a_read_state_resumes_as_the_saved_one():
    values = [2e6] + [1e6 * (1.1 if 30 <= i < 60 else 1.0) + i for i in range(99)]
    saved = MdlState.start(values[:80]).saved()
    back = mdl_states._decode(mdl_states.encode("c", JOB, [(SeriesKey(JOB, "t", "mrr"), SearchStates(saved))]),
                              "c", JOB)
    state = MdlState.resume(back[SeriesKey(JOB, "t", "mrr")].detector, values)
    assert state.saved().resumed == 80
    assert state.groups() == MdlState.start(values).groups()


def test_a_pickled_state_comes_back_to_the_bit_and_resumes_as_the_saved_one():
    """As a pool's worker gets a series' state and sends back the next (``MdlSaved.__reduce__``)."""
    for _, both in states()[:-1]:
        for saved in (both.detector, both.masked):
            if saved is not None:
                back = pickle.loads(pickle.dumps(dataclasses.replace(saved, resumed=7)))
                same(back, saved)
                assert back.resumed == 7 and len(back.win) == saved.count
    values = [2e6] + [1e6 * (1.1 if 30 <= i < 60 else 1.0) + i for i in range(99)]
    back = pickle.loads(pickle.dumps(MdlState.start(values[:80]).saved()))
    state = MdlState.resume(back, values)
    assert state.saved().resumed == 80 and state.groups() == MdlState.start(values).groups()
    odd = dataclasses.replace(back, win=[1, 2])  # not arrays: pickled as any dataclass
    assert pickle.loads(pickle.dumps(odd)).win == [1, 2]


def test_another_context_or_job_gives_nothing(tmp_path):
    path = tmp_path / "job.states"
    mdl_states.write(path, "ctx", JOB, states())
    assert mdl_states.read(path, "other pal", JOB) == {}
    assert mdl_states.read(path, "ctx", "another-job") == {}


def test_an_older_versions_file_is_not_read_and_is_no_damage(tmp_path, caplog):
    """A pal of the last version kept one state a series (no search field): its file is not
    read (the series are searched in full) and not reported as damaged."""
    path = tmp_path / "job.states"
    mdl_states.write(path, "ctx", JOB, states())
    path.write_bytes(b"pal mdl states 1\n" + path.read_bytes()[len(mdl_states.MAGIC):])
    with caplog.at_level(logging.INFO, logger="pal"):
        assert mdl_states.read(path, "ctx", JOB) == {}
    assert "another version" in caplog.text and "damaged" not in caplog.text


@pytest.mark.parametrize("damage", ["magic", "truncated", "flipped", "header", "counts", "role", "empty"])
def test_a_damaged_file_gives_nothing_and_says_so(tmp_path, caplog, damage):
    path = tmp_path / "job.states"
    mdl_states.write(path, "ctx", JOB, states())
    data = bytearray(path.read_bytes())
    if damage == "magic":
        data[:4] = b"PAR1"
    elif damage == "truncated":
        data = data[:-9]
    elif damage == "flipped":  # one bit of a stdev: the CRC tells
        data[-3] ^= 0x10
    elif damage == "header":
        data[len(mdl_states.MAGIC)] = ord("[")
    elif damage == "counts":  # a run count that does not match the body (CRC and length still right)
        data = bytearray(bytes(data).replace(b'"tests.t1","mrr",0,2,', b'"tests.t1","mrr",0,3,', 1))
    elif damage == "role":  # a third search (CRC and length still right)
        data = bytearray(bytes(data).replace(b'"tests.t1","mrr",0,2,', b'"tests.t1","mrr",2,2,', 1))
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="pal"):
        assert mdl_states.read(path, "ctx", JOB) == {}
    assert "is damaged" in caplog.text and str(path) in caplog.text


def test_no_states_is_a_file_too(tmp_path):
    path = tmp_path / "job.states"
    mdl_states.write(path, "ctx", JOB, [])
    assert mdl_states.read(path, "ctx", JOB) == {}
