"""'Re-run for real': the captured query runs again on Spark under each preset, and our
simulation of that preset must match what Spark then did (ground truth: the new run)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from aqe_core.opening import views_from_capture_file
from aqe_core.advise.verify import rerun_rows
from aqe_core.advise.whatif import compare_presets, simulate_preset
from aqe_core.user_presets import get_preset
from aqe_core.live.jobs import RunManager

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz"


@pytest.mark.slow
def test_rerun_matches_simulation_for_every_preset(spark_runtime, tmp_path, monkeypatch):
    """Same-release presets agree with Spark and their rows say "exact: yes"; the Spark 3.0.1
    defaults preset is simulated with 3.0.1's rules but runs on this Spark: its row says "yes"
    only where it is what Spark did, never on partitions or splits Spark did not make."""
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path))
    if not spark_runtime.version.startswith("4.3"):
        pytest.skip("the sample capture is from Spark 4.3")
    src = views_from_capture_file(str(SAMPLE))
    view = src.views[0]
    presets = [get_preset("actual"), get_preset("skew-sensitive"), get_preset("aggressive-coalescing"),
               get_preset("spark-3.0.1-defaults")]
    job = RunManager().submit_rerun(str(SAMPLE), int(view.query_id), presets)
    deadline = time.time() + 600
    while job.active and time.time() < deadline:
        time.sleep(0.5)
    assert job.state == "done", job.message
    simulated = compare_presets(view, presets)
    rerun = views_from_capture_file(job.result_path)
    assert len(rerun.views) == len(presets)
    rows = rerun_rows([p.name for p in presets], simulated, rerun.views)
    for preset, sim, real, row in zip(presets, simulated, rerun.views, rows):
        spark = simulate_preset(real, get_preset("actual"))  # what Spark did in the new run
        same = ([(s.partitions_after, s.sizes_after) for s in sim.shuffles]
                == [(s.partitions_after, s.sizes_after) for s in spark.shuffles]
                and sim.splits == spark.splits and sim.join_strategies == spark.join_strategies)
        assert row["exact"] == ("yes" if same else row["exact"]) and row["exact"].startswith("yes" if same else "no: ")
        if preset.spark_version is not None:
            continue  # another release's rules on this Spark: only the row's honesty is checked
        assert same, preset.name
def test_rerun_refuses_a_capture_without_query_text(tmp_path):
    from aqe_core.readers.capture_file import load_capture, save_capture

    cap = load_capture(SAMPLE)
    cap.run = {}
    for q in cap.queries:
        q.sql = None
    path = save_capture(cap, tmp_path / "nosql.json.gz")
    with pytest.raises(ValueError, match="query text"):
        RunManager().submit_rerun(str(path), cap.queries[0].index, [get_preset("actual")])
