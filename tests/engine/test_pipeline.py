"""The rule order per release (engine/pipeline.py) is Spark's: ``AdaptiveSparkPlanExec``'s
``queryStagePreparationRules`` / ``queryStageOptimizerRules`` for the rules that change reads."""
import doctest

import pytest

from aqe_core.engine import pipeline
from aqe_core.engine.pipeline import (
    ALL_RULES,
    APPLY_FINAL_STAGE_FLAG,
    SUPPORTED_ORIGINS_3_1,
    pipeline_for,
)

_3_0 = ["CoalesceShufflePartitions", "OptimizeSkewedJoin", "OptimizeLocalShuffleReader"]
_3_2 = ["OptimizeSkewedJoin", "OptimizeSkewInRebalancePartitions", "CoalesceShufflePartitions",
        "OptimizeShuffleWithLocalRead"]


@pytest.mark.parametrize("version, rules, final_stage", [
    ("3.0.1", _3_0, ALL_RULES),
    ("3.1.3", _3_0, SUPPORTED_ORIGINS_3_1),
    ("3.2.4", _3_2, ALL_RULES),
    ("3.3.4", _3_2, ALL_RULES),
    ("3.4.1", _3_2, ALL_RULES),
    ("3.4.4", _3_2, APPLY_FINAL_STAGE_FLAG),
    ("3.5.9", _3_2, APPLY_FINAL_STAGE_FLAG),
    ("4.0.0", _3_2, APPLY_FINAL_STAGE_FLAG),
    ("4.3.0", _3_2, APPLY_FINAL_STAGE_FLAG),
])
def test_rule_order_per_release(version, rules, final_stage):
    p = pipeline_for(version)
    assert list(p.rules) == rules
    assert p.final_stage == final_stage


def test_skew_join_is_a_preparation_rule_from_3_3():
    """3.3 moved OptimizeSkewedJoin to queryStagePreparationRules: it is not an AQEShuffleReadRule
    there, so applyFinalStageShuffleOptimizations=false does not drop it."""
    assert pipeline_for("3.2.4").steps[0].phase == "query_stage"
    for v in ("3.3.0", "3.5.9", "4.3.0"):
        skew = pipeline_for(v).steps[0]
        assert (skew.rule, skew.phase, skew.shuffle_read_rule) == ("OptimizeSkewedJoin", "preparation", False)
        assert all(s.phase == "query_stage" and s.shuffle_read_rule for s in pipeline_for(v).steps[1:])


def test_steps_run_the_rule_modules():
    """Each step is its rule module's ``apply`` (plan-shape check + math), named after the class."""
    for v in ("3.0.1", "3.1.3", "3.2.4", "3.5.9", "4.3.0"):
        for s in pipeline_for(v).steps:
            # OptimizeSkewedJoin's plan-shape half sits beside its math in <rule>_plan (the 600-line limit)
            module = s.run.__module__.rpartition(".")[2].removesuffix("_plan")
            assert s.run.__name__ in ("apply", "apply_3_0")
            assert "".join(w.capitalize() for w in module.split("_")) in (
                s.rule, "OptimizeShuffleWithLocalRead")  # 3.0/3.1's OptimizeLocalShuffleReader: same module
    assert pipeline_for("3.0.1").steps[0].run.__name__ == "apply_3_0"


def test_ranges_are_ordered_and_start_at_3_0():
    sinces = [p.since for p in pipeline.PIPELINES]
    assert sinces == sorted(sinces)
    assert str(sinces[0]) == "3.0.0"
    assert pipeline_for("3.0.0") is pipeline.PIPELINES[0]


def test_module_doctest():
    assert doctest.testmod(pipeline).failed == 0


def test_engine_stage_plan_implements_the_rules_protocols():
    """Rules see the stage plan only through aqe_core.model.stage; the engine's classes provide
    every member those protocols name."""
    from aqe_core.engine import stage_plan
    from aqe_core.model import stage

    pairs = [(stage.StageNode, stage_plan.StageNode), (stage.Fragment, stage_plan.Fragment),
             (stage.StageStats, stage_plan.Context), (stage.SpecState, stage_plan.FragmentState)]
    for proto, impl in pairs:
        members = {n for n in vars(proto) if not n.startswith("_")} | set(getattr(proto, "__annotations__", {}))
        have = set(dir(impl)) | set(getattr(impl, "__dataclass_fields__", {})) | set(getattr(impl, "__annotations__", {}))
        if impl is stage_plan.Context:
            have |= {"q", "conf", "v", "plan", "default_parallelism"}  # set in __init__
        assert members <= have, (impl.__name__, members - have)
