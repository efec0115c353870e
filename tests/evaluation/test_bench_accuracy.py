"""The accuracy benchmark's own parts: the oracle table it prints and its saved-run reader."""

import pytest

from benchmarks import bench_accuracy
from pal.evaluation.datasets import honest
from pal.evaluation.oracle import bound, calibrated_z


def test_oracle_only_prints_the_bound_of_each_seed(capsys):
    assert bench_accuracy.main(["--oracle-only", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    series = honest(seed=2)
    b = bound(series, calibrated_z(series, 0.05), 3, 1.0)
    row = next(line for line in out.splitlines() if line.startswith("| 2 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:5] == [f"{b['z_min']:.3f}", f"{b['false_alarms_per_1k']:.3f}", f"{b['recall']:.3f}",
                          f"{b['f1_bound']:.3f}"]
    assert "calibrated on the tuning seed 1" in out  # the second table: seed 1's threshold for every seed


def test_an_unreadable_saved_run_names_its_file(tmp_path):
    empty = tmp_path / "off_2.json"
    empty.write_text("")
    with pytest.raises(SystemExit, match="off_2.json: not a saved"):
        bench_accuracy.main(["--from-json", str(empty)])
    other = tmp_path / "other.json"
    other.write_text('{"name": "x"}')
    with pytest.raises(SystemExit, match="other.json: expected a list"):
        bench_accuracy.main(["--from-json", str(other)])
