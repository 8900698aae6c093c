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
        multi = mn is not None and med is not None and mx is not None and (count is None or count > 1) and mtype != "sum"
        if multi and not (mn == mx == total):
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
_MAX_HOVER_METRICS = 12


def _hover(path: str, node: PlanNode, stage: int | None, changes: list[tuple[str, str, str]],
           link_note: str | None) -> str:
    parts = [f"<b>{_esc(node.name or '?')}</b>" + (f"  #{node.id}" if node.id is not None else "")]
    desc = node.description or ""
    if desc and desc != node.name:
        parts.append(_esc_lines(desc, 90, 4))
    if stage is not None:
        parts.append(f"<i>codegen stage {stage}</i>")
    lines = []
    for m in node.metrics:
        v = format_metric(m)
        if v is None:
            continue
        lines.append(f"{_esc(m.get('name', '?'))}: {_esc(v if len(v) <= 120 else v[:119] + '…')}")
    if lines:
        extra = len(lines) - _MAX_HOVER_METRICS
        lines = lines[:_MAX_HOVER_METRICS]
        if extra > 0:
            lines.append(f"… {extra} more metrics")
        parts.append("<br>".join(lines))
    for kind, label, expl in changes:
        s = f"<b>AQE: {_esc(label)}</b>"
        if expl:
            s += "<br>" + _esc_lines(expl, 90, 6)
        parts.append(s)
    if link_note:
        parts.append(_esc(link_note))
    return "<br>".join(parts)
