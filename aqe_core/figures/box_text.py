"""Text inside a plan box: numbers abbreviated whole, key lists counted, lines fitted at fields.

A box is at most ~250 pixels wide, and a cut made one character at a time turned
``SortMergeJoin · 28,719,640 rows`` into ``SortMergeJoin · 28,719,6…``: a number that reads as a
smaller one. Here numbers are abbreviated before they are drawn (the exact value stays in the
hover and the details panel), key lists keep as many keys as fit and count the rest, a line too
wide wraps once at a field boundary, and a line still too wide is cut between fields, never inside
a number.

>>> count_text(9876), count_text(28_719_640), count_text(1_033_560_123)
('9,876', '28.7 M', '1.03 B')
>>> fit_line("Exchange hashpartitioning(ss_item_sk, ss_store_sk, ss_ticket_number, 200)", 11, 232)
['Exchange hashpartitioning(', '   ss_item_sk +2 more, 200)']
"""
from __future__ import annotations

import re
from typing import Iterator

from aqe_core.figures.text_width import ELLIPSIS, fit_text, text_px

#: counts below this are written whole ("9,876 rows"); at or above, 3 significant digits
EXACT_BELOW = 10_000
_SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))
#: an expression id (``k#12`` / ``k#12L``): Spark's bookkeeping, not what a reader looks for
_IDS = re.compile(r"#\d+L?\b")
#: a key list: a partitioning's arguments or a bracketed list
_KEY_LIST = re.compile(r"\b\w*partitioning\(|\[")
#: a number as drawn: digits with thousands commas or a decimal point, never split by a cut
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
#: a continuation line's indent (as a stage box indents an operator's numbers)
INDENT = "   "
#: a word boundary cut must keep at least this share of the room, else the cut is in a word
_WORD_SHARE = 0.6


def count_text(n: float) -> str:
    """A count as a box writes it: whole below :data:`EXACT_BELOW`, else 3 significant digits
    with K, M, B or T (the rounding carries: 999,999 is "1.00 M", never "1000 K").

    >>> [count_text(x) for x in (0, 1, 9999, 10_000, 10_115, 100_000, 999_999, 2.5e12)]
    ['0', '1', '9,999', '10.0 K', '10.1 K', '100 K', '1.00 M', '2.50 T']
    """
    if abs(n) < EXACT_BELOW:
        return f"{n:,.0f}"
    units = [(size, suffix) for size, suffix in _SUFFIXES if abs(n) >= size]
    size, suffix = units[0]
    text = _three(n / size)
    if text is None and len(units) < len(_SUFFIXES):  # rounded up into the next unit
        size, suffix = _SUFFIXES[len(_SUFFIXES) - len(units) - 1]
        text = f"{n / size:.2f}"
    return f"{text or f'{n / size:.0f}'} {suffix}"


def _three(value: float) -> str | None:
    """``value`` (1 to 1000) with 3 significant digits, or None when it rounds to 1000."""
    for decimals in (2, 1, 0):
        if abs(value) < 10 ** (3 - decimals) - 0.5 * 10 ** -decimals:
            return f"{value:.{decimals}f}"
    return None


def rows_text(n: float) -> str:
    """``1 row``, ``9,876 rows``, ``28.7 M rows``.

    >>> rows_text(1), rows_text(28_719_640)
    ('1 row', '28.7 M rows')
    """
    return f"{count_text(n)} {'row' if n == 1 else 'rows'}"


def drop_ids(text: str) -> str:
    """``ss_item_sk#3L`` -> ``ss_item_sk``: the id is in the hover and details, the name reads.

    >>> drop_ids("hashpartitioning(ss_item_sk#3L, d_year#9, 200)")
    'hashpartitioning(ss_item_sk, d_year, 200)'
    """
    return _IDS.sub("", text)


def _split_top(s: str) -> list[str]:
    """``s`` split at its commas outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(s[start:i].strip())
            start = i + 1
    parts.append(s[start:].strip())
    return parts


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one just before ``start``, or -1."""
    depth = 1
    for i in range(start, len(text)):
        depth += text[i] in "(["
        depth -= text[i] in ")]"
        if depth == 0:
            return i
    return -1


def key_forms(text: str) -> Iterator[str]:
    """``text``, then with its first key list shortened a key at a time (a partitioning's count
    stays whole), down to the number of keys alone.

    >>> list(key_forms("hashpartitioning(a, b, c, 200)"))
    ['hashpartitioning(a, b, c, 200)', 'hashpartitioning(a, b +1 more, 200)', 'hashpartitioning(a +2 more, 200)', 'hashpartitioning(3 keys, 200)']
    >>> list(key_forms("SinglePartition"))
    ['SinglePartition']
    """
    yield text
    m = _KEY_LIST.search(text)
    end = _closing(text, m.end()) if m else -1
    if m is None or end < 0:
        return
    items = _split_top(text[m.end():end])
    tail = [items.pop()] if m.group(0) != "[" and len(items) > 1 and items[-1].isdigit() else []
    for k in range(len(items) - 1, -1, -1):
        shown = [*items[:k]]
        if shown:
            shown[-1] += f" +{len(items) - k} more"
        else:
            shown = [f"{len(items)} key{'s' if len(items) != 1 else ''}"]
        yield text[:m.end()] + ", ".join(shown + tail) + text[end:]


def _cut_points(text: str) -> tuple[list[int], list[int]]:
    """Where a line may end, never inside a number: after a comma or an opening bracket (a
    field's end), and before a space (a word's)."""
    inside = {i for m in _NUMBER.finditer(text) for i in range(m.start() + 1, m.end())}
    fields = [i + 1 for i, ch in enumerate(text) if ch in ",([" and 0 < i + 1 < len(text)]
    words = [i for i, ch in enumerate(text) if ch == " " and i > 0]
    return [p for p in fields if p not in inside], [p for p in words if p not in inside]


def _fits(text: str, size: float, max_px: float) -> bool:
    return text_px(text, size) <= max_px


def _trim(text: str) -> str:
    """A cut line's end without a dangling separator or a whole number that would read as cut."""
    text = text.rstrip(" ,.;:·([_-")
    m = re.search(r"\S*\d$", text)
    return _trim(text[:m.start()]) if m else text


def cut_line(text: str, size: float, max_px: float) -> str:
    """``text`` ended with "…" at the last field boundary that fits; inside a word only when the
    boundary would keep too little, and never inside a number.

    >>> cut_line("Scan parquet store_sales · 100,000 rows", 11, 200)
    'Scan parquet store_sales…'
    >>> cut_line("Scan parquet household_demographics", 11, 200)
    'Scan parquet household_dem…'
    """
    if _fits(text, size, max_px):
        return text
    room = max_px - text_px(ELLIPSIS, size)
    best = ""
    for p in sorted(set().union(*_cut_points(text))):
        head = _trim(text[:p])
        if head and _fits(head, size, room):
            best = head if len(head) > len(best) else best
    if best and text_px(best, size) >= _WORD_SHARE * room:
        return best + ELLIPSIS
    inner = fit_text(text, size, max_px).removesuffix(ELLIPSIS)
    in_number = any(m.start() < len(inner) < m.end() for m in _NUMBER.finditer(text))
    inner = _trim(inner) if in_number or inner[-1:].isdigit() else inner.rstrip(" ,.;:·([_-")
    return (inner if len(inner) > len(best) else best) + ELLIPSIS


def _wrap_once(text: str, size: float, max_px: float, indent: str) -> list[str] | None:
    """``text`` as two lines that both fit, the second indented: split before its numbers
    (" · "), else at the field boundary, else the word boundary, that balances the two lines
    best; None when no split fits.

    >>> _wrap_once("Exchange hashpartitioning(i_category, 200)", 11, 242, "   ")
    ['Exchange hashpartitioning(', '   i_category, 200)']
    """
    fields, words = _cut_points(text)
    for group in ([text.index(" · ")] if " · " in text else [], fields, words):
        best: tuple[float, list[str]] | None = None
        for p in group:
            head, tail = text[:p].rstrip(), indent + text[p:].strip().removeprefix("· ")
            widest = max(text_px(head, size), text_px(tail, size))
            if head and widest <= max_px and (best is None or widest < best[0]):
                best = (widest, [head, tail])
        if best is not None:
            return best[1]
    return None


def fit_line(text: str, size: float, max_px: float, indent: str = INDENT) -> list[str]:
    """``text`` as one or two lines of at most ``max_px``: whole if it fits, else wrapped once
    (see :func:`_wrap_once`) with its key list shortened until both lines fit, else one line cut
    with "…" (see :func:`cut_line`).

    >>> fit_line("SortMergeJoin LeftOuter · 28.7 M rows", 11, 242)
    ['SortMergeJoin LeftOuter', '   28.7 M rows']
    >>> fit_line("BroadcastNestedLoopJoin Inner BuildRight", 11, 232)
    ['BroadcastNestedLoopJoin', '   Inner BuildRight']
    >>> fit_line("Execute InsertIntoHadoopFsRelationCommand", 11, 232)
    ['Execute InsertIntoHadoopFsRelatio…']
    """
    if _fits(text, size, max_px):
        return [text]
    last = text
    for form in key_forms(text):
        last = form
        lines = [form] if _fits(form, size, max_px) else _wrap_once(form, size, max_px, indent)
        if lines:
            return lines
    return [cut_line(last, size, max_px)]
