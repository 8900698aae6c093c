#!/usr/bin/env python3
"""The app on a big event log in a real browser: first open, then every interaction warm
(issue 12 goal: each interaction <= 0.5 s warm on the 33 MB, 61-execution log).

    python -m bench.bench_ui_log LOG [--rounds 5]

Starts ``streamlit run app.py`` with the log's folder as a server root, opens the log by path in
headless Chromium (Debian's), then repeats, ``--rounds`` times: open the top triage row (its
Partitions page), the Plans page, the Overview, a triage search. Each step is timed from the
action until the script finished running. Printed: the first open, each step's median, and
each step against a no-op rerun of the same page (the floor Streamlit itself costs), as a ratio.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("--rounds", type=int, default=5)
    opts = ap.parse_args()
    from tests.lens_browser import CHROMIUM, CHROMIUM_ARGS, goto_page, running_app, wait_ready
    from playwright.sync_api import sync_playwright

    log = Path(opts.log).resolve()
    home = Path(tempfile.mkdtemp(prefix="aqe-lens-bench-ui-"))
    env = {"AQE_LENS_ROOTS": str(log.parent)}
    with running_app(home / "home", home / "app.log", env) as app, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.set_default_timeout(180_000)
        page.goto(app.url)
        wait_ready(page)

        def timed(action) -> float:
            t0 = time.perf_counter()
            action()
            page.wait_for_timeout(100)
            wait_ready(page)
            return time.perf_counter() - t0 - 0.1

        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_text("Path on server").click()
        wait_ready(page)
        sidebar.get_by_label("Path to an event log, log directory or capture").fill(str(log))
        page.keyboard.press("Enter")
        wait_ready(page)
        t0 = time.perf_counter()
        sidebar.locator("[data-testid=stButton] button").first.click()
        # the source label names the log's application id (the path box names the file too: match the label)
        page.get_by_text(re.compile(r"\(" + re.escape(log.name.split(".")[0]) + r"\), Spark")).first.wait_for()
        wait_ready(page)
        first = time.perf_counter() - t0
        steps: dict[str, list[float]] = {"no-op rerun": [], "open top triage row": [], "Plans page": [],
                                         "Overview page": [], "triage search": []}
        for i in range(opts.rounds):
            steps["no-op rerun"].append(timed(lambda: page.keyboard.press("r")))
            box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
            steps["open top triage row"].append(timed(lambda: page.mouse.click(box["x"] + 12, box["y"] + 52)))
            steps["Plans page"].append(timed(lambda: goto_page(page, "Plans")))
            steps["Overview page"].append(timed(lambda: goto_page(page, "Overview")))
            word = "skew" if i % 2 == 0 else "join"
            steps["triage search"].append(timed(lambda: (page.get_by_role("textbox", name="Search").fill(word),
                                                         page.keyboard.press("Enter"))))
        browser.close()
    floor = statistics.median(steps["no-op rerun"])
    out = {"log": str(log), "log_mb": round(log.stat().st_size / 2**20, 1) if log.is_file() else None,
           "first_open_s": round(first, 3)}
    for name, xs in steps.items():
        med = statistics.median(xs)
        out[name] = {"median_s": round(med, 3), "vs_no_op_rerun": round(med / floor, 2) if floor > 0 else None}
        print(f"{name:>22}: median {med:.3f}s ({med / floor:.1f}x a no-op rerun)", file=sys.stderr)
    print(f"{'first open':>22}: {first:.3f}s", file=sys.stderr)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
