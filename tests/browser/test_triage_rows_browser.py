"""Issue 38, requirement 1 (every row opens), in a real headless Chromium: on the bundled Spark
4.3.0 rolling event log (recorded by real Spark; queries 0, 1, 4, 5 and 9 are commands and
writes that AQE did not apply to), ticking the Overview row of a query where AQE was not applied
opens that query, and the server runs the page script a bounded number of times after the click.

The runs are counted on the server: Streamlit logs "Running script" at debug level once per run
(``ScriptRunner._run_script``), so the count includes the runs the script asks for itself with
``st.rerun`` (which a browser sees only as one long run). Before the fix the row set the query,
the Query picker (which listed only adaptive queries) reset it, and the row set it again: the
server ran the script again and again until the row was unticked.
"""
from __future__ import annotations

import re
import time

from tests.lens_browser import browser, browser_marks, choose, query_box, running_app, shot, wait_ready  # noqa: F401 - fixtures

pytestmark = browser_marks


def _runs(log) -> int:
    return log.read_text(errors="replace").count("Running script")


def test_a_row_where_aqe_did_not_apply_opens_its_query_and_settles(browser, tmp_path):
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    log = tmp_path / "streamlit.log"
    with running_app(tmp_path / "home", log, {"STREAMLIT_LOGGER_LEVEL": "debug"}) as app:
        ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.goto(app.url)
        wait_ready(page)
        expect(page.get_by_text("Spark 4.3.0 default: rolling directory").first).to_be_visible()
        # only the rows where AQE was not applied: the first is query 0 (ranked equal, then by id)
        page.get_by_test_id("stMultiSelect").click()
        page.get_by_role("option", name="AQE not applied").click()
        page.keyboard.press("Escape")
        wait_ready(page)
        expect(page.get_by_text(re.compile(r"^5 of 11 SQL executions"))).to_be_visible()
        page.wait_for_timeout(1000)
        before = _runs(log)
        box = page.locator('.st-key-executions [data-testid="stDataFrame"]').first.bounding_box()
        page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)  # the first row's selection cell
        page.wait_for_timeout(500)
        wait_ready(page)
        time.sleep(8)  # a loop shows as runs piling up in these seconds
        runs = _runs(log) - before
        shot(page, "triage-no-aqe-row")
        assert runs <= 4, f"{runs} script runs in ~9 s after one row click"
        # the page shows the row's query, the address names it, and the picker shows it too
        expect(page.get_by_role("heading", name=re.compile(r"^Query 0: "))).to_be_visible()
        assert re.search(r"[?&]q=0(&|$)", page.url), page.url
        expect(query_box(page).get_by_role("combobox")).to_have_value(re.compile(r"^#0 .*\(no AQE\)"))
        expect(page.get_by_text("Why AQE did not apply").first).to_be_visible()
        # the row stays ticked; a query picked afterwards is the one shown (the row does not take it back)
        choose(page, query_box(page), page.get_by_role("option", name=re.compile(r"^#2 ")))
        wait_ready(page)
        expect(page.get_by_role("heading", name=re.compile(r"^Query 2: "))).to_be_visible()
        assert re.search(r"[?&]q=2(&|$)", page.url), page.url
        ctx.close()
