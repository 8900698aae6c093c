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
    Rules give reasons through their declared codes (:mod:`aqe_core.model.vocabulary`), which
    render ``message``: nobody matches on it.
    """

    code: str
    message: str
    numbers: dict[str, Any] = field(default_factory=dict)
    config_keys: tuple[str, ...] = ()
    subject: dict[str, Any] = field(default_factory=dict)
    #: what the reason is about that its JSON does not carry (e.g. the join side of a reason
    #: without a ``side`` subject), for the trace to switch on: not compared, not written
    about: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "numbers": dict(self.numbers),
            "config_keys": list(self.config_keys),
            "subject": dict(self.subject),
        }
