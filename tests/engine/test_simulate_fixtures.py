"""Replay captures recorded from real Spark releases (3.0.1 - 4.3.0) through our rules.

``tests/fixtures/captures/<version>/<workload>.json.gz`` were written by
``tools/record_fixtures.py`` running the built-in workloads on that PySpark release (see
docs/capture-format.md, "Re-recording fixtures"). Every adaptive read's specs, join strategy
and skew flag must be reproduced exactly, with the release's own rules and each query's own
settings. No Spark needed.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core.readers.capture_file import load_capture
from aqe_core.engine.simulate import simulate

FIXTURES = Path(__file__).parents[1] / "fixtures" / "captures"
PATHS = sorted(FIXTURES.glob("*/*.json.gz"))


def test_fixtures_cover_required_releases():
    versions = {p.parent.name for p in PATHS}
    assert "3.0.1" in versions
    assert any(v.startswith("3.5.") for v in versions)


@pytest.mark.parametrize("path", PATHS, ids=[f"{p.parent.name}/{p.name.split('.')[0]}" for p in PATHS])
def test_recorded_capture_replays_exactly(path):
    cap = load_capture(path)
    assert cap.spark_version == path.parent.name
    rep = simulate(cap)
    assert rep.is_replay
    a = rep.agreement
    assert a.complete, f"{path.name}: {a.agreeing}/{a.total} reads, {a.joins_agreeing}/{a.joins_total} joins:\n" + \
        "\n".join(a.mismatches)


def test_fixture_map_sizes_are_exact():
    """Per-map sizes are MapStatus.getSizeForBlock values: per reducer they add up to
    bytesByPartitionId exactly (that is how Spark computes it)."""
    checked = 0
    for path in PATHS:
        for q in load_capture(path).queries:
            for sh in q.shuffles.values():
                ms = sh.map_sizes
                if ms is None or sh.bytes_by_partition_id is None:
                    continue
                assert ms.consistent
                for r, size in enumerate(sh.bytes_by_partition_id):
                    row = ms.for_reducer(r)
                    if row is not None:
                        assert sum(row) == size
                        checked += 1
    assert checked > 1000


def _load(version: str, name: str):
    return load_capture(FIXTURES / version / f"{name}.json.gz")


def test_what_if_on_a_recorded_capture_reruns_only_the_rules():
    from aqe_core.model.specs import PartialReducerPartitionSpec

    cap = _load("4.3.0", "skew_join_inner")
    rep = simulate(cap, {"spark.sql.adaptive.skewJoin.enabled": "false"})
    assert not rep.is_replay
    first = rep.queries[0]
    assert not any(isinstance(s, PartialReducerPartitionSpec) for r in first.reads for s in r.simulated_specs or [])
    assert any(not r.agrees for r in first.reads)  # differs from what Spark did with skew handling on
    # the captured preset with skew handling off is what the what-if predicts for the default preset
    off = next(q for q in cap.queries if q.preset == "skew_join_off")
    predicted = [r.simulated_specs for r in first.reads]
    actual = [r.specs for r in off.reads]
    assert len(predicted) == len(actual) and [len(x or []) for x in predicted] == [len(x) for x in actual]


def test_plan_changing_settings_are_flagged():
    rep = simulate(_load("4.3.0", "aggregate_coalesce"), {"spark.sql.shuffle.partitions": "100"})
    assert any("new run" in n for n in rep.notes)


def test_other_release_rules_on_a_capture():
    cap = _load("4.3.0", "skew_join_inner")
    rep = simulate(cap, spark_version="3.0.1")
    assert rep.spark_version == "3.0.1" and not rep.is_replay
    specs = [s for r in rep.queries[0].reads for s in (r.simulated_specs or [])]
    assert specs and all(getattr(s, "data_size", None) is None for s in specs)  # 3.0.x specs carry no sizes


def test_simulation_is_fast():
    import time

    cap = _load("4.3.0", "multi_way_join")
    simulate(cap, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "64k"})
    t0 = time.perf_counter()
    for _ in range(5):
        simulate(cap, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "64k"})
    per_capture = (time.perf_counter() - t0) / 5 * 1000
    assert per_capture / len(cap.queries) < 50
