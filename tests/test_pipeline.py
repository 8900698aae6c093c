"""The rule order per release (engine/pipeline.py) is Spark's: ``AdaptiveSparkPlanExec``'s
``queryStagePreparationRules`` / ``queryStageOptimizerRules`` for the rules that change reads."""
import doctest

import pytest

from aqe_core.engine import pipeline, steps
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


def test_steps_are_the_engine_steps():
    assert [s.run for s in pipeline_for("3.0.1").steps] == [steps.coalesce_3_0, steps.skew_join, steps.local_read]
    assert [s.run for s in pipeline_for("3.5.9").steps] == [steps.skew_join, steps.rebalance, steps.coalesce,
                                                              steps.local_read]


def test_ranges_are_ordered_and_start_at_3_0():
    sinces = [p.since for p in pipeline.PIPELINES]
    assert sinces == sorted(sinces)
    assert str(sinces[0]) == "3.0.0"
    assert pipeline_for("3.0.0") is pipeline.PIPELINES[0]


def test_module_doctest():
    assert doctest.testmod(pipeline).failed == 0
