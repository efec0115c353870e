"""Screenshots of the site for the README and docs: ``docs/img/*.png``.

    pal demo-data /tmp/demo --small     # then a copy of specs/demo.yaml pointing at it, and pal run
    python -m benchmarks.screenshot_dashboard --site OUT/site [--out-dir docs/img]
    python -m benchmarks.screenshot_dashboard            # a small synthetic site instead

Serves the site on 127.0.0.1 and photographs, in headless Debian Chromium (``make browser``),
the index (at its first dashboard table, and at the first latency table whose worst row is
coloured), the drill-down of the index's first alert with a
bisect trigger (else its first alert, else its first regression) and the graph page that
drill-down belongs to; each twice: as a reader with scripts sees it (``<page>.png``) and under
Jenkins' default Content-Security-Policy, which blocks every script (``<page>-csp.png``: the
static SVG graphs and plain-text cells).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from tests.render.serve import CHROMIUM, CHROMIUM_ARGS, JENKINS_CSP, serve

WIDTH, HEIGHT = 1280, 1000
DRILL_HEIGHT = 1500


def synthetic_site(tmp: Path) -> Path:
    """A small site from the render benchmark's generator (when no demo site is given)."""
    from benchmarks.bench_render import synthesise
    from pal.render import render_site
    from pal.report import RunReport
    from tests.render.factory import builds_for, make_spec, samples_for

    results = synthesise(testbeds=2, tests=24, runs=120, seed=3)
    report = RunReport()
    report.add("download", "csit-vpp-perf-mrr-daily-master-2n-icx/57", "no data source had the build")
    return render_site(tmp, results, samples_for(results), builds_for(results), report, make_spec()).parent


def pages_of(site: Path) -> dict[str, str]:
    """Relative URLs of the pages to photograph, read from the index's own links."""
    index = (site / "index.html").read_text("utf-8")
    table = re.search(r'<h3 id="(t-[^"]+)"', index)
    alerts = index[index.index('<h2 id="alerts"'):] if '<h2 id="alerts"' in index else ""
    drill = re.search(r'href="(s/[^"]+\.html)"[^\n]*data-copy="bisect-', alerts) or \
        re.search(r'href="(s/[^"]+\.html)"', alerts) or re.search(r'<tr class="reg"[^>]*><td><a href="(s/[^"]+)"',
                                                                      index) or re.search(r'href="(s/[^"]+)"', index)
    if not drill:
        raise SystemExit(f"{site / 'index.html'} links no drill-down page")
    # the graph page the drill-down belongs to (its breadcrumb), else the index's first
    crumb = re.search(r'href="\.\./(g/[^"]+\.html)"', (site / drill.group(1)).read_text("utf-8"))
    group = crumb or re.search(r'href="(g/[^"]+\.html)"', index)
    if not group:
        raise SystemExit(f"{site / 'index.html'} links no graph page")
    shots = {"index": "index.html" + (f"#{table.group(1)}" if table else "")}
    # a latency table whose worst row is a rise (lower is better): listed first and coloured
    for m in re.finditer(r'<h3 id="(t-[^"]*-Latency-[^"]*)">.*?<tbody>\s*<tr[^>]*>(.*?)</tr>', index, re.S):
        if 'class="worse"' in m.group(2):
            shots["index-latency"] = f"index.html#{m.group(1)}"
            break
    return {**shots, "drill-down": drill.group(1), "graph": group.group(1)}


def photograph(site: Path, out_dir: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    shots = pages_of(site)
    written = []
    out_dir.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for csp in (None, JENKINS_CSP):
            with serve(site, csp=csp) as base:
                page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
                for name, rel in shots.items():
                    page.goto(base + rel)
                    page.wait_for_load_state("load")
                    if csp is None and not name.startswith("index"):
                        page.wait_for_selector("div.pal-graph[data-drawn='1']")
                    page.wait_for_timeout(300)
                    path = out_dir / f"{name}{'-csp' if csp else ''}.png"
                    if name == "drill-down":  # down to its alerts table
                        page.screenshot(path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": WIDTH,
                                                                              "height": DRILL_HEIGHT})
                    else:
                        page.screenshot(path=str(path))
                    written.append(path)
                page.close()
        browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, help="a rendered site (e.g. out/demo/site); default: a synthetic one")
    ap.add_argument("--out-dir", type=Path, default=Path("docs/img"))
    args = ap.parse_args(argv)
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} missing: run `make browser`", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site if args.site else synthetic_site(Path(tmp))
        for path in photograph(site, args.out_dir):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
