"""The "Compare runs" page (issue 28), headless with Streamlit's AppTest: run a from the sidebar,
run b picked on the page, the aligned list and one query's diff drawn without an exception."""
from __future__ import annotations

import json

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
    # the two final plans are maps (the Plans page's), run a's marked "before", run b's "after"
    maps = [json.loads(c.proto.json) for c in at.get("bidi_component")]
    assert [m["title"] for m in maps] == ["Run a: final plan", "Run b: final plan"], maps
    at.button(key="runs-report").click().run()
    assert not at.exception, at.exception


def test_the_fleet_lists_applications_with_two_runs_or_more():
    import pandas as pd

    from ui.runs import runs_by_app

    runs = pd.DataFrame({"app": ["nightly", "adhoc", "nightly", "nightly"],
                         "file": ["/l/n1.zstd", "/l/a1.zstd", "/l/n2.zstd", "/l/n3.zstd"]})
    assert runs_by_app(runs) == {"nightly": ["/l/n1.zstd", "/l/n2.zstd", "/l/n3.zstd"]}


def _fleet_scan(home: Path) -> Path:
    """A scan result holding two runs of one application: the data_growth run pair's plain logs."""
    import shutil

    import pandas as pd

    pairs = Path(__file__).resolve().parents[1] / "fixtures" / "run_pairs" / "data_growth"
    logs = []
    for run in ("a", "b"):
        logs.append(home / "logs" / f"nightly-{run}.zstd")
        logs[-1].parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(pairs / f"{run}.zstd", logs[-1])
    ex = pd.DataFrame({"file": [str(p) for p in logs], "execution_id": [2, 2], "findings": ["", ""],
                       "error": [None, None], "preset_changes": ["{}", "{}"], "wasted_task_ms": [5, 9],
                       "app_name": ["nightly", "nightly"], "app_id": ["app-1", "app-2"],
                       "app_start_ms": [1_000, 2_000]})
    fi = pd.DataFrame({"file": [str(logs[0])], "execution_id": [2], "finding": ["skew"]})
    scan = home / "scan"
    for name, df in (("executions", ex), ("findings", fi)):
        (scan / name).mkdir(parents=True)
        df.to_parquet(scan / name / "part-0.parquet")
    return scan


def test_the_fleet_compares_two_runs_of_one_application(tmp_path):
    scan = _fleet_scan(tmp_path / "lens-home")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/fleet.py").run()
    at.text_input(key="fleet_path").input(str(scan)).run()
    assert not at.exception, at.exception
    at.selectbox(key="fleet_diff_app").select("nightly").run()
    assert not at.exception, at.exception
    assert any("5 queries matched, 0 only in a, 0 only in b" in c.value for c in at.caption)
    assert any(md_text("now split for skew") in m.value for m in at.markdown)
