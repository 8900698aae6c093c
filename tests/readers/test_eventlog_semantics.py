"""UI aggregation semantics and model details on small hand-written event streams.

The History Server agreement test covers real logs; these cover cases real sample runs do not
produce: stage retries, task re-attempts and speculation, driver-side maxima, AQE subquery
reads, events without an ApplicationEnd.
"""
from __future__ import annotations

import json

from aqe_core.api import load_event_log as load
from aqe_core.readers.eventlog.metrics import bytes_to_string, ms_duration_to_string, summarize

SQL = "org.apache.spark.sql.execution.ui."


def metric(name, acc, typ="sum"):
    return {"name": name, "accumulatorId": acc, "metricType": typ}


def node(name, simple, metrics=(), children=()):
    return {"nodeName": name, "simpleString": simple, "children": list(children), "metadata": {},
            "metrics": list(metrics)}


PLAN = node("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true", [], [
    node("AQEShuffleRead", "AQEShuffleRead coalesced",
         [metric("number of partitions", 10), metric("partition data size", 11, "size"),
          metric("number of coalesced partitions", 12)],
         [node("ShuffleQueryStage", "ShuffleQueryStage 0", [], [
             node("Exchange", "Exchange hashpartitioning(k#1, 8), ENSURE_REQUIREMENTS",
                  [metric("shuffle records written", 20), metric("data size", 21, "size"),
                   metric("local bytes read", 22, "size"), metric("remote bytes read", 23, "size"),
                   metric("records read", 24)],
                  [node("Scan", "Scan x", [metric("number of output rows", 30), metric("scan time", 31, "timing")])])])]),
])


def task_end(stage, attempt, task, index, accs, *, ok=True, reason="Success", read=None):
    info = {"Task ID": task, "Index": index, "Attempt": 0, "Launch Time": 1, "Executor ID": "1",
            "Host": "h", "Locality": "PROCESS_LOCAL", "Speculative": False, "Getting Result Time": 0,
            "Finish Time": 5, "Failed": not ok, "Killed": False,
            "Accumulables": [{"ID": a, "Name": "m", "Update": str(v), "Value": "0", "Internal": True,
                              "Count Failed Values": True, "Metadata": "sql"} for a, v in accs]}
    ev = {"Event": "SparkListenerTaskEnd", "Stage ID": stage, "Stage Attempt ID": attempt,
          "Task Type": "ResultTask", "Task End Reason": {"Reason": reason}, "Task Info": info,
          "Task Executor Metrics": {}, "Task Metrics": {}}
    if read is not None:
        ev["Task Metrics"]["Shuffle Read Metrics"] = {
            "Remote Blocks Fetched": 0, "Local Blocks Fetched": 1, "Fetch Wait Time": 0,
            "Remote Bytes Read": read[0], "Remote Bytes Read To Disk": 0, "Local Bytes Read": read[1],
            "Total Records Read": read[2]}
    return ev


def write(tmp_path, events, name="app-1"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events))
    return p


def base_events():
    return [
        {"Event": "SparkListenerLogStart", "Spark Version": "3.5.1"},
        {"Event": "SparkListenerApplicationStart", "App Name": "t", "App ID": "app-1", "Timestamp": 1, "User": "u"},
        {"Event": "SparkListenerEnvironmentUpdate", "Spark Properties": {"spark.sql.adaptive.enabled": "true"}},
        {"Event": SQL + "SparkListenerSQLExecutionStart", "executionId": 0, "description": "q", "details": "",
         "physicalPlanDescription": "", "sparkPlanInfo": PLAN, "time": 10, "modifiedConfigs": {}},
        {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 11,
         "Stage Infos": [{"Stage ID": 1, "Stage Attempt ID": 0, "Stage Name": "s", "Number of Tasks": 3}],
         "Stage IDs": [1], "Properties": {"spark.sql.execution.id": "0",
                                          "spark.sql.adaptive.advisoryPartitionSizeInBytes": "1m"}},
        {"Event": "SparkListenerStageSubmitted", "Stage Info": {"Stage ID": 1, "Stage Attempt ID": 0,
                                                                "Stage Name": "s", "Number of Tasks": 3}},
    ]


def end_events():
    return [
        {"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 20, "Job Result": {"Result": "JobSucceeded"}},
        {"Event": SQL + "SparkListenerSQLExecutionEnd", "executionId": 0, "time": 21},
        {"Event": "SparkListenerApplicationEnd", "Timestamp": 30},
    ]


def values(log, acc):
    return log.executions[0].metric_values[acc]


def test_first_successful_attempt_per_index_wins_and_retry_resets(tmp_path):
    ev = base_events() + [
        task_end(1, 0, 100, 0, [(30, 5)], ok=False, reason="ExceptionFailure"),  # failed: overwritten
        task_end(1, 0, 101, 0, [(30, 7)]),
        task_end(1, 0, 102, 0, [(30, 1000)]),  # speculative duplicate after success: ignored
        task_end(1, 0, 103, 1, [(30, 3)]),
        # a new stage attempt resets the stage's slots
        {"Event": "SparkListenerStageSubmitted", "Stage Info": {"Stage ID": 1, "Stage Attempt ID": 1,
                                                                "Stage Name": "s", "Number of Tasks": 3}},
        task_end(1, 0, 104, 2, [(30, 50)]),  # zombie task of the old attempt: ignored
        task_end(1, 1, 105, 2, [(30, 11)]),
    ] + end_events()
    log = load(str(write(tmp_path, ev)))
    assert log.warnings == []
    assert values(log, 30)["value"] == "11"


def test_size_metric_with_driver_max_and_partition_sizes(tmp_path):
    ev = base_events() + [
        task_end(1, 0, 7, 0, [(22, 1000), (24, 10)], read=(0, 1000, 10)),
        task_end(1, 0, 8, 1, [(22, 3000), (24, 30)], read=(0, 3000, 30)),
        {"Event": SQL + "SparkListenerDriverAccumUpdates", "executionId": 0,
         "accumUpdates": [[10, 3], [12, 3], [11, 1100], [11, 3100], [11, 0]]},
    ] + end_events()
    log = load(str(write(tmp_path, ev)))
    ex = log.executions[0]
    read = ex.shuffle_reads[0]
    assert read.num_partitions == 3 and read.coalesced_partitions == 3
    assert read.partition_sizes == [1100, 3100, 0]
    assert read.bytes_read == [1000, 3000, 0] and read.records_read == [10, 30, 0]
    # slots by task index: [1000, 3000, 0] (index 2 never ran) -> med = sorted[1] = 1000
    assert values(log, 22)["value"] == ("total (min, med, max (stageId: taskId))\n"
                                        "3.9 KiB (0.0 B, 1000.0 B, 2.9 KiB (stage 1.0: task 8))")
    # driver values only -> "(driver)"
    assert values(log, 11)["value"].endswith("(0.0 B, 1100.0 B, 3.0 KiB (driver))")
    assert values(log, 10)["value"] == "3"
    assert log.stages[1].shuffle_bytes_read.tolist() == [1000, 3000, -1]
    assert ex.aqe_conf.get("spark.sql.adaptive.advisoryPartitionSizeInBytes") == 1 << 20


def test_values_are_frozen_at_execution_end(tmp_path):
    ev = base_events() + [task_end(1, 0, 7, 0, [(30, 1)])]
    ev += [end_events()[1], task_end(1, 0, 8, 1, [(30, 100)]), end_events()[0], end_events()[2]]
    log = load(str(write(tmp_path, ev)))
    assert values(log, 30)["value"] == "1"


def test_subquery_and_replaced_reads(tmp_path):
    old_plan = json.loads(json.dumps(PLAN).replace('"accumulatorId": 11', '"accumulatorId": 911'))
    ev = base_events()
    ev.insert(4, {"Event": SQL + "SparkListenerSQLAdaptiveExecutionUpdate", "executionId": 0,
                  "physicalPlanDescription": "", "sparkPlanInfo": old_plan})
    ev.insert(5, {"Event": SQL + "SparkListenerSQLAdaptiveExecutionUpdate", "executionId": 0,
                  "physicalPlanDescription": "", "sparkPlanInfo": PLAN})
    ev += [
        {"Event": SQL + "SparkListenerSQLAdaptiveSQLMetricUpdates", "executionId": 0,
         "sqlPlanMetrics": [{"name": "number of partitions", "accumulatorId": 800, "metricType": "sum"},
                            {"name": "partition data size", "accumulatorId": 801, "metricType": "size"}]},
        {"Event": SQL + "SparkListenerDriverAccumUpdates", "executionId": 0,
         "accumUpdates": [[800, 2], [801, 5], [801, 6], [911, 42]]},
    ] + end_events()
    log = load(str(write(tmp_path, ev)))
    ex = log.executions[0]
    assert len(ex.plan_versions) == 2 and ex.final_plan is ex.plan_versions[-1]
    others = sorted(ex.other_shuffle_reads, key=lambda r: r.partition_sizes)
    assert [r.partition_sizes for r in others] == [[5, 6], [42]]
    assert "subquery" in others[0].notes[0] and "plan version 1" in others[1].notes[0]
    assert values(log, 801)["value"].startswith("total")


def test_running_execution_without_end(tmp_path):
    ev = base_events() + [task_end(1, 0, 7, 0, [(30, 4)])]
    log = load(str(write(tmp_path, ev)))
    ex = log.executions[0]
    assert ex.status == "RUNNING" and not log.complete
    assert values(log, 30)["value"] == "4"


def test_formatting_matches_spark():
    assert bytes_to_string(1296) == "1296.0 B"
    assert bytes_to_string(2048) == "2.0 KiB"
    assert bytes_to_string(2304) == "2.3 KiB"  # 2.25 rounds half up, as Java does
    assert bytes_to_string(5 * 1024**3) == "5.0 GiB"
    assert ms_duration_to_string(999) == "999 ms"
    assert ms_duration_to_string(1250) == "1.3 s"
    assert ms_duration_to_string(90_000) == "1.5 m"
    assert ms_duration_to_string(5_400_000) == "1.50 h"
    assert summarize("sum", [1000, 20000], None)["value"] == "21,000"
    avg = summarize("average", [0, 15, 25, 35], (1, 0, 9))
    assert avg["value"] == "(min, med, max (stageId: taskId)):\n(1.5, 2.5, 3.5 (stage 1.0: task 9))"
    assert summarize("nsTiming", [5_000_000], None)["value"] == "5 ms"
    assert summarize("timing", [-1, -1], None)["value"] == "0 ms"
