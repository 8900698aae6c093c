"""Per-map sizes in one round trip (issue 14): the shipped jar's ``Bulk.mapSizes`` reads exactly
what the per-map Py4J path reads, for both MapStatus classes Spark uses (Compressed below 2,000
reducers, HighlyCompressed above), on the shared real session."""
from __future__ import annotations

import pytest

from aqe_core.live.recorder import Recorder
from aqe_core.model.capture import ShuffleCapture


@pytest.mark.slow
@pytest.mark.parametrize("reducers,status", [(300, "CompressedMapStatus"), (2500, "HighlyCompressedMapStatus")])
def test_bulk_sizes_equal_the_per_map_path(spark_runtime, reducers, status):
    s = spark_runtime.new_session({"spark.sql.shuffle.partitions": str(reducers)})
    df = s.range(0, 24_000, 1, 12).selectExpr(f"id % {reducers * 2} AS g").groupBy("g").count()
    df.collect()
    rec = Recorder(s)
    assert rec.j.bulk_method() is not None  # the jar loads in its own class loader
    q = rec.capture(df, label="wide")
    sid = next(iter(q.shuffles))
    b = q.shuffles[sid].bytes_by_partition_id
    bulk = q.shuffles[sid].map_sizes
    assert bulk is not None and bulk.status_classes == [status] and bulk.consistent
    per_map = ShuffleCapture(sid, len(b), None, list(b))
    rec._bulk_sizes = lambda *a, **k: None  # the per-map path
    rec._map_sizes(per_map)
    assert per_map.map_sizes.sizes == bulk.sizes and per_map.map_sizes.num_maps == bulk.num_maps == 12
    assert [sum(row) for row in bulk.sizes] == list(b)
