#!/usr/bin/env python3
"""Produce the sample captures in ``sample_logs/captures/`` from real Spark runs.

    python tools/make_sample_captures.py            # PySpark from requirements.txt (4.3)
    "$(tools/spark_env.sh 3.0.1)" tools/make_sample_captures.py --only skew_join_inner
    "$(tools/spark_env.sh 4.2.1)" tools/make_sample_captures.py --only runtime_broadcast --only skew_join_inner

Each sample is one built-in workload (every preset) or one SQL query run on ``local[2]``,
written as ``<spark version>-<name>.json.gz`` and listed in ``sample_logs/captures/MANIFEST.json``
with its replay agreement. The app opens them; the event-log samples next to them come from
tools/generate_eventlogs.py. Total size stays well under 3 MB.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: name -> (workload, description)
SAMPLES = {
    "skew_join_inner": ("skew_join_inner", "skewed inner join: the hot key's partition is split (presets: default, factor 2, skew join off)"),
    "aggregate_coalesce": ("aggregate_coalesce", "aggregation over small partitions: coalescing, parallelismFirst, minPartitionNum, advisory size"),
    "runtime_broadcast": ("runtime_broadcast", "a sort-merge join that becomes a broadcast hash join at run time, with local shuffle reads"),
    "demote_broadcast": ("demote_broadcast", "a small side with many empty partitions is not broadcast (demoted)"),
    "skew_join_both_sides": ("skew_join_both_sides", "both join sides skewed on one reducer: split parts paired as a cartesian product"),
    "broadcast_aggregate": ("broadcast_aggregate", "an aggregate over a small shuffle stage broadcast at run time, under the"
                            " static threshold and the adaptive one above and below it"),
}
SQL_SAMPLE = ("sql_group_by", "SELECT id % 13 AS g, count(*) AS n, sum(id) AS s FROM range(0, 300000, 1, 6) GROUP BY id % 13",
              {"spark.sql.adaptive.enabled": "true", "spark.sql.shuffle.partitions": "30",
               "spark.sql.adaptive.advisoryPartitionSizeInBytes": "1k",
               "spark.sql.adaptive.coalescePartitions.minPartitionSize": "256"},
              "SQL text run with `python -m aqe_core run --sql`: a small aggregation, coalesced")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=str(ROOT / "sample_logs" / "captures"))
    ap.add_argument("--only", action="append", help="only these samples (repeatable)")
    ap.add_argument("--master", default="local[2]")
    opts = ap.parse_args()

    import spark_compat

    spark_compat.prepare()
    from aqe_core.readers.capture_file import save_capture
    from aqe_core.live.runner import Runner
    from aqe_core.live.runtime import get_runtime
    from aqe_core.engine.simulate import simulate

    rt = get_runtime(opts.master)
    runner = Runner(rt)
    out = Path(opts.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    todo = opts.only or list(SAMPLES) + [SQL_SAMPLE[0]]
    for name in todo:
        if name == SQL_SAMPLE[0]:
            _, sql, conf, desc = SQL_SAMPLE
            cap = runner.run_sql(sql, conf, label=name)
        else:
            workload, desc = SAMPLES[name]
            cap = runner.run_workload(workload)
        file = f"{rt.version}-{name}.json.gz"
        path = save_capture(cap, out / file)
        a = simulate(cap).agreement
        manifest[f"{rt.version}-{name}"] = {
            "file": file, "spark_version": rt.version, "description": desc,
            "queries": [q.label for q in cap.queries], "bytes": path.stat().st_size,
            "agreement": a.summary(),
            "produced_by": "tools/make_sample_captures.py",
        }
        print(f"{file}: {path.stat().st_size} bytes, agreement {a.agreeing}/{a.total}", file=sys.stderr)
    manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
    rt.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
