"""One execution read out of a long log (issue 41): what opening one batch of a streaming job's
log reads, instead of every event of the million executions around it.

A listing reader (:meth:`~aqe_core.readers.eventlog.spilling.Spilling.hand_over_to`) given a
:class:`Focus` reads in three phases:

1. Before the execution's ``SQLExecutionStart``: only the application's own events (log and
   application start and end, environment, executors) are read; every other line is counted by
   its event name and skipped unparsed. Nothing of an execution that starts before it is kept.
2. From its start until it is handed over: every event, as the listing reader reads them. An
   execution the reader did not see start (it started in phase 1) is another's: its events are
   skipped as a late event's are, and its end is counted among the ends, so the execution is
   handed over after as many later ends as a reader of the whole log hands it over after.
3. After: the application's events again, to the end of the log (its completeness, a late
   environment, executors), the rest counted and skipped.

Its view is the one a reading of every event gives (tests/readers/test_focus.py holds them equal
on every recorded log and on a scaled one). What the reader does not see are the other
executions' own problems (a malformed event of theirs): the log's warnings say less.
"""
from __future__ import annotations

from typing import Any, Optional, Protocol

from aqe_core.readers.eventlog.jsonfast import parse_json
from aqe_core.readers.eventlog.log_lines import LISTENER_EVENT, SQL_EVENT_PREFIX

__all__ = ["Focus", "feed_focused", "APP_EVENTS", "NOT_READ_NOTE"]

_START = (SQL_EVENT_PREFIX + "SparkListenerSQLExecutionStart").encode()
_LISTENER = LISTENER_EVENT.encode()
#: the application's own events: read in every phase (they are few, and every view reads them)
APP_EVENTS = frozenset(b"SparkListener" + n for n in (
    b"LogStart", b"ApplicationStart", b"ApplicationEnd", b"EnvironmentUpdate", b"ExecutorAdded",
    b"ExecutorRemoved")) | {b"DBCEventLoggingListenerMetadata"}
#: the events a skipping phase looks at
_READ_ALWAYS = APP_EVENTS | {_START, _LISTENER}
NOT_READ_NOTE = ("only this execution's events and the application's own were read: what the log says "
                 "about other executions (their malformed events, their cut texts) is not here")

BEFORE, READING, AFTER = 1, 2, 3


class Focus:
    """The execution a listing reader reads alone, and its phase."""

    def __init__(self, execution: int) -> None:
        self.execution = execution
        self.phase = BEFORE
        self.started = False  # its SQLExecutionStart was read
        # how Spark begins such a line for this execution: executionId first after the event's
        # name (Jackson keeps the fields' order), then a comma or the object's end
        self._heads = {name: b'{"Event":"' + name + b'","executionId":' for name in (_START, _LISTENER)}
        self._id = str(execution).encode()

    def handed_over(self, eid: int) -> None:
        if eid == self.execution:
            self.phase = AFTER

    def is_its(self, line: bytes, name: bytes) -> bool:
        """Whether a SQL execution start or listener line is of this execution: told from the
        line's head where Spark wrote ``executionId`` there (no parse), else from the line parsed."""
        head = self._heads[name]
        if not line.startswith(head):
            return _execution_id(line) == self.execution
        at = len(head) + len(self._id)
        return line.startswith(self._id, len(head)) and line[at:at + 1] in (b",", b"}")


def _execution_id(line: bytes) -> Optional[int]:
    """The ``executionId`` of a SQL or listener event line, parsed (None: none, or not a JSON
    object)."""
    try:
        d = parse_json(line)
    except (ValueError, RecursionError):
        return None
    eid = d.get("executionId") if isinstance(d, dict) else None
    return eid if type(eid) is int else None


class _Reader(Protocol):
    """What :func:`feed_focused` uses of the event-log builder."""

    focus: Optional[Focus]
    counts: dict[bytes, int]
    handlers: dict[bytes, Any]
    kept: Any
    line_no: int

    def feed(self, lines: list[bytes]) -> None: ...


def feed_focused(b: _Reader, lines: list[bytes]) -> None:
    """``b.feed`` for a reader with a :class:`Focus` (``b.focus``): the lines it reads go to the
    builder's own feed, the rest are counted as a whole reading counts them."""
    focus = b.focus
    assert focus is not None
    counts, handlers, kept = b.counts, b.handlers, b.kept
    i, n = 0, len(lines)
    while i < n:
        if focus.phase == READING:
            b.feed(lines[i:i + 1])  # (one at a time: the phase ends at a hand-over)
            i += 1
            continue
        line = lines[i]
        i += 1
        if not line.startswith(b'{"Event":"'):
            b.feed([line])  # (an odd or bad line: as a whole reading takes it)
            continue
        name = line[10:line.find(b'"', 10)]
        if name in _READ_ALWAYS:
            if name in APP_EVENTS or name == _LISTENER and focus.is_its(line, name):
                b.feed([line])
                continue
            if name == _START and focus.phase == BEFORE and focus.is_its(line, name):
                focus.phase, focus.started = READING, True
                b.feed([line])
                continue
        b.line_no += 1
        if name in handlers:
            counts[name] = counts.get(name, 0) + 1
        else:
            kept.count_event(counts, name)
