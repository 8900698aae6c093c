#!/usr/bin/env python3
"""Benchmark: what capturing costs a query, and how fast a what-if simulation is.

    python -m bench.bench_capture               # 200-partition skewed join, 5 rounds
    python -m bench.bench_capture --rounds 9 --scale 2 --json-out bench.json

Goals (issue #3): capture overhead <= 5% of the query time for a 200-partition skewed join;
simulating a captured query under a new configuration <= 50 ms.

Overhead is measured A/B, interleaved, on one SparkSession (``local[2]``), as the median of the
per-round ratios (a busy 2-core machine moves single runs by 20%): the plain query
(``collectAsList``, event-log listener detached) against the same query run and recorded by
:class:`~aqe_core.live.runner.Runner` (listener attached, plans walked, statistics and
per-map sizes read, plan updates parsed). Medians of ``--rounds`` rounds after one warm-up.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

SQL = "SELECT count(*) AS n, sum(f.v) AS sv, max(d.name) AS mx FROM facts f JOIN dims d ON f.k = d.k"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--scale", type=float, default=2.0, help="workload scale (2 = 400k fact rows)")
    ap.add_argument("--partitions", type=int, default=200)
    ap.add_argument("--sim-repeats", type=int, default=50)
    ap.add_argument("--json-out")
    opts = ap.parse_args()

    from aqe_core.live import workloads as wl
    from aqe_core.live.runner import Runner
    from aqe_core.live.runtime import get_runtime
    from aqe_core.engine.simulate import simulate

    rt = get_runtime("local[2]")
    spark = rt.spark
    jsc = spark.sparkContext._jsc.sc()
    listener = rt.tap.listener if rt.tap else None
    w = wl.get("skew_join_inner")
    conf = {**w.base_conf(opts.scale), "spark.sql.shuffle.partitions": str(opts.partitions)}
    runner = Runner(rt)

    def plain() -> float:
        if listener is not None:
            jsc.removeSparkListener(listener)
        s = rt.new_session(conf)
        w.views(s, opts.scale)
        t0 = time.perf_counter()
        s.sql(SQL)._jdf.collectAsList()
        dt = time.perf_counter() - t0
        if listener is not None:
            jsc.addSparkListener(listener)
        return dt

    def captured():
        s = rt.new_session(conf)
        w.views(s, opts.scale)
        t0 = time.perf_counter()
        q = runner._run_query(s, SQL, tag="bench", index=0, count=1, label="bench", preset=None, progress=None)
        total = time.perf_counter() - t0
        return total, q

    print(f"Spark {rt.version} on {rt.master}; {opts.partitions} shuffle partitions, scale {opts.scale}", file=sys.stderr)
    plain()
    captured()  # warm-up
    base, cap_total, cap_query, cap_record = [], [], [], []
    q = None
    for i in range(opts.rounds):
        base.append(plain())
        total, q = captured()
        cap_total.append(total)
        cap_query.append(q.duration_ms / 1000.0)
        cap_record.append(q.capture_ms / 1000.0)
        print(f"round {i + 1}: plain {base[-1]:.3f}s, captured {total:.3f}s (query {cap_query[-1]:.3f}s + "
              f"recording {cap_record[-1] * 1000:.0f} ms)", file=sys.stderr)
    mb, mt = statistics.median(base), statistics.median(cap_total)
    # rounds are interleaved (plain, captured, plain, ...): the median of the per-round ratios
    # is less exposed to a busy machine than the ratio of the medians
    overhead = statistics.median((c - b) / b for b, c in zip(base, cap_total)) * 100.0
    rec_share = statistics.median(cap_record) / mb * 100.0

    # simulation under a new configuration
    from aqe_core.model.capture import Capture

    capture = Capture(rt.version, [q], master=rt.master)
    n_reads = len(q.reads)
    skewed = sum(1 for r in q.reads if r.description and "skewed" in r.description)
    what_if = {"spark.sql.adaptive.skewJoin.skewedPartitionFactor": "3",
               "spark.sql.adaptive.advisoryPartitionSizeInBytes": "64k"}
    simulate(capture, what_if)
    times = []
    for _ in range(opts.sim_repeats):
        t0 = time.perf_counter()
        simulate(capture, what_if)
        times.append((time.perf_counter() - t0) * 1000.0)
    replay = simulate(capture)
    result = {
        "spark_version": rt.version, "shuffle_partitions": opts.partitions, "scale": opts.scale, "rounds": opts.rounds,
        "plain_query_s_median": round(mb, 4), "captured_total_s_median": round(mt, 4),
        "recording_ms_median": round(statistics.median(cap_record) * 1000, 1),
        "overhead_percent": round(overhead, 2), "overhead_percent_of_medians": round((mt - mb) / mb * 100.0, 2),
        "recording_percent_of_query": round(rec_share, 2),
        "simulate_ms_median": round(statistics.median(times), 2), "simulate_ms_max": round(max(times), 2),
        "reads": n_reads, "skewed_reads": skewed,
        "replay_agreement": f"{replay.agreement.agreeing}/{replay.agreement.total}",
        "goals": {"overhead_percent_max": 5.0, "simulate_ms_max": 50.0},
    }
    print(f"plain query (median)         {mb:.3f} s", file=sys.stderr)
    print(f"captured run (median)        {mt:.3f} s", file=sys.stderr)
    print(f"overhead (median of rounds)  {overhead:+.1f}% (goal <= 5%); ratio of medians {(mt - mb) / mb * 100:+.1f}%",
          file=sys.stderr)
    print(f"recording alone (median)     {result['recording_ms_median']:.0f} ms = {rec_share:.1f}% of the query", file=sys.stderr)
    print(f"simulate under a new conf    {result['simulate_ms_median']:.2f} ms median, {result['simulate_ms_max']:.2f} ms max"
          f" (goal <= 50 ms); {n_reads} reads, replay agreement {result['replay_agreement']}", file=sys.stderr)
    print(json.dumps(result, indent=1))
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(result, indent=1) + "\n")
    rt.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
