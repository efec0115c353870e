"""pal: performance trending and analysis for network data-plane benchmarks."""

__version__ = "0.1.0"
