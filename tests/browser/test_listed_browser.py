"""Issue 41 in a real browser: a log past the server's ``max_executions`` (the real PySpark 4.3.0
streaming log, 72 executions, under max_executions = 5) opens on the Overview listed by query;
the sidebar's picker opens an execution on demand, and the Overview and Plans draw it, with no
exception on the page."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.lens_browser import browser, browser_marks, goto_page, running_app, wait_ready  # noqa: F401 - fixtures

pytestmark = browser_marks

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "fixtures" / "eventlogs" / "streaming" / "4.3.0" / "plain" / "local-1795904411977.zstd"


@pytest.fixture(scope="module")
def listed_app(tmp_path_factory):
    d = tmp_path_factory.mktemp("listed")
    root = d / "root"
    root.mkdir()
    shutil.copyfile(LOG, root / LOG.name)
    with running_app(d / "home", d / "streamlit.log", {"AQE_LENS_ROOTS": str(root), "AQE_LENS_MAX_EXECUTIONS": "5"}) as app:
        yield app, root / LOG.name


def test_a_listed_log_opens_an_execution_from_the_sidebar(listed_app, browser):
    app, log = listed_app
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(90_000)
    page.goto(app.url)
    wait_ready(page)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Path on server").click()
    wait_ready(page)
    sidebar.get_by_label("Path to an event log, log directory or capture").fill(str(log))
    page.keyboard.press("Enter")
    wait_ready(page)
    buttons = sidebar.locator("[data-testid=stBaseButton-secondary]")
    buttons.filter(has_text=re.compile("^Open$")).click()
    wait_ready(page)
    main = page.get_by_test_id("stMain")
    assert "This log holds 72 SQL executions, more than the server keeps (max_executions = 5)" in main.inner_text()
    opener = buttons.filter(has_text=re.compile("^Open execution")).first
    eid = opener.inner_text().split()[-1]
    opener.click()
    wait_ready(page)
    assert any(h.startswith(f"Query {eid}: ") for h in page.locator("h3").all_inner_texts())
    goto_page(page, "Plans")
    assert page.locator("h1").first.inner_text() == "Plans"
    assert "What AQE changed" in main.inner_text()  # (the plan itself is drawn in a frame)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()
