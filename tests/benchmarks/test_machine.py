import os
from pathlib import Path

from benchmarks.bench_pipeline import machine


def test_the_figures_name_the_cpus_they_were_taken_on() -> None:
    text = machine()
    assert text.startswith(f"{os.cpu_count()} CPUs")
    info = Path("/proc/cpuinfo")
    models = [ln.split(":", 1)[1].strip() for ln in info.read_text().splitlines()
              if ln.startswith("model name")] if info.exists() else []
    if models:
        assert text == f"{os.cpu_count()} CPUs ({models[0]})"
    else:
        assert text == f"{os.cpu_count()} CPUs"
