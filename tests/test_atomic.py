"""Batches of atomic writes (``pal.atomic.write_files_atomic``): every file whole or as it was."""

from __future__ import annotations

import os

import pytest

import pal.atomic
from pal.atomic import TMP_MARK, write_files_atomic


def _temps(root):
    return sorted(p.name for p in root.rglob("*") if TMP_MARK in p.name)


def test_a_batch_writes_every_file_and_syncs_each_directory_once(tmp_path, monkeypatch):
    synced = []
    real = pal.atomic._fsync_dir
    monkeypatch.setattr(pal.atomic, "_fsync_dir", lambda d: (synced.append(d), real(d)))
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "1.csv").write_bytes(b"old contents, longer than the new ones")
    files = [(tmp_path / "a" / "1.csv", b"one"), (tmp_path / "a" / "2.csv", b"two"), (tmp_path / "b" / "1.csv", b"")]
    assert write_files_atomic(files) == {}
    assert [p.read_bytes() for p, _ in files] == [b"one", b"two", b""]
    assert synced == [tmp_path / "a", tmp_path / "b"]
    assert _temps(tmp_path) == []


def test_a_file_that_cannot_be_written_keeps_its_place_and_the_others_are_written(tmp_path):
    (tmp_path / "d" / "2.csv").mkdir(parents=True)  # a directory where a file goes: its rename fails
    (tmp_path / "e").write_text("a file where a directory goes: its temp file cannot be made")
    files = [(tmp_path / "d" / "1.csv", b"one"), (tmp_path / "d" / "2.csv", b"two"),
             (tmp_path / "e" / "3.csv", b"three"), (tmp_path / "d" / "4.csv", b"four")]
    errors = write_files_atomic(files)
    assert sorted(errors) == [tmp_path / "d" / "2.csv", tmp_path / "e" / "3.csv"]
    assert all(isinstance(e, OSError) for e in errors.values())
    assert (tmp_path / "d" / "1.csv").read_bytes() == b"one" and (tmp_path / "d" / "4.csv").read_bytes() == b"four"
    assert (tmp_path / "d" / "2.csv").is_dir() and (tmp_path / "e").read_text().startswith("a file")
    assert _temps(tmp_path) == []


def test_an_interrupted_batch_leaves_each_file_old_or_new_and_no_temp_files(tmp_path, monkeypatch):
    for n in (1, 2, 3):
        (tmp_path / f"{n}.csv").write_bytes(b"old")
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(pal.atomic.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        write_files_atomic([(tmp_path / f"{n}.csv", b"new") for n in (1, 2, 3)])
    assert [(tmp_path / f"{n}.csv").read_bytes() for n in (1, 2, 3)] == [b"new", b"old", b"old"]
    assert _temps(tmp_path) == []
