from benchmarks.bench_pipeline import a_day_later
from pal.render.site import SPARE, _fresh_spare


def test_the_measured_runs_find_the_last_site_as_a_daily_run_does(tmp_path):
    """Back to back, a run writes over the site its predecessor replaced; a day later (CI's daily
    run, and the benchmark's measured runs) the render does not: it decides so itself."""
    (tmp_path / SPARE).mkdir()
    assert _fresh_spare(tmp_path) == tmp_path / SPARE
    a_day_later(tmp_path)
    assert _fresh_spare(tmp_path) is None
    a_day_later(tmp_path / "no-runs-yet")  # no spare: nothing to date

