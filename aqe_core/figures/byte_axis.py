"""Axes people can read: sizes in bytes (B / KiB / MiB / GiB, also on a log axis) and counts on
whole numbers only.

Plotly's own log axis labels its minor ticks "2 3 ... 9" and its linear axis writes "50k"; a
partition size should read "64 MiB" and a count of partitions is never 2.5. So the size axis gets
explicit ticks (``tickmode="array"``) labelled with :func:`aqe_core.units.format_bytes`, and the
count axis a whole-number step.

>>> byte_ticks(0, 3 * 1024**2, log=False)[1]
['0 B', '512 KiB', '1 MiB', '1.5 MiB', '2 MiB', '2.5 MiB', '3 MiB']
>>> byte_ticks(1000, 5 * 1024**2, log=True)[1]
['1 KiB', '4 KiB', '16 KiB', '64 KiB', '256 KiB', '1 MiB', '4 MiB']
>>> count_step(3), count_step(7), count_step(40), count_step(900)
(1, 1, 5, 100)
"""
from __future__ import annotations

import math
from typing import Any

from aqe_core.units import format_bytes

__all__ = ["byte_ticks", "count_axis", "count_labels", "count_step", "size_axis"]

#: about how many labelled ticks an axis gets
TICKS = 7
_STEPS = (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 40, 50, 64, 100, 128, 200, 250, 256, 500, 512)


def _linear_step(span: float, ticks: int) -> float:
    """A step in bytes that lands on round numbers of one binary unit (512 KiB, 1 MiB, 1.5 MiB...)."""
    raw = max(span / max(ticks - 1, 1), 1.0)
    unit = 1 << (10 * max(0, min(4, int(math.log(raw, 1024)))))
    for frac in (0.1, 0.25, 0.5):  # steps below one unit: 0.5 MiB (= 512 KiB), 0.25 MiB...
        if unit > 1 and unit * frac >= raw:
            return unit * frac
    for m in _STEPS:
        if unit * m >= raw:
            return float(unit * m)
    return float(unit * 1024)


def byte_ticks(lo: float, hi: float, *, log: bool, ticks: int = TICKS) -> tuple[list[float], list[str]]:
    """Tick positions (bytes) and their labels between ``lo`` and ``hi``. A log axis ticks at
    powers of two spaced to give about ``ticks`` labels (1 KiB, 4 KiB, 16 KiB...)."""
    if log:
        lo, hi = max(lo, 1.0), max(hi, 2.0)
        a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
        every = max(1, math.ceil((b - a) / max(ticks - 1, 1)))
        if every > 2 and every % 2:
            every -= 1  # even powers of two: 1 KiB, 4 KiB, 16 KiB (a unit every 10)
        start = a - (a % every)
        vals = [float(2 ** e) for e in range(start, b + every, every) if lo <= 2 ** e <= hi]
        if len(vals) < 3:  # a narrow range: round steps of one unit, which a log axis places as well
            vals = [v for v in byte_ticks(lo, hi, log=False, ticks=ticks)[0] if v > 0]
        return vals, [format_bytes(v) for v in vals]
    lo, hi = max(lo, 0.0), max(hi, lo + 1.0)
    step = _linear_step(hi - lo, ticks)
    first = math.ceil(lo / step) * step
    vals = [first + k * step for k in range(int((hi - first) // step) + 1)]
    return vals, [format_bytes(v) for v in vals]


def size_axis(lo: float, hi: float, *, log: bool, title: str) -> dict[str, Any]:
    """A plotly axis for sizes in bytes over ``[lo, hi]`` (both in bytes, also on a log axis)."""
    vals, text = byte_ticks(lo, hi, log=log)
    rng = [math.log10(max(lo, 1.0)), math.log10(max(hi, 2.0))] if log else [lo, hi]
    return dict(title=title, type="log" if log else "linear", range=rng, tickmode="array", tickvals=vals,
                ticktext=text, minor=dict(showgrid=False, ticks=""), zeroline=False)


def count_step(most: int) -> int:
    """A whole-number tick step for counts up to ``most`` (1, 2, 5, 10, 20, 50...)."""
    raw = max(most, 1) / 9
    return min(m * 10 ** e for m in (1, 2, 5) for e in range(13) if m * 10 ** e >= raw)


def _count_top(most: int) -> float:
    return max(most, 1) * 1.12 + 0.2


def count_axis(most: int, *, title: str = "partitions") -> dict[str, Any]:
    """A count axis from 0 with whole-number ticks only (a partition is never split in a tick)."""
    return dict(title=title, range=[0, _count_top(most)], tick0=0, dtick=count_step(most), tickformat="d",
                rangemode="tozero")


def count_labels(most: int) -> list[str]:
    """The tick labels :func:`count_axis` draws (what the plot's left margin has to hold).

    >>> count_labels(9)[-1], count_labels(900)[-1]
    ('10', '1000')
    """
    step = count_step(most)
    return [str(k * step) for k in range(int(_count_top(most) // step) + 1)]
