#!/usr/bin/env python3
"""The app in a real browser: every interaction, warm, on a big event log (issue 12 goal: each
<= 0.5 s on the 33 MB, 61-execution log) and on the default sample; the report file's size.

    python -m bench.bench_ui [LOG] [--rounds 5] [--query ID]
    (a big log: python tools/generate_eventlogs.py large --out DIR --queries 61 --partitions 40)

Starts ``streamlit run app.py`` (the log's folder as a server root), opens the source in headless
Chromium (Debian's), then repeats ``--rounds`` times: a no-op rerun, a triage search, the top
triage row (which opens its Partitions page), the Plans page, a click on a plan node (its details
open in the browser: timed until they show), a query stage opened, the previous plan version, the What-if page and one setting changed, back to the Overview.

Each interaction is timed in the page itself: from the click until the last script run it
caused has finished and the page stopped changing (MutationObservers on the app's script
state and content; no fixed sleeps inside the measurement), plus the frame that paints it. Printed: the first open, each interaction's median
and worst, and each against a no-op rerun (what Streamlit itself costs per interaction), as a
ratio: a ratio holds on a noisy machine, the absolute figures are this machine's.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

_OBSERVE = """() => {
  if (window.__lens) return;
  window.__lens = [];
  const app = document.querySelector('[data-testid="stApp"]');
  // a batch may hold several changes (a fast run: running, then notRunning): replay each one
  new MutationObserver(records => {
    const now = performance.now();
    records.forEach((r, i) => window.__lens.push(
      [now, i + 1 < records.length ? records[i + 1].oldValue : app.getAttribute('data-test-script-state')]));
  }).observe(app, {attributes: true, attributeOldValue: true, attributeFilter: ['data-test-script-state']});
  // React may fold a very fast run into no change of that attribute: the page's content changing counts too
  // (not the data grid's hidden accessibility table, which it refreshes ~300 ms after painting its canvas)
  new MutationObserver(recs => {
    const seen = recs.filter(r => { const t = r.target.nodeType === 1 ? r.target : r.target.parentElement;
                                    return !(t && t.closest('[data-testid="data-grid-canvas"]')); });
    if (seen.length) window.__lens.push([performance.now(), 'content']);
  })
    .observe(app, {childList: true, subtree: true, characterData: true});
}"""
# settled: something changed after t0, the app is not running, and nothing changed for 400 ms
_SETTLED = """(t0) => {
  const ev = window.__lens.filter(e => e[0] > t0);
  const app = document.querySelector('[data-testid="stApp"]');
  if (!ev.length) return false;
  if (app.getAttribute('data-test-script-state') === 'running') return false;
  return performance.now() - ev[ev.length - 1][0] > 400;
}"""
_LAST_DONE = """(t0) => new Promise(done => requestAnimationFrame(() => {
  const ev = window.__lens.filter(e => e[0] > t0 && e[1] !== 'running');
  done(Math.max(ev.length ? ev[ev.length - 1][0] : t0, 0) - t0);
}))"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log", nargs="?", help="an event log (default: the bundled default sample)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--query", help="open this SQL execution id first and stay on it (no triage row click): "
                                    "e.g. 32, the 300-node plan of the TPC-DS-like sample")
    opts = ap.parse_args()
    from tests.lens_browser import CHROMIUM, CHROMIUM_ARGS, running_app, wait_ready
    from playwright.sync_api import sync_playwright

    from aqe_core.opening import default_sample

    log = Path(opts.log).resolve() if opts.log else Path(default_sample().path).resolve()
    home = Path(tempfile.mkdtemp(prefix="aqe-lens-bench-ui-"))
    env = {"AQE_LENS_ROOTS": str(log.parent)}
    steps: dict[str, list[float]] = {}
    with running_app(home / "home", home / "app.log", env) as app, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.set_default_timeout(180_000)
        page.goto(app.url)
        wait_ready(page)
        page.evaluate(_OBSERVE)

        def timed(name: str, action) -> float:
            t0 = page.evaluate("performance.now()")
            action()
            try:
                page.wait_for_function(_SETTLED, arg=t0, polling=50, timeout=60_000)
            except Exception:  # noqa: BLE001 - a screenshot, then a clear error
                page.screenshot(path=str(home / "stuck.png"))
                raise RuntimeError(f"{name}: the app did not settle (screenshot: {home / 'stuck.png'})") from None
            took = page.evaluate(_LAST_DONE, t0) / 1000.0
            if os.environ.get("AQE_LENS_BENCH_TRACE"):
                ev = page.evaluate("(t0) => window.__lens.filter(e => e[0] > t0).map(e => [Math.round(e[0] - t0), e[1]])", t0)
                print(name, ev[:3], "...", ev[-6:], len(ev), file=sys.stderr)
            steps.setdefault(name, []).append(took)
            return took

        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_text("Path on server").click()
        wait_ready(page)
        sidebar.get_by_label("Path to an event log, log directory or capture").fill(str(log))
        page.keyboard.press("Enter")
        wait_ready(page)
        label = re.compile(r"\), Spark")
        t0 = time.perf_counter()
        since = page.evaluate("performance.now()")
        sidebar.locator("[data-testid=stButton] button").first.click()
        page.wait_for_function(_SETTLED, arg=since, polling=50)
        sidebar.get_by_text(label).first.wait_for()
        first = time.perf_counter() - t0

        def nav(title: str):
            return lambda: page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()

        def search(word: str):
            return lambda: (page.get_by_role("textbox", name="Search").fill(word), page.keyboard.press("Enter"))

        def top_row():
            box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
            page.mouse.click(box["x"] + 12, box["y"] + 52)

        def plan_node():
            """A click on a node of the final plan map: its details open in the browser, no re-run
            (timed until the panel shows, the page itself does not change)."""
            final = page.locator(".pm").last
            boxes = final.locator(".pm-box")
            t = time.perf_counter()
            boxes.nth(min(3, boxes.count() - 1)).click()
            final.locator(".pm-details").wait_for(state="visible")
            steps.setdefault("click a plan node (details in the browser)", []).append(time.perf_counter() - t)
            page.keyboard.press("Escape")

        def open_stage():
            final = page.locator(".pm").last
            stage = final.locator(".pm-box[data-key^='stage:']")
            if not stage.count():
                return False
            stage.nth(min(1, stage.count() - 1)).click()
            final.locator(".pm-btn", has_text="Open this stage").click()
            return True

        def earlier_version():
            page.get_by_role("slider").first.focus()
            page.keyboard.press("ArrowLeft")

        def whatif_setting():
            box = page.locator("input[aria-label='skewJoin.skewedPartitionFactor']").first
            box.fill("4" if box.input_value() != "4" else "6")
            box.press("Enter")

        if opts.query:
            sidebar.get_by_test_id("stSelectbox").last.click()  # the query picker (virtualised: type to list it)
            page.keyboard.type(f"#{opts.query} ")
            page.get_by_role("option").filter(has_text=f"#{opts.query} ").first.click()
            wait_ready(page)
        for i in range(opts.rounds):
            page.evaluate("document.activeElement && document.activeElement.blur()")
            timed("no-op rerun", lambda: page.keyboard.press("r"))
            if not opts.query:
                timed("triage search", search("skew" if i % 2 == 0 else "join"))
                timed("open top triage row (its Partitions page)", top_row)
            timed("Plans page", nav("Plans"))
            page.evaluate("document.activeElement && document.activeElement.blur()")
            timed("no-op rerun of the Plans page", lambda: page.keyboard.press("r"))
            plan_node()
            if page.locator(".pm").last.locator(".pm-box[data-key^='stage:']").count():
                timed("open a query stage (re-run)", open_stage)
                page.get_by_role("button", name="Collapse stages").click()
                wait_ready(page)
            if page.get_by_role("slider").count():
                timed("previous plan version", earlier_version)
            timed("What-if page", nav("What-if"))
            timed("change a what-if setting", whatif_setting)
            timed("Overview page", nav("Overview"))
            if not opts.query:
                page.get_by_role("textbox", name="Search").fill("")
                page.keyboard.press("Enter")
                wait_ready(page)
        browser.close()
    floor = statistics.median(steps["no-op rerun"])
    out = {"log": str(log), "log_mb": round(log.stat().st_size / 2**20, 1) if log.is_file() else None,
           "first_open_s": round(first, 3)}
    lines = []
    for name, xs in steps.items():
        med = statistics.median(xs)
        out[name] = {"median_s": round(med, 3), "max_s": round(max(xs), 3),
                     "vs_no_op_rerun": round(med / floor, 2) if floor > 0 else None}
        lines.append(f"{name:>44}: median {med:.3f} s, worst {max(xs):.3f} s ({med / floor:.1f}x a no-op rerun)")
    lines.append(f"{'first open (parse + triage)':>44}: {first:.3f} s")
    out["report_mib"] = round(_report_mib(), 2)
    lines.append(f"{'self-contained report (default sample, q2)':>44}: {out['report_mib']:.2f} MiB (target <= 6 MB)")
    print("\n".join(lines), file=sys.stderr)
    print(json.dumps(out))
    return 0


def _report_mib() -> float:
    """The offline HTML report of the default sample's skewed join, with every figure."""
    from aqe_core.figures.histograms import histogram_figure
    from aqe_core.report import build_report
    from aqe_core.opening import default_sample, load_source
    from aqe_core.advise.whatif import compare_presets
    from aqe_core.model.presets import BUILTIN_PRESETS
    from ui.plans import plan_figures_for

    src = load_source(default_sample().path)
    view = src.view("2")
    plans, changes = plan_figures_for(view)
    html = build_report(view, source_label=src.label, plan_figures=plans, plan_changes=changes,
                        histogram_figures=[(s.label, histogram_figure(s)) for s in view.shuffles],
                        comparison=compare_presets(view, BUILTIN_PRESETS))
    return len(html.encode()) / 2**20


if __name__ == "__main__":
    sys.exit(main())
