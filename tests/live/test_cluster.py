"""Runs on a real Spark standalone cluster (issue 14): a Master and a Worker started from the
installed PySpark on 127.0.0.1 (:class:`aqe_core.live.standalone.StandaloneCluster`), and the
command line ``run`` against it in its own process (one SparkContext per process: the suite's
shared local session stays as it is).

- a workload captured on the cluster replays with full agreement, with its stages' task times;
- a master with no worker gives one clear line within the wait, not a hang;
- an application killed on the master mid-query gives one line, no traceback;
- the Run page's path (``RunManager``, the master allowed by the server settings): a SQL run and
  the Re-run of a sample capture run on the cluster and agree with the simulation;
- the fleet scan (``scan --master spark://...``) writes the same rows as a local scan; the
  cluster's daemons do not see our ``PYTHONPATH``, so the executors use the shipped package. The
  nodes' ``python3`` is a bare venv, as on a cluster whose system Python lacks the packages:
  on this host the executors run the driver's Python; told to run the nodes' own, the scan stops
  at its first job naming the missing modules; with ``--ship-python`` the packages go with the
  scan in ``spark.archives`` and the rows are the local scan's.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqe_core.live.standalone import ClusterError, StandaloneCluster

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _run(master: str, out: Path, *args: str, env: dict | None = None, wait: bool = True):
    cmd = [sys.executable, "-m", "aqe_core", "run", "--master", master, "-o", str(out), "--no-progress", *args]
    e = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    if wait:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT, env=e)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=e)


@pytest.fixture(scope="module")
def nodes_python(tmp_path_factory) -> Path:
    """The nodes' own ``python3``: a bare venv of the standard library, as on a cluster whose
    system Python lacks this project's packages (this machine's system Python has them all)."""
    import venv

    env = tmp_path_factory.mktemp("nodes") / "python"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    return env / "bin"


@pytest.fixture(scope="module")
def cluster(nodes_python):
    try:
        path = f"{nodes_python}{os.pathsep}{os.environ.get('PATH', '')}"  # `python3` on the nodes is the bare one
        c = StandaloneCluster(workers=1, cores=1, env={"PATH": path}).start()
    except ClusterError as e:  # pragma: no cover - depends on the machine
        if os.environ.get("CI"):
            raise
        pytest.skip(str(e))
    yield c
    c.stop()


def test_a_capture_on_a_standalone_cluster_agrees(cluster, tmp_path):
    from aqe_core.engine import simulate
    from aqe_core.readers.capture_file import load_capture

    out = tmp_path / "cluster.json.gz"
    r = _run(cluster.master_url, out, "--workload", "skew_join_inner", "--preset", "default", "--check")
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"on {cluster.master_url}" in r.stderr and "Traceback" not in r.stderr
    # Spark's start-up chatter stays out of the terminal (runtime's log4j2-startup.properties)
    assert "Using Spark's default log4j profile" not in r.stderr and "Setting default log level" not in r.stderr
    assert " WARN " not in r.stderr, r.stderr[-2000:]
    cap = load_capture(str(out))
    assert cap.run and cap.spark_version
    rep = simulate(cap)
    assert rep.agreement.complete and rep.agreement.total >= 2
    q = cap.queries[0]
    assert any(s.task_ms for s in q.spark_stages)  # the tap read the cluster's task events
    assert any(r.specs and len(r.specs) > 1 for r in q.reads)


def test_a_cluster_log_gives_the_default_parallelism_spark_used(cluster, tmp_path):
    """Issue 38: the event log of a run on the cluster names its executors' cores, and the
    default parallelism read from them is the one the SparkContext reported (the capture
    records ``sparkContext.defaultParallelism``): 1 executor of 1 core, Spark's floor of 2."""
    from aqe_core.model.cluster import parallelism_of
    from aqe_core.opening import load_source
    from aqe_core.readers.capture_file import load_capture
    from aqe_core.readers.eventlog import load

    logs = tmp_path / "logs"
    logs.mkdir()
    out = tmp_path / "cluster.json.gz"
    r = _run(cluster.master_url, out, "--workload", "skew_join_inner", "--preset", "default", "--trusted",
             "--spark-conf", "spark.eventLog.enabled=true", "--spark-conf", f"spark.eventLog.dir={logs}")
    assert r.returncode == 0, r.stderr[-2000:]
    spark_said = load_capture(str(out)).queries[0].default_parallelism
    (path,) = [p for p in logs.iterdir() if not p.name.endswith(".inprogress")]
    log = load(str(path))
    assert {e.cores for e in log.application.executors.values()} == {1}
    p = parallelism_of(log)
    assert p.value == spark_said == 2
    assert p.how == "2 cores (Spark's floor of 2): 1 executor x 1 core, from executor-added events"
    src = load_source(str(path))
    assert src.spark_version and src.label.endswith(f"Spark {src.spark_version}")
    assert {v.default_parallelism for v in src.views} == {2}


def _running_tasks(cluster: StandaloneCluster, app: str) -> bool:
    return any("Running task" in p.read_text(errors="replace") for p in cluster.dir.glob(f"work-*/{app}/*/stderr"))


def test_an_application_killed_on_the_master_is_one_line(cluster, tmp_path):
    p = _run(cluster.master_url, tmp_path / "killed.json.gz", "--trusted", "--sql",
             "SELECT count(*) FROM range(0, 200000000000, 1, 8) WHERE id % 3 = 1", wait=False)
    app = None
    deadline = time.time() + 120
    while app is None and time.time() < deadline:  # registered, and its executor has the worker's core
        time.sleep(0.5)
        apps = [a for a in cluster.status().get("activeapps", []) if a.get("cores", 0) >= 1]
        app = apps[0]["id"] if apps else None
    assert app is not None, cluster.tail()
    # the query runs: its executor (stderr in the Worker's work directory) runs tasks; a fixed
    # wait is not enough on a busy machine, where the driver may still be starting
    while not _running_tasks(cluster, app) and time.time() < deadline + 60:
        time.sleep(0.5)
    assert _running_tasks(cluster, app), cluster.tail()
    time.sleep(1)
    cluster.kill_application(app)
    _, err = p.communicate(timeout=180)
    assert p.returncode == 1, err[-1500:]
    ours = [ln for ln in err.splitlines() if ln.startswith("run: ")]
    assert ours == [ours[0]] and "the Spark application stopped while the query ran" in ours[0]
    assert "Traceback" not in err and "\tat " not in err and "Caused by" not in err


def test_a_master_without_workers_says_so_within_the_wait(tmp_path):
    from aqe_core.live.runtime import executor_wait_s

    assert executor_wait_s() == 30.0  # the default a user gets
    with StandaloneCluster(workers=0) as c:
        t0 = time.time()
        r = _run(c.master_url, tmp_path / "none.json.gz", "--workload", "skew_join_inner", "--preset", "default",
                 env={"AQE_LENS_EXECUTOR_WAIT_S": "10"})
        took = time.time() - t0
    assert r.returncode == 3
    assert "no executor started on spark://127.0.0.1" in r.stderr and "within 10s" in r.stderr
    assert "Traceback" not in r.stderr
    assert took < 60  # JVM start + the 10 s wait, never a hang


_RUN_PAGE = r"""
import json, sys, time
from aqe_core.live.jobs import MasterNotAllowed, RunManager
from aqe_core.user_presets import get_preset

master, sample = sys.argv[1], sys.argv[2]
mgr = RunManager()  # as the Run page makes it: server settings from the environment
try:
    mgr.submit_sql("SELECT 1", master="local[2]")
    refused = False
except MasterNotAllowed:
    refused = True


def wait(job):
    deadline = time.time() + 240
    while job.active and time.time() < deadline:
        time.sleep(0.3)
    return {"state": job.state, "message": job.message, "path": job.result_path}


sql = wait(mgr.submit_sql("SELECT id % 10 AS k, count(*) AS n FROM range(0, 1000000, 1, 8) GROUP BY id % 10",
                          master=master, label="sql"))
out = {"refused_other_master": refused, "sql": sql}
if sql["path"]:
    out["rerun_sample"] = wait(mgr.submit_rerun(sample, 0, [get_preset("actual"), get_preset("skew-sensitive")]))
print(json.dumps(out))
"""


def test_the_run_page_and_rerun_on_a_standalone_cluster(cluster, tmp_path):
    """What the Run page and the Compare page's "Re-run for real" do, on a server whose
    allowed_masters is the cluster: a guarded SQL run, and the Re-run of a sample capture under
    two presets (no master given: the server's runtime). That the capture of a guarded SQL run
    can be re-run is tested on the local session (test_sql_guard)."""
    from aqe_core.engine import simulate
    from aqe_core.user_presets import get_preset
    from aqe_core.readers.capture_file import load_capture
    from aqe_core.opening import views_from_capture_file
    from aqe_core.advise.whatif import compare_presets, simulate_preset

    sample = ROOT / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz"
    env = dict(os.environ, PYTHONPATH=str(ROOT), AQE_LENS_HOME=str(tmp_path), AQE_LENS_MASTERS=cluster.master_url)
    env.pop("AQE_LENS_TRUSTED", None)
    r = subprocess.run([sys.executable, "-c", _RUN_PAGE, cluster.master_url, str(sample)], capture_output=True,
                       text=True, timeout=600, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["refused_other_master"]
    for name in ("sql", "rerun_sample"):
        assert got[name]["state"] == "done", (name, got[name]["message"], cluster.tail())
        cap = load_capture(got[name]["path"])
        assert cap.master == cluster.master_url, name
        rep = simulate(cap)
        assert rep.agreement.complete and rep.agreement.total >= 1, name
    assert any(s.task_ms for s in load_capture(got["sql"]["path"]).queries[0].spark_stages)
    if not load_capture(got["sql"]["path"]).spark_version.startswith("4.3"):
        return  # the sample capture is from Spark 4.3: its simulation compares with 4.3 only
    presets = [get_preset("actual"), get_preset("skew-sensitive")]
    simulated = compare_presets(views_from_capture_file(str(sample)).views[0], presets)
    rerun = views_from_capture_file(got["rerun_sample"]["path"]).views
    assert len(rerun) == len(presets)
    for preset, sim, real in zip(presets, simulated, rerun):
        spark = simulate_preset(real, get_preset("actual"))  # what Spark did on the cluster
        assert (sim.partitions_after, sim.splits, sim.join_strategies) == \
            (spark.partitions_after, spark.splits, spark.join_strategies), preset.name
        assert [s.sizes_after for s in sim.shuffles] == [s.sizes_after for s in spark.shuffles], preset.name


def _rows(out: Path, table: str):
    import pandas as pd

    df = pd.read_parquet(out / table).drop(columns="scan")  # the partition each scan adds: when it ran
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def test_a_fleet_scan_on_a_standalone_cluster_writes_what_a_local_scan_does(cluster, spark, tmp_path):
    from aqe_core.fleet.scan import run_scan

    logs = ROOT / "sample_logs" / "eventlogs"
    sources = [str(logs / "local-1795309052779.lz4"), str(next(logs.glob("eventlog_v2_*"))),
               str(ROOT / "sample_logs" / "captures" / "4.3.0-skew_join_i*")]  # a file, a rolling directory, a glob
    cmd = [sys.executable, "-m", "aqe_core", "scan", *sources, "--master", cluster.master_url,
           "-o", str(tmp_path / "cluster"), "--no-progress"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"on {cluster.master_url}" in r.stderr and "3 files, " in r.stderr and "Traceback" not in r.stderr
    run_scan(spark, sources, str(tmp_path / "local"))  # the suite's local session
    for table in ("executions", "findings"):
        here, there = _rows(tmp_path / "local", table), _rows(tmp_path / "cluster", table)
        assert len(there) > 3 and there.equals(here), table
    assert _rows(tmp_path / "cluster", "executions")["error"].isna().all()


def _scan(cluster: StandaloneCluster, out: Path, *args: str, env: dict | None = None):
    sources = [str(ROOT / "sample_logs" / "eventlogs" / "local-1795309052779.lz4"),
               str(ROOT / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz")]
    cmd = [sys.executable, "-m", "aqe_core", "scan", *sources, "--master", cluster.master_url, "-o", str(out),
           "--no-progress", *args]
    e = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    e.update(PYTHONPATH=str(ROOT), AQE_LENS_HOME=str(out.parent / "home"), **(env or {}))
    return sources, subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT, env=e)


def test_a_scan_on_nodes_whose_python_lacks_the_packages_stops_first_naming_them(cluster, tmp_path):
    _, r = _scan(cluster, tmp_path / "out", env={"PYSPARK_PYTHON": "python3"})  # the nodes' own Python
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "zstandard" in r.stderr and "spark.archives" in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "out" / "executions").exists()  # stopped before reading any log


def test_ship_python_gives_such_nodes_the_packages_with_spark_archives(cluster, spark, tmp_path):
    from aqe_core.fleet.scan import run_scan

    sources, r = _scan(cluster, tmp_path / "cluster", "--ship-python")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "with spark.archives" in r.stderr and "2 files, " in r.stderr, r.stderr[-2000:]
    run_scan(spark, sources, str(tmp_path / "local"))
    for table in ("executions", "findings"):
        here, there = _rows(tmp_path / "local", table), _rows(tmp_path / "cluster", table)
        assert len(there) > 1 and there.equals(here), table
