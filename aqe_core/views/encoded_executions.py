"""Each execution's ``inspect --json`` document, encoded as the reader finalises it (issue 41).

``inspect --json`` on a big log read every spilled execution back from the reader's spill file
twice (once for the log's warnings, once for its document) and built its plans again, though
the reader had just built them to finalise it. Given to ``load(..., on_final=)``, an
:class:`EncodedExecutions` encodes each execution's :func:`~.eventlog_summary.execution_json` at
that moment and keeps the bytes in an anonymous temporary file; the writer copies them out in id
order. The reader's last call for an id is of the model its log holds (one brought back by a late
event is finalised, and told, again), so what is copied is what encoding the log's model gives.
"""
from __future__ import annotations

import tempfile
from typing import Any, Callable, Optional

from aqe_core.model.eventlog import EventLog, SQLExecution
from aqe_core.views.eventlog_summary import execution_json

__all__ = ["EncodedExecutions"]


class EncodedExecutions:
    """``load(..., on_final=self)``: execution id -> its document's JSON text, on disk.
    ``encode``: the writer's encoder for one execution (orjson's bytes); ``plans``: as the writer's.
    No temporary file (an unwritable temp dir), or a failed write (a full disk): nothing is kept,
    and the writer encodes every execution itself."""

    def __init__(self, encode: Callable[[Any], bytes], *, plans: bool = True) -> None:
        self._encode = encode
        self._plans = plans
        self._file: Optional[Any]
        try:
            self._file = tempfile.TemporaryFile()
        except OSError:
            self._file = None
        self._end = 0
        #: id -> (offset << 32 | length): one int an execution
        self._at: dict[int, int] = {}
        self._warnings: dict[int, tuple[str, ...]] = {}
        self._reading = False

    def __call__(self, log: EventLog, ex: SQLExecution) -> None:
        if self._file is None:
            return
        data = self._encode(execution_json(ex, plans=self._plans))
        try:
            if self._reading:
                self._file.seek(0, 2)
                self._reading = False
            self._file.write(data)
        except OSError:
            self.close()
            return
        self._at[ex.id] = self._end << 32 | len(data)
        self._end += len(data)
        if ex.warnings:
            self._warnings[ex.id] = tuple(ex.warnings)
        else:
            self._warnings.pop(ex.id, None)

    def __contains__(self, eid: object) -> bool:
        return eid in self._at

    def warnings(self, eid: int) -> tuple[str, ...]:
        """The warnings of execution ``eid`` (one this holds)."""
        return self._warnings.get(eid, ())

    def text(self, eid: int) -> Optional[str]:
        """Execution ``eid``'s document as JSON text, or None (not held: encode it)."""
        at = self._at.get(eid)
        if at is None or self._file is None:
            return None
        try:
            if not self._reading:
                self._file.flush()
                self._reading = True
            self._file.seek(at >> 32)
            return self._file.read(at & 0xFFFFFFFF).decode()
        except OSError:
            return None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file = None
        self._at.clear()
        self._warnings.clear()
