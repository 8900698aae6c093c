"""The free text the reader keeps of a log, bounded per kind and charged to the load's meter as it
is kept (issue 37): a log a few MB on disk can hold gigabytes of descriptions, error messages,
settings, stage names or made-up event names, and a budget that counted only executions, plan
nodes and task values let every byte of those through.

Each kind has a cap that real logs stay under (a description is the query's SQL text, Spark cuts
its own error messages and stage names far shorter); past it a string is cut, with a marker in
the text itself and a note on the log. What is kept is charged at its size in memory (a ``str``
of ASCII is one byte a character, else up to four), plus a fixed overhead per object.

>>> kept = KeptText(None)
>>> kept.text("x" * 10, 4, "description")
'xxxx … [6 more characters not kept]'
>>> kept.settings({"a": "1", "b": "22222"}, "modifiedConfigs", value_cap=3, max_keys=1)
{'a': '1'}
>>> kept.notes()
['1 description cut to 4 characters, 1 modifiedConfigs cut to 1 settings (values to 3 characters): the reader keeps no more of them']
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Mapping, Optional

if TYPE_CHECKING:
    from aqe_core.readers.budget import LoadMeter

#: a ``str`` object's header and the slot that holds it (a list item or a dict entry)
STR_OVERHEAD = 64
#: one dict entry of settings beside its two strings
ENTRY_OVERHEAD = 104

#: JSON of one plan node whose strings :data:`~aqe_core.readers.budget.NODE_BYTES` covers (it was
#: measured with the built views, strings included: real plans take 300-700 bytes of JSON a node)
PLAN_JSON_PER_NODE = 1024
#: a SQL execution's description: the query's SQL text for spark-sql, notebooks and Thrift (real
#: TPC-DS queries are 1-8 KB of SQL)
DESCRIPTION_CHARS = 16 * 1024
#: an execution's error message (Spark's own are a line and a stack trace)
MESSAGE_CHARS = 8 * 1024
#: names: the application's name, id and user, a stage's name (a call site)
NAME_CHARS = 1024
#: one setting's value (``modifiedConfigs``, job properties); the environment's may be class paths
SETTING_CHARS = 4 * 1024
ENV_SETTING_CHARS = 16 * 1024
SETTING_KEY_CHARS = 512
#: settings kept per execution (``modifiedConfigs``, job properties) and for the application
SETTINGS_PER_EXECUTION = 1000
ENV_SETTINGS = 10_000
#: distinct event names counted; the rest are counted under :data:`OTHER_EVENTS`
EVENT_NAMES = 512
EVENT_NAME_BYTES = 200
OTHER_EVENTS = "(other event names, not kept one by one)"


def str_bytes(s: str) -> int:
    """What ``s`` takes in memory, at most (one byte a character if ASCII, else four)."""
    return STR_OVERHEAD + (len(s) if s.isascii() else 4 * len(s))


def _cut(s: str, cap: int) -> str:
    """``s`` cut to ``cap`` characters, saying how many were left out."""
    return f"{s[:cap]} … [{len(s) - cap:,} more characters not kept]"


class KeptText:
    """One load's cutting and charging of text; :meth:`notes` says what was cut."""

    def __init__(self, meter: "Optional[LoadMeter]") -> None:
        self.meter = meter
        self.cut: Counter[str] = Counter()
        self.caps: dict[str, str] = {}

    def charge(self, n: int) -> None:
        if self.meter is not None:
            self.meter.text(n)

    def text(self, value: Any, cap: int, kind: str) -> Optional[str]:
        """``value`` if a string (else None), cut to ``cap`` characters, charged."""
        if not isinstance(value, str):
            return None
        if len(value) > cap:
            self.cut[kind] += 1
            self.caps[kind] = f"cut to {cap:,} characters"
            value = _cut(value, cap)
        self.charge(str_bytes(value))
        return value

    def settings(self, mapping: Mapping[Any, Any], kind: str, *, value_cap: int = SETTING_CHARS,
                 max_keys: int = SETTINGS_PER_EXECUTION, into: Optional[dict[str, str]] = None) -> dict[str, str]:
        """``mapping`` as settings (str to str) into ``into`` (a new dict by default): at most
        ``max_keys`` in all, keys and values cut, every entry charged."""
        out: dict[str, str] = {} if into is None else into
        dropped = False
        for k, v in mapping.items():
            key = str(k)
            if key not in out and len(out) >= max_keys:
                dropped = True
                continue
            if len(key) > SETTING_KEY_CHARS:
                dropped = True
                continue
            text = v if isinstance(v, str) else str(v)
            if len(text) > value_cap:
                dropped = True
                text = _cut(text, value_cap)
            self.charge(ENTRY_OVERHEAD + str_bytes(key) + str_bytes(text))
            out[key] = text
        if dropped:
            self.cut[kind] += 1
            self.caps[kind] = f"cut to {max_keys:,} settings (values to {value_cap:,} characters)"
        return out

    def count_event(self, counts: dict[bytes, int], name: bytes) -> None:
        """One event of type ``name`` into ``counts``: at most :data:`EVENT_NAMES` names are
        counted one by one (a log can make up a new name a line), each charged when first seen."""
        if name not in counts:
            if len(counts) >= EVENT_NAMES or len(name) > EVENT_NAME_BYTES:
                name = OTHER_EVENTS.encode()
                if name not in counts:
                    self.charge(ENTRY_OVERHEAD + len(name))
            else:
                self.charge(ENTRY_OVERHEAD + len(name))
        counts[name] = counts.get(name, 0) + 1

    def notes(self) -> list[str]:
        """One line for the log's notes, or none."""
        if not self.cut:
            return []
        said = ", ".join(f"{n:,} {kind} {self.caps[kind]}" for kind, n in self.cut.items())
        return [f"{said}: the reader keeps no more of them"]
