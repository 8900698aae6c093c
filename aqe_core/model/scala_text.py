"""Scala collection strings as Spark's ``toString`` prints them (``List(a, b)``, ``Vector(k#1L)``).

Pure text: captures and listener events carry such strings (a join's keys, a node's required
distribution), and both the recorder and the engine read them.
"""
from __future__ import annotations

import re


def split_top_level(text: str) -> list[str]:
    """``"List(A(x, y), B)"`` -> ``["A(x, y)", "B"]``: the items of a Scala collection string."""
    t = text.strip()
    m = re.match(r"^(?:List|Vector|ArrayBuffer|ArraySeq|WrappedArray|Buffer|Stream|LazyList|Seq)\((.*)\)$", t, re.S)
    if m:
        t = m.group(1)
    elif t in ("Nil", ""):
        return []
    items, depth, cur = [], 0, []
    for ch in t:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last:
        items.append(last)
    return items
