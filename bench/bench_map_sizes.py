#!/usr/bin/env python3
"""Benchmark: recording a wide shuffle (issue 14: 1,000 maps x 5,000 reducers in <= 2 s).

    python -m bench.bench_map_sizes [--maps 1000] [--reducers 5000] [--rounds 3]

Runs one aggregation whose shuffle has ``--maps`` map tasks and ``--reducers`` reducers (past
2,000 reducers Spark keeps HighlyCompressedMapStatus), then records its per-map sizes A B A B on
the same registered shuffle: A through the shipped jar (``Bulk.mapSizes``: one Py4J call per
shuffle), B through the per-map Py4J path (several calls per map). Prints both medians and the
ratio, and checks that both read the same sizes.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--maps", type=int, default=1000)
    ap.add_argument("--reducers", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    opts = ap.parse_args()

    from aqe_core.live.recorder import Recorder
    from aqe_core.live.runtime import get_runtime
    from aqe_core.model.capture import ShuffleCapture

    rt = get_runtime("local[2]")
    s = rt.new_session({"spark.sql.shuffle.partitions": str(opts.reducers), "spark.sql.adaptive.enabled": "true"})
    df = s.range(0, opts.maps * 200, 1, opts.maps).selectExpr(f"id % {opts.reducers * 3} AS g").groupBy("g").count()
    t0 = time.perf_counter()
    df.collect()
    query_s = time.perf_counter() - t0
    rec = Recorder(s)
    t0 = time.perf_counter()
    q = rec.capture(df, label="wide")
    record_s = time.perf_counter() - t0
    sid = next(iter(q.shuffles))
    b = q.shuffles[sid].bytes_by_partition_id
    print(f"Spark {rt.version}: {opts.maps} maps x {len(b)} reducers, query {query_s:.2f}s;"
          f" statuses {q.shuffles[sid].map_sizes.status_classes if q.shuffles[sid].map_sizes else '?'}", file=sys.stderr)
    print(f"recording the whole query (plans, statistics, per-map sizes): {record_s:.2f} s (goal <= 2 s)")

    def once(bulk: bool) -> tuple[float, object]:
        sc = ShuffleCapture(sid, len(b), None, list(b))
        if not bulk:
            rec._bulk_sizes = lambda *a, **k: None  # type: ignore[method-assign]
        t = time.perf_counter()
        rec._map_sizes(sc)
        took = time.perf_counter() - t
        if not bulk:
            del rec._bulk_sizes
        return took, sc.map_sizes

    a_times, b_times = [], []
    a_sizes = b_sizes = None
    for _ in range(opts.rounds):
        ta, a_sizes = once(True)
        tb, b_sizes = once(False)
        a_times.append(ta)
        b_times.append(tb)
    same = a_sizes is not None and b_sizes is not None and a_sizes.sizes == b_sizes.sizes
    ma, mb = statistics.median(a_times), statistics.median(b_times)
    print(f"per-map sizes of {opts.maps} maps x {len(b)} reducers ({len(a_sizes.sizes) if a_sizes else 0}"
          f" reducers kept), median of {opts.rounds}:")
    print(f"  A bulk (one Py4J call):   {ma:.3f} s")
    print(f"  B per map (Py4J per map): {mb:.3f} s")
    print(f"  B / A = {mb / ma:.1f}x; same sizes: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
