"""Screenshot of a rendered dashboard for the README: ``docs/img/dashboard.png``.

    python -m benchmarks.screenshot_dashboard [--out docs/img/dashboard.png]

Renders a small synthetic site (the benchmark's generator), serves it on 127.0.0.1 and
photographs the index in headless Debian Chromium (``make browser``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_render import synthesise
from pal.render import render_site
from pal.report import RunReport
from tests.render.factory import builds_for, make_spec, samples_for
from tests.render.serve import CHROMIUM, CHROMIUM_ARGS, serve


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=Path("docs/img/dashboard.png"))
    ap.add_argument("--drill-down", type=Path, default=None, help="also photograph one drill-down page here")
    args = ap.parse_args(argv)
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} missing: run `make browser`", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    results = synthesise(testbeds=2, tests=24, runs=120, seed=3)
    report = RunReport()
    report.add("download", "csit-vpp-perf-mrr-daily-master-2n-icx/57", "no data source had the build")
    with tempfile.TemporaryDirectory() as tmp:
        index = render_site(Path(tmp), results, samples_for(results), builds_for(results), report, make_spec())
        with serve(index.parent) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(base + "index.html")
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            if args.drill_down:
                reg = next(r for r in results if r.compliance.regressions)
                page.goto(base + f"s/{reg.key.slug()}.html")
                page.wait_for_selector("div.pal-graph[data-drawn='1']")
                page.screenshot(path=str(args.drill_down))
            browser.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
