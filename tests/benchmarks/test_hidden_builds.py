from benchmarks.bench_pipeline import hide, newest, reveal


def test_two_newest_builds_are_hidden_then_revealed_one_per_run(tmp_path):
    """The benchmarks' cold run sees neither of a job's two newest builds; the first incremental
    run gets the older one back, the measured one the newest."""
    history, hidden = tmp_path / "history", tmp_path / "hidden"
    for job, builds in (("job-a", (1, 2, 9, 10)), ("job-b", (5, 7, 30))):
        for b in builds:
            (history / job / str(b)).mkdir(parents=True)
    (history / "job-a" / "notes").mkdir()  # not a build
    assert [(p.parent.name, p.name) for p in newest(history, 2)] == [
        ("job-a", "9"), ("job-a", "10"), ("job-b", "7"), ("job-b", "30")]

    def present() -> dict[str, list[int]]:
        return {j.name: sorted(int(b.name) for b in j.iterdir() if b.name.isdigit()) for j in sorted(history.iterdir())}

    hide(history, hidden, 2)
    assert present() == {"job-a": [1, 2], "job-b": [5]}
    reveal(history, hidden, oldest_only=True)
    assert present() == {"job-a": [1, 2, 9], "job-b": [5, 7]}
    reveal(history, hidden)
    assert present() == {"job-a": [1, 2, 9, 10], "job-b": [5, 7, 30]}
    hide(history, hidden)  # the default: the newest one
    assert present() == {"job-a": [1, 2, 9], "job-b": [5, 7]}
    reveal(history, hidden)
    reveal(history, hidden)  # nothing hidden: nothing moves
    assert present() == {"job-a": [1, 2, 9, 10], "job-b": [5, 7, 30]}


def test_one_job_revealed_as_its_pt_run_ends(tmp_path):
    """The one-job run: after the first incremental run, only one job's newest build comes back."""
    history, hidden = tmp_path / "history", tmp_path / "hidden"
    for job, builds in (("job-a", (1, 2, 9, 10)), ("job-b", (5, 7, 30))):
        for b in builds:
            (history / job / str(b)).mkdir(parents=True)
    hide(history, hidden, 2)
    reveal(history, hidden, oldest_only=True)
    reveal(history, hidden, job="job-a")
    assert sorted(int(b.name) for b in (history / "job-a").iterdir()) == [1, 2, 9, 10]
    assert sorted(int(b.name) for b in (history / "job-b").iterdir()) == [5, 7]
    reveal(history, hidden, job="job-c")  # a job with nothing hidden: nothing moves
    reveal(history, hidden)
    assert sorted(int(b.name) for b in (history / "job-b").iterdir()) == [5, 7, 30]
