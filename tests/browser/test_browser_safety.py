"""Safe to share, seen from a real Chromium against ``streamlit run app.py`` under the
repository's .streamlit/config.toml:

* the app makes no request to any host but its own (no usage stats, font or plotly CDNs), on
  every page;
* an event log whose app name and SQL descriptions hold a markdown image and an HTML ``<img>``
  shows them as literal text, and nobody fetches them (a local HTTP server counts hits);
* the server's defaults: bound to 127.0.0.1, XSRF on, no developer toolbar.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.listening import listen_addresses
from tests.lens_browser import (PAGE_TITLES, ROOT, browser, browser_marks, free_port, goto_page,  # noqa: F401 - fixtures
                          lens_app, shot, upload_sidebar, wait_ready)

pytestmark = browser_marks

PLAIN_SAMPLE = ROOT / "sample_logs" / "eventlogs" / "local-1795309249168"  # Spark 3.0.1, uncompressed JSON lines
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


class _Counter(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # http.server's name
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def bait():
    """A local HTTP server that counts every request: any hit means a viewer's browser fetched
    something named in a log."""
    _Counter.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Counter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], _Counter.hits
    server.shutdown()
    server.server_close()


def _hostile_log(path: Path, port: int) -> tuple[str, str]:
    """The plain sample with its app name and every SQL description rewritten to hostile text."""
    md_img = f"![x](http://127.0.0.1:{port}/px.png)"
    html_img = f'<img src="http://127.0.0.1:{port}/img.png">'
    app_name = f"{md_img} {html_img} :red[app] $x^2$ **bold**"
    out = []
    for line in PLAIN_SAMPLE.read_text().splitlines():
        ev = json.loads(line)
        if ev.get("Event") == "SparkListenerApplicationStart":
            ev["App Name"] = app_name
        elif ev.get("Event", "").endswith("SparkListenerSQLExecutionStart"):
            ev["description"] = f"{md_img} {html_img} {ev.get('description', '')}"
        out.append(json.dumps(ev))
    path.write_text("\n".join(out) + "\n")
    return md_img, html_img


def _text(locator) -> str:
    """Visible text as a reader copies it (without the invisible word joiners that keep bare URLs
    from becoming links, see aqe_core.plain_text)."""
    from aqe_core.plain_text import WORD_JOINER

    return " ".join(locator.all_inner_texts()).replace(WORD_JOINER, "")


def _bait_elements(page, port: int) -> list[str]:
    """Elements that point at the bait server (an image, a link), each with its Streamlit element."""
    return page.evaluate("""port => [...document.querySelectorAll(`img[src*=":${port}"], a[href*=":${port}"]`)]
        .map(e => { let t = e; while (t && !(t.dataset && t.dataset.testid)) t = t.parentElement;
                    return `${e.tagName} in ${t ? t.dataset.testid : "?"}`; })""", port)


def _external(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOCAL_HOSTS


def test_no_page_makes_a_request_to_another_host(lens_app, browser):
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    seen: list[str] = []
    ctx.on("request", lambda req: seen.append(req.url))
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(lens_app.url)
    wait_ready(page)
    expect(page.get_by_role("heading", name="AQE Lens")).to_be_visible()
    for title in PAGE_TITLES:
        goto_page(page, title)
        page.wait_for_timeout(500)  # let charts, fonts and icons load
    goto_page(page, "Plans")
    page.locator(".pm-box").first.click()  # the plan map's click and details code
    page.wait_for_timeout(500)
    ctx.close()
    assert seen, "no request recorded at all"
    assert sorted(set(u for u in seen if _external(u))) == []


def test_markdown_and_html_in_a_log_are_text_and_fetched_by_nobody(lens_app, browser, bait, tmp_path):

    port, hits = bait
    log = tmp_path / "hostile_app"
    md_img, html_img = _hostile_log(log, port)
    ctx, page, sidebar = upload_sidebar(browser, lens_app.url, {"width": 1500, "height": 1100})
    sidebar.locator('input[type="file"]').set_input_files(str(log))
    wait_ready(page)
    sidebar_text = _text(sidebar)
    assert md_img in sidebar_text and html_img in sidebar_text  # the source label: the app name, as text
    main = page.get_by_test_id("stMain")
    heading = _text(main.get_by_role("heading").filter(has_text="Query"))
    assert md_img in heading and html_img in heading  # the SQL description, as text
    assert "$x^2$ **bold**" in _text(main)
    assert _bait_elements(page, port) == []
    path = shot(page, "hostile_overview")
    assert path.exists()
    for title in ("Plans", "Partitions", "What-if", "Compare presets", "Share"):
        goto_page(page, title)
        assert md_img in _text(sidebar), title
        assert _bait_elements(page, port) == [], title
    page.wait_for_timeout(1000)
    ctx.close()
    assert hits == []


def test_server_defaults_from_config_toml(lens_app, browser):
    """Bound to 127.0.0.1 only; XSRF on; viewers get no Deploy button or developer menu."""
    import urllib.error
    import urllib.request

    listening = listen_addresses(lens_app.port)
    assert listening == {"127.0.0.1"}, listening
    # XSRF on: an upload without the session's token is refused
    req = urllib.request.Request(f"{lens_app.url}/_stcore/upload_file/x/y", data=b"--b--\r\n", method="PUT",
                                 headers={"Content-Type": "multipart/form-data; boundary=b"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 403 and b"XSRF" in err.value.read()
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(lens_app.url)
    wait_ready(page)
    assert page.get_by_test_id("stAppDeployButton").count() == 0
    assert page.get_by_role("button", name="Deploy").count() == 0
    ctx.close()
