import csv
import dataclasses
import gc
import io
import json
import os
import re
import subprocess
import time
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from pal.alerts import alert_samples
from pal.memory import RUN_GC_THRESHOLDS
from pal.render import graphs, render_site, site as site_mod
from pal.report import RunReport
from tests.render.conftest import EVIL, RANGE_URL, render, site_inputs
from tests.render.factory import make_result, make_spec


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.style_attrs, self.inline_scripts, self.rows = [], 0, 0, {}
        self.data_blocks: list[tuple[str, str]] = []  # (data-series, text) of JSON data blocks
        self._table = None
        self._data = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.style_attrs += "style" in a or any(k.startswith("on") for k in a)
        if tag == "style":
            self.style_attrs += 1
        if tag == "script":
            if "src" in a:
                self.refs.append(a["src"])
            elif a.get("type") == "application/json":  # data, never run (CSP does not apply)
                self._data = [a.get("data-series", ""), ""]
            else:
                self.inline_scripts += 1
        for k in ("href", "src"):
            if k in a and tag != "script":
                self.refs.append(a[k])


    def handle_data(self, data):
        if self._data is not None:
            self._data[1] += data

    def handle_endtag(self, tag):
        if tag == "script" and self._data is not None:
            self.data_blocks.append((self._data[0], self._data[1]))
            self._data = None


def parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text("utf-8"))
    return p


def all_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_page_is_script_and_style_free_inline_and_every_local_link_resolves(site):
    root, _, _ = site
    pages = sorted(root.rglob("*.html"))
    assert len(pages) == 1 + 5 + 3 + 2  # index, drill-downs, group pages (ip4/x710, ip4/xxv710, l2), stats
    for page in pages:
        p = parse(page)
        assert p.style_attrs == 0 and p.inline_scripts == 0, page
        if page.parent.name == "s":  # a drill-down carries its graph data: one JSON block, nothing that runs
            assert len(p.data_blocks) == 1 and f"s/{p.data_blocks[0][0]}.html" == f"s/{page.name}", page
            text = p.data_blocks[0][1]
            assert "<" not in text and json.loads(text)["b"], page
        else:
            assert p.data_blocks == [], page
        for ref in p.refs:
            if ref.startswith("http"):
                assert ref.startswith("https://jenkins.example/job/") or ref == RANGE_URL.replace("&", "&amp;") or ref == RANGE_URL
                continue
            path, _, frag = ref.partition("#")
            target = (page.parent / path).resolve() if path else page
            assert target.is_file(), (page, ref)
            if frag:
                assert f'id="{frag}"' in target.read_text("utf-8"), (page, ref)


def test_index_has_csit_tables_rows_and_counts(site):
    root, results, _ = site
    html = (root / "index.html").read_text("utf-8")
    titles = re.findall(r"<h3[^>]*>(.*?)</h3>", html)
    assert titles == ["2n-icx MRR 1C", "2n-icx MRR 2C", "2n-icx NDR 1C", "2n-icx Latency 1C", "2n-icx failed tests"]
    # regressions: the MRR drop and latency 20 -> 30 us (lower is better), and the open latency alert;
    # the MRR alert row is "acked"
    assert html.count('<tr class="reg"') == 3
    assert html.count('<tr class="prog"') == 1 and html.count('<tr class="acked"') == 1
    assert re.search(r'id="n-tests">4<', html) and re.search(r'id="n-series">5<', html)
    assert re.search(r'id="n-failed">1<', html) and re.search(r'id="n-missing">1<', html)
    assert "Trend [µs]" in html and "Trend [Mpps]" in html
    # first MRR 1C row: the regression (17 Mpps now, 10 runs), before the flat one
    rows = re.findall(r'<tr[^>]*data-cores="1C"><td><a href="s/([^"]+)\.html">', html)
    assert rows[0] == results[0].key.slug()


def test_untrusted_text_is_escaped_in_every_output(site):
    root, results, _ = site
    evil_slug = results[2].key.slug()
    group_svg = next((root / "svg").glob("g-2n-icx-10ge2p1x710-ip4-*.svg")).relative_to(root)
    group_data = str(next((root / "data" / "g").glob("2n-icx-10ge2p1x710-ip4-*.js")).relative_to(root))
    for rel in ("index.html", f"s/{evil_slug}.html", str(group_svg), group_data,
                f"s/{results[1].key.slug()}.html", f"s/{results[0].key.slug()}.html"):
        text = (root / rel).read_text("utf-8")
        assert EVIL not in text, rel
    # the drill-down's inline SVG: its title is escaped text inside the <svg> element
    page = (root / f"s/{evil_slug}.html").read_text("utf-8")
    inline = page[page.index('<div class="static-graph"'):page.index("</svg>")]
    assert '<text x="380.0" y="16" text-anchor="middle" font-size="13">10ge2p1x710-=1+&lt;script&gt;' in inline
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (root / "index.html").read_text("utf-8")
    assert "\\u003cscript\\u003e" in (root / group_data).read_text("utf-8")
    block = parse(root / f"s/{evil_slug}.html").data_blocks[0][1]  # the drill-down's own copy of the data
    assert "\\u003cscript\\u003e" in block and json.loads(block)["name"].endswith(EVIL)


def test_csv_download_has_the_trended_values(site):
    root, results, _ = site
    (csv_path,) = [p for p in (root / "downloads").iterdir() if p.name.startswith("csit-vpp-perf-mrr")]
    rows = list(csv.reader(io.StringIO(csv_path.read_text("utf-8"))))
    header = rows[0]
    assert header[:3] == ["build", "date", "version"]
    assert f"{results[2].key.test_id} [mrr]" in header  # CSV is not HTML: text kept as is (starts with "t")
    assert len(rows) == 1 + 40
    first = rows[1]
    assert first[:3] == ["100", "2022-01-01 03:00", "22.02-rc0~100-g88a9c0e02"]
    col = header.index(f"{results[0].key.test_id} [mrr]")
    assert float(first[col]) == float(f"{results[0].values[0]:.12g}")  # 12 significant digits
    gap_col = header.index(f"{results[1].key.test_id} [mrr]")
    assert rows[1 + 12][gap_col] == ""  # missing stays empty, never 0


def test_drill_down_shows_evidence_with_build_links(site):
    root, results, _ = site
    html = (root / "s" / f"{results[0].key.slug()}.html").read_text("utf-8")
    a = results[0].changes[0]
    assert a.first_bad_build == 130 and a.last_good_build == 129
    assert '<a href="https://jenkins.example/job/csit-vpp-perf-mrr-daily-master-2n-icx/130">mrr-daily-build-130</a>' in html
    assert '<a href="https://jenkins.example/job/csit-vpp-perf-mrr-daily-master-2n-icx/129">mrr-daily-build-129</a>' in html
    assert f"{a.before / 1e6:.2f} &#177; {a.before_stdev / 1e6:.2f}" in html  # "±": pages are ASCII
    assert f"{a.change * 100:.2f}" in html
    assert "acknowledged: known &lt;script&gt;" in html  # the acked alert and its snippet
    ndr = (root / "s" / f"{results[3].key.slug()}.html").read_text("utf-8")
    assert "TMA &#177; 3&#183;TMSD" in ndr and unescape(ndr).count("TMA ± 3·TMSD") == 2  # caption, SVG legend
    lat = (root / "s" / f"{results[4].key.slug()}.html").read_text("utf-8")
    assert "(lower is better)" in lat


def test_pages_of_ascii_series_are_ascii(site):
    """The templates and the SVG write their typography as references: a drill-down of a series
    whose names and units are ASCII is ASCII all along, which makes joining and encoding it copies
    (xml_text). The latency page's unit is "µs": that one page holds it."""
    root, results, _ = site
    pages = {p.name: p.read_bytes() for d in ("s", "g") for p in (root / d).iterdir() if p.suffix == ".html"}
    pages["index.html"] = (root / "index.html").read_bytes()
    latency = f"{results[4].key.slug()}.html"
    wide = sorted(name for name, body in pages.items() if not body.isascii())
    assert latency in wide and f"{results[0].key.slug()}.html" not in wide
    assert all("µ".encode() in pages[name] for name in wide)  # only the unit, nowhere else
    assert len(pages) - len(wide) >= 4


def test_failure_message_is_on_the_drill_down(site):
    root, results, _ = site
    html = (root / "s" / f"{results[1].key.slug()}.html").read_text("utf-8")
    assert "=cmd|&#39; /C calc&#39;!A0 &lt;script&gt;" in html
    assert html.count("Traffic generator timed out") == 2  # builds 113 and 112 (125 has its own message)


def test_plotly_is_shipped_once_and_pages_reference_it(site):
    root, _, _ = site
    assert list(root.rglob("plotly*.js")) == [root / "static" / "plotly.min.js"]
    assert (root / "static" / "plotly.min.js").stat().st_size > 1_000_000


def test_rerun_is_byte_identical_and_pool_gives_the_same_bytes(tmp_path, monkeypatch):
    render(tmp_path / "a", workers=1)
    monkeypatch.setattr(site_mod, "POOL_MIN_SERIES", 1)
    render(tmp_path / "b", workers=2)
    a, b = all_files(tmp_path / "a" / "site"), all_files(tmp_path / "b" / "site")
    assert a.keys() == b.keys() and all(a[k] == b[k] for k in a)
    render(tmp_path / "a", workers=1)
    assert all_files(tmp_path / "a" / "site") == a
    site_mod.wait_for_cleanup(tmp_path / "a")
    # no temporary directory left behind: the site and the one it replaced, the next run's spare
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [".site-spare", "site"]


def test_a_pool_started_ahead_draws_the_same_site_and_stays_the_callers(tmp_path):
    """The run starts the render's pool before it analyses (``render_pool``): the site is the
    one a pool of the render's own makes, and the pool is left running for its owner to end."""
    render(tmp_path / "own", workers=1)
    pool = site_mod.render_pool(2)
    assert pool is not None
    try:
        render(tmp_path / "ahead", workers=2, pool=pool)
        assert all_files(tmp_path / "ahead" / "site") == all_files(tmp_path / "own" / "site")
        assert pool.submit(os.getpid).result(timeout=60) != os.getpid()  # still usable: not shut down
        # its worker collects as the run does (pal.memory.use_sparse_gc), whatever this process does
        assert pool.submit(gc.get_threshold).result(timeout=60) == RUN_GC_THRESHOLDS != gc.get_threshold()
    finally:
        pool.shutdown()
    assert site_mod.render_pool(1) is None  # one core: this process draws alone


def test_incremental_render_keeps_unchanged_pages(tmp_path):
    index, results, _ = render(tmp_path)
    root = index.parent
    kept, redone = results[1].key, results[0].key
    for key in (kept, redone):
        (root / "s" / f"{key.slug()}.html").write_text("previous", "utf-8")
    # group graphs: 10ge2p1x710 ip4 holds no changed series, 25ge2p1xxv710 ip4 holds the changed one
    kept_svg = next((root / "svg").glob("g-2n-icx-10ge2p1x710-ip4-*.svg"))
    redone_svg = next((root / "svg").glob("g-2n-icx-25ge2p1xxv710-ip4-*-0.svg"))
    for p in (kept_svg, redone_svg):
        p.write_text("previous", "utf-8")
    _, _, report = render(tmp_path, changed={redone})
    assert (root / "s" / f"{kept.slug()}.html").read_text("utf-8") == "previous"
    assert (root / "s" / f"{redone.slug()}.html").read_text("utf-8") != "previous"
    assert kept_svg.read_text("utf-8") == "previous" and redone_svg.read_text("utf-8") != "previous"
    assert report.counts["render.series_pages"] == 1 and report.counts["render.series_reused"] == 4
    # the changed group's data file holds every member, the kept ones' data made again: as a full render's
    full, _, _ = render(tmp_path / "full")
    data = sorted(p.relative_to(root) for p in (root / "data" / "g").iterdir())
    assert len(data) == 3 and data == sorted(p.relative_to(full.parent) for p in (full.parent / "data" / "g").iterdir())
    for rel in data:
        assert (root / rel).read_bytes() == (full.parent / rel).read_bytes(), rel
    assert (root / next(r for r in data if "25ge2p1xxv710-ip4" in r.name)).read_text("utf-8").count("PAL.series[") == 3


def test_failed_render_keeps_the_previous_site(tmp_path, monkeypatch):
    index, _, _ = render(tmp_path)
    before = all_files(index.parent)

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(site_mod, "_write_index", boom)
    with pytest.raises(RuntimeError):
        render(tmp_path)
    assert all_files(index.parent) == before
    site_mod.wait_for_cleanup(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_other_work_runs_while_the_pool_draws_and_its_failure_keeps_the_previous_site(tmp_path, monkeypatch):
    """``meanwhile`` (the run's alert outputs) runs once the pool has its chunks: the same site
    comes out, and an exception from it abandons the new site like a render failure."""
    monkeypatch.setattr(site_mod, "POOL_MIN_SERIES", 1)
    render(tmp_path / "plain", workers=2)
    seen = []

    def other_work():
        seen.append(sorted(p.name for p in (tmp_path / "with").iterdir() if p.name.startswith(site_mod.NEW_PREFIX)))

    index, _, _ = render(tmp_path / "with", workers=2, meanwhile=other_work)
    assert len(seen) == 1 and len(seen[0]) == 1  # called once, while the new site was being written
    assert all_files(index.parent) == all_files(tmp_path / "plain" / "site")
    before = all_files(index.parent)

    def boom():
        raise OSError("exports: disk full")

    with pytest.raises(OSError, match="disk full"):
        render(tmp_path / "with", workers=2, meanwhile=boom)
    assert all_files(index.parent) == before
    site_mod.wait_for_cleanup(tmp_path / "with")
    assert [p.name for p in (tmp_path / "with").iterdir()] == ["site"]


def test_previous_site_becomes_the_spare_and_leftovers_of_a_killed_run_are_deleted(tmp_path):
    index, results, _ = render(tmp_path)
    old_page = index.parent / "s" / f"{results[0].key.slug()}.html"
    first = old_page.stat().st_ino
    leftover = tmp_path / ".site-old-killed" / "site" / "s"
    leftover.mkdir(parents=True)
    (leftover / "x.html").write_text("old", "utf-8")
    # a run killed while rendering: its writer's pid is gone (a reaped child's pid)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f".site-new-{dead.pid}" / "s").mkdir(parents=True)
    # a render in progress in a live process is left alone
    live = tmp_path / f".site-new-{os.getppid()}"
    live.mkdir()
    index, _, _ = render(tmp_path)
    site_mod.wait_for_cleanup(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "site", ".site-spare"])
    # the page at the same path is the new render's file, not the old one
    assert old_page.is_file() and old_page.stat().st_ino != first
    # the replaced site is the spare, whole
    assert (tmp_path / ".site-spare" / old_page.relative_to(index.parent)).stat().st_ino == first


def test_a_render_writes_over_the_spares_files_but_never_over_one_the_live_site_shares(tmp_path):
    """The third render takes its files' inodes from the first site (the spare), and its bytes
    are a fresh render's. A page the second render kept is a hard link the live site shares
    with the spare: it is replaced, not written over, so the live site never changes under its
    readers."""
    index, results, _ = render(tmp_path)
    root = index.parent
    kept, redone = results[1].key, results[0].key
    kept_rel, redone_rel = f"s/{kept.slug()}.html", f"s/{redone.slug()}.html"
    (root / kept_rel).write_text("kept since the first site", "utf-8")
    first_inodes = {rel: (root / rel).stat().st_ino for rel in all_files(root)}
    render(tmp_path, changed={redone})  # keeps the page: a hard link to the first site's file
    spare = tmp_path / ".site-spare"
    assert (spare / kept_rel).stat().st_ino == (root / kept_rel).stat().st_ino == first_inodes[kept_rel]
    second = all_files(root)
    second_kept = (root / kept_rel).stat().st_ino
    shared = {rel for rel in second if (root / rel).stat().st_ino == first_inodes[rel]}  # the pages and graphs kept
    assert kept_rel in shared and redone_rel not in shared
    render(tmp_path)  # every page again, over the first site's files
    site_mod.wait_for_cleanup(tmp_path)
    fresh, _, _ = render(tmp_path / "fresh")
    assert all_files(root) == all_files(fresh.parent)
    # the spare is the second site, untouched: its kept page still holds what it held
    assert all_files(spare) == second and (spare / kept_rel).read_text("utf-8") == "kept since the first site"
    assert (spare / kept_rel).stat().st_ino == second_kept
    # the third site's files are the first site's inodes, but the shared ones, which are new
    assert (root / redone_rel).stat().st_ino == first_inodes[redone_rel]
    assert (root / kept_rel).stat().st_ino not in (first_inodes[kept_rel], second_kept)
    new_inodes = {rel for rel in all_files(root) if (root / rel).stat().st_ino != first_inodes.get(rel)}
    assert new_inodes == shared and "static/plotly.min.js" not in shared
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site-spare", "fresh", "site"]


def _drop_from_memory(root) -> bool:
    """Ask the kernel to drop the files under ``root`` from the page cache; whether it did (a
    file system kept in memory, such as tmpfs, cannot)."""
    for p in root.rglob("*"):
        if p.is_file():
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
    probe = root / "probe"  # asked about in its own directory: a probe may read its block back in
    probe.mkdir()
    os.rename(root / "index.html", probe / "index.html")
    return site_mod._in_memory(probe) is False


def test_a_spare_out_of_memory_is_not_written_over_but_replaced(tmp_path, monkeypatch):
    """Its files' last blocks would be read back: creating files costs less. The site is the same."""
    index, _, _ = render(tmp_path)
    render(tmp_path)
    spare = tmp_path / ".site-spare"
    old_inodes = {p.stat().st_ino for p in spare.rglob("*") if p.is_file()}
    assert site_mod._in_memory(spare / "s") is True  # just written
    if not _drop_from_memory(spare):
        pytest.skip("this file system keeps its files in memory")
    decided = []
    real = site_mod._fresh_spare
    monkeypatch.setattr(site_mod, "_fresh_spare", lambda out_dir: decided.append(real(out_dir)) or decided[-1])
    render(tmp_path)  # (the run's own question is the first: a probe may read a block back in)
    assert decided == [None]
    site_mod.wait_for_cleanup(tmp_path)
    assert not old_inodes & {p.stat().st_ino for p in index.parent.rglob("*") if p.is_file()}
    fresh, _, _ = render(tmp_path / "fresh")
    assert all_files(index.parent) == all_files(fresh.parent)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site-spare", "fresh", "site"]


def _render_some(out: Path, drop: int | None = None, **kw) -> tuple[Path, list, RunReport]:
    """``render`` of the site's inputs without the series ``drop``."""
    results, samples, builds, alerts = site_inputs()
    if drop is not None:
        gone = results.pop(drop).key
        alerts = [a for a in alerts if a.key != gone]
    report = RunReport()
    return render_site(out, results, samples, builds, report, make_spec(), alerts, **kw), results, report


def test_the_drill_downs_directory_is_the_spares_and_holds_only_this_renders_pages(tmp_path):
    """The third render takes the first site's ``s/`` whole (its pages keep their inodes); the
    page of a series no longer analysed is not left from it, and the site is a fresh render's."""
    first, results, _ = _render_some(tmp_path)
    gone = tmp_path / "site" / "s" / f"{results[2].key.slug()}.html"
    kept_inode = (first.parent / "s" / f"{results[0].key.slug()}.html").stat().st_ino
    assert gone.is_file()
    _render_some(tmp_path)
    index, _, _ = _render_some(tmp_path, drop=2)
    assert not gone.exists() and (index.parent / "s" / f"{results[0].key.slug()}.html").stat().st_ino == kept_inode
    fresh, _, _ = _render_some(tmp_path / "fresh", drop=2)
    assert all_files(index.parent) == all_files(fresh.parent)
    site_mod.wait_for_cleanup(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site-spare", "fresh", "site"]


def test_a_kept_page_is_the_previous_sites_file_where_the_taken_spare_had_one_too(tmp_path):
    """The spare's ``s/`` holds a page at the path a kept page is linked to: it is replaced by
    the link (never copied over, never written through)."""
    _render_some(tmp_path)
    index, results, _ = _render_some(tmp_path)
    kept = index.parent / "s" / f"{results[1].key.slug()}.html"
    live_inode, text = kept.stat().st_ino, kept.read_bytes()
    assert (tmp_path / site_mod.SPARE / "s" / kept.name).is_file()  # the spare has its own
    _render_some(tmp_path, changed={results[0].key})
    assert kept.stat().st_ino == live_inode and kept.read_bytes() == text and kept.stat().st_nlink == 2
    fresh, _, _ = _render_some(tmp_path / "fresh")
    assert all_files(index.parent) == all_files(fresh.parent)


def test_a_drill_down_that_fails_leaves_no_page_from_the_spare(tmp_path, monkeypatch):
    _render_some(tmp_path)
    _render_some(tmp_path)  # the spare now has every page
    bad = site_inputs()[0][1].key
    real = graphs.detail_chart

    def detail_chart(result, *args):
        if result.key == bad:
            raise ValueError("no such axis")
        return real(result, *args)

    monkeypatch.setattr(graphs, "detail_chart", detail_chart)
    index, _, report = _render_some(tmp_path, workers=1)
    assert not (index.parent / "s" / f"{bad.slug()}.html").exists()
    assert [p.message for p in report.problems if p.stage == "render"] == ["drill-down not rendered: no such axis"]
    assert len(list((index.parent / "s").iterdir())) == len(site_inputs()[0]) - 1


def test_a_render_abandoned_after_taking_the_spares_pages_leaves_the_next_one_whole(tmp_path):
    """Killed (here: raising) after it moved the spare's ``s/`` into its own directory: the live
    site is untouched, and the next render, without those files, writes a fresh render's site."""
    _render_some(tmp_path)
    index, _, _ = _render_some(tmp_path)
    before = all_files(index.parent)

    def boom():
        raise OSError("exports: disk full")

    with pytest.raises(OSError, match="disk full"):
        _render_some(tmp_path, workers=1, meanwhile=boom)
    assert all_files(index.parent) == before and not (tmp_path / site_mod.SPARE / "s").exists()
    _render_some(tmp_path)
    fresh, _, _ = _render_some(tmp_path / "fresh")
    assert all_files(index.parent) == all_files(fresh.parent)


def test_what_a_render_killed_after_taking_the_spares_pages_leaves_is_cleared_by_the_next(tmp_path):
    """A kill -9 after the spare's ``s/`` went into the new site and a kept page's spare file went
    to the trash: the next render (the spare without ``s/``) is a fresh render's site, and the
    dead run's directories are deleted."""
    _render_some(tmp_path)
    index, results, _ = _render_some(tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    new = tmp_path / f"{site_mod.NEW_PREFIX}{dead.pid}"
    new.mkdir()
    os.rename(tmp_path / site_mod.SPARE / "s", new / "s")
    trash = tmp_path / f"{site_mod.OLD_PREFIX}{dead.pid}-taken"
    trash.mkdir()
    kept = f"{results[1].key.slug()}.html"
    os.rename(new / "s" / kept, trash / f"s%{kept}")
    _render_some(tmp_path)
    fresh, _, _ = _render_some(tmp_path / "fresh")
    assert all_files(index.parent) == all_files(fresh.parent)
    site_mod.wait_for_cleanup(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site-spare", "fresh", "site"]


def test_a_spare_in_memory_is_written_over_whatever_its_age(tmp_path):
    """A day after the last run, on a machine that ran little else, the spare is still in memory."""
    render(tmp_path)
    render(tmp_path)
    spare = tmp_path / ".site-spare"
    day_ago = time.time() - 86_400
    os.utime(spare, (day_ago, day_ago))
    assert site_mod._fresh_spare(tmp_path) == spare


def test_where_the_kernel_cannot_tell_the_spare_s_age_decides(tmp_path, monkeypatch):
    render(tmp_path)
    render(tmp_path)
    spare = tmp_path / ".site-spare"
    monkeypatch.setattr(site_mod, "_in_memory", lambda pages: None)
    assert site_mod._fresh_spare(tmp_path) == spare
    past = spare.stat().st_mtime - site_mod.SPARE_FRESH_S - 1
    os.utime(spare, (past, past))
    assert site_mod._fresh_spare(tmp_path) is None
    assert site_mod._fresh_spare(tmp_path, now=past + 60) == spare
    render(tmp_path)
    assert time.time() - spare.stat().st_mtime < 60  # the site just replaced: a fresh spare


def test_in_memory_asks_about_a_sample_and_says_when_it_cannot_tell(tmp_path):
    pages = tmp_path / "s"
    assert site_mod._in_memory(pages) is None  # no such directory
    pages.mkdir()
    (pages / "empty.html").write_bytes(b"")
    (pages / "dir").mkdir()
    assert site_mod._in_memory(pages) is None  # nothing to ask about
    for i in range(40):
        (pages / f"{i}.html").write_bytes(b"x" * 5000)
    assert site_mod._in_memory(pages) is True


def test_bad_series_is_reported_and_the_rest_rendered(tmp_path):
    results, samples, builds, alerts = site_inputs()
    bad = results[1]
    bad.trend = bad.trend[:-1]  # misaligned arrays: a bug upstream, one item
    report = RunReport()
    index = render_site(tmp_path, results, samples, builds, report, make_spec(), alerts)
    assert [p.item for p in report.errors("render")] == [f"{bad.key.job}/{bad.key.test_id}/mrr"]
    assert (index.parent / "s" / f"{results[0].key.slug()}.html").is_file()
    assert not (index.parent / "s" / f"{bad.key.slug()}.html").exists()
    assert bad.key.slug() not in (index.parent / "index.html").read_text("utf-8")


def test_bad_build_url_template_is_a_warning_and_links_are_left_out(tmp_path):
    results, samples, builds, _ = site_inputs()
    report = RunReport()
    index = render_site(tmp_path, results, samples, builds, report, make_spec("{jenkins}/{nope}/{build}"))
    assert [p.item for p in report.problems] == ["outputs.build-url"]
    assert "https://" not in (index.parent / "s" / f"{results[0].key.slug()}.html").read_text("utf-8")


def test_statistics_page_lists_builds_newest_first(site):
    root, _, _ = site
    (page,) = [p for p in (root / "stats").iterdir() if p.name.startswith("csit-vpp-perf-mrr")]
    html = page.read_text("utf-8")
    builds = re.findall(r">mrr-daily-build-(\d+)<", html)
    assert builds[:3] == ["139", "138", "137"] and len(builds) == 40
    # build 139: passed 40 - 139 % 3 = 39, failed 1, duration 5 h + 139 s
    assert "<td>39</td><td>1</td><td>5:02:19</td>" in html


def test_csv_neutralises_formula_cells(tmp_path):
    results, samples, builds, _ = site_inputs()
    builds.loc[builds["build"] == 100, "dut_version"] = "=HYPERLINK(\"http://evil\")"
    evil = make_result([1e6, 2e6], test_id="@SUM(1+1)*cmd|' /C calc'!A0")
    report = RunReport()
    index = render_site(tmp_path, [*results, evil], samples, builds, report, make_spec())
    (csv_path,) = [p for p in (index.parent / "downloads").iterdir() if p.name.startswith("csit-vpp-perf-mrr")]
    rows = list(csv.reader(io.StringIO(csv_path.read_text("utf-8"))))
    assert "'@SUM(1+1)*cmd|' /C calc'!A0 [mrr]" in rows[0]
    assert rows[1][2] == "'=HYPERLINK(\"http://evil\")"


def test_runs_table_shows_values_missing_runs_and_escaped_versions(tmp_path):
    results, samples, builds, _ = site_inputs()
    builds.loc[builds["build"] == 139, "dut_version"] = EVIL
    index = render_site(tmp_path, results, samples, builds, RunReport(), make_spec())
    html = (index.parent / "s" / f"{results[1].key.slug()}.html").read_text("utf-8")
    html = html[html.index('<table class="runs">'):]
    rows = re.findall(r"<tr[^>]*><td>(?:<a [^>]*>)?mrr-daily-build-(\d+)(?:</a>)?</td>.*?</tr>", html)
    assert rows == [str(b) for b in range(139, 109, -1)]  # the last 30 runs, newest first
    newest = re.search(r"<tr><td><a [^>]*>mrr-daily-build-139</a></td>(.*?)</tr>", html).group(1)
    assert newest == (f"<td>2022-02-09 03:00</td><td>{results[1].values[39] / 1e6:.4f}</td>"
                      f"<td>{results[1].trend[39] / 1e6:.4f}</td><td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"
                      "<td>tb-1</td>")
    assert '<tr class="missing"><td><a href="https://jenkins.example/job/csit-vpp-perf-mrr-daily-master-2n-icx/125">' \
           'mrr-daily-build-125</a></td><td>2022-01-26 03:00</td><td>missing</td>' in html


def test_runs_tables_of_a_job_on_different_axes_keep_their_own_builds_and_times(tmp_path):
    """The table's build and time cells are made once per axis (``BuildCells.recent``): a series
    that started later (other times for the same builds) gets its own, a series on the same axis
    the same."""
    from tests.render.factory import builds_for, samples_for

    rng = np.random.default_rng(4)
    long = make_result(20e6 + rng.normal(0, 1e5, 40), first_build=100)
    same = make_result(10e6 + rng.normal(0, 1e5, 40), first_build=100, test_id="tests.vpp.perf.ip4.x.64b-1c-same-mrr")
    late = make_result(30e6 + rng.normal(0, 1e5, 20), first_build=120, test_id="tests.vpp.perf.ip4.x.64b-1c-late-mrr")
    results = [long, same, late]
    index = render_site(tmp_path, results, samples_for(results), builds_for(results), RunReport(), make_spec())

    def table(r):
        html = (index.parent / "s" / f"{r.key.slug()}.html").read_text("utf-8")
        return re.findall(r"mrr-daily-build-(\d+)</a></td><td>([^<]*)</td><td>([^<]*)</td>",
                          html[html.index('<table class="runs">'):])

    def expected(r):
        labels = graphs.time_labels(r.times)
        return [(str(int(r.builds[i])), labels[i], f"{r.values[i] / 1e6:.4f}") for i in range(len(r.values) - 1, -1, -1)][:30]

    for r in results:
        assert table(r) == expected(r)
    assert table(long)[0][1] != table(late)[0][1]  # build 139: the 40th run of one, the 20th of the other
    assert [row[:2] for row in table(same)] == [row[:2] for row in table(long)]


def _tasks(renders: list[int]) -> list:
    results, _, _, _ = site_inputs()
    return [site_mod.GroupTask(("tb", "nic", str(i)), [results[0]], [(results[0], None)] * n, True)
            for i, n in enumerate(renders)]


def test_chunks_hand_out_the_largest_groups_first_and_shrink_towards_the_end(monkeypatch):
    # weights (drill-downs + 1 per group page) 6 2 2 2 2 10 1 3, largest first (equal ones in
    # group order): 10 6 3 2 2 2 2 1 = 28. Two processes: a chunk closes once it holds an eighth
    # of what is left (4 of 28, 3 of 18, 2 of 12, 2 of 9, then 1): a group each.
    tasks = _tasks([5, 1, 1, 1, 1, 9, 0, 2])
    monkeypatch.setattr(site_mod, "MIN_CHUNK", 1)
    got = list(iter(site_mod._Chunks(tasks, 2).take, None))
    assert [t for c in got for t in c] == [tasks[i] for i in (5, 0, 7, 1, 2, 3, 4, 6)]
    assert [[tasks.index(t) for t in c] for c in got] == [[5], [0], [7], [1], [2], [3], [4], [6]]
    monkeypatch.setattr(site_mod, "MIN_CHUNK", 5)  # 10; 6; 3 + 2; 2 + 2 + 2; 1
    got = list(iter(site_mod._Chunks(tasks, 2).take, None))
    assert [[tasks.index(t) for t in c] for c in got] == [[5], [0], [7, 1], [2, 3, 4], [6]]
    monkeypatch.setattr(site_mod, "MIN_CHUNK", 16)  # never smaller than that: 10 + 6
    assert [len(c) for c in iter(site_mod._Chunks(tasks, 2).take, None)] == [2, 6]


def test_the_first_chunk_is_small_so_a_worker_starts_drawing_at_once(monkeypatch):
    # 40 groups of weight 21: guided, the first chunk would hold an eighth of 840 (5 groups); it
    # holds MIN_CHUNK's worth (one group), the next ones are guided again (an eighth of 819: 5)
    tasks = _tasks([20] * 40)
    monkeypatch.setattr(site_mod, "MIN_CHUNK", 16)
    sizes = [len(c) for c in iter(site_mod._Chunks(tasks, 2).take, None)]
    assert sizes[:3] == [1, 5, 5] and sum(sizes) == 40


def test_chunks_taken_by_racing_threads_are_each_handed_out_once():
    import threading

    tasks = _tasks([i % 7 for i in range(400)])
    chunks = site_mod._Chunks(tasks, 3)
    taken: list = []

    def take() -> None:
        while (got := chunks.take()) is not None:
            taken.append(got)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    handed = [id(t) for c in taken for t in c]
    assert sorted(handed) == sorted(id(t) for t in tasks)  # every group once


def test_a_pool_that_refuses_work_leaves_its_chunks_to_this_process(tmp_path):
    """A pool that is shut down (or broken) takes no chunk: this process draws the whole site,
    the same bytes."""
    render(tmp_path / "own", workers=1)
    pool = site_mod.render_pool(2)
    assert pool is not None
    pool.shutdown()
    render(tmp_path / "refused", workers=2, pool=pool)
    assert all_files(tmp_path / "refused" / "site") == all_files(tmp_path / "own" / "site")


def _alert_rows(html: str) -> dict[str, str]:
    table = html[html.index('<table class="alerts">'):]
    table = table[:table.index("</table>")]
    return dict(re.findall(r"<tr[^>]*><td>([A-Z]-\d)</td>(.*?)</tr>", table, re.S))


def test_alert_tables_show_suspect_bisect_trigger_and_a_multi_line_ack_snippet(site):
    root, results, _ = site
    index = (root / "index.html").read_text("utf-8")
    drill = (root / "s" / f"{results[4].key.slug()}.html").read_text("utf-8")
    for html in (index, drill):
        rows = _alert_rows(html)
        latency = rows["L-2"]
        assert ('<span class="suspect code">code</span> VPP 88a9c0e02..5e5f2a3b1, 12 commits '
                '&lt;script&gt;alert(1)&lt;/script&gt; <a href="https://git.example/vpp/log/?qt=range&amp;'
                'q=88a9c0e02..5e5f2a3b1">commit range</a>') in latency
        assert ('<pre class="copyable" id="bisect-L-2-396d298a">bisecttest-2n-icx 88a9c0e02 '
                'ndrpdrAND64bAND1cANDethip4-ip4base</pre><button type="button" class="copy" '
                'data-copy="bisect-L-2-396d298a" hidden>Copy</button>') in latency
        # the snippet keeps its two lines (real YAML to paste), in a <pre> with its own copy button
        pre = re.search(r'<pre class="copyable" id="ack-L-2-396d298a">(.*?)</pre>', latency, re.S).group(1)
        assert pre == ("# csit-vpp-perf-ndrpdr-weekly-master-2n-icx ... latency_pdr50_d1: regression +50.0 % from "
                       "build 106\nL-2: &#34;reason, e.g. a ticket or change number&#34;\n")
        assert 'data-copy="ack-L-2-396d298a" hidden>Copy</button>' in latency
        assert "<td>50.00</td>" in latency
    mrr = _alert_rows(index)["R-1"]
    assert '<span class="suspect infrastructure">infrastructure</span> same VPP 22.02-rc0~130, testbed tb-1 -&gt; tb-0' \
        in mrr and "<td>&#8212;</td>" in mrr  # no bisect for an infrastructure change
    assert "acknowledged: known &lt;script&gt;" in mrr and "<pre" not in mrr


def test_group_page_orders_graphs_the_csit_way(site):
    root, _, _ = site
    page = next(p for p in (root / "g").iterdir() if "25ge2p1xxv710-ip4" in p.name).read_text("utf-8")
    titles = re.findall(r"<h2>(.*?)</h2>", page)
    # MRR, then NDR, then latency (sorting by metric id put latency first)
    assert titles == ["2n-icx 25ge2p1xxv710 ip4 64B 1C MRR", "2n-icx 25ge2p1xxv710 ip4 64B 1C NDR",
                      "2n-icx 25ge2p1xxv710 ip4 64B 1C latency at 50 % PDR, direction 1"]


def test_index_legend_states_windows_and_columns_as_text_and_tooltips(site):
    root, _, _ = site
    html = (root / "index.html").read_text("utf-8")
    legend = html[html.index('<section class="legend"'):html.index("</section>")]
    assert ("<li><strong>mrr-daily</strong>: short-term window = the last 10 runs (about 10 days at a run every "
            "1 day), 5 runs on a testbed type with one testbed; long-term reference = the best trend from 180 "
            "runs or 180 days back (whichever is shorter) to the start of the short-term window.</li>") in legend
    assert "<dt>Long-Term Change</dt><dd>Trend now against the best trend" in legend
    head = re.search(r'<table class="dash sortable">\s*<thead>(.*?)</thead>', html, re.S).group(1)
    assert re.findall(r'<th title="[^"]+">([^<]+)</th>', head) == [
        "Test Case", "Trend [Mpps]", "Runs [#]", "Short-Term Change [%]", "Long-Term Change [%]",
        "Regressions [#]", "Progressions [#]"]


def test_drill_down_evidence_has_labels_and_units(site):
    from pal.render.evidence import describe

    root, results, _ = site
    page = (root / "s" / f"{results[0].key.slug()}.html").read_text("utf-8")
    assert '<ul class="evidence"><li>information gained by the split: 12.5 bits</li></ul>' in page
    assert "bits_saved" not in page
    from pal.render.naming import scale_of

    ev = {"after_runs": 14, "before_runs": 1, "missing_between": 0, "restores_build": 358, "min_change_pct": 1.0,
          "detector_before": 3943513.093, "flagged_at": 2, "odd_key": 0.123456, "note": "text"}
    job = "csit-vpp-perf-mrr-daily-master-2n-icx"
    assert describe(ev, scale_of("mrr"), job, lambda i: [355, 356, 357][i] if 0 <= i < 3 else None) == [
        ("runs at the old level", "1 run"), ("runs at the new level", "14 runs"),
        ("missing runs between the levels", "0 runs"), ("old level as the detector saw it", "3.944 Mpps"),
        ("smallest change alerted", "1 %"), ("undoes the change of build", "mrr-daily-build-358"),
        ("flagged at", "mrr-daily-build-357"), ("note", "text"), ("odd key", "0.1235")]
    assert describe({"tmsd": 1.5}, scale_of("latency_pdr50_d1"), job, lambda i: None) == [
        ("trimmed moving standard deviation", "1.50 µs")]


def test_page_digests_change_with_the_templates(tmp_path):
    """Pages drawn by an older template are not kept: the digest covers what draws them."""
    import shutil

    from pal.render.pages import DEFAULT_TEMPLATES

    results, _, _, alerts = site_inputs()
    templates = tmp_path / "templates"
    shutil.copytree(DEFAULT_TEMPLATES, templates)
    before = site_mod.page_digests(results, alerts, templates)
    assert site_mod.page_digests(results, alerts, templates) == before  # deterministic
    css = templates / "static" / "pal.css"
    css.write_text(css.read_text("utf-8") + "\nbody { color: #000; }\n", "utf-8")
    after = site_mod.page_digests(results, alerts, templates)
    assert set(after) == set(before) and all(after[k] != before[k] for k in before)


def test_drill_down_colours_its_changes_by_the_metric_direction(site):
    root, results, _ = site
    latency = (root / "s" / f"{results[4].key.slug()}.html").read_text("utf-8")
    comp = latency[latency.index('<table class="compliance">'):]
    comp = comp[:comp.index("</table>")]
    assert '<td class="worse">50.00</td><td></td>' in comp  # 20 -> 30 us: a rise of latency is worse
    mrr = (root / "s" / f"{results[0].key.slug()}.html").read_text("utf-8")
    comp = mrr[mrr.index('<table class="compliance">'):]
    assert re.search(r'<td class="worse">-1[0-9]\.[0-9]{2}</td><td class="worse">-1[0-9]\.[0-9]{2}</td>', comp)


def test_the_site_from_the_samples_the_run_keeps_is_the_site_from_all_samples(tmp_path):
    """The run keeps only ``alert_samples`` (failures, each build's last row, each job's newest
    build) once the series are cut: the site must be the same, failures listed and build facts
    (from the samples when the builds table lacks them) included."""
    results, samples, builds, alerts = site_inputs()
    last = ~samples.duplicated(["job", "build"], keep="last")  # the row whose facts a build shows
    version = samples["dut_version"].astype(str)
    samples["dut_version"] = version.where(~last, version + "-last")
    slim = alert_samples(samples)
    fails = samples[samples["status"] == "FAIL"]
    assert len(fails) >= 3 and len(slim) < len(samples) / 2
    failed = {(j, b, t) for j, b, t in zip(fails["job"].astype(str), fails["build"], fails["test_id"].astype(str))}
    kept = {(j, b, t) for j, b, t in zip(slim["job"].astype(str), slim["build"], slim["test_id"].astype(str))}
    assert failed <= kept
    assert len(slim.drop_duplicates(["job", "build"])) == len(samples.drop_duplicates(["job", "build"]))
    for table_builds, tag in ((builds, "builds"), (builds.iloc[:0], "no-builds")):
        for name, table in (("all", samples), ("slim", slim)):
            render_site(tmp_path / tag / name, results, table, table_builds, RunReport(), make_spec(), alerts)
        whole, part = all_files(tmp_path / tag / "all" / "site"), all_files(tmp_path / tag / "slim" / "site")
        assert whole.keys() == part.keys() and all(whole[k] == part[k] for k in whole), tag


def test_a_drill_down_holds_its_data_with_bands_and_its_group_file_the_same_without(site):
    """The drill-down's JSON block is ``series_payload``: the detector's own bands, and the
    parameters of the rolling ones where some are drawn (graph.js computes those from ``y``);
    its group's data file carries the same data but these, which a group graph does not draw."""
    from pal.render.graphs import series_payload

    root, results, _ = site
    r = results[3]  # the NDR series with TMA bands
    page = json.loads(parse(root / "s" / f"{r.key.slug()}.html").data_blocks[0][1])
    assert page == json.loads(json.dumps(series_payload(r)))  # the same values, rounded the same way
    assert sorted(page["bands"]) == ["mm", "tma", "tma_hi", "tma_lo"] and "rolling" not in page
    assert page["bands"]["tma_hi"] == [15.1] * 10
    group = next((root / "data" / "g").glob("2n-icx-25ge2p1xxv710-ip4-*.js")).read_text("utf-8")
    line = next(l for l in group.split(";\n") if f'PAL.series["{r.key.slug()}"]=' in l)
    in_group = json.loads(line.split("]=", 1)[1])
    assert "bands" not in in_group and in_group == {k: v for k, v in page.items() if k != "bands"}
    mdl = results[0]  # no band of its own: the rolling ones' window, no band values
    page = json.loads(parse(root / "s" / f"{mdl.key.slug()}.html").data_blocks[0][1])
    assert page == json.loads(json.dumps(series_payload(mdl)))
    assert page["rolling"] == {"window": 14, "min_history": 5, "sigma": 3.0} and "bands" not in page
    line = next(l for l in group.split(";\n") if f'PAL.series["{mdl.key.slug()}"]=' in l)
    assert json.loads(line.split("]=", 1)[1]) == {k: v for k, v in page.items() if k != "rolling"}


def test_a_file_where_the_spare_goes_is_replaced_by_the_spare(tmp_path):
    index, _, _ = render(tmp_path)
    (tmp_path / ".site-spare").write_text("not a site", "utf-8")
    render(tmp_path)
    site_mod.wait_for_cleanup(tmp_path)
    assert (tmp_path / ".site-spare" / "index.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site-spare", "site"]


def test_a_symlink_where_the_spare_goes_is_not_written_over(tmp_path):
    """Only a directory of the output dir is a spare: files are never moved out of elsewhere."""
    index, _, _ = render(tmp_path / "out")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "index.html").write_text("someone else's", "utf-8")
    (tmp_path / "out" / ".site-spare").symlink_to(elsewhere)
    assert site_mod._fresh_spare(tmp_path / "out") is None
    render(tmp_path / "out")
    site_mod.wait_for_cleanup(tmp_path / "out")  # the link is removed with the old site, not its target
    assert (elsewhere / "index.html").read_text("utf-8") == "someone else's"
    assert (tmp_path / "out" / ".site-spare" / "index.html").is_file()


def test_data_until_is_the_newest_time_of_the_data_never_the_clock():
    import dataclasses
    from datetime import datetime, timezone

    import numpy as np
    import pandas as pd

    a, b, c = make_result([1.0, 2.0]), make_result([1.0, 2.0]), make_result([1.0, 2.0])
    a = dataclasses.replace(a, times=np.array(["2026-03-01T10:00", "2026-03-04T08:15"], dtype="datetime64[ns]"))
    b = dataclasses.replace(b, times=np.array(["2026-03-02T00:00", "2026-03-03T23:59"], dtype="datetime64[ns]"))
    # a series with a missing time is left out whole (its newest time is unknown)
    c = dataclasses.replace(c, times=np.array(["2026-03-09T00:00", "NaT"], dtype="datetime64[ns]"))
    assert site_mod._data_until([a, b, c], pd.DataFrame(), None) == "2026-03-04 08:15 UTC"
    builds = pd.DataFrame({"build_time": pd.to_datetime(["2026-03-05T06:00Z", "2026-03-01T00:00Z"])})
    assert site_mod._data_until([a, b, c], builds, None) == "2026-03-05 06:00 UTC"
    assert site_mod._data_until([], pd.DataFrame(), None) == ""
    when = datetime(2026, 1, 2, 3, 4, tzinfo=timezone.utc)
    assert site_mod._data_until([a], builds, when) == "2026-01-02 03:04 UTC"


def test_a_redraw_takes_the_downloads_unchanged_rows_and_a_full_render_none(tmp_path, monkeypatch):
    """A second render (``changed`` given) takes every row of the job downloads from the site it
    replaces, byte-identical and with its row index; a render of everything (``changed`` None:
    ``pal run --full``) formats them all again; an index the site lost costs only its own job's rows."""
    from pal.render import downloads

    index, results, _ = render(tmp_path)
    root = index.parent
    csvs = sorted((root / "downloads").glob("*.csv"))
    first = {p.name: p.read_bytes() for p in csvs}
    assert len(csvs) == 2 and len(list((root / "data" / "csv").glob("*.json"))) == 2
    counted: list[int] = []
    real = downloads.csvtext.float_text
    monkeypatch.setattr(downloads.csvtext, "float_text", lambda v: counted.append(len(v)) or real(v))
    render(tmp_path, changed={results[0].key})
    assert counted == [] and {p.name: p.read_bytes() for p in csvs} == first
    render(tmp_path, changed=None)
    assert len(counted) == 2 and {p.name: p.read_bytes() for p in csvs} == first
    counted.clear()
    lost = next((root / "data" / "csv").glob("csit-vpp-perf-mrr-daily-master-2n-icx-*.json"))
    lost.unlink()
    render(tmp_path, changed={results[0].key})
    assert len(counted) == 1 and {p.name: p.read_bytes() for p in csvs} == first and lost.exists()


def test_the_page_digests_cover_the_render_kernels_source_and_build():
    """The text kernel and the bands' kernel draw the pages: their C source (in a checkout) and their
    builds are in what a page digest covers, so a new kernel draws every page again."""
    from pal.render.site import render_files

    names = {path.name for _, path in render_files()}
    for kernel in ("text_kernel", "bands_kernel"):
        assert f"{kernel}.c" in names
        assert any(n.startswith(f"{kernel}.") and n.endswith(".so") for n in names), names
    assert {"series.html", "svg.py", "bands.py"} <= names


def test_page_digests_change_with_what_the_spec_decides_a_page_shows():
    """A kept page must show what a redrawn one would: its compliance (the spec's windows decide
    it, not the data alone) and the site's title and build links are in its digest."""
    results, _, _, alerts = site_inputs()
    before = site_mod.page_digests(results, alerts, site=("CSIT trending", "{jenkins}/job/{job}/{build}", "https://j"))
    shorter = list(results)
    shorter[1] = dataclasses.replace(results[1], compliance=dataclasses.replace(results[1].compliance,
                                                                                short_term_change=-3.25))
    after = site_mod.page_digests(shorter, alerts, site=("CSIT trending", "{jenkins}/job/{job}/{build}", "https://j"))
    moved = {k for k in before if after[k] != before[k]}
    assert moved == {f"{results[1].key.job}|{results[1].key.test_id}|{results[1].key.metric}"}
    retitled = site_mod.page_digests(results, alerts, site=("pal", "{jenkins}/job/{job}/{build}", "https://j"))
    relinked = site_mod.page_digests(results, alerts, site=("CSIT trending", "", "https://j"))
    assert all(retitled[k] != before[k] and relinked[k] != before[k] for k in before)
