"""Reject SQL the Run page must not execute: Spark has no SQL sandbox, so user SQL is code.

Only one read-only query is accepted (SELECT / WITH / VALUES / FROM / TABLE, or EXPLAIN of one):
no DDL/DML, no SET, no ADD JAR / CREATE FUNCTION, no reflection functions, no direct file reads
(`` parquet.`/path` ``). The check is lexical over the text with comments and string literals
removed, so a keyword inside a string literal is fine; anything ambiguous is rejected.
"""
from __future__ import annotations

import re

MAX_SQL_CHARS = 100_000

_ALLOWED_START = re.compile(r"^\s*(\(\s*)*(SELECT|WITH|VALUES|FROM|TABLE)\b", re.I)
_FORBIDDEN = [
    (re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE|DROP|CREATE|ALTER|TRUNCATE|REPLACE|LOAD|MSCK|REFRESH|CACHE|UNCACHE|"
                r"ADD|SET|RESET|USE|GRANT|REVOKE|ANALYZE|CALL|EXECUTE|DECLARE)\b", re.I),
     "only read-only queries can run here"),
    (re.compile(r"\b(reflect|java_method|try_reflect)\s*\(", re.I), "reflection functions call Java code and are not allowed"),
    (re.compile(r"\b(parquet|orc|json|csv|text|avro|binaryFile|delta|jdbc)\s*\.\s*`", re.I),
     "reading files by path is not allowed; query tables or views"),
    (re.compile(r"\bINTO\s+OUTFILE\b|\bDIRECTORY\b", re.I), "writing files is not allowed"),
]


class UnsafeSQL(ValueError):
    """The SQL is not a single read-only query (message for people)."""


def _strip(sql: str) -> str:
    out, i, n = [], 0, len(sql)
    while i < n:
        c = sql[i]
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            if j < 0:
                raise UnsafeSQL("unterminated /* comment")
            i = j + 2
            out.append(" ")
        elif c in ("'", '"'):
            j = i + 1
            while j < n and sql[j] != c:
                j += 2 if sql[j] == "\\" else 1
            if j >= n:
                raise UnsafeSQL("unterminated string literal")
            out.append("''")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check_sql(sql: str) -> str:
    """Return the query (trailing ';' removed) or raise :class:`UnsafeSQL` saying why."""
    if not sql or not sql.strip():
        raise UnsafeSQL("the query is empty")
    if len(sql) > MAX_SQL_CHARS:
        raise UnsafeSQL(f"the query is longer than {MAX_SQL_CHARS:,} characters")
    bare = _strip(sql).strip()
    bare = re.sub(r";\s*$", "", bare)
    if ";" in bare:
        raise UnsafeSQL("run one statement at a time")
    body = re.sub(r"^\s*EXPLAIN(\s+(EXTENDED|FORMATTED|CODEGEN|COST))?\s+", "", bare, flags=re.I)
    if not _ALLOWED_START.match(body):
        raise UnsafeSQL("only queries (SELECT, WITH, VALUES, FROM, TABLE) can run here")
    for pattern, why in _FORBIDDEN:
        m = pattern.search(body)
        if m:
            raise UnsafeSQL(f"{why} (found '{m.group(0).strip()}')")
    return re.sub(r";\s*$", "", sql.strip())
