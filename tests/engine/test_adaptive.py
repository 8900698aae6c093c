"""InsertAdaptiveSparkPlan on recorded plans (engine/adaptive.py): for every query in the event
logs and captures recorded from real Spark (3.0.1 - 4.3.0), our verdict is what Spark did (an
AdaptiveSparkPlan node in the plan, or none), with the reason when AQE did not apply."""
from pathlib import Path

import pytest

from aqe_core import config
from aqe_core.model.capture import CapturedPlan, QueryCapture
from aqe_core.readers.capture_file import load_capture
from aqe_core.engine import simulate_query
from aqe_core.engine.adaptive import adaptive_verdict, plan_facts
from aqe_core.readers.eventlog.loader import load
from aqe_core.model.plan import PlanNode
from aqe_core.versions import as_version

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted([p for d in ("sample_logs/eventlogs", "tests/fixtures/eventlogs") for p in (ROOT / d).iterdir()
               if p.name not in ("MANIFEST.json", "listener", "retry_cases")]
              + [p for p in (ROOT / "tests/fixtures/eventlogs/listener").glob("*/*") if p.name != "captures.json.gz"]
              + list((ROOT / "tests/fixtures/eventlogs/retry_cases").glob("*/*.zstd")))
CAPTURES = sorted((ROOT / "tests/fixtures/captures").glob("*/*.json.gz")) + sorted(
    (ROOT / "sample_logs/captures").glob("*.json.gz"))


@pytest.fixture(scope="module")
def executions():
    out = []
    for path in LOGS:
        log = load(str(path))
        for ex in log.executions.values():
            if ex.initial_plan is not None:
                out.append((path.name, log.application.spark_version, ex))
    return out


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
