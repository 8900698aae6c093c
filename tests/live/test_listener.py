"""The AQE Lens listener jar (issue 11): the committed jar is what its source builds, and real
Spark jobs with it (a SparkSession, and spark-submit of a script) log events whose statistics
equal the Python recorder's and replay with 100% agreement."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aqe_core.listener import EVENT_CLASS, JAR_PATH, LISTENER_CLASS, spark_conf

ROOT = Path(__file__).resolve().parents[2]


def test_cli_prints_the_settings(capsys):
    from aqe_core.cli import main

    assert main(["listener", "--spark-conf"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"spark.jars={JAR_PATH}", f"spark.extraListeners={LISTENER_CLASS}"]
    assert main(["listener", "--submit"]) == 0
    assert capsys.readouterr().out.strip() == f"--conf spark.jars={JAR_PATH} --conf spark.extraListeners={LISTENER_CLASS}"


@pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK (javac) on this machine: the shipped jar is used as is")
def test_the_committed_jar_is_what_the_source_builds(tmp_path):
    out = tmp_path / "rebuilt.jar"
    # against this Python's PySpark (the machine's python3 may have none: a venv's tests)
    subprocess.run(["bash", str(ROOT / "tools" / "build_listener.sh"), str(out)], check=True, cwd=ROOT,
                   capture_output=True, env={**os.environ, "PYTHON": sys.executable})
    assert out.read_bytes() == JAR_PATH.read_bytes(), "rebuild the jar: tools/build_listener.sh"


_SCRIPT = """
import glob, os, sys
sys.path.insert(0, {root!r})
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[2]").appName("listener-submit").getOrCreate()
bus = spark.sparkContext._jsc.sc().listenerBus()
ours = [l for l in bus.listeners() if l.getClass().getName() == "io.aqelens.listener.AqeLensListener"]
print("listeners before the first job:", len(ours))
spark.conf.set("spark.sql.adaptive.enabled", "true")
spark.conf.set("spark.sql.shuffle.partitions", "20")
spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "2k")
spark.sql("SELECT id % 7 AS g, count(*) FROM range(0, 20000, 1, 4) GROUP BY id % 7").collect()
spark.stop()
"""


@pytest.mark.slow
def test_spark_submit_with_the_listener_writes_an_exact_log(tmp_path):
    import pyspark

    from aqe_core.live.java import find_java
    from aqe_core.opening import load_exact

    java = find_java()
    logs = tmp_path / "logs"
    logs.mkdir()
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(_SCRIPT.format(root=str(ROOT))))
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    args = [str(submit)] + [x for k, v in spark_conf().items() for x in ("--conf", f"{k}={v}")] + [
        "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={logs}",
        "--conf", "spark.eventLog.rolling.enabled=false", "--conf", "spark.eventLog.compress=false",
        "--conf", "spark.ui.enabled=false", str(script)]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, JAVA_HOME=java.java_home)
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # the one Spark built and its delegate on the event-log queue, joined before any event was
    # dispatched: joining at the first job lost that job's execution when that queue ran ahead
    assert "listeners before the first job: 2" in done.stdout
    log = next(logs.iterdir())
    assert EVENT_CLASS.encode() in log.read_bytes()  # an uncompressed single file (4.x: zstd by default, set off below)
    cap = load_exact(str(log))
    assert len(cap.queries) == 1 and cap.queries[0].shuffles
    from aqe_core.engine.simulate import simulate

    assert simulate(cap).agreement.complete



_BEHIND = """
import json, sys, time
sys.path.insert(0, {root!r})
from aqe_core.listener import spark_conf
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.sql import SparkSession

b = SparkSession.builder.master("local[2]").appName("listener-behind")
for k, v in dict(spark_conf(), **{conf!r}).items():
    b = b.config(k, v)
spark = b.getOrCreate()
jsc = spark.sparkContext._jsc.sc()
ensure_callback_server_started(spark.sparkContext._gateway)
seen = []

class HoldTheQueue:
    # a listener on the event-log queue that holds it at the first job's end until stop() began
    def __getattr__(self, name):
        if name.startswith("on"):
            return lambda event: None
        raise AttributeError(name)

    def onJobEnd(self, event):
        if not seen:
            deadline = time.time() + 60
            while not jsc.isStopped() and time.time() < deadline:
                time.sleep(0.05)
            seen.append(jsc.isStopped())

    class Java:
        implements = ["org.apache.spark.scheduler.SparkListenerInterface"]

jsc.listenerBus().addToEventLogQueue(HoldTheQueue())
spark.conf.set("spark.sql.adaptive.enabled", "true")
spark.conf.set("spark.sql.shuffle.partitions", "20")
spark.sql("SELECT id % 7 AS g, count(*) FROM range(0, 20000, 1, 4) GROUP BY id % 7").collect()
spark.stop()
print(json.dumps({{"queue_behind_stop": seen}}))
"""


@pytest.mark.slow
def test_a_job_that_stops_while_its_event_log_queue_is_behind_keeps_its_last_query(tmp_path):
    """spark.stop() right after the last query, with the event-log queue still before that query's
    end: the listener records it anyway (SparkContext.defaultParallelism refuses once stop() has
    begun; a CI run lost a query this way) with the parallelism the query ran with."""
    from aqe_core.opening import load_exact

    logs = tmp_path / "logs"
    logs.mkdir()
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(logs), "spark.eventLog.rolling.enabled": "false",
            "spark.eventLog.compress": "false", "spark.ui.enabled": "false"}
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(_BEHIND.format(root=str(ROOT), conf=conf)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"queue_behind_stop": [true]' in done.stdout, done.stdout[-500:]  # the race happened
    assert "AQE Lens listener" not in done.stderr, done.stderr[-2000:]
    cap = load_exact(str(next(logs.iterdir())))
    assert len(cap.queries) == 1 and cap.queries[0].default_parallelism == 2  # local[2]


@pytest.mark.slow
def test_a_session_with_the_listener_logs_what_the_recorder_records(tmp_path):
    """SQL through a SparkSession built with the listener's settings (PySpark 4.3 in CI): its log
    replays with 100% agreement and holds, per query, what the py4j recorder captured."""
    from aqe_core.engine.simulate import simulate
    from aqe_core.readers.capture_file import load_capture
    from aqe_core.opening import load_exact

    out = tmp_path / "rec"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "record_listener_logs.py"), "--out-dir", str(out),
                           "--workload", "skew_join_both_sides", "--workload", "broadcast_aggregate"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))  # the tool imports the code under test
    assert done.returncode == 0, done.stderr[-2000:]
    log = next(p for p in out.iterdir() if p.name != "captures.json.gz")
    cap = load_exact(str(log))
    assert simulate(cap).agreement.complete
    ours = {q.execution_ids[0]: q.to_dict() for q in cap.queries}
    for q in load_capture(out / "captures.json.gz").queries:
        eid = next(e for e in q.execution_ids if e in ours)
        truth = q.to_dict()
        for key in ("final_plan", "stages", "shuffles", "reads"):
            assert ours[eid][key] == truth[key], (q.label, key)
