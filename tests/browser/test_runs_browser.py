"""The Compare runs page in Chromium (issue 28): run a from the sidebar's samples, run b picked on
the page; the aligned list, one query's sentence and both runs' partition sizes on one chart."""
from __future__ import annotations

from tests.lens_browser import app_url, browser, browser_marks, goto_page, lens_app, pick_sample, shot, wait_ready  # noqa: F401
from aqe_core.opening import sample_sources
from aqe_core.plain_text import WORD_JOINER

pytestmark = browser_marks


def test_compare_runs_shows_the_release_that_changed(browser, app_url):
    by_key = {s.key: s for s in sample_sources()}
    a, b = by_key["capture:3.0.1-skew_join_inner.json.gz"], by_key["capture:4.3.0-skew_join_inner.json.gz"]
    page = browser.new_page(viewport={"width": 1500, "height": 2000})
    page.goto(app_url)
    wait_ready(page)
    pick_sample(page, a.label)
    goto_page(page, "Compare runs")
    page.get_by_test_id("stMain").get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name=b.label).click()
    wait_ready(page)
    page.get_by_text("3 queries matched, 0 only in a, 0 only in b").wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    main = " ".join(page.get_by_test_id("stMarkdown").all_inner_texts()).replace(WORD_JOINER, "")
    # the parts the split made are Spark's (4 in the 4.3.0 capture); "->" is drawn as an arrow
    assert "are now split for skew into 4 parts: the release changed (3.0.1 \u2192 4.3.0)" in main, main[:600]
    assert page.locator(".js-plotly-plot").count() >= 1
    page.locator(".pm").nth(1).wait_for(timeout=60_000)  # both final plans drawn as maps
    page.wait_for_timeout(1500)
    shot(page, "compare-runs")
