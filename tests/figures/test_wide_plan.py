"""The wide plan the plan map is proved on (issue 40, "wide plans"): the recorded q88-wide query
(tools/record_big_plans.py --queries q88-wide, tests/fixtures/eventlogs/wide_plan) keeps its
purpose -- a final plan as wide as a production query88's, 36+ query stages in the stage graph
the map draws and 250+ operators -- so tests/browser/test_plan_map_browser.py measures the map
on a plan that is wide, not on q88-like's 16 stages."""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core.figures.plan_figure import drawn_operators
from aqe_core.figures.plan_map import plan_map_data
from aqe_core.opening import load_source

WIDE_LOG = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "eventlogs" / "wide_plan" / "local-1795904186272.zstd"


@pytest.fixture(scope="module")
def final_plan():
    src = load_source(str(WIDE_LOG))
    view = next(v for v in src.views if v.description == "q88-wide")
    assert view.final_plan is not None
    return view.final_plan


def test_the_wide_plan_has_36_stages_and_250_operators(final_plan):
    stages = plan_map_data(final_plan, expanded=())["boxes"]  # the stage graph: one box per stage
    assert all(b["stage"] for b in stages)
    assert len(stages) >= 36, len(stages)
    assert drawn_operators(final_plan) >= 250, drawn_operators(final_plan)
    assert len(plan_map_data(final_plan, expanded="all")["boxes"]) == drawn_operators(final_plan)
    # every query stage Spark ran is in the plan: eight subqueries, each shuffling four times
    names = [n.name for n in final_plan.walk()]
    assert names.count("ShuffleQueryStage") >= 32 and names.count("SortMergeJoin") == 16, names
