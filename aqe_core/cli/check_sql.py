"""``check-sql``: SQL statements vetted by the SQL guard (nothing is executed)."""
from __future__ import annotations

import argparse
import json
import sys


def add_check_sql_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--master", default=None, help="Spark master URL for the checking session (default local[*])")


_JSON_TYPES = {dict: "object", list: "array", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _statements(raw: str) -> list[str]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"stdin is not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(data, list):
        raise ValueError(f"stdin must hold a JSON array of SQL strings, not a JSON {_JSON_TYPES.get(type(data), 'value')}")
    bad = next((i for i, x in enumerate(data) if not isinstance(x, str)), None)
    if bad is not None:
        raise ValueError(f"item {bad} of the array is a JSON {_JSON_TYPES.get(type(data[bad]), 'value')}, not a string")
    return data


def cmd_check_sql(args: argparse.Namespace) -> int:
    try:
        statements = _statements(sys.stdin.read())
    except UnicodeDecodeError:
        print("check-sql: stdin is not UTF-8 text", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"check-sql: {e}", file=sys.stderr)
        return 2

    from aqe_core.live.java import JavaNotFound
    from aqe_core.live.requests import judge_statements

    try:
        out = judge_statements(statements, args.master)
    except JavaNotFound as e:
        print(f"check-sql: {e}", file=sys.stderr)
        return 3
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0
