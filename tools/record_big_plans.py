#!/usr/bin/env python3
"""Record a real Spark event log with production-scale plans (300+ nodes) for AQE Lens.

    python tools/record_big_plans.py                 # record, move into sample_logs/eventlogs/
    python tools/record_big_plans.py --summary LOG   # print what a recorded log holds
    python tools/record_big_plans.py --queries q88-wide --out tests/fixtures/eventlogs/wide_plan/
                                                     # record only these queries, the log into --out

Production logs (a Dataproc NDS query72, a Databricks query88) carry plans of 100 to 300+ nodes
with a dozen joins; the small sample logs do not. This runs ONE Spark application with the
pinned PySpark (local[2], AQE on, one zstd event-log file) over synthetic TPC-DS-like
star-schema tables and records three queries of TPC-DS shape, each its own SQL execution
named by its job description:

* ``q72-like``: query72's joins (catalog_sales x inventory x warehouse x item x
  customer_demographics x household_demographics x date_dim three times, promotion and
  catalog_returns outer), 128 shuffle partitions and coalescing off for this query only, so
  its shuffle reads are left alone by AQE (no AQEShuffleRead), as on a cluster where every
  partition is above the advisory size.
* ``q88-like``: query88's eight scalar counts (store_sales x household_demographics x time_dim
  x store, one per half hour) cross-joined.
* ``dozen-joins``: 13 joins (fact-to-fact sort-merge joins and dimension broadcast joins), an
  aggregation and an order by, its joined result used four times in a union; default AQE
  settings except smaller skew thresholds so the hot customer's partition is split at this size.
* ``q88-wide`` (not in the sample log; ``--queries q88-wide``, recorded into
  tests/fixtures/eventlogs/wide_plan/): query88's eight scalar counts again, each joining its three
  dimensions, but with the household_demographics and store joins as sort-merge joins (``MERGE``
  hints in every subquery), as on a cluster where those dimensions are not broadcast. q88-like's
  stage graph is narrow: every dimension is a broadcast with no stage below it, which the plan
  map writes as a line of the stage that joins it (and Spark reuses the identical household and
  store broadcasts across the subqueries), so its 40 query-stage nodes draw as 16 stages (229
  operators). Here each subquery shuffles store_sales twice and both dimensions once, and
  counts in a stage of its own: six stages per subquery, 48 in the stage graph (56 query-stage
  nodes, 40 of them shuffles) and 311 operators in the final plan, the width of a production
  query88 plan. Its log is the query alone (setup writes only the four tables it reads).

The data is deterministic (``spark.range`` and hashes of the row id, no random numbers) and
small (10k-100k rows per fact table): the run takes a couple of minutes on 2 cores. At this
size every table would be broadcast; in production the fact-to-fact joins and the join with
``customer`` are sort-merge joins because both sides are far above the broadcast threshold.
The queries say so with join hints (``MERGE``), which Spark's planner and AQE honour, instead
of thresholds tuned to the bytes of this machine.
"""
from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OUT_DIR = ROOT / "sample_logs" / "eventlogs"
MANIFEST_KEY = "spark430_tpcds_like"
DESCRIPTION = ("Spark 4.3.0 production-scale TPC-DS-like workload (zstd): q72-like (10 joins, 128 partitions,"
               " coalescing off), q88-like (8 cross-joined counts) and a dozen-join query with a skew split,"
               " plans of 300+ nodes; recorded by tools/record_big_plans.py")

APP_CONF = {
    "spark.sql.adaptive.enabled": "true",
    "spark.eventLog.enabled": "true",
    "spark.eventLog.rolling.enabled": "false",
    "spark.eventLog.compress": "true",
    "spark.eventLog.compression.codec": "zstd",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "1g",
    "spark.sql.session.timeZone": "UTC",
}

# ---------------------------------------------------------------------------------------------
# synthetic TPC-DS-like tables: name -> (rows, files, select expressions over `id`)


def _h(seed: int, n: int, col: str = "id") -> str:
    """A deterministic pseudo-random integer in [0, n) from the row id."""
    return f"pmod(xxhash64({col}, {seed}), {n})"


def _pick(seed: int, values: list[str]) -> str:
    arr = ", ".join(f"'{v}'" for v in values)
    return f"element_at(array({arr}), cast({_h(seed, len(values))} AS int) + 1)"


N_DATES = 1826  # 1998-01-01 .. 2002-12-31
N_ITEMS = 2000
N_CUSTOMERS = 5000
N_CDEMO = 2000
N_HDEMO = 720
N_PROMO = 100
N_WAREHOUSES = 5
N_STORES = 12
N_TIMES = 1440  # one row per minute of the day
HOT_CUSTOMER = 1  # 30 % of store_sales rows: the skewed join key

DIMENSIONS: dict[str, tuple[int, int, list[str]]] = {
    "date_dim": (N_DATES, 1, [
        "id AS d_date_sk", "date_add(DATE'1998-01-01', cast(id AS int)) AS d_date",
        "year(date_add(DATE'1998-01-01', cast(id AS int))) AS d_year",
        "month(date_add(DATE'1998-01-01', cast(id AS int))) AS d_moy",
        "dayofmonth(date_add(DATE'1998-01-01', cast(id AS int))) AS d_dom",
        "cast(id DIV 7 AS int) AS d_week_seq"]),
    "time_dim": (N_TIMES, 1, [
        "id AS t_time_sk", "cast(id DIV 60 AS int) AS t_hour", "cast(id % 60 AS int) AS t_minute",
        "CASE WHEN id < 720 THEN 'AM' ELSE 'PM' END AS t_am_pm"]),
    "item": (N_ITEMS, 1, [
        "id AS i_item_sk", "concat('AAAAAAAA', lpad(cast(id AS string), 8, '0')) AS i_item_id",
        "concat('Item description number ', cast(id AS string)) AS i_item_desc",
        _pick(11, ["Books", "Children", "Electronics", "Home", "Jewelry", "Men", "Music", "Shoes", "Sports", "Women"])
        + " AS i_category",
        f"concat('brand #', cast({_h(12, 50)} AS string)) AS i_brand",
        f"cast({_h(13, 10000)} AS decimal(7,2)) / 100 AS i_current_price"]),
    "customer": (N_CUSTOMERS, 1, [
        "id AS c_customer_sk", "concat('CUST', lpad(cast(id AS string), 10, '0')) AS c_customer_id",
        _pick(21, ["James", "Mary", "John", "Linda", "Robert", "Susan", "David", "Karen"]) + " AS c_first_name",
        _pick(22, ["Smith", "Jones", "Brown", "Garcia", "Miller", "Davis", "Lopez", "Wilson"]) + " AS c_last_name",
        _pick(23, ["UNITED STATES", "CANADA", "MEXICO", "GERMANY", "JAPAN"]) + " AS c_birth_country",
        f"{_h(24, N_CDEMO)} AS c_current_cdemo_sk"]),
    "customer_demographics": (N_CDEMO, 1, [
        "id AS cd_demo_sk", _pick(31, ["M", "F"]) + " AS cd_gender",
        _pick(32, ["M", "S", "D", "W", "U"]) + " AS cd_marital_status",
        _pick(33, ["Primary", "Secondary", "College", "2 yr Degree", "4 yr Degree", "Advanced Degree"])
        + " AS cd_education_status"]),
    "household_demographics": (N_HDEMO, 1, [
        "id AS hd_demo_sk", f"{_h(41, 20)} AS hd_income_band_sk",
        _pick(42, [">10000", "5001-10000", "1001-5000", "501-1000", "0-500", "Unknown"]) + " AS hd_buy_potential",
        "cast(id % 10 AS int) AS hd_dep_count", "cast((id DIV 10) % 6 - 1 AS int) AS hd_vehicle_count"]),
    "promotion": (N_PROMO, 1, [
        "id AS p_promo_sk", "concat('promo ', cast(id AS string)) AS p_promo_name",
        _pick(51, ["Y", "N"]) + " AS p_channel_email", _pick(52, ["Y", "N"]) + " AS p_channel_tv"]),
    "warehouse": (N_WAREHOUSES, 1, [
        "id AS w_warehouse_sk", "concat('Warehouse ', cast(id AS string)) AS w_warehouse_name",
        _pick(61, ["TN", "CA", "TX", "NY", "WA"]) + " AS w_state"]),
    "store": (N_STORES, 1, [
        "id AS s_store_sk",  # every name twice or more: query88's store 'ese' is stores 0 and 8
        "element_at(array('ese', 'ought', 'able', 'bar', 'pri', 'anti', 'cally', 'eing'), cast(id % 8 AS int) + 1)"
        " AS s_store_name",
        _pick(72, ["TN", "CA", "TX", "NY", "WA", "GA"]) + " AS s_state"]),
}

FACTS: dict[str, tuple[int, int, list[str]]] = {
    "store_sales": (100_000, 4, [
        f"{_h(101, N_DATES)} AS ss_sold_date_sk", f"{_h(102, N_TIMES)} AS ss_sold_time_sk",
        f"{_h(103, N_ITEMS)} AS ss_item_sk",
        # the skewed key: 30 % of the rows belong to one customer (a default / anonymous id)
        f"CASE WHEN {_h(104, 10)} < 3 THEN {HOT_CUSTOMER} ELSE {_h(105, N_CUSTOMERS)} END AS ss_customer_sk",
        f"{_h(106, N_CDEMO)} AS ss_cdemo_sk", f"{_h(107, N_HDEMO)} AS ss_hdemo_sk",
        f"{_h(108, N_STORES)} AS ss_store_sk", f"{_h(109, N_PROMO)} AS ss_promo_sk",
        "id DIV 4 AS ss_ticket_number", f"cast({_h(110, 100)} + 1 AS int) AS ss_quantity",
        f"cast({_h(111, 20000)} AS decimal(7,2)) / 100 AS ss_sales_price",
        f"cast({_h(112, 20000)} - 5000 AS decimal(7,2)) / 100 AS ss_net_profit"]),
    "catalog_sales": (40_000, 4, [
        f"365 + {_h(201, 365)} AS cs_sold_date_sk",
        f"365 + {_h(201, 365)} + 1 + {_h(202, 30)} AS cs_ship_date_sk",
        f"{_h(203, N_CUSTOMERS)} AS cs_bill_customer_sk", f"{_h(204, N_CDEMO)} AS cs_bill_cdemo_sk",
        f"{_h(205, N_HDEMO)} AS cs_bill_hdemo_sk", f"{_h(206, N_ITEMS)} AS cs_item_sk",
        f"CASE WHEN {_h(207, 10)} = 0 THEN NULL ELSE {_h(208, N_PROMO)} END AS cs_promo_sk",
        "id DIV 3 AS cs_order_number", f"{_h(209, N_WAREHOUSES)} AS cs_warehouse_sk",
        f"cast({_h(210, 100)} + 1 AS int) AS cs_quantity",
        f"cast({_h(211, 30000)} AS decimal(7,2)) / 100 AS cs_net_paid"]),
    "web_sales": (30_000, 2, [
        f"{_h(301, N_DATES)} AS ws_sold_date_sk", f"{_h(302, N_ITEMS)} AS ws_item_sk",
        f"{_h(303, N_CUSTOMERS)} AS ws_bill_customer_sk", "id DIV 2 AS ws_order_number",
        f"cast({_h(304, 30000)} AS decimal(7,2)) / 100 AS ws_net_paid"]),
    # 2000 items x 5 warehouses x 5 weeks of 1999 (one inventory date per week)
    "inventory": (N_ITEMS * N_WAREHOUSES * 5, 4, [
        f"365 + 3 + 70 * cast(id DIV {N_ITEMS * N_WAREHOUSES} AS int) AS inv_date_sk",
        f"id % {N_ITEMS} AS inv_item_sk", f"(id DIV {N_ITEMS}) % {N_WAREHOUSES} AS inv_warehouse_sk",
        f"cast({_h(401, 100)} AS int) AS inv_quantity_on_hand"]),
}

# returns: a deterministic tenth of the sales they return (so the fact-to-fact joins match)
RETURNS: dict[str, tuple[str, str, list[str]]] = {
    "store_returns": ("store_sales", "pmod(xxhash64(ss_ticket_number, ss_item_sk), 10) = 0", [
        "ss_ticket_number AS sr_ticket_number", "ss_item_sk AS sr_item_sk", "ss_customer_sk AS sr_customer_sk",
        f"least(ss_sold_date_sk + 1 + pmod(xxhash64(ss_ticket_number, 1), 60), {N_DATES - 1}) AS sr_returned_date_sk",
        "ss_sales_price * 0.8 AS sr_return_amt", "ss_quantity AS sr_return_quantity"]),
    "catalog_returns": ("catalog_sales", "pmod(xxhash64(cs_order_number, cs_item_sk), 10) = 0", [
        "cs_order_number AS cr_order_number", "cs_item_sk AS cr_item_sk",
        "cs_bill_customer_sk AS cr_returning_customer_sk", "cs_net_paid * 0.5 AS cr_return_amount"]),
}


def write_tables(spark, desc, data_dir: Path, only: set[str] | None = None) -> None:
    """Write every table (or those in ``only``) as parquet (scans as on a cluster: Scan parquet +
    ColumnarToRow)."""
    for name, (rows, files, cols) in {**DIMENSIONS, **FACTS}.items():
        if only is not None and name not in only:
            continue
        desc(f"setup: write {name}")
        spark.range(0, rows, 1, files).selectExpr(*cols).write.mode("overwrite").parquet(str(data_dir / name))
    for name, (src, cond, cols) in RETURNS.items():
        if only is not None and name not in only:
            continue
        desc(f"setup: write {name}")
        spark.read.parquet(str(data_dir / src)).where(cond).selectExpr(*cols).coalesce(2).write.mode(
            "overwrite").parquet(str(data_dir / name))
    for name in [*DIMENSIONS, *FACTS, *RETURNS]:
        if only is not None and name not in only:
            continue
        desc(f"setup: register view {name}")
        spark.read.parquet(str(data_dir / name)).createOrReplaceTempView(name)


# ---------------------------------------------------------------------------------------------
# queries

Q72 = """
SELECT /*+ MERGE(inventory), MERGE(catalog_returns) */
       i_item_desc, w_warehouse_name, d1.d_week_seq,
       sum(CASE WHEN p_promo_sk IS NULL THEN 1 ELSE 0 END) AS no_promo,
       sum(CASE WHEN p_promo_sk IS NOT NULL THEN 1 ELSE 0 END) AS promo,
       count(*) AS total_cnt
FROM catalog_sales
JOIN inventory ON (cs_item_sk = inv_item_sk)
JOIN warehouse ON (w_warehouse_sk = inv_warehouse_sk)
JOIN item ON (i_item_sk = cs_item_sk)
JOIN customer_demographics ON (cs_bill_cdemo_sk = cd_demo_sk)
JOIN household_demographics ON (cs_bill_hdemo_sk = hd_demo_sk)
JOIN date_dim d1 ON (cs_sold_date_sk = d1.d_date_sk)
JOIN date_dim d2 ON (inv_date_sk = d2.d_date_sk)
JOIN date_dim d3 ON (cs_ship_date_sk = d3.d_date_sk)
LEFT OUTER JOIN promotion ON (cs_promo_sk = p_promo_sk)
LEFT OUTER JOIN catalog_returns ON (cr_item_sk = cs_item_sk AND cr_order_number = cs_order_number)
WHERE d1.d_week_seq = d2.d_week_seq
  AND inv_quantity_on_hand < cs_quantity
  AND d3.d_date > date_add(d1.d_date, 5)
  AND hd_buy_potential = '>10000'
  AND d1.d_year = 1999
  AND cd_marital_status = 'D'
GROUP BY i_item_desc, w_warehouse_name, d1.d_week_seq
ORDER BY total_cnt DESC, i_item_desc, w_warehouse_name, d1.d_week_seq
LIMIT 100
"""


def q88(hint: str = "") -> str:
    """query88: eight half-hour counts cross-joined; ``hint``: a join hint put in every subquery."""
    windows = [(8, ">= 30"), (9, "< 30"), (9, ">= 30"), (10, "< 30"), (10, ">= 30"), (11, "< 30"), (11, ">= 30"),
               (12, "< 30")]
    names = ["h8_30_to_9", "h9_to_9_30", "h9_30_to_10", "h10_to_10_30", "h10_30_to_11", "h11_to_11_30",
             "h11_30_to_12", "h12_to_12_30"]
    hint = f"/*+ {hint} */ " if hint else ""
    subs = []
    for i, ((hour, minute), name) in enumerate(zip(windows, names), 1):
        subs.append(f"""
 (SELECT {hint}count(*) AS {name}
  FROM store_sales, household_demographics, time_dim, store
  WHERE ss_sold_time_sk = time_dim.t_time_sk
    AND ss_hdemo_sk = household_demographics.hd_demo_sk
    AND ss_store_sk = s_store_sk
    AND time_dim.t_hour = {hour} AND time_dim.t_minute {minute}
    AND ((hd_dep_count = 4 AND hd_vehicle_count <= 4 + 2)
      OR (hd_dep_count = 2 AND hd_vehicle_count <= 2 + 2)
      OR (hd_dep_count = 0 AND hd_vehicle_count <= 0 + 2))
    AND store.s_store_name = 'ese') s{i}""")
    return "SELECT * FROM" + ",".join(subs)


# The joined result is used four times (by category, state, year, country) and unioned, as report
# queries do (TPC-DS q5 / q77 / q80 are unions of channel sub-queries): the initial plan alone holds
# 300+ nodes. (AQE's final plan reuses exchanges across the branches: Spark's UI folds a reused
# exchange into the one it reuses, so the final plan as drawn holds fewer nodes than as logged.)
DOZEN_JOINS = """
WITH joined AS (
  SELECT /*+ MERGE(customer), MERGE(store_returns), MERGE(catalog_sales), MERGE(web_sales) */
         i_category, s_state, d1.d_year, cd_gender, hd_buy_potential, p_channel_email, t_am_pm,
         c_birth_country, w_state,
         ss_quantity, ss_net_profit, sr_return_amt, cs_net_paid, ws_net_paid
  FROM store_sales
  JOIN customer ON ss_customer_sk = c_customer_sk                                   -- skewed, sort-merge
  JOIN store_returns ON ss_ticket_number = sr_ticket_number AND ss_item_sk = sr_item_sk  -- sort-merge
  JOIN catalog_sales ON sr_customer_sk = cs_bill_customer_sk AND sr_item_sk = cs_item_sk -- sort-merge
  LEFT JOIN web_sales ON ss_item_sk = ws_item_sk AND ss_customer_sk = ws_bill_customer_sk -- sort-merge
  JOIN date_dim d1 ON ss_sold_date_sk = d1.d_date_sk
  JOIN date_dim d2 ON sr_returned_date_sk = d2.d_date_sk
  JOIN item ON ss_item_sk = i_item_sk
  JOIN customer_demographics ON ss_cdemo_sk = cd_demo_sk
  JOIN household_demographics ON ss_hdemo_sk = hd_demo_sk
  JOIN store ON ss_store_sk = s_store_sk
  JOIN promotion ON ss_promo_sk = p_promo_sk
  JOIN time_dim ON ss_sold_time_sk = t_time_sk
  JOIN warehouse ON cs_warehouse_sk = w_warehouse_sk
  WHERE d2.d_date >= d1.d_date
)
SELECT * FROM (
  SELECT 'category' AS dim, i_category AS value, count(*) AS cnt, sum(ss_quantity) AS qty,
         sum(ss_net_profit) AS profit, sum(sr_return_amt) AS returned, sum(cs_net_paid) AS catalog_paid,
         sum(ws_net_paid) AS web_paid
  FROM joined WHERE cd_gender = 'F' GROUP BY i_category
  UNION ALL
  SELECT 'state', s_state, count(*), sum(ss_quantity), sum(ss_net_profit), sum(sr_return_amt),
         sum(cs_net_paid), sum(ws_net_paid)
  FROM joined WHERE hd_buy_potential <> 'Unknown' GROUP BY s_state
  UNION ALL
  SELECT 'year', cast(d_year AS string), count(*), sum(ss_quantity), sum(ss_net_profit), sum(sr_return_amt),
         sum(cs_net_paid), sum(ws_net_paid)
  FROM joined WHERE p_channel_email = 'Y' GROUP BY d_year
  UNION ALL
  SELECT 'country', c_birth_country, count(*), sum(ss_quantity), sum(ss_net_profit), sum(sr_return_amt),
         sum(cs_net_paid), sum(ws_net_paid)
  FROM joined WHERE t_am_pm = 'PM' GROUP BY c_birth_country
) ORDER BY dim, cnt DESC, value
"""

#: per query: (description, SQL, settings for this query only)
QUERIES: list[tuple[str, str, dict[str, str]]] = [
    # 128 partitions, no coalescing: AQE leaves every shuffle read alone (no AQEShuffleRead)
    ("q72-like", Q72, {"spark.sql.shuffle.partitions": "128",
                       "spark.sql.adaptive.coalescePartitions.enabled": "false"}),
    ("q88-like", q88(), {}),
    # default AQE settings (coalescing on); the skew thresholds are lowered so the hot customer's
    # partition (~30 % of store_sales, a few hundred KiB here, many GiB in production) is split
    ("dozen-joins", DOZEN_JOINS, {"spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "256k",
                                  "spark.sql.adaptive.advisoryPartitionSizeInBytes": "64k"}),
]

#: queries recorded only when asked for (``--queries``), each into a log of its own
EXTRA_QUERIES: list[tuple[str, str, dict[str, str]]] = [
    # every subquery's household_demographics and store joins sort-merge: shuffle stages, a wide stage graph
    ("q88-wide", q88("MERGE(household_demographics), MERGE(store)"), {}),
]


def tables_for(queries: list[tuple[str, str, dict[str, str]]]) -> set[str]:
    """The tables the queries read (and those a returns table is made from)."""
    names = {n for n in [*DIMENSIONS, *FACTS, *RETURNS] if any(re.search(rf"\b{n}\b", sql) for _, sql, _ in queries)}
    return names | {RETURNS[n][0] for n in names if n in RETURNS}


def run(log_dir: Path, data_dir: Path, master: str,
        queries: list[tuple[str, str, dict[str, str]]] = QUERIES) -> None:
    from aqe_core.live.java import ensure_java

    ensure_java()
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master(master).appName(f"aqe-lens {MANIFEST_KEY}")  # as the other samples
    conf = dict(APP_CONF, **{"spark.eventLog.dir": log_dir.resolve().as_uri(),
                             "spark.sql.warehouse.dir": (data_dir / "warehouse").as_uri(),
                             "spark.local.dir": str(data_dir / "local")})
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext

    def desc(text: str) -> None:
        sc.setJobDescription(text)  # the SQL execution's description in the log

    write_tables(spark, desc, data_dir, tables_for(queries))
    for name, sql, settings in queries:
        before = {k: spark.conf.get(k, None) for k in settings}
        for k, v in settings.items():
            spark.conf.set(k, v)
        desc(name)
        t0 = time.time()
        rows = spark.sql(sql).collect()
        print(f"[record] {name}: {len(rows)} rows in {time.time() - t0:.1f}s, first {rows[:1]}", file=sys.stderr)
        for k, v in before.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)
    spark.stop()


# ---------------------------------------------------------------------------------------------
# summary of a recorded log (what BIG_PLANS.md lists)


def read_events(path: Path):
    data = path.read_bytes()
    if path.suffix == ".zstd":
        import zstandard

        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    for line in data.splitlines():
        if line.strip():
            yield json.loads(line)


def _walk(node: dict):
    yield node
    for child in node.get("children", []):
        yield from _walk(child)
    for sub in node.get("subqueries", []) if isinstance(node.get("subqueries"), list) else []:
        yield from _walk(sub)


def plan_facts(plan: dict) -> dict:
    nodes = list(_walk(plan))
    names = Counter(n["nodeName"] for n in nodes)
    joins = {k: v for k, v in names.items() if "Join" in k}
    reads = [n["simpleString"] for n in nodes if n["nodeName"].startswith("AQEShuffleRead")]
    return {"nodes": len(nodes), "joins": joins, "aqe_shuffle_reads": reads}


def summary(path: Path) -> list[dict]:
    execs: dict[int, dict] = {}
    for ev in read_events(path):
        kind = ev.get("Event", "")
        if kind.endswith("SQLExecutionStart"):
            execs[ev["executionId"]] = {"id": ev["executionId"], "description": ev["description"],
                                        "versions": [plan_facts(ev["sparkPlanInfo"])]}
        elif kind.endswith("SQLAdaptiveExecutionUpdate") and ev["executionId"] in execs:
            execs[ev["executionId"]]["versions"].append(plan_facts(ev["sparkPlanInfo"]))
    return list(execs.values())


def print_summary(path: Path) -> None:
    for e in summary(path):
        v = e["versions"]
        print(f"execution {e['id']} {e['description']!r}: {len(v)} plan versions,"
              f" nodes initial {v[0]['nodes']} final {v[-1]['nodes']}")
        if e["description"].startswith("setup:"):
            continue
        print(f"   initial joins {v[0]['joins']}")
        print(f"   final joins   {v[-1]['joins']}")
        print(f"   final AQEShuffleRead: {v[-1]['aqe_shuffle_reads'] or 'none'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    known = {name: q for q in [*QUERIES, *EXTRA_QUERIES] for name in [q[0]]}
    ap.add_argument("--out", "--out-dir", dest="out_dir", default=str(OUT_DIR), help="where the log goes")
    ap.add_argument("--queries", metavar="NAME[,NAME...]",
                    help=f"record only these queries (of {', '.join(known)}), with no MANIFEST entry;"
                         f" default: {', '.join(q[0] for q in QUERIES)}, the sample log and its MANIFEST entry")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--summary", metavar="LOG", help="only print what a recorded log holds")
    opts = ap.parse_args()
    if opts.summary:
        print_summary(Path(opts.summary))
        return 0
    chosen = [n.strip() for n in opts.queries.split(",") if n.strip()] if opts.queries else None
    unknown = sorted(set(chosen or ()) - set(known))
    if unknown:
        ap.error(f"unknown queries {unknown}; known: {', '.join(known)}")
    out = Path(opts.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aqe-lens-big-") as tmp:
        log_dir, data_dir = Path(tmp, "logs"), Path(tmp, "data")
        log_dir.mkdir()
        t0 = time.time()
        run(log_dir, data_dir, opts.master, [known[n] for n in chosen] if chosen else QUERIES)
        (src,) = list(p for p in log_dir.iterdir() if not p.name.startswith("."))
        if chosen:  # a log of its own (a test fixture): the sample MANIFEST is left alone
            dst = out / src.name
            shutil.move(str(src), dst)
            print(f"[record] {dst}: {dst.stat().st_size / 1e6:.2f} MB in {time.time() - t0:.0f}s", file=sys.stderr)
            print_summary(dst)
            return 0
        manifest_path = out / "MANIFEST.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
        for old in manifest.get(MANIFEST_KEY, {}).get("files", []):
            (out / old).unlink(missing_ok=True)
        dst = out / src.name
        shutil.move(str(src), dst)
        # "workload": its own queries, not tools/generate_eventlogs.py's sample workload (tests tell them apart)
        manifest[MANIFEST_KEY] = {"spark_version": _spark_version(), "description": DESCRIPTION,
                                  "files": [dst.name], "workload": "tpcds_like"}
        manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        print(f"[record] {dst}: {dst.stat().st_size / 1e6:.2f} MB in {time.time() - t0:.0f}s", file=sys.stderr)
    print_summary(dst)
    return 0


def _spark_version() -> str:
    from importlib.metadata import version

    return version("pyspark")


if __name__ == "__main__":
    raise SystemExit(main())
