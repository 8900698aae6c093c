"""Scala collection strings as Spark's ``toString`` prints them (``List(a, b)``, ``Vector(k#1L)``).

Pure text: captures and listener events carry such strings (a join's keys, a node's required
distribution), and both the recorder and the engine read them.
"""
from __future__ import annotations

import re
from typing import Optional

from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, CoalescedPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
    ShufflePartitionSpec,
)


def split_top_level(text: str) -> list[str]:
    """``"List(A(x, y), B)"`` -> ``["A(x, y)", "B"]``: the items of a Scala collection string."""
    t = text.strip()
    m = re.match(r"^(?:List|Vector|ArrayBuffer|ArraySeq|WrappedArray|Buffer|Stream|LazyList|Seq)\((.*)\)$", t, re.S)
    if m:
        t = m.group(1)
    elif t in ("Nil", ""):
        return []
    items: list[str] = []
    depth, cur = 0, list[str]()
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



_SPEC_RE = re.compile(r"(CoalescedPartitionSpec|PartialReducerPartitionSpec|PartialMapperPartitionSpec|"
                      r"CoalescedMapperPartitionSpec)\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


def _int_or_option(text: str) -> Optional[int]:
    t = text.strip()
    if t == "None":
        return None
    if t.startswith("Some(") and t.endswith(")"):
        return int(t[5:-1])
    return int(t)


def parse_specs(text: str) -> list[ShufflePartitionSpec]:
    """Parse ``partitionSpecs.toString`` (``Vector(CoalescedPartitionSpec(0,7,Some(3550)), ...)``).

    Handles every release's field lists: 3.0 ``CoalescedPartitionSpec(start,end)`` and
    ``PartialReducerPartitionSpec(reducer,startMap,endMap)``; 3.1 adds the reducer spec's
    ``dataSize``; 3.2+ ``CoalescedPartitionSpec(start,end,Option[dataSize])``.
    """
    out: list[ShufflePartitionSpec] = []
    for m in _SPEC_RE.finditer(text):
        kind, args = m.group(1), [a for a in m.group(2).split(",")]
        if kind == "CoalescedPartitionSpec":
            size = _int_or_option(args[2]) if len(args) > 2 else None
            out.append(CoalescedPartitionSpec(int(args[0]), int(args[1]), size))
        elif kind == "PartialReducerPartitionSpec":
            size = _int_or_option(args[3]) if len(args) > 3 else None
            out.append(PartialReducerPartitionSpec(int(args[0]), int(args[1]), int(args[2]), size))
        elif kind == "PartialMapperPartitionSpec":
            out.append(PartialMapperPartitionSpec(int(args[0]), int(args[1]), int(args[2])))
        else:
            out.append(CoalescedMapperPartitionSpec(int(args[0]), int(args[1]), int(args[2])))
    return out
