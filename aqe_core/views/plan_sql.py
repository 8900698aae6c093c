"""Spark's plan text written back as SQL that runs: names quoted, literals typed (issue 42).

A plan prints expressions with ``Expression.toString``, not ``.sql``: attributes carry their ids
(``s#12``), and ``Literal.toString`` drops quotes and type markers, so a filter reads
``(s#12 = x y)`` or ``(day#13 = 2024-02-29)``. That text cannot be run, yet it is all an event
log keeps of a shuffle's input. This module turns the shapes Spark prints for filters and
partitioning keys (binary operators in parentheses, ``NOT``, ``IN``, ``isnull``/``isnotnull``,
``cast(x as t)``, function calls) into SQL: attributes become backquoted names, and a literal
beside an attribute takes that attribute's type from the scan's ``ReadSchema`` (``'x y'``,
``DATE '2024-02-29'``). What it cannot read with certainty raises :class:`NotSQL`: the caller
then shows the plan's text for the user to finish instead of running a guess.

>>> expression_sql("(((isnotnull(day#13) AND isnotnull(s#12)) AND (day#13 = 2024-02-29)) AND NOT (s#12 = x y))",
...                {"day": "date", "s": "string"})
"(((`day` IS NOT NULL AND `s` IS NOT NULL) AND (`day` = DATE '2024-02-29')) AND NOT (`s` = 'x y'))"
>>> expression_sql("substr(s#1, 1, 3)", {})
'substr(`s`, 1, 3)'
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from aqe_core.model.scala_text import split_top_level

__all__ = ["NotSQL", "conjuncts", "expression_sql", "project_aliases", "quote_name", "read_schema"]

_ATTR = re.compile(r"^([A-Za-z_][\w$]*)#(\d+)L?$")
_NUM = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_FUNC = re.compile(r"^([A-Za-z_][\w]*)\((.*)\)$", re.S)
_CAST = re.compile(r"^cast\((.*) as ([\w(), <>:]+)\)$", re.S | re.I)
_BINARY = ("AND", "OR", "<=>", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^")
_TYPED = {"date": "DATE", "timestamp": "TIMESTAMP", "timestamp_ntz": "TIMESTAMP_NTZ"}
_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "byte", "short", "long", "integer")
_CONSTANTS = {"null": "NULL", "true": "true", "false": "false"}

#: resolves an attribute (name, id) to SQL; the default quotes the name
Resolver = Callable[[str, str], str]


class NotSQL(ValueError):
    """The plan's text is not a shape this module can write as SQL with certainty."""


def quote_name(name: str) -> str:
    """A backquoted identifier (``a.b`` stays one name: plan attributes are single names)."""
    return "`" + name.replace("`", "``") + "`"


def _quote_literal(text: str, type_name: Optional[str]) -> str:
    t = (type_name or "string").lower()
    if text == "null":
        return "NULL"
    if t.startswith(_NUMERIC):
        if not _NUM.match(text):
            raise NotSQL(f"{text!r} beside a {t} value is not a number")
        return text
    if t == "boolean":
        if text not in ("true", "false"):
            raise NotSQL(f"{text!r} beside a boolean value")
        return text
    body = "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return f"{_TYPED[t]} {body}" if t in _TYPED else body


def _depth_split(text: str, sep: str) -> Optional[tuple[str, str]]:
    """``text`` cut at the first ``sep`` outside parentheses and brackets."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            return text[:i], text[i + len(sep):]
    return None


def _enclosed(text: str) -> bool:
    """``text`` is one parenthesised group (its first "(" closes at its end)."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(text) - 1:
            return False
    return True


class _Writer:
    def __init__(self, types: dict[str, str], resolve: Optional[Resolver]) -> None:
        self.types = {k.lower(): v for k, v in types.items()}
        self.resolve = resolve or (lambda name, _id: quote_name(name))

    def type_of(self, text: str) -> Optional[str]:
        m = _ATTR.match(text.strip())
        return self.types.get(m.group(1).lower()) if m else None

    def strict(self, text: str) -> str:
        """SQL for ``text``, or :class:`NotSQL` where it holds an untyped bare literal."""
        t = text.strip()
        if (m := _ATTR.match(t)) is not None:
            return self.resolve(m.group(1), m.group(2))
        if _NUM.match(t):
            return t
        if t in _CONSTANTS:
            return _CONSTANTS[t]
        if t.startswith("NOT "):
            return "NOT " + self.strict(t[4:])
        if _enclosed(t):
            return "(" + self.binary(t[1:-1]) + ")"
        for word, sql in (("isnotnull", "IS NOT NULL"), ("isnull", "IS NULL")):
            if t.startswith(word + "(") and _enclosed(t[len(word):]):
                return f"{self.strict(t[len(word) + 1:-1])} {sql}"
        if (c := _CAST.match(t)) is not None:
            return f"CAST({self.strict(c.group(1))} AS {c.group(2)})"
        if (got := _depth_split(t, " IN (")) is not None and got[1].endswith(")"):
            left = self.strict(got[0])
            items = split_top_level(got[1][:-1])
            return f"{left} IN ({', '.join(self.operand(i, self.type_of(got[0])) for i in items)})"
        if (f := _FUNC.match(t)) is not None and _enclosed(t[len(f.group(1)):]):
            return f"{f.group(1)}({', '.join(self.operand(a, None) for a in split_top_level(f.group(2)))})"
        raise NotSQL(f"cannot read {t!r} as SQL")

    def operand(self, text: str, type_name: Optional[str]) -> str:
        """An operand: an expression, else a literal of ``type_name`` (a function's bare
        argument: a string, as Spark prints one)."""
        try:
            return self.strict(text)
        except NotSQL:
            if not text.strip():
                raise
            return _quote_literal(text.strip(), type_name)

    def binary(self, inner: str) -> str:
        """``left op right`` inside a binary operator's parentheses."""
        for op in _BINARY:
            got = _depth_split(inner, f" {op} ")
            if got is None:
                continue
            left, right = got
            try:
                lhs = self.strict(left)
            except NotSQL:
                continue
            if op in ("AND", "OR"):
                return f"{lhs} {op} {self.strict(right)}"
            return f"{lhs} {op} {self.operand(right, self.type_of(left))}"
        return self.strict(inner)


def expression_sql(text: str, types: dict[str, str], resolve: Optional[Resolver] = None) -> str:
    """SQL for a Spark expression as a plan prints it. ``types``: column name -> Spark type name
    (:func:`read_schema`); ``resolve``: SQL for an attribute (name, expression id), e.g. the
    expression a ``Project`` below aliased to it. Raises :class:`NotSQL`."""
    return _Writer(types, resolve).strict(text)


def conjuncts(text: str) -> list[str]:
    """The parts of a filter Spark printed as nested ``(a AND b)``, outermost first.

    >>> conjuncts("((isnotnull(k#1) AND (k#1 = 7)) AND might_contain(Subquery x, xxhash64(k#1, 42)))")
    ['isnotnull(k#1)', '(k#1 = 7)', 'might_contain(Subquery x, xxhash64(k#1, 42))']
    """
    t = text.strip()
    if _enclosed(t):
        got = _depth_split(t[1:-1], " AND ")
        if got is not None:
            return conjuncts(got[0]) + conjuncts(got[1])
    return [t]


def read_schema(scan_text: str) -> dict[str, str]:
    """Column -> type of a scan's ``ReadSchema: struct<s:string,day:date>`` (empty without one)."""
    m = re.search(r"ReadSchema: struct<(.*)>", scan_text)
    if m is None:
        return {}
    out, depth, cur = {}, 0, ""
    for ch in m.group(1) + ",":
        depth += ch in "<("
        depth -= ch in ">)"
        if ch == "," and depth == 0:
            name, _, type_name = cur.partition(":")
            out[name.strip().strip("`")] = type_name.strip()
            cur = ""
        else:
            cur += ch
    return out


def project_aliases(project_text: str) -> dict[str, str]:
    """Expression id -> the aliased expression's text of ``Project [substr(s#1, 1, 3) AS g#10]``."""
    start, end = project_text.find("["), project_text.rfind("]")
    if start < 0 or end < start:
        return {}
    out = {}
    for item in split_top_level(project_text[start + 1:end]):
        got = item.rsplit(" AS ", 1)
        m = _ATTR.match(got[1].strip()) if len(got) == 2 else None
        if m is not None:
            out[m.group(2)] = got[0].strip()
    return out
