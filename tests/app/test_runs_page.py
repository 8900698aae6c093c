"""The "Compare runs" page (issue 28), headless with Streamlit's AppTest: run a from the sidebar,
run b picked on the page, the aligned list and one query's diff drawn without an exception."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from aqe_core.opening import sample_sources
from aqe_core.plain_text import md_text

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))


def test_compare_runs_page_aligns_two_releases_of_one_job():
    a = next(s for s in sample_sources() if s.key == "capture:4.2.1-skew_join_inner.json.gz")
    b = next(s for s in sample_sources() if s.key == "capture:4.3.0-skew_join_inner.json.gz")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = a.path
    at.session_state["source_label"] = a.label
    at.session_state["source_ref"] = {"kind": "sample", "key": a.key}
    at.run()
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert any("Pick run b" in i.value for i in at.info)
    at.selectbox(key="runs_sample").select(b).run()
    assert not at.exception, at.exception
    assert any("3 queries matched, 0 only in a, 0 only in b" in c.value for c in at.caption)
    assert any(md_text("the release changed (4.2.1 -> 4.3.0)") in m.value for m in at.markdown)
    assert at.get("plotly_chart")
    at.button(key="runs-report").click().run()
    assert not at.exception, at.exception
