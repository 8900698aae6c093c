"""Replay captures recorded from real Spark releases (3.0.1, 3.5.x, 4.3.0) through our rules.

``tests/fixtures/captures/<version>/<workload>.json.gz`` were written by
``tools/record_fixtures.py`` running the built-in workloads on that PySpark release (see
docs/capture-format.md, "Re-recording fixtures"). Every adaptive read's specs, join strategy
and skew flag must be reproduced exactly, with the release's own rules and each query's own
settings. No Spark needed.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core.capture.model import load_capture
from aqe_core.capture.simulate import simulate

FIXTURES = Path(__file__).parent / "fixtures" / "captures"
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
