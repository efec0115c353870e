"""The per-job CSV download: exact text of a hand-made job, and the cell-by-cell csv.writer form."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pandas as pd

from pal.render.buildinfo import BuildIndex
from pal.render.downloads import job_csv, measured
from pal.render.escape import csv_cell
from pal.render.graphs import time_labels
from tests.render.factory import make_result, times_for

JOB = "csit-vpp-perf-mrr-daily-master-2n-icx"
OTHER = "csit-vpp-perf-mrr-daily-master-3n-alt"


def facts_for(rows: list[tuple[str, int, str | None]]) -> BuildIndex:
    return BuildIndex(pd.DataFrame(rows, columns=["job", "build", "dut_version"]).assign(testbed="tb"), None)


def cell_by_cell(job, results, facts) -> str:
    """The download written one cell at a time with ``csv.writer`` (repr of each finite value)."""
    results = sorted((r for r in results if r.key.job == job), key=lambda r: (r.key.test_id, r.key.metric))
    dates: dict[int, str] = {}
    columns = []
    for r in results:
        col = {}
        for b, t, v in zip(r.builds.tolist(), time_labels(r.times), np.asarray(r.values, float).tolist()):
            dates.setdefault(int(b), t or "")
            col[int(b)] = v
        columns.append(col)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["build", "date", "version", *(csv_cell(f"{r.key.test_id} [{r.key.metric}]") for r in results)])
    for b in sorted(dates):
        vals = [col.get(b, math.nan) for col in columns]
        w.writerow([b, dates[b], csv_cell(facts.get(job, b).version),
                    *(repr(v) if math.isfinite(v) else "" for v in vals)])
    return buf.getvalue()


def test_hand_made_job_exact_text():
    """Series "=b" (first by test id) lacks build 5, has a NaN and an inf, and dates builds 6-8 at 05:00;
    build 5 takes its date from series "t.a,1"; a foreign job's series is left out."""
    a = make_result([1e7, 2.5e7, 100.0, 21752588.29], job=JOB, test_id="t.a,1", first_build=5)
    b = make_result([3.0, math.nan, math.inf], job=JOB, test_id="=b", metric="ndr", first_build=6)
    b.times = times_for(3, np.datetime64("2022-01-02T05:00:00", "ns"))
    other = make_result([7.0], job=OTHER, test_id="t.other", first_build=5)
    facts = facts_for([(JOB, 5, "22.02-rc0~5"), (JOB, 6, "-bad,v"), (JOB, 7, None)])
    assert job_csv(JOB, [a, other, b], facts) == (
        'build,date,version,\'=b [ndr],"t.a,1 [mrr]"\n'
        "5,2022-01-01 03:00,22.02-rc0~5,,10000000.0\n"
        "6,2022-01-02 05:00,\"'-bad,v\",3.0,25000000.0\n"
        "7,2022-01-03 05:00,,,100.0\n"
        "8,2022-01-04 05:00,,,21752588.29\n"
    )


def test_job_without_series_is_the_header_only():
    assert job_csv(JOB, [make_result([1.0], job=OTHER)], facts_for([])) == "build,date,version\n"


def test_random_jobs_match_cell_by_cell():
    rng = np.random.default_rng(9)
    results = []
    for i in range(40):
        n = int(rng.integers(1, 30))
        values = np.round(rng.normal(2e7, 1e6, n), int(rng.integers(0, 4)))
        values[rng.random(n) < 0.1] = math.nan
        values[rng.random(n) < 0.02] = -math.inf
        values[rng.random(n) < 0.05] = rng.choice([0.0, -0.0, 1e-05, 1e16, 12.0])
        first = int(rng.integers(1, 20))
        r = make_result(values, job=JOB if i % 3 else OTHER, test_id=f"tests.x.t{i % 17}", metric=["mrr", "ndr"][i % 2],
                        first_build=first)
        keep = np.sort(rng.choice(n, size=max(1, n - int(rng.integers(0, 3))), replace=False))  # gaps in builds
        r.builds, r.values = r.builds[keep], r.values[keep]
        r.times = times_for(len(keep), np.datetime64("2022-01-01T03:00", "ns") + np.timedelta64(int(first) * 3600, "s"))
        if i == 5:
            r.times[0] = np.datetime64("NaT")
        results.append(r)
    facts = facts_for([(JOB, b, f"v{b}" if b % 4 else None) for b in range(60)])
    for job in (JOB, OTHER):
        assert job_csv(job, results, facts) == cell_by_cell(job, results, facts)


def test_values_are_written_at_measurement_precision_not_float_noise():
    """Averages of trials carry float noise in the 17th digit; the download keeps 12 significant digits."""
    trials = [5426666.277 + d for d in (0.1, -0.1, 0.2, -0.2)]
    mean = sum(trials) / len(trials)
    noisy = [5426666.277000001, 4225308.1899999995, mean, 15.0, 1e-05, 100.0]
    r = make_result(noisy, job=JOB, test_id="t.a", first_build=1)
    text = job_csv(JOB, [r], facts_for([]))
    cells = [line.split(",")[3] for line in text.splitlines()[1:]]
    assert cells == ["5426666.277", "4225308.19", "5426666.277", "15.0", "1e-05", "100.0"]
    values = np.random.default_rng(3).normal(1e7, 1e6, 1000)
    back = measured(values)
    assert np.all(np.abs(back - values) <= 5e-12 * np.abs(values))  # rounding only, never more
    digits = [len(repr(float(v)).replace(".", "").lstrip("0")) for v in back]
    assert max(digits) <= 12  # the shortest text of each value has at most 12 significant digits


def _job(values_by_test: dict[str, list[float]], first_build: int) -> list:
    """A job's series from ``first_build`` on, a build a day (build b on day b: its date stays)."""
    out = []
    for t, v in values_by_test.items():
        r = make_result(v, job=JOB, test_id=t, first_build=first_build)
        r.times = times_for(len(v), np.datetime64("2025-01-01T03:00", "ns") + np.timedelta64(first_build, "D"))
        out.append(r)
    return out


def _counting(monkeypatch) -> list[int]:
    """The number of cells formatted by each ``float_text`` call of the downloads."""
    from pal.render import downloads

    counted: list[int] = []
    real = downloads.csvtext.float_text

    def float_text(values):
        counted.append(len(values))
        return real(values)

    monkeypatch.setattr(downloads.csvtext, "float_text", float_text)
    return counted


def test_a_slid_job_takes_its_unchanged_rows_from_the_last_file(monkeypatch):
    """A day later the window lost build 3 and gained build 9, and build 6 was parsed again with
    another value: only builds 6 and 9 are formatted (2 rows x 3 series), the others come from
    yesterday's text, and the file is the one formatted from scratch."""
    from pal.render.downloads import job_csv_file

    rng = np.random.default_rng(4)
    day = {f"t.{k}": list(np.round(rng.normal(2e7, 1e6, 7), 3)) for k in "abc"}  # builds 3..9
    facts = facts_for([(JOB, b, f"25.02-rc0~{b}") for b in range(1, 12)])
    yesterday = job_csv_file(JOB, _job({t: v[:6] for t, v in day.items()}, 3), facts)
    today_values = {t: v[1:] for t, v in day.items()}
    today_values["t.b"][2] += 1.0  # build 6
    today = _job(today_values, 4)
    counted = _counting(monkeypatch)
    got = job_csv_file(JOB, today, facts, yesterday)
    assert counted == [2 * 3]
    assert got.text == job_csv(JOB, today, facts) == cell_by_cell(JOB, today, facts)
    assert sorted(map(int, got.index["rows"])) == [4, 5, 6, 7, 8, 9]
    lo, hi = got.index["rows"]["9"][1:]
    assert got.text[lo:hi] == got.text.splitlines(keepends=True)[-1] and got.index["length"] == len(got.text)
    # nothing new: every row is yesterday's
    counted.clear()
    assert job_csv_file(JOB, today, facts, got).text == got.text and counted == []


def test_rows_are_formatted_again_when_the_last_file_does_not_fit(monkeypatch):
    """Another header (a new series), an index that does not fit its text (a file cut short, a row
    moved, a row's place naming another build's row), a version changed: those rows (or all) are
    formatted again, and the file is right."""
    from pal.render.downloads import JobCsv, job_csv_file

    values = {"t.a": [1.0, 2.0, 3.0], "t.b": [4.0, 5.0, 6.0]}
    facts = facts_for([(JOB, b, "v1") for b in (1, 2, 3)])
    last = job_csv_file(JOB, _job(values, 1), facts)
    counted = _counting(monkeypatch)
    wider = _job({**values, "t.c": [7.0, 8.0, 9.0]}, 1)
    assert job_csv_file(JOB, wider, facts, last).text == cell_by_cell(JOB, wider, facts) and counted == [9]
    same = _job(values, 1)
    for broken in (JobCsv(last.text[:-1], last.index), JobCsv(last.text, {**last.index, "length": 1}),
                   JobCsv(last.text, {**last.index, "rows": {**last.index["rows"], "2": ["x", 0, 5]}})):
        counted.clear()
        assert job_csv_file(JOB, same, facts, broken).text == last.text and counted == [6]
    rows = last.index["rows"]
    swapped = JobCsv(last.text, {**last.index, "rows": {**rows, "2": rows["2"][:1] + rows["3"][1:]}})
    counted.clear()
    assert job_csv_file(JOB, same, facts, swapped).text == last.text and counted == [2]  # build 2's row
    other_version = facts_for([(JOB, 1, "v1"), (JOB, 2, "v2"), (JOB, 3, "v1")])
    counted.clear()
    assert job_csv_file(JOB, same, other_version, last).text == cell_by_cell(JOB, same, other_version)
    assert counted == [2]


def test_another_arrow_formats_every_row_again(monkeypatch):
    """Arrow prints the numbers (``csvtext.float_text``): a file made with another Arrow is not
    taken from, however its rows' cells compare."""
    from pal.render import downloads
    from pal.render.downloads import job_csv_file

    values = {"t.a": [1.5, 2.5, 3.5], "t.b": [4.0, 5.0, 6.0]}
    facts = facts_for([(JOB, b, "v1") for b in (1, 2, 3)])
    last = job_csv_file(JOB, _job(values, 1), facts)
    counted = _counting(monkeypatch)
    assert job_csv_file(JOB, _job(values, 1), facts, last).text == last.text and counted == []
    monkeypatch.setattr(downloads.pa, "__version__", "0.0.0")
    downloads._format_digest.cache_clear()
    try:
        again = job_csv_file(JOB, _job(values, 1), facts, last)
    finally:
        monkeypatch.undo()
        downloads._format_digest.cache_clear()
    assert again.text == last.text and again.index["header"] != last.index["header"] and counted == [6]
