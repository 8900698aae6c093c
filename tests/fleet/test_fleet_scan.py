"""The fleet scan (issue 14) on the shared real session: directories, globs and a Hadoop URI of
real event logs and captures, parsed in the executors' Python, written as Parquet; a file that
is not a log becomes a row with its error; the rows are what the triage says of each log."""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs" / "eventlogs"


@pytest.mark.slow
def test_a_scan_writes_every_execution_and_finding(spark, tmp_path):
    from aqe_core.fleet.scan import run_scan
    from aqe_core.opening import load_source
    from aqe_core.views.triage import triage_row

    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES, logs)
    (logs / "garbage.log").write_bytes(b"\x00\x01 not a log")
    rolling = next((ROOT / "tests" / "fixtures" / "eventlogs").glob("eventlog_v2_application_*"))
    seen = []
    res = run_scan(spark, [str(logs), str(ROOT / "sample_logs" / "captures" / "4.3.0-skew*.json.gz"), rolling.as_uri()],
                   str(tmp_path / "out"), progress=lambda d, t: seen.append((d, t)))
    ex = pd.read_parquet(tmp_path / "out" / "executions")
    fi = pd.read_parquet(tmp_path / "out" / "findings")
    assert res.executions == ex["error"].isna().sum() and res.findings == len(fi)
    bad = ex[ex["file"].str.endswith("garbage.log")]
    assert len(bad) == 1 and "not an event log" in bad["error"].iloc[0]
    assert ex[ex["file"] == rolling.as_uri().replace("file:///", "file:/")]["execution_id"].notna().sum() > 0
    # each log's rows are the triage's own findings for its executions
    lz4 = next(logs.glob("*.lz4"))
    src = load_source(str(lz4))
    mine = ex[ex["file"] == str(lz4.resolve())].set_index("execution_id")
    assert len(mine) == len(src.views)
    for v in src.views:
        assert mine.loc[int(v.query_id), "findings"] == ",".join(triage_row(v).findings)
    assert set(fi["finding"]) >= {"skew_split", "coalesced"}
    assert ex["preset_changes"].str.startswith("{").all()


@pytest.mark.slow
def test_on_a_local_master_the_workers_python_is_checked_once_per_application(spark):
    """The check is a Spark job; on a local master the workers' Python cannot change while the
    context lives, so a second scan does not run it again."""
    from aqe_core.fleet import scan

    sc = spark.sparkContext
    scan._CHECKED.discard(sc.applicationId)
    jobs = []
    for group in ("aqe-lens-test-check-1", "aqe-lens-test-check-2"):
        sc.setJobGroup(group, "check")
        try:
            scan.check_executor_python(sc)
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)
        jobs.append(len(sc.statusTracker().getJobIdsForGroup(group)))
    assert jobs == [1, 0] and sc.applicationId in scan._CHECKED


@pytest.mark.slow
def test_cli_scan_csv(tmp_path, capsys, monkeypatch):
    from aqe_core.cli import main

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AQE_LENS_ROOTS", raising=False)
    assert main(["scan", str(SAMPLES / "local-1795309249168"), "-o", str(tmp_path / "o"), "--csv", "--no-presets",
                 "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "1 files, 10 SQL executions" in err
    # the output is outside the app's roots (the samples' log is inside): said before the scan starts
    said = err.index("the output folder")
    assert said < err.index("scan: Spark") and "outside this server's roots" in err and "log is outside" not in err
    assert list((tmp_path / "o" / "executions").glob("scan=*/*.csv"))  # one partition per scan
    # and the Fleet page reads it back (Spark escapes quotes inside values as \")
    from aqe_core.fleet.result import load_scan

    assert len(load_scan(str(tmp_path / "o"), roots=[str(tmp_path)]).executions) == 10
