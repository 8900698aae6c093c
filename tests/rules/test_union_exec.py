"""``UnionExec.outputPartitioning`` (aqe_core/rules/union_exec.py, 4.1+): whether a Union reports
its children's partitioning, which decides whether ``CoalesceShufflePartitions`` coalesces them
together, against the ``union_aggregates`` and ``broadcast_union`` workloads recorded on real
Spark (``tests/fixtures/captures``, see tests/rules/recorded.py).
"""
from __future__ import annotations

import pytest

from aqe_core.config import AQEConf
from aqe_core.engine import simulate
from aqe_core.engine.simulate import one_query
from aqe_core.readers.capture_file import load_capture
from aqe_core.rules.union_exec import inferred_union_partitioning, union_reports_partitioning, unknown
from tests.rules.recorded import CAPTURES, RELEASES, replayed
from tests.views.test_releases import _keyed, _specs, _stats


def _unions(release: str):
    for rq in replayed():
        if rq.release == release:
            for _, node, info in rq.query.final_plan.indexed():
                if node.name.split(" (")[0] == "Union":
                    yield rq, node, info.get("partitioning")


def test_union_output_partitioning_is_keyed_on_the_release_setting():
    """4.3.0's rules coalesce union_aggregates' two children as one group (what 4.3.0 did); with
    spark.sql.unionOutputPartitioning=false the Union is plain again and each child is its own
    group, which is what 3.5.9 (no such setting) did on the same statistics."""
    old = load_capture(str(CAPTURES / "3.5.9" / "union_aggregates.json.gz"))
    new = load_capture(str(CAPTURES / "4.3.0" / "union_aggregates.json.gz"))
    qa, qb = old.queries[0], new.queries[0]
    assert _stats(qa) == _stats(qb)

    def specs(conf):
        sim = simulate(one_query(old, qa), conf, "4.3.0").queries[0]
        return {k: _specs(r.simulated_specs) for k, r in _keyed(qa, sim.reads).items()}

    as_43 = {k: _specs(r.spark_specs) for k, r in _keyed(qb, simulate(one_query(new, qb)).queries[0].reads).items()}
    as_35 = {k: _specs(r.spark_specs) for k, r in _keyed(qa, simulate(one_query(old, qa)).queries[0].reads).items()}
    assert as_43 != as_35
    assert specs(None) == as_43
    assert specs({"spark.sql.unionOutputPartitioning": "false"}) == as_35


def test_the_inferred_partitioning_is_what_4_3_reported():
    """4.3.0 recorded every Union's partitioning (a coalesced hash partitioning: it reported its
    children's); inferring it from the recorded children alone gives the same answer."""
    found = list(_unions("4.3.0"))
    assert found
    conf = AQEConf.resolve("4.3.0", [])
    for rq, node, recorded in found:
        assert not unknown(recorded), rq.where
        assert inferred_union_partitioning(node) is not None, rq.where
        assert union_reports_partitioning(node, None, conf, None), rq.where


@pytest.mark.parametrize("release", [r for r in RELEASES if r < "4.1"])
def test_before_4_1_a_union_reports_nothing(release):
    """Before 4.1 ``UnionExec`` has no output partitioning (``UnknownPartitioning(0)`` in every
    recording), whatever its children's."""
    found = list(_unions(release))
    assert found
    for rq, node, recorded in found:
        assert unknown(recorded), rq.where
        assert not union_reports_partitioning(node, recorded, AQEConf.resolve(release, [rq.query.conf]), None)
