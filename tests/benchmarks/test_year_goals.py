import argparse

from benchmarks.bench_year import print_tables


def _run(wall: float, mb: float) -> dict:
    return {"wall": wall, "cpu": 2 * wall, "mb": mb}


def _args(**kw) -> argparse.Namespace:
    base = dict(jobs=12, builds=365, tests=3000, worker_memory="1GB", reference="c6149c1")
    return argparse.Namespace(**{**base, **kw})


def test_the_year_goals_are_the_median_daily_run_against_the_reference(capsys) -> None:
    results = {
        "single": {"cold": _run(300.0, 1641), "incremental, first": _run(23.5, 1672),
                   "incremental, copy 1": _run(25.0, 1650), "incremental, copy 2": _run(20.0, 1660),
                   "incremental": _run(21.3, 1668)},
        "cluster": {"incremental, first": _run(49.8, 1761), "incremental": _run(46.9, 1699)},
        "reference": {"cold": _run(900.0, 3200), "incremental, first": _run(110.0, 3400),
                      "incremental": _run(106.5, 3350)},
    }
    print_tables(results, {11: 774_000_000, 12: 748_000_000}, True, _args())
    out = capsys.readouterr().out
    # the median of the three daily runs, 21.3 s, against the reference's 106.5 s: 0.20
    assert "| incremental, single machine | 21.3 s (median of 3: 25.0, 20.0, 21.3) | <= 30 s | 106.5 s | 0.20 | yes |" in out
    # the largest process tree of this code's single-machine runs, against the reference's largest
    assert "| 1672 MB (incremental, first) | <= 2000 MB | 3400 MB | 0.49 | yes |" in out
    assert "| 774 MB, 748 MB | <= 1000 MB | - | - | yes |" in out
    assert "| yes | identical | - | - | yes |" in out
    assert "| Dask cluster: incremental, against the single machine | 46.9 s | reported | 21.3 s (single machine) | 2.20 | - |" in out
    assert "| incremental, copy 2 | this, single machine | 20.0 | 40.0 | 1660 |" in out


def test_a_goal_missed_says_so_and_no_reference_leaves_its_columns_empty(capsys) -> None:
    results = {"single": {"incremental": _run(31.0, 2100)}, "cluster": {}}
    print_tables(results, {}, False, _args(reference="none"))
    out = capsys.readouterr().out
    assert "| incremental, single machine | 31.0 s | <= 30 s | - | - | NO |" in out
    assert "| 2100 MB (incremental) | <= 2000 MB | - | - | NO |" in out
    assert "| Dask cluster: per-worker peak RSS |  | <= 1000 MB | - | - | NO |" in out
    assert "| NO | identical | - | - | NO |" in out


def test_the_reference_runs_only_where_its_memory_fits() -> None:
    from benchmarks.bench_year import reference_fits

    year = 12 * 365 * 3000  # 13.1 M samples: 1 GB + 1,500 bytes a sample = 20.7 GB (it took 20.6 GB)
    assert reference_fits(year, 24 * 10**9)  # 20.7 GB <= 0.9 x 24 GB
    assert not reference_fits(year, 22 * 10**9)  # 20.7 GB > 19.8 GB
    assert reference_fits(12 * 36 * 300, 2 * 10**9)  # make bench's tenth of a year: 1.2 GB (it took 0.6 GB)
    assert not reference_fits(12 * 36 * 300, 1 * 10**9)
