"""An upload through the sidebar's widget in a real Chromium (issue 37, requirement 3): the file
is spooled to disk while the session shows it, kept for shared links without a second copy,
removed when another upload replaces it, when the widget deletes it and when the session ends;
a file over the server's limit is refused with one line in the widget, nothing kept."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.lens_browser import ROOT, browser, browser_marks, running_app, upload_sidebar, wait_ready  # noqa: F401 - fixtures

pytestmark = browser_marks
PLAIN = ROOT / "sample_logs" / "eventlogs" / "local-1795309249168"  # Spark 3.0.1, JSON lines
LZ4 = ROOT / "sample_logs" / "eventlogs" / "local-1795309052779.lz4"


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    env = {"AQE_LENS_MAX_UPLOAD_MB": "1.5",  # the widget's own limit is 2 MB: the server's check answers
           "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "1"}
    with running_app(tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("st") / "streamlit.log", env=env) as app:
        yield app


def _spooled(home: Path) -> list[Path]:
    return sorted(p for p in (home / "upload-spool").rglob("*") if p.is_file() and p.name != ".alive")


def _until(check, seconds: float = 10) -> bool:
    deadline = time.time() + seconds
    while not check() and time.time() < deadline:
        time.sleep(0.2)
    return bool(check())


def test_an_upload_in_the_browser_lives_on_disk_as_long_as_its_session(lens, browser, tmp_path):
    ctx, page, sidebar = upload_sidebar(browser, lens.url, {"width": 1400, "height": 1000})
    picker = sidebar.locator('input[type="file"]')

    picker.set_input_files(str(PLAIN))
    wait_ready(page)
    sidebar.get_by_text(f"In use: {PLAIN.name}").wait_for()
    [first] = _spooled(lens.home)
    assert first.read_bytes() == PLAIN.read_bytes()
    [kept] = (lens.home / "uploads").glob(f"*/{PLAIN.name}")
    assert os.path.samefile(kept, first)  # kept for shared links: the same file, not a copy

    picker.set_input_files(str(LZ4))  # another upload replaces the source
    wait_ready(page)
    sidebar.get_by_text(f"In use: {LZ4.name}").wait_for()
    assert _until(lambda: [p.read_bytes() for p in _spooled(lens.home)] == [LZ4.read_bytes()])
    assert kept.read_bytes() == PLAIN.read_bytes()

    big = tmp_path / "big.log"
    big.write_bytes(b'{"Event":"x"}\n' * (1_800_000 // 14))  # 1.7 MiB: under the widget's 2, over the server's 1.5
    picker.set_input_files(str(big))
    sidebar.get_by_text("Upload refused: this file is over the server's upload limit of 1.5 MB").wait_for()
    # the widget let go of the lz4 file when the new one was picked; nothing of the refused one written
    assert _until(lambda: _spooled(lens.home) == [])

    picker.set_input_files(str(PLAIN))
    wait_ready(page)
    sidebar.get_by_text(f"In use: {PLAIN.name}").wait_for()
    assert len(_spooled(lens.home)) == 1
    sidebar.get_by_role("button", name=f"Remove {PLAIN.name}").click()  # removed in the widget
    wait_ready(page)
    assert _until(lambda: _spooled(lens.home) == [])

    picker.set_input_files(str(LZ4))
    wait_ready(page)
    sidebar.get_by_text(f"In use: {LZ4.name}").wait_for()
    assert len(_spooled(lens.home)) == 1
    ctx.close()  # the session ends (Streamlit keeps it 1 s for a reconnect here)
    assert _until(lambda: _spooled(lens.home) == [])
    assert kept.read_bytes() == PLAIN.read_bytes()
