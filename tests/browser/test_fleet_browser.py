"""The Fleet page in Chromium (issue 14): a real scan result (the shared Spark session scans a
directory of real event logs), opened by path; filter by a finding, sort by wasted task time,
select a row: its log and query open on the page of its finding; a preset's fleet impact."""
from __future__ import annotations

import shutil
from pathlib import Path


from tests.lens_browser import browser, browser_marks, goto_page, running_app, shot, wait_ready  # noqa: F401 - fixtures

pytestmark = browser_marks
ROOT = Path(__file__).resolve().parents[2]


def test_the_fleet_page_opens_a_scan_and_an_execution(spark, browser, tmp_path):
    from aqe_core.fleet.scan import run_scan

    logs = tmp_path / "data" / "logs"
    shutil.copytree(ROOT / "sample_logs" / "eventlogs", logs)
    (logs / "MANIFEST.json").unlink()
    out = tmp_path / "data" / "scan"
    stray = tmp_path / "elsewhere" / "local-1795309249168"  # scanned, but outside the app's roots
    stray.parent.mkdir()
    shutil.copy(logs / stray.name, stray)
    run_scan(spark, [str(logs), str(stray)], str(out))
    with running_app(tmp_path / "home", tmp_path / "app.log", {"AQE_LENS_ROOTS": str(tmp_path / "data")}) as app:
        page = browser.new_page(viewport={"width": 1500, "height": 1800})
        page.goto(app.url + "/fleet")
        wait_ready(page)
        page.get_by_label("Scan result directory on this server").fill(str(out))
        page.keyboard.press("Enter")
        wait_ready(page)
        page.get_by_text("SQL executions", exact=True).wait_for(timeout=60_000)
        assert page.get_by_test_id("stMetricValue").nth(0).inner_text() == str(len(list(logs.iterdir())) + 1)
        # said up front, before any click: the stray log's rows open nothing here, and why
        page.get_by_text("1 log is outside this server's roots").wait_for(timeout=30_000)
        assert stray.name in page.get_by_test_id("stAlert").first.inner_text()
        page.get_by_text("A preset across the fleet").click()
        page.get_by_text("executions change").wait_for(timeout=30_000)
        page.wait_for_timeout(2500)
        shot(page, "fleet")
        page.get_by_label("Findings").click()
        page.get_by_role("option", name="skewed reducers split").first.click()
        page.keyboard.press("Escape")
        wait_ready(page)
        grid = page.get_by_test_id("stDataFrame").first
        grid.wait_for(timeout=30_000)
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 12, box["y"] + 55)  # the first row's selection cell
        page.wait_for_url("**/partitions**", timeout=60_000)
        wait_ready(page)
        page.get_by_role("heading", name="Partitions").wait_for(timeout=60_000)
        assert page.get_by_text("skew").first.is_visible()
        page.wait_for_timeout(2500)
        shot(page, "fleet-opened")
