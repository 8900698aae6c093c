"""Event-log lines: decoded chunks split into bounded lines; stage events' fields read with a few
anchored regular expressions, and a task end's fields from its parsed event (the lines that
:mod:`aqe_core.readers.eventlog.task_end` cannot read into its structs).
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Iterator

_I64_MIN, _I64_MAX = -(2 ** 63), 2 ** 63 - 1

#: the package of Spark's SQL listener events (``org.apache.spark.sql.execution.ui``), not a conf key
SQL_EVENT_PREFIX = "org.apache.spark.sql.execution.ui."
#: the AQE Lens listener's event (listener/src/main/java/io/aqelens/listener/AqeLensQueryEvent.java)
LISTENER_EVENT = "io.aqelens.listener.AqeLensQueryEvent"

# --------------------------------------------------------------------------------------------
# line splitting


class _Lines:
    """Split decoded chunks into lines with a bounded line length."""

    def __init__(self, max_line: int):
        self.max_line = max_line
        self.oversize: list[int] = []  # lengths of skipped lines
        self.partial_tail = 0  # bytes of an unterminated last line that is not a whole event (dropped)

    def split(self, chunks: Iterable[bytes]) -> Iterator[list[bytes]]:
        pending: list[bytes] = []
        plen = 0
        skipping = False
        max_line = self.max_line
        for chunk in chunks:
            start = 0
            if skipping:
                i = chunk.find(b"\n")
                if i < 0:
                    plen += len(chunk)
                    continue
                self.oversize.append(plen + i)
                skipping = False
                plen = 0
                start = i + 1
            elif pending:
                i = chunk.find(b"\n")
                if i < 0:
                    pending.append(chunk)
                    plen += len(chunk)
                    if plen > max_line:
                        pending = []
                        skipping = True
                    continue
                pending.append(chunk[:i])
                line = b"".join(pending)
                pending = []
                plen = 0
                start = i + 1
                if len(line) > max_line:
                    self.oversize.append(len(line))
                else:
                    yield [line]
            j = chunk.rfind(b"\n")
            if j < start:
                tail = chunk[start:] if start else chunk
            else:
                yield _cut(chunk, start, j, max_line, self.oversize)
                tail = chunk[j + 1 :]
            if tail:
                pending = [tail]
                plen = len(tail)
                if plen > max_line:
                    pending = []
                    skipping = True
        if skipping:
            self.oversize.append(plen)
        elif pending:
            rest = b"".join(pending)
            if _complete_event(rest):
                yield [rest]  # Spark's last event, written without its newline: a complete JSON object
            elif rest.strip():
                self.partial_tail = len(rest)


def _cut(chunk: bytes, start: int, end: int, max_line: int, oversize: list[int]) -> list[bytes]:
    """``chunk[start:end].split(b"\\n")`` without the lines longer than ``max_line`` (their
    lengths go to ``oversize``). Found with ``bytes.find`` (memchr): ``bytes.split`` looks at
    every byte in a loop of its own, a tenth of a full load's time on a log of long lines.

    >>> skipped = []; _cut(b"ab\\n\\nlong line\\ncd\\nrest", 0, 16, 4, skipped), skipped
    ([b'ab', b'', b'cd'], [9])
    """
    # lines of under 64 bytes on average (a MiB of newlines is a million lines): bytes.split's own
    # loop, ~4 times faster than the one below (0.5 s a MiB); this one when a line is too long.
    # Told from the chunk's first 4 KiB: counting a whole MiB's newlines cost as much as splitting it
    if chunk.count(b"\n", start, min(end, start + 4096)) > min(end - start, 4096) >> 6:
        out = chunk[start:end].split(b"\n")
        if max(map(len, out)) <= max_line:
            return out
    out = []
    append = out.append
    find = chunk.find
    i = start
    while True:
        k = find(b"\n", i, end)
        if k < 0:
            k = end
        if k - i <= max_line:
            append(chunk[i:k])
        else:
            oversize.append(k - i)
        if k == end:
            return out
        i = k + 1


def _complete_event(line: bytes) -> bool:
    """A JSON object cannot be cut short and still parse, so an unterminated last line that
    parses is a whole event (a log copied or closed without the final newline).

    >>> _complete_event(b'{"Event":"SparkListenerApplicationEnd","Timestamp":1}'), _complete_event(b'{"Event":"Spark')
    (True, False)
    """
    stripped = line.strip()
    if not stripped.startswith(b"{") or not stripped.endswith(b"}"):
        return False
    try:
        return isinstance(json.loads(stripped), dict)
    except ValueError:
        return False


# --------------------------------------------------------------------------------------------
# fast extraction of the fields we need from task/stage events

_STAGE_INFO = re.compile(
    rb'"Stage Info":\{"Stage ID":(-?\d+),"Stage Attempt ID":(-?\d+),"Stage Name":"((?:[^"\\]|\\.)*)",'
    rb'"Number of Tasks":(-?\d+)'
)
_SUBMISSION = re.compile(rb'"Submission Time":(-?\d+)')
_COMPLETION = re.compile(rb'"Completion Time":(-?\d+)')


class _BadNumber(ValueError):
    """A log field that should hold a 64-bit integer does not; the message names only the kind
    of value (never the value), so it may be shown as it is."""


def _as_int(v: Any) -> int:
    if isinstance(v, bool):
        raise _BadNumber("boolean where a number was expected")
    if isinstance(v, str):
        if len(v) > 20:
            raise _BadNumber("a number with too many digits")
        try:
            v = int(v)
        except ValueError:
            raise _BadNumber("text where a number was expected") from None
    if not isinstance(v, int):
        raise _BadNumber(f"{type(v).__name__} where a number was expected")
    if not _I64_MIN <= v <= _I64_MAX:
        raise _BadNumber("a number outside the 64-bit range")
    return v


def _duration(launch: int, finish: int) -> int:
    return finish - launch if launch > 0 and finish >= launch else -1


def parse_task_end_json(d: dict):
    """(stage, attempt, task_id, index, successful, [acc0, value0, acc1, value1, ...],
    (remote, local, records) | None, duration_ms, partition) from a parsed event (partition: the
    task's "Partition ID", 3.3+, else -1; a retried stage's Index is not its partition). Only string-valued (SQL
    metric) updates are returned; the duration is Finish Time - Launch Time (-1 when either is
    missing), as the stage page shows. :func:`~aqe_core.readers.eventlog.task_end.parse_task_end_fast`
    gives the same from the line's bytes."""
    info = d["Task Info"]
    accs: list[int] = []
    for a in info.get("Accumulables") or ():
        if not isinstance(a, dict) or not isinstance(a.get("Update"), str) or "ID" not in a:
            continue
        try:
            acc, value = _as_int(a["ID"]), int(a["Update"])
        except (ValueError, TypeError):
            continue
        accs.append(acc)
        accs.append(value)
    read = None
    tm = d.get("Task Metrics")
    if isinstance(tm, dict) and isinstance(tm.get("Shuffle Read Metrics"), dict):
        s = tm["Shuffle Read Metrics"]
        read = (_as_int(s.get("Remote Bytes Read", 0)), _as_int(s.get("Local Bytes Read", 0)),
                _as_int(s.get("Total Records Read", 0)))
    finish = _as_int(info.get("Finish Time", 0))
    successful = finish != 0 and not info.get("Failed", False) and not info.get("Killed", False)
    launch = info.get("Launch Time")
    ms = _duration(launch, finish) if isinstance(launch, int) and not isinstance(launch, bool) else -1
    part = info.get("Partition ID", -1)
    return (_as_int(d["Stage ID"]), _as_int(d.get("Stage Attempt ID", 0)), _as_int(info["Task ID"]),
            _as_int(info["Index"]), successful, accs, read, ms, _as_int(part))
