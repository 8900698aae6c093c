"""The Partitions page counts the keys in the run queue (issue 42): pressing "Count the keys on
Spark" queues the count and returns; later runs of the page show the keys the job counted.
Real Spark (the suite's one runtime, which the app's run queue finds running)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from aqe_core.opening import sample_sources

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.mark.slow
def test_the_count_runs_in_the_background_and_its_keys_show(spark_runtime, tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))
    sample = next(s for s in sample_sources() if s.key == "capture:4.3.0-skew_join_inner.json.gz")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = sample.path
    at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
    at.run()
    at.switch_page("pages/partitions.py").run()
    assert not at.exception, at.exception
    (button,) = [b for b in at.button if b.label == "Count the keys on Spark"]
    button.click().run()
    assert not at.exception, at.exception
    deadline = time.time() + 300
    while time.time() < deadline and not any("verified against Spark's record" in c.value for c in at.caption):
        assert not at.error, [e.value for e in at.error]
        time.sleep(1.0)
        at.run()
    assert any("verified against Spark's record" in c.value for c in at.caption), [c.value for c in at.caption]
    assert not [b for b in at.button if b.label == "Count the keys on Spark"]  # counted: no second count offered
    assert any(len(df.value) and "key" in df.value.columns for df in at.dataframe)
