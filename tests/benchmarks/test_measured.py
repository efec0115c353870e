from benchmarks.bench_pipeline import measured


def test_a_goal_figure_is_the_median_of_the_run_and_its_copies() -> None:
    runs = {"incremental, first": {"wall": 1.0}, "incremental, one job": {"wall": 2.0},
            "incremental, copy 1": {"wall": 12.0}, "incremental, copy 2": {"wall": 9.0}, "incremental": {"wall": 10.0},
            "nothing new": {"wall": 1.5}}
    assert measured(runs, "incremental", "wall") == (10.0, [12.0, 9.0, 10.0])
    assert measured(runs, "nothing new", "wall") == (1.5, [1.5])
