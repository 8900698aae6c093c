"""The Fleet page keeps its folder (issue 39, requirement 5): opening a row goes to another page,
where Streamlit drops the folder box's widget value; coming back found the box empty."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_runs_page import _fleet_scan
from ui import state

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))


def test_the_fleet_page_keeps_its_folder_across_pages(tmp_path):
    scan = _fleet_scan(tmp_path / "lens-home")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/fleet.py").run()
    at.text_input(key=state.FLEET_PATH).input(str(scan)).run()
    assert [m.value for m in at.metric][:1] == ["2"]  # (two logs)
    at.switch_page("pages/overview.py").run()  # where an opened row goes
    assert not at.exception, at.exception
    at.switch_page("pages/fleet.py").run()
    assert not at.exception, at.exception
    assert at.text_input(key=state.FLEET_PATH).value == str(scan)
    assert [m.value for m in at.metric][:1] == ["2"]


def test_the_fleet_page_lists_each_logs_queries_run_more_than_once(tmp_path):
    """A scan of a real log whose queries repeat (one run 40 times, 20, 5, 2): the page reads the
    scan's queries table and shows one row per repeated query, most executions first (issue 41)."""
    from aqe_core.fleet.result import load_scan
    from aqe_core.fleet.scan import run_scan
    from tests.fleet.test_fleet_here import REPEATED

    out = tmp_path / "lens-home" / "scan"
    run_scan(None, [str(REPEATED)], str(out), presets=False)
    repeated = load_scan(str(out), roots=[str(tmp_path)]).repeated_queries()
    assert list(repeated["executions"][:4]) == [40, 20, 5, 2]
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/fleet.py").run()
    at.text_input(key=state.FLEET_PATH).input(str(out)).run()
    assert not at.exception, at.exception
    assert any(e.label == f"Queries run more than once ({len(repeated)})" for e in at.expander)
    shown = next(df.value for df in at.dataframe if "executions" in df.value.columns and "query" in df.value.columns)
    assert list(shown["executions"][:4]) == [40, 20, 5, 2]
