"""Record tests/fixtures/plan_diff/parquet_broadcast_joins_*.zstd: a query72-like shape on
parquet tables (8 broadcast hash joins, one of them LeftOuter on two keys, a final aggregate),
so the final plan holds what stage creation adds and AQE does not decide: ColumnarToRow over
every scan, BroadcastQueryStage / ShuffleQueryStage / ResultQueryStage wrappers.

    python tools/record_plan_diff_fixture.py <event log dir> <scratch dir for the tables>
"""
import sys

from pyspark.sql import SparkSession

OUT, DATA = sys.argv[1], sys.argv[2]
spark = (SparkSession.builder.master("local[2]").appName("q72like")
         .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", OUT)
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "16")
         .config("spark.sql.autoBroadcastJoinThreshold", "1MB").getOrCreate())
d = DATA
spark.range(0, 400000).selectExpr("id AS cs_id", "id % 5000 AS cs_item", "id % 365 AS cs_date", "id % 1000 AS cs_cust",
                                  "id % 7 AS cs_promo", "id % 30000 AS cs_order").write.mode("overwrite").parquet(f"{d}/cs")
spark.range(0, 200000).selectExpr("id AS inv_id", "id % 5000 AS inv_item", "id % 365 AS inv_date", "id % 50 AS inv_wh",
                                  "id % 100 AS inv_qty").write.mode("overwrite").parquet(f"{d}/inv")
spark.range(0, 5000).selectExpr("id AS i_item", "concat('item', id) AS i_desc").write.mode("overwrite").parquet(f"{d}/item")
spark.range(0, 365).selectExpr("id AS d_date", "id % 52 AS d_week", "id % 12 AS d_moy").write.mode("overwrite").parquet(f"{d}/dd")
spark.range(0, 50).selectExpr("id AS w_wh", "concat('wh', id) AS w_name").write.mode("overwrite").parquet(f"{d}/wh")
spark.range(0, 7).selectExpr("id AS p_promo", "id % 2 AS p_flag").write.mode("overwrite").parquet(f"{d}/promo")
spark.range(0, 30000).selectExpr("id AS cr_order", "id % 5000 AS cr_item").write.mode("overwrite").parquet(f"{d}/cr")
for t in ["cs", "inv", "item", "dd", "wh", "promo", "cr"]:
    spark.read.parquet(f"{d}/{t}").createOrReplaceTempView(t)
spark.sql("""
SELECT i_desc, w_name, d1.d_week, count(*) AS n
FROM cs
JOIN inv ON cs_item = inv_item
JOIN wh ON inv_wh = w_wh
JOIN item ON cs_item = i_item
JOIN dd d1 ON cs_date = d1.d_date
JOIN dd d2 ON inv_date = d2.d_date
JOIN dd d3 ON cs_date = d3.d_date AND d3.d_moy < 6
LEFT JOIN promo ON cs_promo = p_promo
LEFT JOIN cr ON cr_order = cs_order AND cr_item = cs_item
WHERE d1.d_week = d2.d_week AND inv_qty < 50 AND d1.d_moy < 6
GROUP BY i_desc, w_name, d1.d_week ORDER BY n DESC LIMIT 100
""").collect()
spark.stop()
