"""Dashboard speed in a real browser (issue targets: a page with both plans and four histograms
interactive <= 2 s after load; report file <= 6 MB). Prints figures; asserts nothing.

    python bench/bench_ui.py
Needs Debian's chromium at /usr/bin/chromium (tools/test.sh installs it).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    from playwright.sync_api import sync_playwright

    port = _port()
    home = tempfile.mkdtemp(prefix="aqe-lens-bench-")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless=true",
                             "--server.address=127.0.0.1", f"--server.port={port}", "--browser.gatherUsageStats=false",
                             "--server.fileWatcherType=none"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, AQE_LENS_HOME=home))
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(180):
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--disable-gpu", "--disable-background-networking"])
            page = b.new_page(viewport={"width": 1600, "height": 1200})
            page.goto(url)  # warm-up: first load parses the sample and fills caches
            page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=120_000)
            page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").last.click()
            page.get_by_role("option", name="#10 skewed join with aggregation").click()
            page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
            for name, nav, selector, count in (("Plans page (2 plan graphs)", "Plans", ".js-plotly-plot .scatterlayer", 2),
                                               ("Partitions page (3 histograms with lines)", "Partitions", ".js-plotly-plot .shapelayer", 3)):
                times = []
                for _ in range(3):
                    page.get_by_test_id("stSidebarNav").get_by_text("Overview", exact=True).click()
                    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
                    page.wait_for_timeout(500)
                    t = time.perf_counter()
                    page.get_by_test_id("stSidebarNav").get_by_text(nav, exact=True).click()
                    page.wait_for_function(f"document.querySelectorAll('{selector}').length >= {count}", timeout=60_000)
                    times.append(time.perf_counter() - t)
                print(f"{name}: interactive {min(times):.2f} s best, {sorted(times)[1]:.2f} s median after the click (target <= 2 s)")
            t = time.perf_counter()
            page.goto(f"{url}/?q=2")
            page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
            print(f"fresh page load (new session, cached source): {time.perf_counter() - t:.2f} s")
            b.close()
        from aqe_core.views.compare import compare_presets
        from aqe_core.figures.histograms import histogram_figure
        from aqe_core.views.compare import BUILTIN_PRESETS
        from aqe_core.report import build_report
        from aqe_core.sources import default_sample, load_source
        from ui.plans import plan_figures_for

        src = load_source(default_sample().path)
        view = src.view("2")
        plans, changes = plan_figures_for(view)
        html = build_report(view, source_label=src.label, plan_figures=plans, plan_changes=changes,
                            histogram_figures=[(s.label, histogram_figure(s)) for s in view.shuffles],
                            comparison=compare_presets(view, BUILTIN_PRESETS))
        print(f"report file: {len(html.encode()) / 2**20:.2f} MiB (target <= 6 MB)")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__":
    main()
