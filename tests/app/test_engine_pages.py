"""Issue 38, requirement 2, in the app: a Databricks Photon log (the real recorded small sample
rewritten in Photon's names by tests/engine_logs.py) through the Overview, Plans, Partitions and
What-if pages. The engine is named; no rename is a join change, a finding, an "AQE: new" mark or a
"? -> ?" read; every page renders without an exception."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests import engine_logs

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PHOTON = engine_logs.OUT / f"photon-{engine_logs.SMALL.name}"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))
    monkeypatch.setenv("AQE_LENS_ROOTS", str(PHOTON.parent))


def _texts(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "subheader", "text")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def _open(page: str | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = str(PHOTON)
    at.session_state["source_label"] = PHOTON.name
    at.session_state["source_ref"] = {"kind": "path", "path": str(PHOTON)}
    at.run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("page", [None, "plans", "partitions", "whatif"])
def test_a_photon_log_reads_as_photon_on_every_page(page):
    at = _open(page)
    text = _texts(at)
    assert "Databricks Photon" in text, text[:2000]
    assert "-> Photon" not in text and "? -> ?" not in text
    if page is None:
        table = at.dataframe[0].value
        assert not [f for f in table["findings"] if "Photon" in str(f)]
        assert not [w for w in table["what AQE did"] if "Photon" in str(w)]
