"""Plan text and SQL text without what changes between runs of one job (issue 39): expression
and plan ids, numbers, paths, and literals as Spark prints them.

Spark prints a folded constant bare (``tag = zz``, ``date_format(ts, yyyy-MM)``, ``THEN gold``), so
a literal is found by where it stands: an operand with no attribute reference (``name#id``) of a
comparison, an IN list or INSET, a pattern function, any function's argument, a CASE branch's value
or an alias's projected item. :mod:`aqe_core.views.align_runs` fingerprints plans with them.
"""
from __future__ import annotations

from functools import lru_cache

import re
from typing import Callable, Optional

__all__ = ["normal_sql", "normal_text"]

_RE_IDS = re.compile(r"#\d+L?|\[(?:plan_id=\d+|id=#\d+)\]|isFinalPlan=\w+")
_RE_PATH = re.compile(r"(?:[a-z][a-z0-9+.-]*:/+|/)[^\s,\]\)]+", re.I)
_RE_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_RE_DATE = re.compile(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?![\w-])")
_RE_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:BD|[LDSYBF])?\b")
_RE_STATS = re.compile(r",?\s*Statistics\(.*$")
_RE_ATTR = re.compile(r"#\d")
#: a binary comparison: Spark prints every BinaryOperator as ``(left symbol right)``
_RE_COMPARISON = re.compile(r" (?:<=>|<>|!=|<=|>=|=|<|>) ")
#: the infix operators whose right operand Spark prints bare, up to the end of the expression
_RE_INFIX = re.compile(r" (?:I?LIKE|RLIKE|INSET) ")
#: functions whose last argument is a pattern or a string (``StartsWith(a#1, name-1)``), and
#: the data source filters a scan prints (``EqualTo(tag,zz)``, ``In(dim_id, [1,2,3])``)
_RE_CALL = re.compile(r"\b(?:StartsWith|EndsWith|Contains|RLIKE|LIKE|ILIKE|EqualTo|EqualNullSafe|GreaterThan"
                      r"|GreaterThanOrEqual|LessThan|LessThanOrEqual|StringStartsWith|StringEndsWith|StringContains"
                      r"|In)\(")
_RE_IN = re.compile(r" IN \(")
#: any function call: a constant argument of one is a literal (``date_format(ts#3, yyyy-MM-dd, ..)``)
_RE_ANY_CALL = re.compile(r"\b[A-Za-z_][\w$]*\(")
_RE_NUMBER_ONLY = re.compile(r"^\s*-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:BD|[LDSYBF])?\s*$")
#: a CASE branch's value, up to the next branch or the END at its own level
_RE_CASE_VALUE = re.compile(r" (?:THEN|ELSE) ")
#: a projected column's alias (``2026-11-25 AS run_date#7``: a job stamping its run on the rows)
_RE_ALIAS = re.compile(r" AS [^\s,\])]+#\d+")
#: a scan's copies of the filter above it, cut at ``spark.sql.maxMetadataStringLength`` (a cut that
#: moves with the literals' lengths): the Filter operator prints them in full
_RE_SCAN_FILTERS = re.compile(r"\b(DataFilters|PushedFilters): \[.*?(?:\]|\.\.\.)(?=, [A-Z]\w*: |$)")
_RE_SOURCE_EQ = re.compile(r"\bEqualTo\(([^,()]*),L\)")
_RE_SQL_LIST = re.compile(r"\bIN\s*\(\s*(?:[SND]|DATE\s*S|TIMESTAMP\s*S)(?:\s*,\s*(?:[SND]|DATE\s*S|TIMESTAMP\s*S))*\s*\)",
                          re.I)


class _Brackets:
    """A text's brackets, read once: the innermost bracket open at each position and where each
    closes, so an operand's ends are look-ups (a plan's description may hold 100 KB of them)."""

    def __init__(self, text: str) -> None:
        self.n = len(text)
        self.inner = [-1] * (self.n + 1)
        self.close_of: dict[int, int] = {}
        stack: list[int] = []
        for j, c in enumerate(text):
            if c in ")]" and stack:
                self.close_of[stack.pop()] = j
            self.inner[j] = stack[-1] if stack else -1
            if c in "([":
                stack.append(j)
        self.inner[self.n] = stack[-1] if stack else -1

    def open(self, i: int) -> int:
        """The bracket opening the expression around position ``i`` (-1 at the top level)."""
        return self.inner[i]

    def close(self, i: int) -> int:
        """The bracket closing the expression around position ``i`` (the text's end if none)."""
        return self.close_of.get(self.inner[i], self.n) if self.inner[i] >= 0 else self.n


def _bare_end(text: str, br: _Brackets, i: int) -> int:
    """Where a bare operand starting at ``i`` ends: the enclosing ``)`` or a top-level AND / OR."""
    end = br.close(i)
    for word in (" AND ", " OR "):
        k = text.find(word, i, end)
        while k >= 0 and br.open(k) != br.open(i):
            k = text.find(word, k + 1, end)
        if k >= 0:
            end = k
    return end


def _literal_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of each literal operand in a plan's text: an operand with no
    attribute reference (``name#id``) is a constant, and the optimizer folds constants into one
    literal, which Spark prints unquoted (strings, dates, timestamps, decimals alike)."""
    spans: list[tuple[int, int, str]] = []
    br = _Brackets(text)

    def constant(a: int, b: int) -> bool:
        return b > a and not _RE_ATTR.search(text, a, b) and bool(text[a:b].strip())

    for m in _RE_COMPARISON.finditer(text):
        left, right = br.open(m.start()) + 1, br.close(m.end())
        if left > 0 and constant(left, m.start()):
            spans.append((left, m.start(), "L"))
        if constant(m.end(), right):
            spans.append((m.end(), right, "L"))
    for m in _RE_INFIX.finditer(text):
        end = _bare_end(text, br, m.end())
        if constant(m.end(), end):  # INSET is IN over more than the conversion threshold's items
            spans.append((m.start(), end, " IN (L)" if m.group(0) == " INSET " else f"{m.group(0)}L"))
    for m in _RE_IN.finditer(text):
        end = br.close(m.end())
        if constant(m.end(), end):
            spans.append((m.end(), end, "L"))
    for m in _RE_ALIAS.finditer(text):  # the item of a list ending here: from its ", " or "["
        start = br.open(m.start()) + 1
        comma = text.rfind(", ", start, m.start())
        while comma >= 0 and br.open(comma) != br.open(m.start()):
            comma = text.rfind(", ", start, comma)
        begin = comma + 2 if comma >= 0 else start
        if constant(begin, m.start()):
            spans.append((begin, m.start(), "L"))
    spans += _argument_spans(text, br, constant) + _case_spans(text, br, constant)
    for m in _RE_CALL.finditer(text):
        end = br.close(m.end())
        comma = text.rfind(",", m.end(), end)
        while comma >= 0 and br.open(comma) != m.end() - 1:
            comma = text.rfind(",", m.end(), comma)
        if comma >= 0 and constant(comma + 1, end):
            spans.append((comma + 1, end, " L" if text[comma + 1:comma + 2] == " " else "L"))
    return spans


def _argument_spans(text: str, br: _Brackets, constant: Callable[[int, int], bool]) -> list[tuple[int, int, str]]:
    """Each constant argument of a function call (no ``#id``, no call of its own) as ``L``; a bare
    number stays a number (``N``: a partition count, an ordinal)."""
    spans: list[tuple[int, int, str]] = []
    for m in _RE_ANY_CALL.finditer(text):
        if _RE_CALL.match(text, m.start()) or text.startswith(")", m.end()):
            continue  # a pattern's last argument, or a data source filter's (whose column has no #id)
        open_at, end = m.end() - 1, br.close(m.end())
        start = m.end()
        for j in range(m.end(), end + 1):
            if j < end and (text[j] != "," or br.open(j) != open_at):
                continue
            a = start + (len(text[start:j]) - len(text[start:j].lstrip()))
            arg = text[a:j]
            if constant(a, j) and "(" not in arg and "=" not in arg and not _RE_NUMBER_ONLY.match(arg):
                spans.append((a, j, "L"))
            start = j + 1
    return spans


def _case_spans(text: str, br: _Brackets, constant: Callable[[int, int], bool]) -> list[tuple[int, int, str]]:
    """Each constant value of a CASE branch (``THEN gold ELSE silver END``) as ``L``."""
    spans: list[tuple[int, int, str]] = []
    for m in _RE_CASE_VALUE.finditer(text):
        level, end = br.open(m.end()), br.close(m.end())
        for word in (" WHEN ", " ELSE ", " END"):
            k = text.find(word, m.end(), end)
            while k >= 0 and br.open(k) != level:
                k = text.find(word, k + 1, end)
            if k >= 0:
                end = k
        if constant(m.end(), end) and not _RE_NUMBER_ONLY.match(text[m.end():end]):
            spans.append((m.end(), end, "L"))
    return spans


def _edit(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each span replaced, outermost first (a span inside one replaced is skipped)."""
    out, at = [], 0
    for start, end, repl in sorted(spans, key=lambda x: (x[0], -x[1])):
        if start < at:
            continue
        out.append(text[at:start])
        out.append(repl)
        at = end
    out.append(text[at:])
    return "".join(out)


def _one_item_in(text: str) -> str:
    """``(x = L)`` as ``x IN (L)``: Spark's OptimizeIn writes an IN list of one item as an equality."""
    br = _Brackets(text)
    spans: list[tuple[int, int, str]] = []
    at = text.find(" = L)")
    while at >= 0:
        start = br.open(at)
        if start >= 0:
            spans += [(start, start + 1, ""), (at, at + len(" = L)"), " IN (L)")]
        at = text.find(" = L)", at + 1)
    return _RE_SOURCE_EQ.sub(r"In(\1, L)", _edit(text, spans))


def _literals(text: str) -> str:
    """``text`` with each literal operand of a plan's expressions as ``L``, an equality with one
    as a one-item IN."""
    return _one_item_in(_edit(text, _literal_spans(text)))


@lru_cache(maxsize=2048)  # (names and texts repeat: a plan is walked many times, a query run often)
def normal_text(text: Optional[str]) -> str:
    """A plan operator's ``text`` without what changes between runs of one job: ids, paths, and
    literals as Spark prints them (strings unquoted: an operand with no ``#id`` is a literal).

    >>> normal_text("Filter (isnotnull(v#12L) AND (v#12L > 10))")
    'Filter (isnotnull(v) AND (v > L))'
    >>> normal_text("Filter NOT (tag#12 = zz)"), normal_text("Filter NOT tag#3 IN (ab c,x)")
    ('Filter NOT tag IN (L)', 'Filter NOT tag IN (L)')
    >>> normal_text("Filter (cast(k#1 as string) IN (1,2,3) AND (d#2 >= 2026-11-25))")
    'Filter (cast(k as string) IN (L) AND (d >= L))'
    >>> normal_text("Filter ((isnotnull(n#2) AND (n#2 = name-7)) AND (d#3 = 1999-01-01))")
    'Filter ((isnotnull(n) AND n IN (L)) AND d IN (L))'
    >>> normal_text("Filter (tag#1 INSET 1, 10, 11, 12, 2 AND (ts#2 < 1999-01-01 00:00:00))")
    'Filter (tag IN (L) AND (ts < L))'
    >>> normal_text("Filter (StartsWith(name#4, name-1) AND (cast(v#5 as decimal(10,2)) > 12.50))")
    'Filter (StartsWith(name, L) AND (cast(v as decimal(N,N)) > L))'
    >>> normal_text("Project [k#1L, 2026-11-25 AS run_date#7, nightly AS kind#8, (v#2 * 2) AS w#9]")
    'Project [k, L AS run_date, L AS kind, (v * N) AS w]'
    >>> normal_text("PushedFilters: [EqualTo(name,name-7), In(dim_id, [1,2,3])]")
    'PushedFilters: [F]'
    >>> normal_text("In(dim_id, [1,2,3]) AND EqualTo(name,name-7)")
    'In(dim_id, L) AND In(name, L)'
    >>> normal_text("Project [CASE WHEN (v#1 > 9) THEN gold ELSE silver END AS t#2, date_format(ts#3, yyyy-MM, Some(UTC)) AS m#4]")
    'Project [CASE WHEN (v > L) THEN L ELSE L END AS t, date_format(ts, L, Some(L)) AS m]'
    >>> normal_text("Project [coalesce(tag#1, none) AS t#2, regexp_replace(n#3, [0-9], X, 1) AS r#4]")
    'Project [coalesce(tag, L) AS t, regexp_replace(n, L, L, N) AS r]'
    >>> normal_text("Exchange hashpartitioning(k#3L, 200), ENSURE_REQUIREMENTS, [plan_id=41]")
    'Exchange hashpartitioning(k, N), ENSURE_REQUIREMENTS,'
    >>> normal_text("FileScan parquet [a#1] Location: InMemoryFileIndex[file:/data/2026-11-25/t]")
    'FileScan parquet [a] Location: InMemoryFileIndex[P]'
    """
    t = _RE_STATS.sub("", text or "")
    t = _RE_SCAN_FILTERS.sub(r"\1: [F]", t)
    t = _literals(t)
    t = _RE_IDS.sub("", t)
    t = _RE_PATH.sub("P", t)
    t = _RE_STRING.sub("S", t)
    t = _RE_DATE.sub("D", t)
    t = _RE_NUMBER.sub("N", t)
    return " ".join(t.split())


def normal_sql(text: Optional[str]) -> str:
    """SQL text without its literals (quoted strings, numbers, dates) and IN lists of any length.

    >>> normal_sql("SELECT * FROM t WHERE tag IN ('1', '2') AND d >= DATE'2026-11-25' AND v > 1.5")
    'SELECT * FROM t WHERE tag IN (L) AND d >= DATES AND v > N'
    >>> normal_sql("select 1 from t where k in (4,5,6,7)") == normal_sql("select 2 from t where k in (1)")
    True
    >>> normal_sql("SELECT coalesce(tag, 'n/a') FROM parquet.`/data/2026/t`")
    'SELECT coalesce(tag, S) FROM parquet.`P'

    """
    t = _RE_STRING.sub("S", text or "")  # first: a string may hold a slash ('n/a')
    t = _RE_PATH.sub("P", t)
    t = _RE_NUMBER.sub("N", t)
    t = _RE_SQL_LIST.sub("IN (L)", t)
    return " ".join(t.split())
