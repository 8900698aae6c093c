"""The capture tap's event log does not grow for the life of the server (issue 14): between
queries, past its limit, it starts a fresh file and drops the task data nobody recorded; the
next capture still has its plan updates and task times."""
from __future__ import annotations

import os

import pytest


@pytest.mark.slow
def test_the_tap_log_is_trimmed_between_queries(spark_runtime):
    from aqe_core.live.runner import Runner

    tap = spark_runtime.tap
    runner = Runner(spark_runtime)
    runner.run_workload("aggregate_coalesce", presets=["default"])
    tap.poll()
    old = tap.log_path
    assert os.path.getsize(old) > 0
    assert not tap.trim(limit_bytes=1 << 40)  # under the limit: nothing happens
    assert tap.trim(limit_bytes=1)
    assert tap.log_path != old and not os.path.exists(old)
    assert tap.stages == {} and tap.stage_tasks == {}  # no query was running: nothing is kept
    cap = runner.run_workload("skew_join_inner", presets=["default"])
    q = cap.queries[0]
    assert q.plan_updates and any(s.task_ms for s in q.spark_stages)
