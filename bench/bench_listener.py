#!/usr/bin/env python3
"""Benchmark: what the AQE Lens listener costs a job (issue 11 goal: <= 2% of query time).

    python -m bench.bench_listener               # 200-partition skewed join, 9 rounds
    python -m bench.bench_listener --rounds 15 --scale 2

One SparkContext (``local[2]``) with the listener's jar on the driver's classpath; rounds
alternate A (no listener) and B (listener attached through ``addSparkListener``, event
logging off so it records to its side file), A B A B on fresh sessions of the capture
benchmark's query. Printed: both medians, the median of the per-round ratios (a busy 2-core
machine moves single runs by 20%), and the listener's own recording time (off the query's path:
it runs on the listener bus after the execution ended).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

SQL = "SELECT count(*) AS n, sum(f.v) AS sv, max(d.name) AS mx FROM facts f JOIN dims d ON f.k = d.k"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--scale", type=float, default=2.0)
    ap.add_argument("--partitions", type=int, default=200)
    opts = ap.parse_args()

    from aqe_core.listener import JAR_PATH, LISTENER_CLASS
    from aqe_core.live import workloads as wl
    from aqe_core.live.runtime import get_runtime

    side = Path(tempfile.mkdtemp(prefix="aqe-lens-bench-listener-"))
    rt = get_runtime("local[2]", conf={"spark.jars": str(JAR_PATH), "spark.aqelens.sideFile.dir": str(side)},
                     event_log=False)
    spark = rt.spark
    jsc = spark.sparkContext._jsc.sc()
    w = wl.get("skew_join_inner")
    conf = {**w.base_conf(opts.scale), "spark.sql.shuffle.partitions": str(opts.partitions)}

    def events() -> list[dict]:
        return [json.loads(line) for p in side.glob("*.jsonl") for line in p.read_text().splitlines()]

    def run(with_listener: bool) -> tuple[float, float]:
        listener = spark._jvm.io.aqelens.listener.AqeLensListener() if with_listener else None
        if listener is not None:
            jsc.addSparkListener(listener)
        s = rt.new_session(conf)
        w.views(s, opts.scale)
        n = len(events())
        t0 = time.perf_counter()
        s.sql(SQL)._jdf.collectAsList()
        dt = time.perf_counter() - t0
        rec = 0.0
        if listener is not None:
            deadline = time.time() + 60
            while len(events()) == n and time.time() < deadline:
                time.sleep(0.05)
            got = events()[n:]
            rec = float(json.loads(got[-1]["payload"])["capture_ms"]) / 1000.0 if got else float("nan")
            jsc.removeSparkListener(listener)
        return dt, rec

    print(f"Spark {rt.version}; {LISTENER_CLASS}; {opts.partitions} partitions, scale {opts.scale}", file=sys.stderr)
    run(False), run(True)  # warm-up
    a, b, rec = [], [], []
    for i in range(opts.rounds):
        a.append(run(False)[0])
        t, r = run(True)
        b.append(t)
        rec.append(r)
        print(f"round {i + 1}: without {a[-1]:.3f}s, with {b[-1]:.3f}s (recording {r * 1000:.0f} ms, after the query)",
              file=sys.stderr)
    ratio = statistics.median(y / x for x, y in zip(a, b))
    print(json.dumps({"without_s": round(statistics.median(a), 4), "with_s": round(statistics.median(b), 4),
                      "ratio": round(ratio, 4), "overhead_pct": round((ratio - 1) * 100, 2),
                      "recording_ms": round(statistics.median(rec) * 1000, 1), "goal_pct": 2.0}))
    rt.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
