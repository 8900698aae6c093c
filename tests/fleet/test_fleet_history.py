"""A scan directory keeps every scan (issue 27): a rescan reads only new or changed logs, the
Fleet page follows each application's runs over time, and ``scan --fail-on`` fails a pipeline
when an application got worse. The logs are two real runs of one PySpark application (the same
``spark.app.name``), the second with a skewed join the first did not have."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aqe_core.fleet.gate import RuleError, parse_rules
from aqe_core.fleet.history import Fingerprint, fingerprint_local, unchanged

ROOT = Path(__file__).resolve().parents[2]

RUNS = r'''
import os, sys
from pyspark.sql import SparkSession
from aqe_core.live.workloads import WORKLOADS
out = sys.argv[1]
for n, name in enumerate(["aggregate_coalesce", "skew_join_inner"]):  # the second run adds a skewed join
    w = WORKLOADS[name]
    os.makedirs(f"{out}/run{n}")
    b = (SparkSession.builder.master("local[2]").appName("nightly_etl").config("spark.ui.enabled", "false")
         .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", f"{out}/run{n}"))
    for k, v in w.base_conf(0.5).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    w.views(spark, 0.5)  # the workload's tables, as temporary views
    spark.sql(w.sql).collect()
    spark.stop()
'''


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two real runs of the application ``nightly_etl``: (first log, second log)."""
    out = tmp_path_factory.mktemp("runs")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", RUNS, str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tuple(next((out / f"run{n}").iterdir()) for n in (0, 1))


def _copy(log: Path, into: Path) -> None:
    """A log into the scanned folder (Spark 4 writes a rolling directory by default)."""
    (shutil.copytree if log.is_dir() else shutil.copy)(log, into / log.name)


@pytest.mark.slow
def test_rescans_read_only_new_logs_and_the_gate_fails_on_a_worse_run(spark, two_runs, tmp_path, capsys, monkeypatch):
    from aqe_core.cli import main
    from aqe_core.fleet.history import app_runs, worse_since_last
    from aqe_core.fleet.result import load_scan

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    logs, out = tmp_path / "logs", tmp_path / "scans"
    logs.mkdir()
    _copy(two_runs[0], logs)
    args = ["scan", str(logs), "-o", str(out), "--no-presets", "--no-progress", "--fail-on", "findings_increase>0"]
    assert main(args) == 0  # one run: nothing to compare with
    first = capsys.readouterr().err
    _copy(two_runs[1], logs)
    assert main(args) == 4  # the second run of nightly_etl has more findings than the first
    second = capsys.readouterr().err
    assert "1 files," in second and "(1 unchanged since the last scan, not read again)" in second
    assert "FAILED findings_increase>0: nightly_etl:" in second, second
    # the failure names the query behind it (id and description) and its new findings (issue 39)
    assert "new findings in query #" in second, second
    assert main(args) == 0  # nothing new: nothing read, nothing breached
    third = capsys.readouterr().err
    assert "0 files," in third and "(2 unchanged" in third, third
    # --full reads both again: the later run is again worse than the one before it
    assert main(args + ["--full"]) == 4 and "2 files," in capsys.readouterr().err

    scan = load_scan(str(out), roots=[str(tmp_path)])
    assert len(scan.scans) == 3 and "scan" in scan.executions.columns  # the scan that read nothing left no rows
    assert set(scan.executions["file"]) == {str((logs / p.name).resolve()) for p in two_runs}  # the fleet now
    assert scan.executions.groupby("file")["scan"].nunique().eq(1).all()
    runs = app_runs(scan.history)
    assert list(runs["app"]) == ["nightly_etl", "nightly_etl"] and runs["start"].is_monotonic_increasing
    assert [c.app for c in worse_since_last(scan.history[scan.history["scan"] <= scan.scans[1]])] == ["nightly_etl"]
    assert first.index("scan: Spark") > 0  # (the first scan printed its banner)

    # the Fleet page, headless: the trend is drawn and the worse application named
    from streamlit.testing.v1 import AppTest

    from ui import state

    monkeypatch.setenv("AQE_LENS_ROOTS", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/fleet.py").run()
    at.text_input(key=state.FLEET_PATH).input(str(out)).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("got worse in the latest scan" in m.value for m in at.markdown)
    worse = at.dataframe[0].value
    assert list(worse["application"]) == ["nightly_etl"] and (worse["now"] > worse["findings before"]).all()


def test_a_changed_or_grown_log_is_read_again(tmp_path):
    import pandas as pd

    log = tmp_path / "app-1"
    log.write_text("{}\n")
    rolling = tmp_path / "eventlog_v2_app-2"
    rolling.mkdir()
    (rolling / "events_1_app-2").write_text("{}\n")
    prints = {str(p): fingerprint_local(str(p)) for p in (log, rolling)}
    before = pd.DataFrame([{"file": f, "size": fp.size, "mtime_ms": fp.mtime_ms, "parts": fp.parts, "scan": "1"}
                           for f, fp in prints.items()])
    assert unchanged(prints, before) == set(prints)
    (rolling / "events_2_app-2").write_text("{}\n")  # Spark rolled a new part
    log.write_text("{}\n{}\n")  # an .inprogress log grew
    now = {str(p): fingerprint_local(str(p)) for p in (log, rolling)}
    assert now[str(rolling)].parts == 2 and unchanged(now, before) == set()
    assert fingerprint_local(str(tmp_path / "gone")) is None
    assert Fingerprint(1, 2) == Fingerprint(1, 2, 1)


def test_gate_rules_parse_or_say_how_to_write_them():
    rules = parse_rules(["wasted_task_time_increase>20%,wasted_task_time>=1500ms", "unreadable>0"])
    assert [str(r) for r in rules] == ["wasted_task_time_increase>20%", "wasted_task_time>=1.5s", "unreadable>0"]
    for bad in ["wasted>20%", "findings>2s", "wasted_task_time>5", "findings_increase>>1", "unreadable>0%"]:
        with pytest.raises(RuleError, match="--fail-on"):
            parse_rules([bad])


def test_a_log_found_gone_leaves_the_fleet_until_it_is_read_again():
    import pandas as pd

    from aqe_core.fleet.history import current_rows, gone_logs, known_logs, without_removed

    reads = pd.DataFrame([{"file": f, "size": 1, "mtime_ms": 1, "parts": 1, "scan": s}
                          for f, s in (("a", "1"), ("b", "1"), ("a", "3"))])
    removed = pd.DataFrame([{"file": "a", "scan": "2"}, {"file": "b", "scan": "2"}])
    assert set(known_logs(reads, removed)) == {"a"}  # b gone; a read again after its removal
    assert unchanged({"b": Fingerprint(1, 1, 1)}, reads, removed) == set()  # b put back as it was: read again
    assert gone_logs(["a", "b", "c"], ["a"], exists=lambda f: f == "c") == ["b"]  # c: still there, elsewhere
    rows = pd.DataFrame({"file": ["a", "b", "a"], "scan": ["1", "1", "3"], "execution_id": [1, 1, 1]})
    assert list(current_rows(without_removed(rows, removed)).itertuples(index=False, name=None)) == [("a", "3", 1)]


def test_a_breach_names_its_queries_and_a_row_without_numbers_does_not_break_it():
    """The gate's query names (issue 39): new findings by query, wasted time grown by query; an
    unreadable execution's row (no id, no numbers) is neither named nor a crash."""
    import numpy as np
    import pandas as pd

    from aqe_core.fleet.gate import _queries

    now = pd.DataFrame({"file": ["a", "a", "b", "b"], "execution_id": [1, np.nan, 1, 2],
                        "description": ["q1", None, "q1", "q2"], "findings": ["x", "", "x,y", ""],
                        "wasted_task_ms": [100, np.nan, np.nan, 5000]})
    assert _queries(now, "b", "a", True) == "; new findings in query #1 (q1): y"
    assert _queries(now, "b", "a", False) == "; query #2 (q2): wasted 5 s"


def test_a_breach_names_the_query_among_others_of_its_description():
    """PySpark describes every spark.sql call ``sql at <unknown>:0``: the n-th query of that
    description is the run before's n-th, so the query that grew is named, not the first alike."""
    import pandas as pd

    from aqe_core.fleet.gate import _queries

    same = "sql at <unknown>:0"
    now = pd.DataFrame({"file": ["a"] * 3 + ["b"] * 3, "execution_id": [0, 1, 2, 0, 1, 2],
                        "description": [same] * 6, "findings": ["", "skew", "", "", "skew", "spill"],
                        "wasted_task_ms": [9000, 1000, 0, 9000, 1000, 4000]})
    assert _queries(now, "b", "a", True) == f"; new findings in query #2 ({same}): spill"
    assert _queries(now, "b", "a", False) == f"; query #2 ({same}): wasted 0 s -> 4 s"
