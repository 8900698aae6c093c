#!/usr/bin/env python3
"""Record pairs of runs of one small job on real Spark, for the run comparison (issue 28).

    python tools/record_run_pairs.py                              # every pair on PySpark 4.3
    python tools/record_run_pairs.py --pair data_growth           # one pair
    "$(tools/spark_env.sh 3.5.9)" tools/record_run_pairs.py --pair release   # release/3.5.9.*
    python tools/record_run_pairs.py --pair release                          # release/4.3.0.*

The job is three queries over a fact table with one hot key and a dimension table (the views of
:mod:`aqe_core.live.workloads`): a join AQE may split for skew, an aggregate it coalesces, and a
filtered count. Each run is one Spark application (``local[2]``) with event logging on: it writes
``<run>.json.gz`` (the Python recorder's capture: exact statistics) and ``<run>.zstd`` (Spark's own
plain event log: post-AQE metrics only) under ``tests/fixtures/run_pairs/<pair>/``. Between the two
runs of a pair the literals change too, so the plan fingerprint must see past them.

Pairs (what changed from run ``a`` to run ``b``):

``data_growth``      more rows and the hot key grows from 3% to 30% of them (same settings)
``setting_changed``  the same data; ``skewedPartitionThresholdInBytes`` raised to 1 GB in b
``unrelated``        b runs other queries over other tables
``release``          the same run on two releases (one file per release, ``<version>.*``)
``advisory_changed`` the same data and literals; ``advisoryPartitionSizeInBytes`` 96k -> 1m in b
``both``             b has a's data x3 with the hot key at 30% *and* advisory 1m; two more runs hold
                     one change each (``b_data_a_settings``, ``a_data_b_settings``): what Spark
                     does with one factor changed, the truth a replay's attribution is held to
``unchanged``        the same job twice
``skew_appears``     coalescing off in both; the hot key grows from 3% to 30% in b: run a reads every
                     shuffle as planned (no adaptive read), run b splits the join's hot reducer
``literals``         other string, number, date, timestamp and decimal literals, IN lists of other
                     lengths (12 items: Spark's ``INSET``), a parquet scan at another path, literals as
                     function arguments and CASE branch values (issue 39)
``join_strategy``    ``autoBroadcastJoinThreshold`` -1 in a, 10 MB in b: the joins change strategy
``broadcast_build``  a join whose build side is a shuffled aggregate: sort-merge in a, broadcast in b
``reordered``        b runs the job's queries in another order, without one and with a new one

``advisory_changed``, ``both``, ``unchanged``, ``skew_appears`` and ``reordered`` are recorded with the AQE Lens
listener: besides the capture, ``<run>.listener.zstd`` is Spark's event log with the listener's
events (exact statistics) and ``<run>.zstd`` the same log without them (what a plain log holds).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "run_pairs"

A = "spark.sql.adaptive."
BASE_CONF = {
    A + "enabled": "true",
    "spark.sql.shuffle.partitions": "40",
    A + "advisoryPartitionSizeInBytes": "96k",
    A + "coalescePartitions.minPartitionSize": "4k",
    A + "skewJoin.skewedPartitionThresholdInBytes": "64k",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
}


def job_sql(literal: int) -> list[tuple[str, str]]:
    """The job's queries, labelled; ``literal`` changes between runs (the fingerprint ignores it)."""
    return [
        ("skew_join", "SELECT count(*) AS n, sum(f.v) AS sv, max(d.name) AS mx FROM facts f JOIN dims d "
                      f"ON f.k = d.k WHERE f.v > {literal}"),
        ("by_tag", f"SELECT tag, count(*) AS c, sum(v) AS s FROM facts WHERE v > {literal} GROUP BY tag"),
        ("count_dims", f"SELECT count(*) AS n FROM dims WHERE dim_id > {literal}"),
    ]


def other_sql() -> list[tuple[str, str]]:
    """Queries of another job: other tables, other shapes."""
    return [
        ("buckets", "SELECT item % 13 AS b, count(*) AS c FROM catalog GROUP BY item % 13"),
        ("top_items", "SELECT item, bucket FROM catalog WHERE bucket = 7 ORDER BY item DESC LIMIT 5"),
    ]


def reordered_sql(literal: int) -> list[tuple[str, str]]:
    """The job's queries in another order, one dropped (``by_tag``) and one added (``by_name``)."""
    job = dict(job_sql(literal))
    return [("count_dims", job["count_dims"]),
            ("by_name", f"SELECT d.name, count(*) AS c FROM dims d WHERE d.dim_id > {literal} GROUP BY d.name"),
            ("skew_join", job["skew_join"])]


def literal_sql(run: str, parquet: str) -> list[tuple[str, str]]:
    """The same queries with other literals in run ``b``: unquoted in Spark's plans (``tag = zz``,
    ``IN (1,2,3)``, ``INSET 1, 10, ...``, ``2026-11-25``), and the source filters of a file scan."""
    b = run == "b"
    tags = ", ".join(f"'{i}'" for i in (range(4, 16) if b else range(1, 4)))
    ids = ", ".join(str(i) for i in (range(20, 34) if b else (1, 2, 3)))
    not_in = "'7'" if b else "'5', '6'"  # one item: Spark's OptimizeIn makes it an equality
    day, ts, dec = ("2026-03-01", "2001-06-15 12:30:00", "7.25") if b else ("2026-05-25", "1999-01-01 00:00:00", "12.50")
    return [
        ("strings", f"SELECT count(*) AS n FROM facts WHERE tag <> '{'yy' if b else 'zz'}' AND tag IN ({tags}) "
                    f"AND v > {20 if b else 10}"),
        ("dates", f"SELECT tag, count(*) AS c, '{'hourly run' if b else 'nightly'}' AS batch FROM facts WHERE date_add(DATE'2026-01-01', CAST(v % 300 AS INT)) "
                  f">= DATE'{day}' AND timestamp_seconds(id) < TIMESTAMP'{ts}' AND CAST(v AS DECIMAL(10,2)) > {dec} "
                  "GROUP BY tag"),
        ("join_like", "SELECT f.tag, count(*) AS c FROM facts f JOIN dims d ON f.k = d.k "
                      f"WHERE d.name LIKE '{'name-%' if b else 'name-1%'}' AND f.tag NOT IN ({not_in}) "
                      f"AND NOT (f.tag = '{'xy z' if b else 'ab c'}') GROUP BY f.tag"),
        ("scan", f"SELECT count(*) AS n FROM parquet.`{parquet}` WHERE name = '{'other' if b else 'name-7'}' "
                 f"AND dim_id IN ({ids})"),
        # literals as function arguments and CASE branch values (Spark prints them bare too)
        ("functions", f"SELECT CASE WHEN v > {500 if b else 100} THEN '{'platinum' if b else 'gold'}' "
                      f"ELSE '{'bronze' if b else 'silver'}' END AS tier, "
                      f"date_format(timestamp_seconds(id), '{'yyyy' if b else 'yyyy-MM'}') AS m, "
                      f"concat(tag, '{'_y' if b else '-x'}') AS t, coalesce(tag, '{'none' if b else 'n/a'}') AS u, "
                      "count(*) AS c FROM facts GROUP BY 1, 2, 3, 4"),
    ]


def join_sql() -> list[tuple[str, str]]:
    """Joins a small table the planner broadcasts when the threshold lets it."""
    return [
        ("fact_dim", "SELECT count(*) AS n, sum(f.v) AS sv, max(d.name) AS mx FROM facts f JOIN dims d ON f.k = d.k"),
        ("three_way", "SELECT d.name, count(*) AS c FROM facts f JOIN dims d ON f.k = d.k "
                      "LEFT JOIN dims e ON d.dim_id = e.dim_id GROUP BY d.name"),
    ]


def build_sql() -> list[tuple[str, str]]:
    """Joins whose build sides are shuffled aggregates, under another aggregate."""
    return [("agg_build", "SELECT f.tag, count(*) AS c, sum(a.n) AS s FROM facts f JOIN "
                          "(SELECT k, count(*) AS n FROM dims GROUP BY k) a ON f.k = a.k GROUP BY f.tag"),
            ("two_builds", "SELECT f.tag, count(*) AS c, sum(a.n) AS s, max(e.m) AS m FROM facts f JOIN "
                           "(SELECT k, count(*) AS n FROM dims GROUP BY k) a ON f.k = a.k JOIN "
                           "(SELECT k, max(dim_id) AS m FROM dims WHERE dim_id > 5 GROUP BY k) e ON f.k = e.k "
                           "GROUP BY f.tag"),
            # two build sides alike but for a literal (the fingerprint makes them one shape):
            # each read pairs with the one feeding the same join, not the first alike
            ("lookalike_builds", "SELECT f.tag, count(*) AS c, sum(a.n) AS s, sum(e.n) AS t FROM facts f JOIN "
                                 "(SELECT k, count(*) AS n FROM dims WHERE dim_id > 5 GROUP BY k) a ON f.k = a.k JOIN "
                                 "(SELECT k, count(*) AS n FROM dims WHERE dim_id > 900 GROUP BY k) e ON f.v = e.k "
                                 "GROUP BY f.tag")]


BROADCAST = {"spark.sql.autoBroadcastJoinThreshold": "10485760"}

#: pair -> run name -> (scale, hot key %, literal, extra settings, "job" | "other")
PAIRS: dict[str, dict[str, tuple[float, int, int, dict[str, str], str]]] = {
    "data_growth": {"a": (1.0, 3, 10, {}, "job"), "b": (3.0, 30, 20, {}, "job")},
    "setting_changed": {"a": (1.0, 30, 10, {}, "job"),
                        "b": (1.0, 30, 20, {A + "skewJoin.skewedPartitionThresholdInBytes": "1g"}, "job")},
    "unrelated": {"a": (1.0, 30, 10, {}, "job"), "b": (1.0, 30, 10, {}, "other")},
    "release": {"{version}": (1.0, 30, 10, {}, "job")},
    "advisory_changed": {"a": (1.0, 30, 10, {}, "job"), "b": (1.0, 30, 10, {A + "advisoryPartitionSizeInBytes": "1m"}, "job")},
    "both": {"a": (1.0, 3, 10, {}, "job"), "b": (3.0, 30, 10, {A + "advisoryPartitionSizeInBytes": "1m"}, "job"),
             "b_data_a_settings": (3.0, 30, 10, {}, "job"),
             "a_data_b_settings": (1.0, 3, 10, {A + "advisoryPartitionSizeInBytes": "1m"}, "job")},
    "unchanged": {"a": (1.0, 30, 10, {}, "job"), "b": (1.0, 30, 10, {}, "job")},
    "reordered": {"a": (1.0, 30, 10, {}, "job"), "b": (1.0, 30, 10, {}, "reordered")},
    "skew_appears": {"a": (1.0, 3, 10, {A + "coalescePartitions.enabled": "false"}, "job"),
                     "b": (1.0, 30, 10, {A + "coalescePartitions.enabled": "false"}, "job")},
    "literals": {"a": (1.0, 3, 0, {}, "literals"), "b": (1.0, 3, 0, {}, "literals")},
    "join_strategy": {"a": (1.0, 3, 0, {}, "joins"), "b": (1.0, 3, 0, BROADCAST, "joins")},
    "broadcast_build": {"a": (1.0, 3, 0, {}, "build"), "b": (1.0, 3, 0, BROADCAST, "build")},
}
#: pairs recorded with the listener: a listener log and the plain log it holds, per run
WITH_LISTENER = frozenset({"advisory_changed", "both", "unchanged", "skew_appears", "reordered"})


def queries_of(kind: str, literal: int, run: str, session: Any, tmp: Path) -> list[tuple[str, str]]:
    """The queries a run's kind names (``literals`` writes the dimension table as parquet first)."""
    if kind == "literals":
        parquet = tmp / f"dims-{run}.parquet"
        session.table("dims").write.parquet(str(parquet))
        return literal_sql(run, str(parquet))
    return {"job": lambda: job_sql(literal), "other": other_sql, "joins": join_sql, "build": build_sql,
            "reordered": lambda: reordered_sql(literal)}[kind]()


def record_run(out: Path, name: str, spec: tuple[float, int, int, dict[str, str], str]) -> None:
    """One Spark application: the views, the queries, the capture and the plain event log."""
    from aqe_core.live import workloads as wl
    from aqe_core.live.runner import Runner
    from aqe_core.live.runtime import get_runtime
    from aqe_core.readers.capture_file import save_capture

    scale, hot, literal, extra, kind = spec
    logs = Path(tempfile.mkdtemp(prefix="aqe-lens-run-pairs-"))
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(logs), "spark.eventLog.compress": "true",
            "spark.eventLog.compression.codec": "zstd", "spark.eventLog.rolling.enabled": "false",
            # keep every shuffle's map statuses until the recorder read them (a GC under load
            # would let the ContextCleaner unregister them first: no per-map sizes, no replay)
            "spark.cleaner.referenceTracking": "false"}
    if out.name in WITH_LISTENER:
        from aqe_core.listener import spark_conf

        conf.update(spark_conf())
    rt = get_runtime("local[2]", conf=conf, app_name=f"aqe-lens run pair {out.name}/{name}")
    runner = Runner(rt, trusted=True)
    name = name.format(version=rt.version)
    session = rt.new_session({**BASE_CONF, **extra})
    setup: dict[str, Any] = {"facts": wl._facts(session, scale, hot_pct=hot), "dims": wl._dims(session, scale)}
    if kind == "other":
        setup.update(wl._views_broadcast(session, scale))
    cap = runner._new_capture({"kind": "run_pair", "pair": out.name, "run": name, "scale": scale, "hot_pct": hot,
                               "views": setup, "tag": f"{out.name}-{name}"})
    data = Path(tempfile.mkdtemp(prefix="aqe-lens-run-pairs-data-"))
    queries = queries_of(kind, literal, name, session, data)
    for i, (label, sql) in enumerate(queries):
        cap.queries.append(runner._run_query(session, sql, tag=f"{out.name}-{name}", index=i, count=len(queries),
                                             label=label, preset=None, progress=None))
    version = rt.version
    rt.stop()
    out.mkdir(parents=True, exist_ok=True)
    save_capture(cap, out / f"{name}.json.gz")
    import zstandard

    for p in logs.iterdir():  # Spark's zstd level 1 re-framed at level 19: same events, fewer bytes
        with open(p, "rb") as fh:
            raw = zstandard.ZstdDecompressor().stream_reader(fh).read()
        if out.name in WITH_LISTENER:
            (out / f"{name}.listener.zstd").write_bytes(zstandard.ZstdCompressor(level=19).compress(raw))
            raw = _without_listener_events(raw)
        (out / f"{name}.zstd").write_bytes(zstandard.ZstdCompressor(level=19).compress(raw))
    shutil.rmtree(logs, ignore_errors=True)
    shutil.rmtree(data, ignore_errors=True)
    print(f"{out.name}/{name}: Spark {version}, {len(cap.queries)} queries", file=sys.stderr)


def _without_listener_events(raw: bytes) -> bytes:
    """The plain event log a run without the listener writes: every line but the listener's events."""
    from aqe_core.listener import EVENT_CLASS

    mark = f'"Event":"{EVENT_CLASS}"'.encode()
    return b"".join(line for line in raw.splitlines(keepends=True) if mark not in line[:200])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pair", action="append", choices=sorted(PAIRS), help="only these pairs (repeatable)")
    ap.add_argument("--out-dir", default=str(OUT))
    ap.add_argument("--run", help=argparse.SUPPRESS)  # one run, in this process (the parent starts one per run)
    opts = ap.parse_args()
    if opts.run:
        import spark_compat

        spark_compat.prepare()
        pair, name = opts.run.split("/", 1)
        record_run(Path(opts.out_dir) / pair, name, PAIRS[pair][name])
        return 0
    # one process per run: a second SparkContext in the same process reads no map statuses
    # (the recorder's JVM helper keeps the first one's), so its capture would have no per-map sizes
    for pair in opts.pair or [p for p in PAIRS if p != "release"]:
        for name in PAIRS[pair]:
            subprocess.run([sys.executable, __file__, "--out-dir", opts.out_dir, "--run", f"{pair}/{name}"],
                           check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
