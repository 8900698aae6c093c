"""Spark 4.1/4.2 event logs (issue 25, requirement 5), recorded by tools/record_retry_cases.py on
real PySpark 4.1.4 and 4.2.1, with each release's own History Server answer beside them
(tools/record_shs_sql.py, ``shs_sql.json``): a CTAS and its sub-execution, a task retried after
a failure, a stage retried after a fetch failure, a full stage retry, and an application whose
task ends were excluded by ``spark.eventLog.excludedPatterns``.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from aqe_core.api import load_event_log as load
from aqe_core.model.plan_walk import graph_nodes
from aqe_core.views.eventlog_summary import execution_json, outcome_line, spark_ids
from aqe_core.views.from_eventlog import view_from_execution

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "fixtures" / "eventlogs" / "retry_cases"
RELEASES = sorted(p.name for p in CASES.iterdir() if p.is_dir()) if CASES.is_dir() else []
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


def _logs(release: str) -> list[Path]:
    return sorted(p for p in (CASES / release).iterdir() if p.suffix == ".zstd")


def _oracle(release: str) -> dict:
    return json.loads((CASES / release / "shs_sql.json").read_text())["apps"]


_loaded: dict[Path, object] = {}


def _load(p: Path):
    if p not in _loaded:
        _loaded[p] = load(str(p))
    return _loaded[p]


def _by_description(release: str, description: str):
    for p in _logs(release):
        log = _load(p)
        for ex in log.executions_by_id():
            if ex.description == description:
                return log, ex
    raise AssertionError(f"{release}: no execution {description!r}")


def test_both_releases_recorded():
    assert RELEASES and all(_logs(r) for r in RELEASES)
    assert {"4.1.4", "4.2.1"} <= set(RELEASES)


@pytest.mark.parametrize("release", RELEASES)
def test_metric_values_are_those_the_release_history_server_shows(release):
    """Last-attempt SQL metrics: every node metric of every execution, retried stages included,
    reads as the release's own History Server shows it."""
    oracle = _oracle(release)
    compared = 0
    for p in _logs(release):
        log = _load(p)
        rest = oracle[log.application.id]["sql"]
        assert sorted(e["id"] for e in rest) == sorted(log.executions)
        for e in rest:
            ex = log.executions[e["id"]]
            assert ex.status == e["status"]
            ours = {(n.id, m["name"].strip()): ex.metric_values[m["accumulator_id"]]["value"]
                    for n in graph_nodes(ex.final_plan) for m in n.metrics if m["accumulator_id"] in ex.metric_values}
            for node in e["nodes"]:
                for m in node["metrics"]:
                    assert ours.get((node["nodeId"], m["name"])) == m["value"], (p.name, e["id"], node["nodeName"], m["name"])
                    compared += 1
    assert compared > 100


@pytest.mark.parametrize("release", RELEASES)
def test_query_id_and_root_execution_as_spark_shows_them(release):
    """4.2 logs a queryId (a UUID) per execution; 4.1 does not. A CTAS's insert is a
    sub-execution of the CTAS (rootExecutionId), listed under it."""
    oracle = _oracle(release)
    for p in _logs(release):
        log = _load(p)
        for e in oracle[log.application.id]["sql"]:
            ex = log.executions[e["id"]]
            if "rootExecutionId" in e:  # (4.1's REST answer has no such field; its SQL tab groups by it)
                assert ex.root_execution_id == e["rootExecutionId"]
            assert ex.query_id == e.get("queryId")
            if release >= "4.2":
                assert UUID.match(ex.query_id or "")
            else:
                assert ex.query_id is None
    log, root = _by_description(release, "ctas")
    subs = [ex for ex in log.executions_by_id() if ex.description == "ctas" and ex.root_execution_id != ex.id]
    assert root.root_execution_id == root.id and subs[0].root_execution_id == root.id
    assert len(subs) == 1
    sub = subs[0]
    line = spark_ids(sub)
    assert f"sub-execution of #{sub.root_execution_id}" in line
    assert ("query " in line) == (sub.query_id is not None)
    if sub.query_id is not None:
        assert f"query {sub.query_id[:8]}..." in line
    view = view_from_execution(log, sub)
    assert view.root_execution_id == sub.root_execution_id and view.spark_query_id == sub.query_id
    assert execution_json(sub, plans=False)["query_id"] == sub.query_id


def _attempts_shown(oracle_stages: list[dict], sid: int) -> list[tuple[int, int]]:
    return [(s["attemptId"], s["numTasks"]) for s in oracle_stages if s["stageId"] == sid and s["status"] != "SKIPPED"]


@pytest.mark.parametrize("release", RELEASES)
def test_a_stage_retried_after_a_fetch_failure_is_counted_once(release):
    """The retry runs only the missing partitions, with task indices that are not partitions:
    per-partition values come from the task's Partition ID, each partition once, and they equal
    the same query's without a retry (the task-retry query reads the same data)."""
    log, ex = _by_description(release, "stage retry")
    _, plain = _by_description(release, "task retry")
    retried = [log.stages[s] for s in ex.stage_ids if s in log.stages and len(log.stages[s].attempts) > 1]
    assert len(retried) == 1
    st = retried[0]
    shown = _attempts_shown(_oracle(release)[log.application.id]["stages"], st.stage_id)
    assert [(a.attempt, a.num_tasks) for a in st.attempts] == shown
    assert st.attempts[0].failed and "FetchFailed" in (st.attempts[0].reason or "")
    assert not st.full_retry and st.attempts[-1].num_tasks < st.num_tasks
    reads = [r for r in ex.planned_shuffles if r.stage_id == st.stage_id]
    same = [r for r in plain.planned_shuffles if r.partition_sizes]
    assert reads and same and reads[0].partition_sizes == same[0].partition_sizes
    assert st.task_time().tasks == st.num_tasks  # every partition once, not 3 (the retry) nor 5
    text = " ".join(ex.stage_retries)
    assert f"stage {st.stage_id} ran 2 attempts (counted once)" in text
    assert f"re-ran {st.attempts[-1].num_tasks} of {st.num_tasks} partitions" in text


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("case, checksum", [("stage retry, two shuffles", False), ("checksum retry", True)])
def test_a_full_stage_retry_is_recognised(release, case, checksum):
    """A shuffle map stage whose retry re-runs partitions it had finished: a full retry, said so,
    each partition counted once. With spark.sql.shuffle.orderIndependentChecksum.* on (map
    output that changes when computed again) the summary names a checksum mismatch as a
    possible cause; the control without it shows the very same stage events in local mode (a
    fetch failure there drops the executor's outputs), so that is all a log can say."""
    log, ex = _by_description(release, case)
    full = [log.stages[s] for s in ex.stage_ids if s in log.stages and log.stages[s].full_retry]
    assert len(full) == 1, [log.stages[s].attempts for s in ex.stage_ids if s in log.stages]
    st = full[0]
    shown = _attempts_shown(_oracle(release)[log.application.id]["stages"], st.stage_id)
    assert [(a.attempt, a.num_tasks) for a in st.attempts] == shown
    assert st.attempts[-1].num_tasks == st.num_tasks and st.attempts[-1].reran_finished >= 1
    assert st.task_time().tasks == st.num_tasks
    text = " ".join(ex.stage_retries)
    assert "a full stage retry" in text and "the log does not say which" in text
    assert ("enableFullRetryOnMismatch=true" in text) == checksum


@pytest.mark.parametrize("release", RELEASES)
def test_task_ends_excluded_by_the_application_are_said_missing(release):
    logs = [_load(p) for p in _logs(release)]
    log = next(lg for lg in logs if "SparkListenerTaskEnd" in lg.excluded_events)
    assert "SparkListenerTaskEnd" not in log.event_counts
    assert any("excluded from this log by spark.eventLog.excludedPatterns" in n and "task times" in n for n in log.notes)
    ex = next(log.executions_by_id())
    view = view_from_execution(log, ex)
    assert view.stage_times == {}  # not zeros
    assert any("SparkListenerTaskEnd events were excluded" in w for w in view.warnings)
    assert all(st.task_ms is None for st in log.stages.values())
    others = [lg for lg in logs if lg is not log]
    assert others and all(not lg.excluded_events for lg in others)


@pytest.mark.parametrize("release", RELEASES)
def test_explain_mode_none_is_not_in_these_releases(release):
    """``spark.sql.ui.explainMode=none`` (a placeholder instead of the plan text) was asked of
    each release when the logs were recorded: none of them takes it, so no such log exists."""
    text = (CASES / release / "explain_mode_none.txt").read_text()
    assert text.startswith(f"Spark {release}: spark.sql.ui.explainMode=none rejected")


def test_inspect_prints_the_retries_and_ids():
    release = RELEASES[-1]
    log, ex = _by_description(release, "stage retry")
    out = subprocess.run([sys.executable, "-m", "aqe_core", "inspect", log.path], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ran 2 attempts (counted once)" in out.stdout and "sub-execution of #" in out.stdout


def test_odd_attempts_and_partitions_give_a_log_never_a_traceback(tmp_path):
    """Untrusted input: partition ids beyond the stage, negative or textual, attempts out of
    order, a failure reason that is not text, a pattern list that is not a list."""
    from tests.readers.test_eventlog_semantics import base_events, end_events, task_end, write

    ev = base_events()
    ev[0]["Spark Version"] = "4.1.4"
    ev[2]["Spark Properties"]["spark.eventLog.excludedPatterns"] = ", ,org.apache.spark.sql.execution.ui.SparkListenerDriver,"
    odd = []
    for i, part in enumerate([0, 99, -5, "x", 2**70, 1]):
        t = task_end(1, 1 if i % 2 else 0, 200 + i, i, [])
        t["Task Info"]["Partition ID"] = part
        odd.append(t)
    ev += odd + [
        {"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": 1, "Stage Attempt ID": 7,
                                                                "Stage Name": "s", "Number of Tasks": 3,
                                                                "Failure Reason": {"not": "text"}}},
        {"Event": "SparkListenerStageSubmitted", "Stage Info": {"Stage ID": 1, "Stage Attempt ID": 3,
                                                                "Stage Name": "s", "Number of Tasks": -4}},
    ] + end_events()
    log = load(str(write(tmp_path, ev)))
    st = log.stages[1]
    assert st.num_tasks == 3
    assert {a.attempt for a in st.attempts} == {0, 3, 7}
    assert list(log.excluded_events) == ["org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates"]
    assert any("SparkListenerDriverAccumUpdates events were excluded" in w and "partition sizes" in w
               for w in log.warnings)
    ex = log.executions[0]
    assert isinstance(ex.stage_retries, list)
    assert outcome_line(ex)


def test_the_setting_is_not_claimed_where_spark_ignores_it_or_the_events_are_there(tmp_path):
    """Releases before 4.1 ignore spark.eventLog.excludedPatterns; and a pattern that matched
    nothing the log lacks removed nothing."""
    from tests.readers.test_eventlog_semantics import base_events, end_events, task_end, write

    for version, pattern in (("3.5.9", "SparkListenerTaskEnd"), ("4.2.1", "SparkListenerJob")):
        ev = base_events() + [task_end(1, 0, 1, 0, [])] + end_events()
        ev[0]["Spark Version"] = version
        ev[2]["Spark Properties"]["spark.eventLog.excludedPatterns"] = pattern
        log = load(str(write(tmp_path, ev, name=f"app-{version}")))
        assert log.excluded_events == {} and not any("excluded" in n for n in log.notes + log.warnings)


def test_a_late_task_of_an_older_attempt_does_not_replace_the_retry(tmp_path):
    """A zombie task of attempt 0 that finishes after attempt 1 re-ran its partition: the
    partition keeps attempt 1's task (Spark registers the newer output)."""
    from tests.readers.test_eventlog_semantics import base_events, end_events, task_end, write

    ev = base_events()
    ev[0]["Spark Version"] = "4.2.1"
    t0 = task_end(1, 0, 1, 0, [], read=(0, 100, 1))
    retry = {"Event": "SparkListenerStageSubmitted", "Stage Info": {"Stage ID": 1, "Stage Attempt ID": 1,
                                                                  "Stage Name": "s", "Number of Tasks": 3}}
    t1 = task_end(1, 1, 2, 0, [], read=(0, 200, 2))
    zombie = task_end(1, 0, 3, 0, [], read=(0, 999, 9))
    for t, part in ((t0, 0), (t1, 0), (zombie, 0)):
        t["Task Info"]["Partition ID"] = part
    log = load(str(write(tmp_path, ev + [t0, retry, t1, zombie] + end_events())))
    st = log.stages[1]
    assert st.shuffle_bytes_read[0] == 200 and st.task_ids[0] == 2
    assert st.full_retry and st.attempts[1].reran_finished == 1
