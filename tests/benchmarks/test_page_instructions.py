"""``benchmarks.page_instructions``: the measured work runs, and a missing valgrind is said."""

from __future__ import annotations

from benchmarks import page_instructions


def test_the_measured_pages_are_written(tmp_path):
    page_instructions.write_pages(runs=20, pages=3, anomalies=True, out=tmp_path)
    pages = sorted((tmp_path / "s").iterdir())
    assert len(pages) == 3 and all(p.read_text("utf-8").startswith("<!DOCTYPE html>") for p in pages)


def test_no_valgrind_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setattr(page_instructions.shutil, "which", lambda name: None)
    assert page_instructions.main(["--pages", "2"]) == 2
    assert "valgrind not found" in capsys.readouterr().err
