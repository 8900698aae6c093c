"""End to end in a real headless Chromium (Debian's, never a downloaded build) against
``streamlit run app.py`` on 127.0.0.1 (server and browser from tests/lens_browser.py).
Screenshots go to ``artifacts/``.
"""
from __future__ import annotations

import re

from tests.lens_browser import (app_url, browser, browser_marks, goto_page as _goto_page, lens_app,  # noqa: F401 - fixtures
                          query_box, sample_box, shot as _shot, wait_ready as _wait_ready)

pytestmark = browser_marks


def test_user_journey(app_url, browser, tmp_path):
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1100}, accept_downloads=True)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=app_url)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app_url)
    _wait_ready(page)
    expect(page.get_by_role("heading", name="AQE Lens")).to_be_visible()
    # pick a bundled sample: the Spark 3.5.9 zstd event log
    sample_box(page).click()
    page.get_by_role("option", name="event log: Spark 3.5.9 single file, zstd").click()
    _wait_ready(page)
    expect(page.get_by_text("Spark 3.5.9").first).to_be_visible()
    _shot(page, "overview")

    # Plans: two plan maps, side by side
    _goto_page(page, "Plans")
    maps = page.locator(".pm")
    expect(maps.nth(1)).to_be_visible()
    assert maps.count() >= 2
    expect(maps.nth(0).locator(".pm-box").first).to_be_visible()
    _shot(page, "plans")

    # Partitions: a histogram with the median, skew threshold and target lines
    _goto_page(page, "Partitions")
    first = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').first
    expect(first.locator(".shapelayer path")).to_have_count(4)
    labels = " ".join(first.locator(".annotation-text").all_text_contents())
    assert "median" in labels and "skew threshold" in labels and "target" in labels
    _shot(page, "partitions")

    # Compare presets: change the selection and the table follows
    _goto_page(page, "Compare presets")
    expect(page.locator(".st-key-comparison-table")).to_be_visible()
    metrics = page.get_by_test_id("stMetric")
    expect(metrics).to_have_count(3)
    page.get_by_test_id("stMultiSelect").click()
    page.get_by_role("option", name="aggressive-coalescing").click()
    page.keyboard.press("Escape")
    _wait_ready(page)
    expect(metrics).to_have_count(4)
    _shot(page, "compare")

    # Share: pick another query, download the report, open it with the network blocked
    _goto_page(page, "Share")
    query_box(page).click()
    page.get_by_role("option", name="#6 runtime broadcast join").click()
    _wait_ready(page)
    with page.expect_download() as dl:
        page.get_by_test_id("stDownloadButton").get_by_role("button").click()
    report = tmp_path / "report.html"
    dl.value.save_as(report)
    assert report.stat().st_size < 6 * 1024 * 1024
    offline = browser.new_context(offline=True)
    requests = []
    offline.route("**/*", lambda route: (requests.append(route.request.url), route.continue_())
                  if route.request.url.startswith("file:") else (requests.append(route.request.url), route.abort()))
    rp = offline.new_page()
    rp.goto(report.as_uri())
    expect(rp.locator(".js-plotly-plot").first).to_be_visible()  # the histograms
    assert rp.locator(".js-plotly-plot").count() >= 1
    expect(rp.locator(".plan-map .pm-box").first).to_be_visible()  # the plans, drawn offline
    assert rp.locator(".plan-map").count() == 2
    assert [u for u in requests if not u.startswith("file:")] == []
    _shot(rp, "report_offline")
    offline.close()

    # Copy link: the real address lands on the clipboard; open it in a fresh browser context
    page.get_by_role("button", name="Copy link").click()
    _wait_ready(page)
    code = page.get_by_test_id("stCode").first.inner_text()
    rid = re.search(r"report=([0-9a-f]{16})", code).group(1)
    page.wait_for_timeout(500)
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(app_url) and copied.endswith(f"?report={rid}"), copied
    fresh = browser.new_context(viewport={"width": 1500, "height": 1100})
    fp = fresh.new_page()
    fp.goto(copied)
    _wait_ready(fp)
    _shot(fp, "shared_link")
    _shot(page, "share")
    expect(fp.get_by_role("heading", name="AQE Lens")).to_be_visible()
    expect(fp.get_by_role("heading", name="Query 6: runtime broadcast join")).to_be_visible()
    fresh.close()
    ctx.close()


def test_fresh_run_becomes_the_source(app_url, browser):
    """Run a built-in workload from the Run page; every page then shows the new capture."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = ctx.new_page()
    page.set_default_timeout(240_000)
    page.goto(app_url)
    _wait_ready(page)
    _goto_page(page, "Run")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_text("The capture is now the source")).to_be_visible(timeout=240_000)
    _shot(page, "run_done")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("capture of skew_join_inner")
    _goto_page(page, "Partitions")
    first = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').first
    expect(first.locator(".annotation-text").first).to_be_visible()
    labels = " ".join(first.locator(".annotation-text").all_text_contents())
    assert "median" in labels and "skew threshold" in labels and "target" in labels
    expect(page.get_by_text("Approximate:")).to_have_count(0)  # a capture's lines are exact
    _shot(page, "run_partitions")
    _goto_page(page, "Compare presets")
    expect(page.get_by_test_id("stMetric")).to_have_count(3)
    # Re-run for real: its progress redraws itself and the table appears without any click
    page.get_by_role("button", name="Re-run for real").click()
    expect(page.locator('.st-key-rerun [data-testid="stDataFrame"]')).to_be_visible(timeout=240_000)
    _shot(page, "rerun_done")
    expect(page.get_by_role("button", name="Refresh")).to_have_count(0)
    _goto_page(page, "Run")
    expect(page.get_by_text("Past runs")).to_be_visible()
    ctx.close()


def test_overview_says_which_size_decided_each_join(app_url, browser):
    """Issue 10: the bundled capture of an aggregate broadcast at run time; the Overview says, per
    join, which side's runtime size met which threshold, and that our rules agree."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app_url)
    _wait_ready(page)
    sample_box(page).click()
    page.get_by_role("option", name=re.compile("an aggregate over a small shuffle stage")).click()
    _wait_ready(page)
    expect(page.get_by_text("3/3 joins agree").first).to_be_visible()
    expect(page.get_by_text("Join strategies")).to_be_visible()
    # a new source opens on its first query (the default preset), never the old source's pick
    expect(page.get_by_text(re.compile(r"^Inner join on .*shuffle stage 1 below the aggregate\) fits the static"
                                       r" broadcast threshold 256 KiB"))).to_be_visible()
    # each join's trace, folded under its sentence, names the condition that decided it
    page.get_by_text(re.compile(r"^Join decision trace: broadcast the left side")).first.click()
    expect(page.get_by_text(re.compile(r"the side's size fits the broadcast threshold: pass")).first).to_be_visible()
    _shot(page, "overview-join-decisions")
    ctx.close()


def test_triage_search_and_row_click_open_the_finding(app_url, browser):
    """Issue 12: search "skew" on the Overview, click the top row: its Partitions page opens."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app_url)
    _wait_ready(page)
    page.get_by_role("textbox", name="Search").fill("skew")
    page.keyboard.press("Enter")
    _wait_ready(page)
    expect(page.get_by_text(re.compile(r"^\d+ of \d+ SQL executions"))).to_be_visible()
    box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)  # the first row's selection box
    page.wait_for_url(re.compile(r"/partitions\?q=\d+"))
    _wait_ready(page)
    expect(page.get_by_role("heading", name="Partitions")).to_be_visible()
    _shot(page, "triage-row-opened")
    ctx.close()
