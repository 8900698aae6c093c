"""The order Spark walks an execution's stages in: a Scala immutable ``Set[Int]``.

Spark's SQL listener names the task holding a metric's max by going through the execution's
stages (``exec.stages``, ``SQLAppStatusListener.aggregateMetrics``) and keeping the first
stage whose max is strictly larger, so when two stages hold the same max (a reused exchange
read by two stages) the stage named is the first in that Set's order. A Set of up to four
elements keeps its insertion order (``Set1`` to ``Set4``); a larger one is a hash trie whose
order follows the elements' improved hashes. Spark 4 is built on Scala 2.13 (a CHAMP trie:
at each level the elements that sit alone come first, by their five hash bits, then the
sub-tries); the Scala 2.12 trie of Spark 3 is not modelled (its insertion order is kept).

>>> champ_order([168, 185, 3, 7, 12, 44, 100, 101, 150, 200, 31, 64, 1000, 33, 65])
[101, 185, 33, 65, 64, 44, 12, 7, 150, 31, 168, 200, 100, 1000, 3]
"""
from __future__ import annotations

from typing import Iterable

_M32 = 0xFFFFFFFF


def improve(h: int) -> int:
    """``scala.collection.Hashing.improve`` of an Int's hash (the Int itself), unsigned."""
    h &= _M32
    h = (h + (~(h << 9) & _M32)) & _M32
    h ^= h >> 14
    h = (h + (h << 4)) & _M32
    return h ^ (h >> 10)


def champ_order(values: Iterable[int], shift: int = 0) -> list[int]:
    """Iteration order of a Scala 2.13 immutable HashSet of these distinct Ints."""
    groups: dict[int, list[int]] = {}
    for v in values:
        groups.setdefault((improve(v) >> shift) & 31, []).append(v)
    alone = [g[0] for _m, g in sorted(groups.items()) if len(g) == 1]
    deeper = [g for _m, g in sorted(groups.items()) if len(g) > 1]
    out = alone
    for g in deeper:  # improve is a bijection: two Ints part before the hash bits run out
        out += champ_order(g, shift + 5)
    return out


def stage_order(stages: list[int], spark_major: int | None) -> list[int]:
    """``stages`` (in the order their jobs started) as Spark's listener walks them."""
    if len(stages) <= 4 or spark_major is None or spark_major < 4:
        return list(stages)
    return champ_order(stages)
