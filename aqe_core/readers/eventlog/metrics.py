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
from collections.abc import Mapping
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
    zeros: int = 0,
) -> "Summary":
    """Aggregate one metric: a read-only mapping ``{"value": <UI string>, "total", "min", "med",
    "max", "count", "max_task": {"stage", "attempt", "task"} | "driver"}`` (the keys the metric
    type has; numbers in the metric's raw unit: bytes, ms, ns, or tenths for ``average``).

    ``max_task`` is ``(stage_id, attempt, task_id)`` of the task holding the max, or None when
    the max came from the driver (``(driver)``). ``zeros``: that many more values of 0 (the task
    slots of a stage no task reached), counted without being listed.

    >>> dict(summarize(SIZE, [1024, 4096, -1, 2048], (3, 0, 17)))["value"]
    'total (min, med, max (stageId: taskId))\\n7.0 KiB (1024.0 B, 2.0 KiB, 4.0 KiB (stage 3.0: task 17))'
    """
    if metric_type == SUM or metric_type.startswith("v2Custom_"):
        # (the History Server cannot load a DSv2 custom metric class: it shows "N/A")
        return Summary(metric_type, "total", sum(values), count=len(values) + max(0, zeros))
    if metric_type == AVERAGE:  # (zeros do not count in an average)
        valid = sorted(v for v in values if v > 0)
        if len(valid) <= 1:
            v = valid[0] if valid else 0
            return Summary(metric_type, "avg_one", None, v, v, v, len(valid))
        return Summary(metric_type, "avg", None, valid[0], valid[len(valid) // 2], valid[-1], len(valid), max_task)
    valid = sorted(v for v in values if v >= 0)
    zeros = max(0, zeros)
    count = len(valid) + zeros
    if count <= 1:
        v = valid[0] if valid else 0
        return Summary(metric_type, "one", v, v, v, v, count)
    mid = count // 2  # (the zeros sort first)
    return Summary(metric_type, "dist", sum(valid), 0 if zeros else valid[0], 0 if mid < zeros else valid[mid - zeros],
                   valid[-1] if valid else 0, count, max_task)


#: the keys of each kind of summary, in the order the UI's dicts had them
_KEYS = {
    "total": ("value", "total", "count"),
    "avg_one": ("value", "min", "med", "max", "count"),
    "avg": ("value", "min", "med", "max", "count", "max_task"),
    "one": ("value", "total", "min", "med", "max", "count"),
    "dist": ("value", "total", "min", "med", "max", "count", "max_task"),
}


class Summary(Mapping):
    """One metric's aggregate. A log's model holds one per metric of every execution, so it keeps
    the numbers only and formats the UI string when asked (no dict, no string per metric)."""

    __slots__ = ("type", "kind", "total", "min", "med", "max", "count", "task")

    def __init__(self, metric_type: str, kind: str, total: int | None, mn: int = 0, med: int = 0,
                 mx: int = 0, count: int = 0, task: tuple[int, int, int] | None = None) -> None:
        self.type, self.kind, self.total = metric_type, kind, total
        self.min, self.med, self.max, self.count, self.task = mn, med, mx, count, task

    def __getitem__(self, key: str):
        if key not in _KEYS[self.kind]:
            raise KeyError(key)
        if key == "value":
            return self._value()
        if key == "max_task":
            t = self.task
            return "driver" if t is None else {"stage": t[0], "attempt": t[1], "task": t[2]}
        return getattr(self, key)

    def __iter__(self):
        return iter(_KEYS[self.kind])

    def __len__(self) -> int:
        return len(_KEYS[self.kind])

    def __repr__(self) -> str:
        return repr(dict(self))

    def __reduce__(self):
        # (the default reduce of a slotted class goes through a state dict: ~10x slower, and a
        # big log's ended executions are pickled to its spill file)
        return Summary, (self.type, self.kind, self.total, self.min, self.med, self.max, self.count, self.task)

    def _value(self) -> str:
        t, kind = self.type, self.kind
        if kind == "total":
            return "N/A" if t.startswith("v2Custom_") else f"{self.total:,}"
        tag = "(driver)" if self.task is None else f"(stage {self.task[0]}.{self.task[1]}: task {self.task[2]})"
        if kind == "avg_one":
            return _avg_number(self.min)
        if kind == "avg":
            return f"{_SUFFIX}:\n({_avg_number(self.min)}, {_avg_number(self.med)}, {_avg_number(self.max)} {tag})"
        fmt = formatter(t)
        if kind == "one":
            return fmt(self.min)
        return f"total {_SUFFIX}\n{fmt(self.total)} ({fmt(self.min)}, {fmt(self.med)}, {fmt(self.max)} {tag})"


def concat(arrays: Iterable[Sequence[int]], extra: Iterable[int]) -> list[int]:
    out: list[int] = []
    for a in arrays:
        out.extend(a)
    out.extend(extra)
    return out
