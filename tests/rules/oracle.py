"""Ground truth recorded from real Spark releases, shared by the rules' test files.

Each rule's test file (``tests/rules/test_<rule>.py``) checks its functions against the cases
recorded for them here; ``test_oracle_fixtures.py`` checks the files themselves.

Every ``tests/fixtures/oracle/<spark version>.json`` was written by
``tools/record_rule_oracle.py``, which called the release's own JVM code
(``ShufflePartitionsUtil.coalescePartitions``, ``splitSizeListByTargetSize``,
``createSkewPartitionSpecs`` over a real ``MapOutputTracker``, and ``OptimizeSkewedJoin``'s
skew math) through py4j. Nothing here needs Spark: the fixtures
are plain JSON, and every expected value in them is what a Spark release returned (or the
exception it threw). See docs/recording-fixtures.md for how to re-record.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ORACLE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "oracle"
INT_MAX = 2**31 - 1

#: How a Java exception recorded in a fixture maps to the Python exception our code raises.
JAVA_TO_PYTHON_EXCEPTION: dict[str, type[BaseException]] = {
    "AssertionError": AssertionError,
    "IllegalArgumentException": ValueError,
    "IllegalStateException": RuntimeError,
}


def load_fixtures() -> list[dict[str, Any]]:
    out = []
    for path in sorted(ORACLE_DIR.glob("*.json")):
        data = json.loads(path.read_text())
        data["_path"] = path
        out.append(data)
    return out


FIXTURES = load_fixtures()


def params(fn: str) -> list:
    """One ``(version, case)`` pytest parameter per recorded case of Spark function ``fn``."""
    out = []
    for fx in FIXTURES:
        version = fx["spark_version"]
        for case in fx["cases"]:
            if case["fn"] == fn:
                out.append(pytest.param(version, case, id=f"{version}::{case['name']}"))
    return out


def is_error(result: Any) -> bool:
    return isinstance(result, dict) and "error" in result


def expected_exception(result: dict) -> type[BaseException]:
    return JAVA_TO_PYTHON_EXCEPTION.get(result["error"], Exception)


def describe(version: str, case: dict) -> str:
    args = json.dumps(case["args"], separators=(",", ":"))
    if len(args) > 1500:
        args = args[:1500] + "..."
    return f"Spark {version} case {case['name']!r} args={args}"
