"""InsertAdaptiveSparkPlan's plan facts and its verdict in a simulation (engine/adaptive.py). The
verdict against what Spark did on every recorded query is the rule's:
tests/rules/test_insert_adaptive_spark_plan.py."""
import pytest

from aqe_core.model.capture import CapturedPlan, QueryCapture
from aqe_core.readers.capture_file import load_capture
from aqe_core.engine import simulate_query
from aqe_core.engine.adaptive import plan_facts
from aqe_core.model.plan import PlanNode
from aqe_core.versions import as_version
from tests.rules.recorded import EVENT_LOG_CAPTURES as CAPTURES, recorded_executions


@pytest.fixture(scope="module")
def executions():
    return recorded_executions()


def test_plan_facts():
    cmd = PlanNode(None, "Execute CreateViewCommand", "Execute CreateViewCommand")
    assert plan_facts(cmd).is_command
    sub = PlanNode(None, "Project", "Project [scalar-subquery#12 [] AS x#3]", children=[PlanNode(None, "Range")])
    assert plan_facts(sub).has_subquery_expression and not plan_facts(sub).has_exchange
    sort = PlanNode(None, "Sort", "Sort [id#0L ASC NULLS FIRST], true, 0", children=[PlanNode(None, "Range")])
    assert plan_facts(sort).requires_child_distribution


def test_simulate_query_says_why_aqe_did_not_run(executions):
    """A query recorded without AQE gets InsertAdaptiveSparkPlan's reason; adaptive queries'
    results are unchanged (no ``adaptive`` entry)."""
    name, version, ex = next(e for e in executions if e[2].initial_plan.name.startswith("Execute Create"))
    q = QueryCapture(index=0, label="view", conf={}, default_parallelism=2, adaptive=False,
                     final_plan=CapturedPlan(ex.initial_plan))
    qr = simulate_query(q, {}, as_version(version))
    assert qr.adaptive is not None and not qr.adaptive.applies and qr.adaptive.agrees
    assert qr.adaptive.reasons[0].code == "command"
    assert qr.notes == ["AQE did not run for this query: the plan is a command; AQE only wraps the query inside a"
                        " write command: nothing to simulate"]
    assert qr.to_dict()["adaptive"]["applies"] is False
    cap = load_capture(str(CAPTURES[0]))
    adaptive = simulate_query(cap.queries[0], {}, as_version(cap.spark_version))
    assert adaptive.adaptive is None and "adaptive" not in adaptive.to_dict()
