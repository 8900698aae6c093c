"""Numbers for people: one byte formatter with the three styles the product prints, and factors.

The styles differ on purpose and each is asserted somewhere; they are not to be unified:

>>> format_bytes(3 * 1024**2), format_bytes(1536 * 1024), format_bytes(None)
('3 MiB', '1.5 MiB', 'unknown')
>>> format_bytes(3 * 1024**2, style="fixed"), format_bytes(640, style="fixed")
('3.0 MiB', '640 B')
>>> format_bytes(64 * 1024**2, style="limit"), format_bytes(2 * 1024**3, style="limit"), format_bytes(10, style="limit")
('64 MiB', '2 GiB', '10 bytes')

Spark's own ``Utils.bytesToString`` (event-log metric text) is mirrored separately in
:mod:`aqe_core.readers` because it must match Spark's rounding, not ours.
"""
from __future__ import annotations

from typing import Literal

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40

Style = Literal["short", "fixed", "limit"]
_UNITS = ((TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB"))


def format_bytes(n: "int | float | None", style: Style = "short") -> str:
    """``n`` bytes in binary units.

    ``short`` (sentences, tables): one decimal, trailing zeros dropped ("1.5 GiB", "812 MiB").
    ``fixed`` (plan graphs, where columns line up): always one decimal ("3.0 MiB").
    ``limit`` (limit messages): whole GiB when exact, else whole MiB, else bytes.
    """
    if n is None:
        return "unknown"
    if style == "limit":
        n = int(n)
        if n >= GiB and n % GiB == 0:
            return f"{n // GiB} GiB"
        if n >= MiB:
            return f"{n / MiB:.0f} MiB"
        return f"{n} bytes"
    value = float(n)
    for size, name in _UNITS:
        if abs(value) >= size:
            text = f"{value / size:.1f}"
            if style == "short":
                text = text.rstrip("0").rstrip(".")
            return f"{text} {name}"
    return f"{int(value)} B"


def mib(n: "int | float | None") -> str:
    """Bytes as a short human string (``format_bytes`` short style): 812 MiB, 1.5 GiB, 640 B."""
    return format_bytes(n, "short")


def num(x: "int | float") -> str:
    """A factor as people write it: 5.0 -> "5", 2.5 -> "2.5"."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def human_ms(ms: "int | float") -> str:
    """A duration as the plans and triage print it.

    >>> human_ms(210), human_ms(4100), human_ms(90_000), human_ms(7_200_000)
    ('210 ms', '4.1 s', '1.5 min', '2.00 h')
    """
    ms = float(ms)
    if abs(ms) < 1000:
        return f"{ms:.0f} ms"
    if abs(ms) < 60_000:
        return f"{ms / 1000:.1f} s"
    if abs(ms) < 3_600_000:
        return f"{ms / 60_000:.1f} min"
    return f"{ms / 3_600_000:.2f} h"
