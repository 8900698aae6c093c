"""SQL metric aggregation and formatting, the way Spark's SQL UI / History Server does it.

Mirrors (without copying) ``SQLAppStatusListener.aggregateMetrics`` and
``MetricUtils.stringValue`` (4.x; ``SQLMetrics.stringValue`` in 3.x): per metric id, the
values are the per-task-index slots of every stage of the execution (zero-filled) followed by
every driver-side value; ``sum`` metrics are summed; ``size``/``timing``/``nsTiming`` drop
negative values and report total, min, median (``sorted[n // 2]``) and max; ``average`` drops
values <= 0 and divides by 10. See docs/eventlog-json.md.
"""
from __future__ import annotations

import struct
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Iterable, Sequence

SUM, SIZE, TIMING, NS_TIMING, AVERAGE = "sum", "size", "timing", "nsTiming", "average"
_SUFFIX = "(min, med, max (stageId: taskId))"

_UNITS = [(1 << 60, "EiB"), (1 << 50, "PiB"), (1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]


def bytes_to_string(size: int) -> str:
    """Spark's ``Utils.bytesToString``: binary units from twice the unit, one decimal (HALF_UP)."""
    for unit, name in _UNITS:
        if size >= 2 * unit:
            value = Decimal(size) / Decimal(unit)
            return f"{value.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)} {name}"
    return f"{Decimal(size).quantize(Decimal('0.1'))} B"


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def _java_fixed(x: float, digits: int) -> str:
    """Java's ``%.Nf`` of a double: shortest decimal digits of the double, rounded HALF_UP."""
    q = Decimal(1).scaleb(-digits)
    return str(Decimal(repr(x)).quantize(q, rounding=ROUND_HALF_UP))


def ms_duration_to_string(ms: int) -> str:
    """Spark's ``Utils.msDurationToString`` (float arithmetic as in Scala)."""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{_java_fixed(_f32(_f32(float(ms)) / 1000.0), 1)} s"
    if ms < 3_600_000:
        return f"{_java_fixed(_f32(_f32(float(ms)) / 60000.0), 1)} m"
    return f"{_java_fixed(_f32(_f32(float(ms)) / 3600000.0), 2)} h"


def _ns_to_ms(ns: int) -> int:
    return int(ns / 1_000_000) if ns < 0 else ns // 1_000_000


def _avg_number(value: int) -> str:
    """``NumberFormat.getNumberInstance(Locale.US).format(value / 10.0)``."""
    d = Decimal(repr(value / 10.0)).quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN)
    sign = "-" if d < 0 else ""
    d = abs(d)
    whole = int(d)
    frac = str(d - whole)[2:].rstrip("0") if d != whole else ""
    return f"{sign}{whole:,}" + (f".{frac}" if frac else "")


def formatter(metric_type: str):
    if metric_type == SIZE:
        return bytes_to_string
    if metric_type == TIMING:
        return ms_duration_to_string
    if metric_type == NS_TIMING:
        return lambda v: ms_duration_to_string(_ns_to_ms(v))
    return lambda v: f"[unknown] {v:,}"


def summarize(
    metric_type: str,
    values: Sequence[int],
    max_task: tuple[int, int, int] | None,
) -> dict:
    """Aggregate one metric: returns ``{"value": <UI string>, "total", "min", "med", "max",
    "count", "max_task": {"stage", "attempt", "task"} | "driver"}`` (numbers in the metric's
    raw unit: bytes, ms, ns, or tenths for ``average``).

    ``max_task`` is ``(stage_id, attempt, task_id)`` of the task holding the max, or None when
    the max came from the driver (``(driver)``).
    """
    tag = "(driver)" if max_task is None else f"(stage {max_task[0]}.{max_task[1]}: task {max_task[2]})"
    where = "driver" if max_task is None else {"stage": max_task[0], "attempt": max_task[1], "task": max_task[2]}
    if metric_type == SUM:
        total = sum(values)
        return {"value": f"{total:,}", "total": total, "count": len(values)}
    if metric_type.startswith("v2Custom_"):
        # The History Server cannot load the DSv2 custom metric class: it shows "N/A".
        return {"value": "N/A", "total": sum(values), "count": len(values)}
    if metric_type == AVERAGE:
        valid = sorted(v for v in values if v > 0)
        if len(valid) <= 1:
            v = valid[0] if valid else 0
            return {"value": _avg_number(v), "min": v, "med": v, "max": v, "count": len(valid)}
        mn, med, mx = valid[0], valid[len(valid) // 2], valid[-1]
        return {
            "value": f"{_SUFFIX}:\n({_avg_number(mn)}, {_avg_number(med)}, {_avg_number(mx)} {tag})",
            "min": mn, "med": med, "max": mx, "count": len(valid), "max_task": where,
        }
    fmt = formatter(metric_type)
    valid = sorted(v for v in values if v >= 0)
    if len(valid) <= 1:
        v = valid[0] if valid else 0
        return {"value": fmt(v), "total": v, "min": v, "med": v, "max": v, "count": len(valid)}
    total = sum(valid)
    mn, med, mx = valid[0], valid[len(valid) // 2], valid[-1]
    return {
        "value": f"total {_SUFFIX}\n{fmt(total)} ({fmt(mn)}, {fmt(med)}, {fmt(mx)} {tag})",
        "total": total, "min": mn, "med": med, "max": mx, "count": len(valid), "max_task": where,
    }


def concat(arrays: Iterable[Sequence[int]], extra: Iterable[int]) -> list[int]:
    out: list[int] = []
    for a in arrays:
        out.extend(a)
    out.extend(extra)
    return out
