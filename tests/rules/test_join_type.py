"""``JoinType`` (aqe_core/rules/join_type.py): one name per join type, against the names real
Spark printed in the recorded plans (``tests/fixtures/captures``, see tests/rules/recorded.py) and
the ``how`` words of ``JoinType.apply`` for each recorded ``skew_join_<how>`` workload.
"""
from __future__ import annotations

import pytest

from aqe_core.rules.join_type import normalize_join_type
from tests.rules.recorded import RELEASES, joins, replayed

#: the ``JoinType`` names Spark prints for the join types AQE re-plans
SPARK_NAMES = {"Inner", "Cross", "LeftOuter", "RightOuter", "FullOuter", "LeftSemi", "LeftAnti", "ExistenceJoin"}


@pytest.mark.parametrize("release", RELEASES)
def test_spark_s_printed_names_are_kept(release):
    found = 0
    for rq, j in joins(release):
        info = rq.query.final_plan.info[j.node]
        assert normalize_join_type(info["join_type"]) == info["join_type"] in SPARK_NAMES, rq.where
        assert normalize_join_type(j.join_type) == info["join_type"], rq.where
        found += 1
    assert found


def test_how_words_name_what_spark_ran():
    """``skew_join_left_anti`` ran ``LEFT ANTI JOIN``: Spark's plan says ``LeftAnti``, and the
    ``how`` word (``left_anti``, as ``Dataset.join`` takes it) normalizes to that name."""
    seen = set()
    for rq in replayed():
        how = rq.workload.removeprefix("skew_join_")
        if rq.workload.startswith("skew_join_") and how not in ("both_sides", "then_aggregate"):
            for j in rq.result.joins:
                assert normalize_join_type(how) == rq.query.final_plan.info[j.node]["join_type"], rq.where
                assert normalize_join_type(how.replace("_", "")) == normalize_join_type(how.upper())
                seen.add(how)
    assert seen == {"inner", "full_outer", "left_anti", "left_outer", "left_semi", "right_outer"}
