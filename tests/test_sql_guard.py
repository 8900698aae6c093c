import pytest

from aqe_core.sql_guard import UnsafeSQL, check_sql


@pytest.mark.parametrize("sql", [
    "SELECT 1",
    "select k, count(*) from facts group by k;",
    "WITH a AS (SELECT 1 AS x) SELECT * FROM a",
    "(SELECT 1) UNION ALL (SELECT 2)",
    "SELECT 'DROP TABLE x; ADD JAR y' AS s",
    "-- a comment with INSERT\nSELECT 1",
    "EXPLAIN SELECT * FROM range(10)",
])
def test_read_only_queries_pass(sql):
    assert check_sql(sql)


@pytest.mark.parametrize("sql,why", [
    ("", "empty"),
    ("DROP TABLE facts", "only queries"),
    ("SELECT 1; DROP TABLE facts", "one statement"),
    ("ADD JAR /tmp/x.jar", "only queries"),
    ("SELECT reflect('java.lang.Runtime', 'getRuntime')", "reflection"),
    ("SELECT java_method('java.lang.System', 'exit', 1)", "reflection"),
    ("SELECT * FROM parquet.`/etc/passwd`", "reading files"),
    ("SET spark.sql.adaptive.enabled=false", "only queries"),
    ("WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a", "read-only"),
    ("SELECT 1 /* unterminated", "unterminated"),
    ("SELECT 'x", "unterminated"),
])
def test_unsafe_sql_is_rejected_with_a_reason(sql, why):
    with pytest.raises(UnsafeSQL, match=why):
        check_sql(sql)
