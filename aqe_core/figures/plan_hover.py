"""Text of the plan figure: metric values as people read them (Spark's metric types: size,
timing, nsTiming, average, sum), hover boxes, and the escaping that keeps untrusted names and
descriptions from being read as HTML by plotly.
"""
from __future__ import annotations

import html
import math
from typing import Any, Mapping

from aqe_core import units
from aqe_core.model.plan import PlanNode


# --------------------------------------------------------------------------------------------
# metric formatting
# --------------------------------------------------------------------------------------------
def format_bytes(n: float) -> str:
    """Plan-graph sizes line up: always one decimal ("3.0 MiB")."""
    return units.format_bytes(n, "fixed")


def format_ms(ms: float) -> str:
    return units.human_ms(ms)


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)) and math.isfinite(v):
        return v
    return None


def _fmt_value(mtype: str, v: float) -> str:
    if mtype == "size":
        return format_bytes(v)
    if mtype == "timing":
        return format_ms(v)
    if mtype == "nsTiming":
        return format_ms(v / 1e6)
    if mtype == "average":
        return f"{v / 10:,.1f}"
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.3f}"


def format_metric(m: Mapping[str, Any]) -> str | None:
    """A metric's value as text (``1.5 MiB (min 1.0 KiB, med 2.0 KiB, max 1.0 MiB)``), or None
    when it carries no value. Accepts numeric ``total``/``min``/``med``/``max``/``value`` or a
    preformatted string ``value``."""
    mtype = str(m.get("type") or "sum")
    total = _num(m.get("total"))
    mn, med, mx = _num(m.get("min")), _num(m.get("med")), _num(m.get("max"))
    value = m.get("value")
    if total is None and _num(value) is not None:
        total = _num(value)
    if total is None and mtype == "average" and med is not None:
        total = med
    if total is not None:
        text = _fmt_value(mtype, total)
        count = m.get("count")
        multi = (count is None or count > 1) and mtype != "sum"
        if multi and mn is not None and med is not None and mx is not None and not (mn == mx == total):
            text += f" (min {_fmt_value(mtype, mn)}, med {_fmt_value(mtype, med)}, max {_fmt_value(mtype, mx)})"
        return text
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())
    return None


# --------------------------------------------------------------------------------------------
# text helpers
# --------------------------------------------------------------------------------------------
def _esc(s: Any) -> str:
    return html.escape(str(s), quote=True)


def _wrap(s: str, width: int = 90, max_lines: int = 6) -> list[str]:
    """Split raw text into lines (before escaping, so no entity is cut)."""
    s = " ".join(str(s).split())
    lines: list[str] = []
    while s and len(lines) < max_lines:
        if len(s) <= width:
            lines.append(s)
            s = ""
            break
        cut = s.rfind(" ", 0, width)
        if cut < width // 2:
            cut = width
        lines.append(s[:cut])
        s = s[cut:].lstrip()
    if s:
        lines[-1] = lines[-1][: max(0, width - 1)] + "…"
    return lines


def _esc_lines(s: str, width: int = 90, max_lines: int = 6) -> str:
    return "<br>".join(_esc(x) for x in _wrap(s, width, max_lines))


# --------------------------------------------------------------------------------------------
# hover
# --------------------------------------------------------------------------------------------
#: plotly draws a hover box beside the point and clips it at the chart's edges: short lines and
#: a bounded number of them keep it whole (the details panel has everything)
HOVER_WIDTH = 56
HOVER_MAX_LINES = 18
_MAX_HOVER_METRICS = 8


def _hover(path: str, node: PlanNode, stage: int | None, changes: list[tuple[str, str, str]],
           link_note: str | None) -> str:
    """The hover box of one node: name, description, AQE's changes first of all it could say,
    then metrics while lines are left; at most :data:`HOVER_MAX_LINES` of
    :data:`HOVER_WIDTH` characters."""
    w = HOVER_WIDTH
    head = [f"<b>{_esc(_wrap(node.name or '?', w - 8, 1)[0])}</b>" + (f"  #{node.id}" if node.id is not None else "")]
    desc = node.description or ""
    if desc and desc != node.name:
        head += [_esc(x) for x in _wrap(desc, w, 3)]
    if stage is not None:
        head.append(f"<i>codegen stage {stage}</i>")
    tail: list[str] = []
    for _kind, label, expl in changes:
        tail.append(f"<b>AQE: {_esc(_wrap(label, w - 5, 1)[0])}</b>")
        if expl:
            tail += [_esc(x) for x in _wrap(expl, w, 4)]
    if link_note:
        tail += [_esc(x) for x in _wrap(link_note, w, 2)]
    room = max(0, HOVER_MAX_LINES - len(head) - len(tail) - 1)
    metrics: list[str] = []
    values = [(m, v) for m in node.metrics if (v := format_metric(m)) is not None]
    shown = 0
    for m, v in values[:_MAX_HOVER_METRICS]:
        text = _wrap(f"{m.get('name', '?')}: {v}", w, 2)
        if len(metrics) + len(text) > room:
            break
        metrics += [_esc(x) for x in text]
        shown += 1
    if shown < len(values):
        metrics.append(f"… {len(values) - shown} more metrics")
    lines = head + metrics + tail
    if len(lines) > HOVER_MAX_LINES:
        lines = lines[: HOVER_MAX_LINES - 1] + [f"… {len(lines) - HOVER_MAX_LINES + 1} more lines"]
    return "<br>".join(lines)


def stage_hover(title: str, changes: list[tuple[str, str, str]], lines: list[str], link_note: str | None) -> str:
    """The hover box of a collapsed query stage: its name, AQE's changes, then its operators
    while lines are left; bounded like :func:`_hover`."""
    w = HOVER_WIDTH
    head = [f"<b>{_esc(_wrap(title, w - 12, 1)[0])}</b>"]
    seen: set[str] = set()
    for _kind, label, _expl in changes:
        if label not in seen:
            seen.add(label)
            head.append(f"<b>AQE: {_esc(_wrap(label, w - 5, 1)[0])}</b>")
    tail = [_esc(x) for x in _wrap(link_note, w, 2)] if link_note else []
    room = max(0, HOVER_MAX_LINES - len(head) - len(tail) - 1)
    body = [_esc(_wrap(line, w, 1)[0]) for line in lines[:room]]
    if len(lines) > room:
        body.append(f"… {len(lines) - room} more operators in the stage")
    return "<br>".join(head + body + tail)
