"""Structured reasons: every rule decision carries the numbers it used.

The UI draws lines and the report writes sentences from the same :class:`Reason` objects, so
a chart and its caption can never disagree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reason:
    """One decision (or non-decision) with the values behind it.

    ``code`` is a stable identifier (tests and the UI switch on it), ``message`` a sentence
    for people, ``numbers`` the values used (bytes are ints), ``config_keys`` the settings the
    numbers come from, ``subject`` what it is about (e.g. ``{"partition": 17, "side": "left"}``).
    """

    code: str
    message: str
    numbers: dict[str, Any] = field(default_factory=dict)
    config_keys: tuple[str, ...] = ()
    subject: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "numbers": dict(self.numbers),
            "config_keys": list(self.config_keys),
            "subject": dict(self.subject),
        }


def mib(n: int | float | None) -> str:
    """Bytes as a short human string in binary units: 812 MiB, 1.5 GiB, 640 B."""
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            if unit == "B":
                return f"{int(value)} B"
            text = f"{value:.1f}".rstrip("0").rstrip(".")
            return f"{text} {unit}"
        value /= 1024
    return f"{n} B"


def num(x: "int | float") -> str:
    """A factor as people write it: 5.0 -> "5", 2.5 -> "2.5"."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)
