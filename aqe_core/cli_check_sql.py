"""``python -m aqe_core check-sql``: vet SQL in bulk with the guard the server uses.

    echo '["SELECT 1", "ADD JAR /tmp/x.jar"]' | python -m aqe_core check-sql
    [{"allowed": true, "reason": "..."}, {"allowed": false, "reason": "only queries can run here; ..."}]

Reads a JSON array of statements on stdin and prints a JSON array of ``{"allowed", "reason"}``,
one per statement, in order, decided by :func:`aqe_core.sql_guard.verdict` in one Spark session
(nothing is executed). Exit codes: 0 all judged, 2 bad input, 3 no Java for Spark.
"""
from __future__ import annotations

import argparse
import json
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--master", default=None, help="Spark master URL for the checking session (default local[*])")


_JSON_TYPES = {dict: "object", list: "array", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _statements(raw: str) -> list[str]:
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"stdin is not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(data, list):
        raise ValueError(f"stdin must hold a JSON array of SQL strings, not a JSON {_JSON_TYPES.get(type(data), 'value')}")
    bad = next((i for i, x in enumerate(data) if not isinstance(x, str)), None)
    if bad is not None:
        raise ValueError(f"item {bad} of the array is a JSON {_JSON_TYPES.get(type(data[bad]), 'value')}, not a string")
    return data


def run(args: argparse.Namespace) -> int:
    try:
        statements = _statements(sys.stdin.read())
    except UnicodeDecodeError:
        print("check-sql: stdin is not UTF-8 text", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"check-sql: {e}", file=sys.stderr)
        return 2

    from aqe_core.capture.java import JavaNotFound
    from aqe_core.capture.runtime import get_runtime
    from aqe_core.sql_guard import guard_session, verdict

    try:
        rt = get_runtime(args.master, event_log=False)
    except JavaNotFound as e:
        print(f"check-sql: {e}", file=sys.stderr)
        return 3
    try:  # PySpark 4 logs every analysis error it converts (with a Java stack): not news here
        from pyspark.logger import PySparkLogger

        PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True
    except ImportError:
        pass
    session = guard_session(rt.spark.newSession())
    out = [verdict(s, session).to_dict() for s in statements]
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0
