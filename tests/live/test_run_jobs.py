"""The app's run queue: time limits, queue positions, allowed masters, a runtime that heals
itself, and the list of past runs kept on disk."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from aqe_core.live.run_index import RunEntry, RunIndex
from aqe_core.live.jobs import MasterNotAllowed, RunManager

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz"
# 10^14 rows streamed past a broadcast of 1000: CPU-bound, constant memory, never ends in a test
ENDLESS = "SELECT count(*) FROM range(0, 100000000000, 1, 2) a CROSS JOIN range(0, 1000) b"
SMALL = "SELECT id % 3 AS k, count(*) AS n FROM range(0, 1000, 1, 2) GROUP BY id % 3"


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    for var in ("AQE_LENS_MASTERS", "AQE_LENS_RUN_TIME_LIMIT", "AQE_LENS_CONFIG", "AQE_LENS_TRUSTED"):
        monkeypatch.delenv(var, raising=False)


def _wait(*jobs, timeout: float = 300.0) -> None:
    deadline = time.time() + timeout
    while any(j.active for j in jobs) and time.time() < deadline:
        time.sleep(0.2)
    assert not any(j.active for j in jobs), [(j.label, j.state) for j in jobs]


@pytest.mark.slow
def test_a_run_past_its_time_limit_is_cancelled_and_spark_serves_the_next(spark_runtime):
    mgr = RunManager(runtime=spark_runtime)
    slow = mgr.submit_sql(ENDLESS, label="endless", time_limit_s=2.5)
    _wait(slow, timeout=120)
    assert slow.state == "timed out", slow.message
    assert "time limit of 2.5 s" in slow.message
    nxt = mgr.submit_sql(SMALL, label="small")
    _wait(nxt)
    assert nxt.state == "done", nxt.message
    assert spark_runtime.alive
    # both are past runs now, the newest first, with their states
    assert [(e.label, e.state) for e in mgr.past_runs()] == [("small", "done"), ("endless", "timed out")]


def test_the_server_time_limit_is_the_default(monkeypatch):
    monkeypatch.setenv("AQE_LENS_RUN_TIME_LIMIT", "42")
    mgr = RunManager(runtime=object())  # the job fails at once (no real runtime); its limit is set at submit
    job = mgr.submit_sql("SELECT 1")
    assert job.time_limit_s == 42.0
    assert mgr.submit_sql("SELECT 1", time_limit_s=3).time_limit_s == 3.0
    assert RunManager(runtime=object(), time_limit_s=7).submit_sql("SELECT 1").time_limit_s == 7.0
    _wait(job)


@pytest.mark.slow
def test_queued_runs_know_how_many_runs_are_ahead(spark_runtime):
    mgr = RunManager(runtime=spark_runtime)
    first = mgr.submit_sql(ENDLESS, label="endless", time_limit_s=120)
    queued = [mgr.submit_sql(SMALL, label=f"small{i}") for i in range(3)]
    assert [mgr.ahead(j.job_id) for j in queued] == [1, 2, 3]
    mgr.cancel(queued[1].job_id)
    assert queued[1].state == "cancelled"
    assert [mgr.ahead(j.job_id) for j in queued] == [1, None, 2]
    deadline = time.time() + 120
    while first.state != "running" and time.time() < deadline:
        time.sleep(0.1)
    assert mgr.ahead(first.job_id) is None  # running, not waiting
    mgr.cancel(first.job_id)
    _wait(first, *queued)
    assert first.state == "cancelled"
    assert [j.state for j in queued] == ["done", "cancelled", "done"]
    assert all(mgr.ahead(j.job_id) is None for j in queued)


def test_a_master_outside_the_allow_list_is_refused(monkeypatch):
    mgr = RunManager(runtime=object())
    for bad in ("spark://203.0.113.9:7077", "k8s://https://example.org", "local[64]", ""):
        with pytest.raises(MasterNotAllowed, match="not allowed on this server"):
            mgr.submit_sql("SELECT 1", master=bad)
        with pytest.raises(MasterNotAllowed):
            mgr.submit_workload("skew_join_inner", master=bad)
    assert mgr._jobs == {}  # nothing was queued
    monkeypatch.setenv("AQE_LENS_MASTERS", "local[*],local[2]")
    RunManager.check_master("local[2]")
    with pytest.raises(MasterNotAllowed):
        RunManager.check_master("local[3]")


@pytest.mark.slow
def test_an_allowed_master_other_than_the_running_one_is_a_clear_failure(spark_runtime, monkeypatch):
    monkeypatch.setenv("AQE_LENS_MASTERS", "local[*],local[2],local[1]")
    mgr = RunManager(runtime=spark_runtime)
    other = "local[1]" if spark_runtime.master != "local[1]" else "local[2]"
    job = mgr.submit_sql(SMALL, master=other)
    _wait(job)
    assert job.state == "failed"
    assert job.message.startswith(f"this server runs Spark on {spark_runtime.master}; cannot also run on {other}")


@pytest.mark.slow
def test_past_runs_outlive_a_restart_and_a_corrupt_index_is_rebuilt(spark_runtime):
    mgr = RunManager(runtime=spark_runtime)
    job = mgr.submit_sql(SMALL, label="kept")
    _wait(job)
    assert job.state == "done", job.message
    again = RunManager()  # a new server process: nothing in memory
    [entry] = again.past_runs()
    assert (entry.job_id, entry.label, entry.kind, entry.state) == (job.job_id, "kept", "sql", "done")
    assert str(again.index.file_of(entry)) == job.result_path
    assert again.recent_runs() == [Path(job.result_path)]

    index = again.index.path
    index.write_bytes(b'{"runs": [ \x00 broken')
    fresh = RunManager()
    [rebuilt] = fresh.past_runs()
    assert rebuilt.job_id == job.job_id and rebuilt.file == Path(job.result_path).name
    assert "could not be read" in (fresh.index.note or "") and "rebuilt from 1" in fresh.index.note
    kept = list(index.parent.glob("index.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b'{"runs": [ \x00')
    assert json.loads(index.read_text())["runs"][0]["job_id"] == job.job_id  # a valid index again


def test_run_index_lists_files_it_missed_and_only_files_in_its_folder(tmp_path):
    idx = RunIndex(tmp_path / "runs")
    assert idx.entries() == []
    (tmp_path / "runs").mkdir()
    shutil.copy(SAMPLE, tmp_path / "runs" / "20260101-120000-0123456789ab.json.gz")
    idx.record(RunEntry("aaaaaaaaaaaa", "failed one", "sql", "failed", time.time(), time.time(), None, "RunFailed: x"))
    idx.record(RunEntry("bbbbbbbbbbbb", "escapes", "sql", "done", time.time() - 5, None, "../../etc/passwd"))
    entries = idx.entries()
    assert [e.job_id for e in entries] == ["aaaaaaaaaaaa", "0123456789ab"]  # the escaping entry has no file here
    assert idx.file_of(entries[1]) == tmp_path / "runs" / "20260101-120000-0123456789ab.json.gz"
    assert idx.file_of(RunEntry("c", "x", "sql", "done", 0.0, None, "../runs/x.json")) is None


SUBPROCESS = textwrap.dedent('''
    import json, sys, time
    from aqe_core.live.runtime import SparkStartFailed, get_runtime
    from aqe_core.live.jobs import RunManager
    out = {}
    t = time.time()
    try:
        get_runtime("nonsense://x")
    except SparkStartFailed as e:
        out["unparsable"] = [str(e), time.time() - t]
    try:
        get_runtime("local[abc]")  # passes the format check; Spark itself refuses it
    except SparkStartFailed as e:
        out["refused"] = str(e)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    out["left_behind"] = [SparkContext._active_spark_context is None, SparkSession._instantiatedSession is None,
                          SparkSession._activeSession is None]
    rt = get_runtime("local[1]", {"spark.ui.enabled": "false"})
    out["retry"] = rt.spark.range(5).count()
    rt.spark.stop()  # someone stopped Spark
    rt2 = get_runtime("local[1]")
    out["after_stop"] = [rt2 is not rt, rt2.spark.range(4).count()]
    try:
        rt2.spark._jvm.java.lang.Runtime.getRuntime().halt(1)  # the JVM dies
    except Exception:
        pass
    mgr = RunManager()
    job = mgr.submit_sql("SELECT count(*) FROM range(0, 1000, 1, 1)", label="after a dead JVM")
    while job.active:
        time.sleep(0.2)
    out["after_death"] = [job.state, job.message]
    # a result too big for the driver (1g heap): the run fails, the next one gets a working Spark
    boom = mgr.submit_sql("SELECT a.id x, b.id y FROM range(200000) a CROSS JOIN range(200000) b", label="explodes")
    while boom.active:
        time.sleep(0.2)
    nxt = mgr.submit_sql("SELECT count(*) FROM range(0, 1000, 1, 1)", label="next")
    while nxt.active:
        time.sleep(0.2)
    out["explosion"] = [boom.state, boom.message, nxt.state, nxt.message]
    # a JVM that is exiting (as after an out-of-memory error: shutdown hooks stop the context while
    # it still answers) is not reused; and if it exits between that check and the start, the start
    # is made again on a new JVM (the check is switched off for the second round)
    import threading
    import aqe_core.live.runtime as runtime_module
    counts = []
    for round_ in range(2):
        rt = get_runtime()
        jvm = rt.spark._jvm
        threading.Thread(target=lambda: jvm.java.lang.System.exit(1), daemon=True).start()
        t = time.time()
        while rt.alive and time.time() - t < 30:
            time.sleep(0.01)
        if round_ == 1:
            runtime_module._gateway_alive = lambda gateway: True
        try:
            counts.append(get_runtime().spark.range(6).count())
        except SparkStartFailed as e:
            counts.append(str(e))
    out["while_dying"] = counts
    print("RESULT " + json.dumps(out))
''')


@pytest.mark.slow
def test_a_failed_start_is_reported_and_the_next_start_is_clean(tmp_path):
    """In a subprocess: the suite's own SparkSession must not be touched."""
    env = dict(os.environ, AQE_LENS_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    env.pop("AQE_LENS_MASTER", None)
    proc = subprocess.run([sys.executable, "-c", SUBPROCESS], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = json.loads(line[len("RESULT "):])
    msg, seconds = out["unparsable"]
    assert msg.startswith("cannot start Spark on 'nonsense://x'") and seconds < 5
    assert out["refused"].startswith("could not start Spark on local[abc]:")
    assert "Could not parse Master URL" in out["refused"]
    assert out["left_behind"] == [True, True, True]
    assert out["retry"] == 5
    assert out["after_stop"] == [True, 4]
    assert out["after_death"][0] == "done", out["after_death"]
    boom_state, boom_msg, next_state, next_msg = out["explosion"]
    assert boom_state == "failed" and boom_msg.startswith("explodes: ") and "\n" not in boom_msg, boom_msg
    assert next_state == "done", next_msg
    assert out["while_dying"] == [6, 6]


def _run_page():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/run.py").run()
    assert not at.exception, at.exception
    return at


def test_run_page_offers_only_the_allowed_masters_and_lists_past_runs(monkeypatch):
    monkeypatch.setenv("AQE_LENS_MASTERS", "local[*],local[2]")
    runs = Path(os.environ["AQE_LENS_HOME"]) / "runs"
    runs.mkdir(parents=True)
    name = "20260101-120000-0123456789ab.json.gz"
    shutil.copy(SAMPLE, runs / name)
    RunIndex().record(RunEntry("0123456789ab", "skew_join_inner", "workload", "done", time.time(), time.time(), name,
                               "captured 2 queries"))
    RunIndex().record(RunEntry("fedcba987654", "![x](http://203.0.113.9/px.png)", "sql", "timed out", time.time() - 60,
                               time.time(), None, "stopped at the time limit of 600 s"))
    at = _run_page()
    assert at.selectbox(key="run_master").options == ["local[*]", "local[2]"]
    assert not at.text_input  # no free-text master URL
    texts = [t.value for t in at.text]
    assert any("skew_join_inner" in t and "[done]" in t for t in texts)
    assert any("![x](http://203.0.113.9/px.png)" in t and "[timed out]" in t for t in texts)  # shown as text
    assert [b.key for b in at.button if (b.key or "").startswith("open_run_")] == ["open_run_0123456789ab"]
    at.button(key="open_run_0123456789ab").click().run()
    assert not at.exception, at.exception
    assert at.session_state["source_path"] == str(runs / name)
    assert at.session_state["source_ref"] == {"kind": "path", "path": str(runs / name)}


def test_run_page_says_when_the_list_of_past_runs_was_rebuilt():
    runs = Path(os.environ["AQE_LENS_HOME"]) / "runs"
    runs.mkdir(parents=True)
    shutil.copy(SAMPLE, runs / "20260101-120000-0123456789ab.json.gz")
    (runs / "index.json").write_text("not json")
    at = _run_page()
    assert any("rebuilt from 1 capture file" in w.value for w in at.warning)
    assert any(b.key == "open_run_0123456789ab" for b in at.button)


@pytest.mark.slow
def test_cli_run_stops_at_its_time_limit(spark_runtime, tmp_path, capsys):
    import argparse

    from aqe_core import cli

    def main(argv: list[str]) -> int:  # the run command alone
        p = argparse.ArgumentParser()
        cli.add_run_arguments(p)
        return cli.cmd_run(p.parse_args(argv))

    out = tmp_path / "endless.json"
    assert main(["--sql", ENDLESS, "--time-limit", "2", "--no-progress", "-o", str(out)]) == 130
    assert "stopped at its time limit of 2 s" in capsys.readouterr().err
    assert not out.exists()
    assert main(["--sql", SMALL, "--time-limit", "60", "--no-progress", "-o", str(out)]) == 0
    assert out.exists()
