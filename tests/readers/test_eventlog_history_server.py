"""Agreement with a real Spark History Server (the installed PySpark 4.3.0's jars).

For every application and every SQL execution of the committed logs (Spark 3.0.1 / 3.5.9 /
4.3.0; plain, zstd, lz4, snappy, lzf; single files and rolling directories, one of them with
an attempt suffix), our reader must find exactly the nodes of the final plan (id and name) and
exactly the metric values (the UI's display strings) that ``/api/v1/applications/{id}/sql``
returns, plus the same status and description.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aqe_core.api import load_event_log as load
from aqe_core.live.history_server import HistoryServer, HistoryServerError, find_java
from aqe_core.model.plan_walk import graph_nodes

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs" / "eventlogs"
FIXTURES = REPO / "tests" / "fixtures" / "eventlogs"


def _logs() -> list[Path]:
    manifest = json.loads((SAMPLES / "MANIFEST.json").read_text())
    logs = [SAMPLES / v["files"][0] for v in manifest.values()]
    logs += sorted(FIXTURES.glob("eventlog_v2_application_*"))  # 3 rolling parts + attempt id
    return logs


def our_nodes(ex) -> dict[int, tuple[str, list[tuple[str, str]]]]:
    out = {}
    if ex.final_plan is None:
        return out
    for n in graph_nodes(ex.final_plan):
        ms = []
        for m in n.metrics:
            v = ex.metric_values.get(m["accumulator_id"])
            if v is not None:
                ms.append((m["name"].strip(), v["value"]))
        out[n.id] = (n.name.strip(), ms)
    return out


@pytest.fixture(scope="module")
def history_server(tmp_path_factory):
    try:
        find_java()
    except HistoryServerError as e:
        pytest.skip(str(e))
    d = tmp_path_factory.mktemp("shs-logs")
    for p in _logs():
        (shutil.copytree if p.is_dir() else shutil.copyfile)(p, d / p.name)
    with HistoryServer(d) as hs:
        hs.wait_for_apps(len(_logs()), timeout=240)
        yield hs


@pytest.mark.slow
@pytest.mark.parametrize("log_path", _logs(), ids=lambda p: p.name)
def test_same_final_plan_nodes_and_metric_values(history_server, log_path):
    log = load(str(log_path))
    app = log.application
    rest = history_server.sql(app.id, app.attempt_id)
    assert rest, "the History Server lists no SQL execution"
    assert sorted(e["id"] for e in rest) == sorted(log.executions)
    compared_metrics = 0
    for e in rest:
        ex = log.executions[e["id"]]
        assert ex.status == e["status"], e["id"]
        assert (ex.description or "") == e["description"]
        theirs = {n["nodeId"]: (n["nodeName"], [(m["name"], m["value"]) for m in n["metrics"]]) for n in e["nodes"]}
        ours = our_nodes(ex)
        assert sorted(ours) == sorted(theirs), f"execution {e['id']}: node ids differ"
        for nid in theirs:
            assert ours[nid] == theirs[nid], f"execution {e['id']} node {nid}"
            compared_metrics += len(theirs[nid][1])
        for r in ex.shuffle_reads:  # Spark's partition count where Spark has one, null where it has none
            metric = dict(theirs[r.node_id][1]).get("number of partitions") if r.node_id in theirs else None
            assert (str(r.num_partitions) if r.num_partitions is not None else None) == metric, (e["id"], r.node_id)
    assert compared_metrics > 100


@pytest.mark.slow
@pytest.mark.parametrize("log_path", _logs(), ids=lambda p: p.name)
def test_same_task_durations_as_the_stage_pages(history_server, log_path):
    """The task times triage and the plans show are the ones the stage pages list: per task
    index, the successful attempt's duration and task id, and the stage's slowest task."""
    log = load(str(log_path))
    app = log.application
    base = f"/applications/{app.id}" + (f"/{app.attempt_id}" if app.attempt_id else "")
    compared = 0
    for st in log.stages.values():
        if st.task_ms is None:
            continue
        tasks = history_server.get(f"{base}/stages/{st.stage_id}/{st.attempt}/taskList?length=100000&status=success")
        theirs = {t["index"]: (t["duration"], t["taskId"]) for t in tasks if t.get("status") == "SUCCESS"}
        ours = {i: (ms, st.task_ids[i]) for i, ms in enumerate(st.task_ms) if ms >= 0}
        assert ours == theirs, f"stage {st.stage_id}"
        t = st.task_time()
        assert t is not None and t.max_ms == max(d for d, _ in theirs.values())
        compared += len(theirs)
    assert compared > 10
