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
