"""The accuracy harness: labelled series, scoring, and every configuration scored on the path that runs.

Beside the pipeline, not in it: ``pal evaluate`` and the benchmarks use it; nothing in ``pal run``
imports it. Its ``run`` candidates call ``pal.analysis.series.analyse_one``, the function that
decides what ``pal run`` alerts on.
"""
