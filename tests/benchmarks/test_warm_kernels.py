import os

from benchmarks.bench_pipeline import warm_kernels


def test_the_warm_up_run_leaves_every_kernel_module_in_the_numba_cache(tmp_path, monkeypatch, capsys):
    """The pipeline benchmark's measured runs load their kernels from the disk cache: its warm-up
    run (one small ``pal run``) compiles those of the analysis and of the drill-downs into it."""
    cache = tmp_path / "numba-cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))  # empty: the run compiles, its children too
    warm_kernels(None, tmp_path / "data", "this code")
    indexed = {name.split(".")[0] for _, _, files in os.walk(cache) for name in files if name.endswith(".nbi")}
    assert {"mdl_kernel", "filters_kernel", "bands_kernel", "text_kernel"} <= indexed
    assert "[this code] kernels compiled or loaded:" in capsys.readouterr().out
