"""A log that claims more tasks than it ends (issue 41): the reader's per-task arrays are sized by
the partitions tasks reached, not by the stated ``Number of Tasks``."""
from __future__ import annotations

from aqe_core.readers.eventlog import loader
from aqe_core.readers.eventlog.errors import Limits
from tests.budget_logs import inflated_tasks


def test_a_stage_claiming_400_million_tasks_costs_the_slots_its_tasks_reached(tmp_path):
    p = inflated_tasks(tmp_path / "claims.gz", 400_000_000, stages=3, index=0)
    log = loader.load(str(p), limits=Limits(max_task_slots=1000), keep_task_metrics=True)
    assert not log.warnings
    assert log.executions[0].status == "COMPLETED"
    st = log.stages[0]
    assert st.num_tasks == 400_000_000 and st.task_attempts is not None and len(st.task_attempts) <= 16
    assert st.task_ms is not None and st.task_ms[0] == 1 and len(st.task_ms) <= 16


def test_tasks_that_reach_the_claimed_count_are_still_refused(tmp_path):
    p = inflated_tasks(tmp_path / "reaches.gz", 1 << 20)  # its one task is the last partition
    log = loader.load(str(p), limits=Limits(max_task_slots=1 << 19), keep_task_metrics=True)
    assert any("declare more tasks than the reader keeps values for" in w for w in log.warnings)


def test_a_stage_s_partitions_past_the_last_task_seen_read_as_not_seen(tmp_path):
    p = inflated_tasks(tmp_path / "few.gz", 40, index=3)
    d = loader.load(str(p), keep_task_metrics=True).stages[0].to_dict(tasks=True)
    assert d["task_duration_ms"] == [-1, -1, -1, 1] + [-1] * 36
