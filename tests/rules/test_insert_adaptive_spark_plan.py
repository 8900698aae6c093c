"""``InsertAdaptiveSparkPlan`` (aqe_core/rules/insert_adaptive_spark_plan.py): whether AQE applies
to a query, and why not, on every query of the event logs and captures recorded from real Spark
(3.0.1 - 4.3.0): our verdict is what Spark did (an AdaptiveSparkPlan node in the plan, or none).
The plan facts are read by engine/adaptive.py (its own tests: tests/engine/test_adaptive.py)."""
import pytest

from aqe_core import config
from aqe_core.engine.adaptive import adaptive_verdict
from aqe_core.model.plan import PlanNode
from aqe_core.readers.capture_file import load_capture
from aqe_core.versions import as_version
from tests.rules.recorded import EVENT_LOG_CAPTURES as CAPTURES, recorded_executions


@pytest.fixture(scope="module")
def executions():
    return recorded_executions()


def test_event_logs_verdict_matches_spark(executions):
    codes = set()
    for name, version, ex in executions:
        v = adaptive_verdict(ex.initial_plan, ex.aqe_conf, version)
        assert v.plan_shows_adaptive == ex.adaptive, (name, ex.id)
        assert v.applies == ex.adaptive, (name, ex.id, [r.message for r in v.reasons])
        assert v.agrees
        codes |= {r.code for r in v.reasons}
    # the recorded logs hold commands, a plan with nothing to adapt, and adaptive queries
    assert {"command", "nothing_to_adapt", "adaptive"} <= codes


def test_write_command_wraps_its_query(executions):
    """3.0's InsertIntoHadoopFsRelationCommand (AdaptiveSparkPlan under the command) and 3.4+'s
    planned write (the command inside AdaptiveSparkPlan): AQE applies to both."""
    writes = [(version, ex) for _, version, ex in executions if ex.description == "parquet write"]
    assert {as_version(v) >= as_version("3.4.0") for v, _ in writes} == {True, False}
    for version, ex in writes:
        assert adaptive_verdict(ex.initial_plan, ex.aqe_conf, version).applies


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_capture_verdict_matches_spark(path):
    cap = load_capture(str(path))
    for q in cap.queries:
        v = adaptive_verdict(q.final_plan.root, q.conf, cap.spark_version)
        assert v.applies == q.adaptive == v.plan_shows_adaptive, (q.label, [r.message for r in v.reasons])


def test_conf_decides_before_the_plan():
    plan = PlanNode(None, "AdaptiveSparkPlan", children=[PlanNode(None, "HashAggregate", children=[
        PlanNode(None, "Exchange", children=[PlanNode(None, "Range")])])])
    off = adaptive_verdict(plan, {}, "3.0.1")  # 3.0's default: AQE off
    assert not off.applies and off.reasons[0].code == "aqe_disabled"
    assert off.reasons[0].config_keys == (config.ADAPTIVE_EXECUTION_ENABLED,)
    assert not off.agrees  # the plan shows AdaptiveSparkPlan: the conf we were given is not Spark's
    assert adaptive_verdict(plan, {config.ADAPTIVE_EXECUTION_ENABLED: "true"}, "3.0.1").applies
    bare = PlanNode(None, "WholeStageCodegen (1)", children=[PlanNode(None, "Range")])
    assert adaptive_verdict(bare, {}, "3.5.0").reasons[0].code == "nothing_to_adapt"
    assert adaptive_verdict(bare, {config.ADAPTIVE_EXECUTION_FORCE_APPLY: "true"}, "3.5.0").applies
