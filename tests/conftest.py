"""Shared test fixtures.

``spark_runtime`` / ``spark``: ONE SparkSession for the whole suite (``local[2]``, UI off),
started on first use through AQE Lens's own runtime (Java discovery included) and stopped at
the end. Tests that need their own settings use ``spark.newSession()`` (the runner does), so
they never leak ``spark.sql.*`` settings into each other. Without PySpark or Java the tests
that need Spark are skipped locally; under CI (``CI`` set) they fail instead, so CI can never
pass without having run them.
"""
from __future__ import annotations

import os

import pytest

#: a made-up secret in the environment of the test process, so of the suite's JVM and of every
#: server, CLI and MCP process the tests start: the SQL guard's tests prove that no query, capture or
#: page can read it (``${env:...}`` substitution, issue 37). Set before any JVM starts.
TEST_SECRET = "aqe-lens-fake-secret-5f1c9e2a"
os.environ["AQE_LENS_TEST_SECRET"] = TEST_SECRET


@pytest.fixture(scope="session")
def spark_runtime():
    try:
        import pyspark  # noqa: F401 - only whether it imports
    except ImportError as e:  # pragma: no cover - depends on the machine
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PySpark not installed: {e}")
    from aqe_core.live.java import JavaNotFound
    from aqe_core.live.runtime import get_runtime, stop_runtime

    try:
        rt = get_runtime("local[2]", {"spark.sql.shuffle.partitions": "20", "spark.driver.memory": "2g"})
    except JavaNotFound as e:  # pragma: no cover - depends on the machine
        if os.environ.get("CI"):
            raise
        pytest.skip(str(e))
    yield rt
    stop_runtime()


@pytest.fixture(scope="session")
def spark(spark_runtime):
    return spark_runtime.spark
