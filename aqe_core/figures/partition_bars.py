"""What one bar per partition says: its size, its reducers and how the size is known.

Plain data for the partition figures (:mod:`aqe_core.figures.histograms`): a bar before AQE is a
reducer (the hover says which read partition took it: coalesced with its neighbours, or split
into parts of these sizes); a bar after AQE is a read partition (the reducers it covers, or which
part of a split reducer it is). Text here is escaped for plotly.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Optional

from aqe_core.units import mib
from aqe_core.views.query import ShuffleView

__all__ = ["Bars", "bars_of", "evidence_phrase"]

GREY, EMPTY, HOT = "#868e96", "#dee2e6", "#e03131"
PREDICTED = "#4dabf7"
SPLIT_COLORS = ("#e03131", "#f76707", "#ae3ec9", "#1c7ed6", "#0ca678")


@dataclass
class Bars:
    """One bar per partition, in the partitions' own order."""

    sizes: list[int]
    ids: list[str]       # the x label of each bar (a reducer id, or a read position)
    hover: list[str]     # escaped
    colors: list[str]
    axis_title: str
    legend: str          # the bar trace's name: what the bars are and how they are known


def evidence_phrase(view: ShuffleView, which: str) -> str:
    """How the sizes drawn are known: our rules' prediction, exact (a capture or the listener),
    or Spark's own metric (a plain event log's post-AQE sizes)."""
    if which == "after" and view.predicted:
        return "predicted by our rules" + (f", {view.predicted_note}" if view.predicted_note else "")
    if view.exact:
        return "exact, captured"
    return "Spark's metric, event log"


def _parts_of(view: ShuffleView) -> dict[int, list[int]]:
    """Split reducer -> its parts' sizes, in read order (exact sources and replayed what-ifs)."""
    out: dict[int, list[int]] = {}
    sizes = view.sizes_after or []
    if view.after_reducers is None or view.after_split is None or len(view.after_reducers) != len(sizes):
        return out
    for (a, _b), sp, size in zip(view.after_reducers, view.after_split, sizes):
        if sp:
            out.setdefault(a, []).append(size)
    return out


def _sizes_list(parts: list[int], most: int = 8) -> str:
    shown = ", ".join(mib(p) for p in parts[:most])
    return shown + (f", ... ({len(parts)} parts)" if len(parts) > most else "")


def _before(view: ShuffleView, sizes: list[int]) -> Bars:
    """Reducers (pre-AQE bytesByPartitionId), each named with what AQE did to it."""
    skewed = {r.partition for r in view.skew_rows}
    parts = _parts_of(view)
    into: dict[int, tuple[int, int, int, int]] = {}  # reducer -> (read position, start, end, size)
    if view.after_reducers and view.sizes_after and len(view.after_reducers) == len(view.sizes_after):
        for pos, ((a, b), sp) in enumerate(zip(view.after_reducers, view.after_split or [False] * len(view.sizes_after))):
            if not sp:
                for r in range(a, b):
                    into.setdefault(r, (pos, a, b, view.sizes_after[pos]))
    how = evidence_phrase(view, "before")
    hover, colors = [], []
    for i, s in enumerate(sizes):
        text = f"reducer {i}: {mib(s)}" + (" (empty)" if s == 0 else "") + f" ({how})"
        if i in parts:
            text += f"<br>split into {len(parts[i])} parts: {_sizes_list(parts[i])}"
        elif i in into:
            pos, a, b, total = into[i]
            text += (f"<br>coalesced: reducers {a}-{b - 1} read as one partition (read position {pos}, {mib(total)})"
                     if b - a > 1 else f"<br>read alone (read position {pos})")
        if i in skewed:
            text += "<br>skewed by the rules' threshold"
        hover.append(text)
        colors.append(HOT if i in skewed or i in parts else (EMPTY if s == 0 else GREY))
    return Bars(list(sizes), [str(i) for i in range(len(sizes))], hover, colors, "reducer id",
                html.escape(f"reducers before AQE ({how})"))


def _after(view: ShuffleView, sizes: list[int]) -> Bars:
    """Read partitions (after AQE, as run or predicted): the reducers each reads where known."""
    how = evidence_phrase(view, "after")
    reducers, split = view.after_reducers, view.after_split
    # each read position's (reducers it covers, whether it is a part of a split reducer), where known
    pairs = (list(zip(reducers, split)) if reducers is not None and split is not None and len(reducers) == len(sizes)
             else None)
    parts = _parts_of(view) if pairs is not None else {}
    split_ids = sorted(parts)
    colour = {rid: SPLIT_COLORS[k % len(SPLIT_COLORS)] for k, rid in enumerate(split_ids)}
    base = PREDICTED if view.predicted else GREY
    hover, colors = [], []
    seen: dict[int, int] = {}
    for i, s in enumerate(sizes):
        text = f"read position {i}: {mib(s)}" + (" (empty)" if s == 0 else "") + f" ({how})"
        color = EMPTY if s == 0 else base
        if pairs is not None:
            (a, b), sp = pairs[i]
            if sp:
                k = seen[a] = seen.get(a, 0) + 1
                text += f"<br>part of skewed reducer {a} (part {k} of {len(parts[a])}); its parts: {_sizes_list(parts[a])}"
                color = colour[a]
            elif b - a > 1:
                text += f"<br>reducers {a}-{b - 1} coalesced"
            else:
                repeats = sum(1 for x, y in pairs if x == (a, b) and not y)
                text += f"<br>reducer {a}" + (f", read {repeats} times (once per part of the other side's split)"
                                              if repeats > 1 else "")
        elif not view.predicted:
            text += "<br>which reducers it reads is not in a plain event log"
        hover.append(text)
        colors.append(color)
    title = "position in the adaptive read (not a reducer id)"
    return Bars(list(sizes), [str(i) for i in range(len(sizes))], hover, colors, title,
                html.escape(f"partitions after AQE ({how})"))


def bars_of(view: ShuffleView, which: str) -> Optional[Bars]:
    """The bars of ``which`` ("before": reducers, "after": the adaptive read; "auto": before when
    known), or None when the view has no such sizes."""
    if which == "auto":
        which = "before" if view.sizes_before is not None else "after"
    sizes = view.sizes_before if which == "before" else view.sizes_after
    if sizes is None:
        return None
    return _before(view, list(sizes)) if which == "before" else _after(view, list(sizes))
