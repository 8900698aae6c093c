"""Loading an event log: open the source (any layout and codec), decode each part, split it
into lines, feed the builder, and turn what went wrong into warnings and notes.

Memory grows with what is kept (plans, per-execution metric summaries, per-task shuffle read
sizes, post-AQE partition sizes), not with the log's size: events are consumed one line at a
time, per-task SQL metric slots are aggregated and dropped when their execution ends (as the
Spark UI does).
"""
from __future__ import annotations

import os
import tarfile
import time
import zipfile
import zlib
from functools import partial
from typing import TYPE_CHECKING, Callable, Iterator

from aqe_core.model.eventlog import NOT_IN_LOG, EventLog, SQLExecution
from aqe_core.readers.eventlog import codecs, excluded
from aqe_core.readers.eventlog.builder import _FIELD_ERRORS, LISTENER_EVENT, SQL_EVENT_PREFIX, _Builder
from aqe_core.readers.eventlog.focus import NOT_READ_NOTE, Focus, feed_focused
from aqe_core.readers.eventlog.errors import (
    DEFAULT_LIMITS, BudgetExceeded, DecodeError, EventLogError, LimitExceeded, Limits, internal_cause,
)
from aqe_core.readers.eventlog.log_lines import _Lines
from aqe_core.readers.eventlog.opened import Node
from aqe_core.readers.eventlog.log_files import IterStream, LogSource, Part, open_source

if TYPE_CHECKING:
    from aqe_core.readers.budget import LoadMeter
    from aqe_core.readers.eventlog.spilling import HandOver

ProgressFn = Callable[[int, "int | None"], None]

#: what reading a part of an archive may raise besides the codecs' own errors
_CONTAINER_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, tarfile.TarError, RuntimeError, NotImplementedError)


def _open_part_stream(part: Part, limits: Limits, on_read: Callable[[int], None], log: EventLog,
                      expected_truncation: bool, checkpoint: Callable[[], None] | None = None) -> Iterator[bytes]:
    f = part.opener()
    try:
        raw = codecs.CountingReader(f, on_read)
        reader = raw
        if part.wrapper == "gzip":
            reader = codecs.CountingReader(IterStream(codecs.decode("gzip", raw, limits, checkpoint)))
        head = reader.read_exact(16)
        fmt = codecs.sniff(head)
        name = part.name.rsplit("/", 1)[-1]
        by_name = codecs.codec_from_name(name[:-3] if part.wrapper == "gzip" and name.endswith(".gz") else name)
        if fmt == "empty":
            log.notes.append(f"{name}: empty file")
            return
        if fmt is None:
            raise DecodeError(f"{name}: not an event log (the first bytes are neither JSON nor a known codec)")
        if fmt in ("zip", "tar"):
            raise DecodeError(f"{name}: a {fmt} archive inside an event log is not supported")
        if fmt not in codecs.DECODERS:
            raise DecodeError(f"{name}: {codecs.describe_foreign(fmt)}; Spark never writes this")
        if by_name and by_name not in ("zip",) and by_name != fmt:
            log.warnings.append(f"{name}: the name says {by_name} but the bytes are {fmt}; read as {fmt}")
        if log.codec is None:
            log.codec = fmt
        stream = _Prepend(head, reader)
        yield from codecs.decode(fmt, stream, limits, checkpoint)  # type: ignore[arg-type]
    finally:
        f.close()


class _Prepend:
    """A reader that returns ``head`` first, then the rest of ``inner``; counts like inner."""

    def __init__(self, head: bytes, inner: codecs.CountingReader):
        self._head = head
        self._inner = inner

    @property
    def count(self) -> int:
        return self._inner.count

    def read(self, n: int = -1) -> bytes:
        if self._head:
            if n < 0:
                data = self._head + self._inner.read()
                self._head = b""
                return data
            data = self._head[:n]
            self._head = self._head[n:]
            return data
        return self._inner.read(n)

    def read_exact(self, n: int) -> bytes:
        return codecs.read_exact(self, n)

    def readable(self) -> bool:
        return True


def load(
    path: "str | Node",
    *,
    progress: ProgressFn | None = None,
    limits: Limits = DEFAULT_LIMITS,
    keep_task_metrics: bool = True,
    roots: "list[str] | None" = None,
    meter: "LoadMeter | None" = None,
    hand_over: "HandOver | None" = None,
    on_final: "Callable[[EventLog, SQLExecution], None] | None" = None,
    packed: bool = True,
    focus: "Focus | None" = None,
) -> EventLog:
    """Load an event log (any layout/codec, see :mod:`aqe_core.readers.eventlog.log_files`).

    Raises :class:`EventLogError` only when nothing usable can be read (missing file, not an
    event log at all, a limit hit before any execution was read); every other problem
    (corrupt or truncated data, bad lines, unknown events, missing fields, limits) gives a
    partial load with ``warnings``. ``progress(bytes_read, total_bytes_or_None)`` is called
    as raw bytes are consumed. ``roots``: when given, every file read (the path, the parts of
    a rolling directory, after symlinks are resolved) must lie inside one of these folders, and is
    opened by descriptor (:mod:`.opened`). ``path`` may be a :class:`~.opened.Node` already
    opened that way (the load closes it). ``hand_over``: listing mode
    (:meth:`~aqe_core.readers.eventlog.spilling.Spilling.hand_over_to`): each execution goes to it
    as it ends and is forgotten; the log returned holds none. ``on_final(log, execution)``: told
    of each execution as the reader finalises it into the log (an ended one as it is spilled, the
    rest at the log's end; one brought back by a late event again), while its plans are built: what
    a caller wants of every execution costs less taken then than read back. The last call for an
    id is of the model the log holds. ``packed=False``: plans and plan text kept as they are, not
    compressed (for a caller that reads them as each execution is finalised: compressing them
    would be work for nothing; the spill file grows by what compression saved).
    ``focus`` (with ``hand_over``): one execution read alone, the other executions' events
    skipped (:mod:`.focus`); ``focus.started`` says whether its start was in the log.
    ``meter``: the server's per-source limits and memory budget (:mod:`aqe_core.readers.budget`);
    past one, :class:`BudgetExceeded` stops the whole load (nothing partial is kept).
    """
    try:
        src = open_source(path, limits, roots=roots, checkpoint=None if meter is None else meter.check_time)
        with src:
            return _load_source(src, progress, limits, keep_task_metrics, meter, hand_over, on_final, packed, focus)
    except EventLogError:
        raise
    except OSError as e:
        name = os.path.basename(path.path if isinstance(path, Node) else os.fspath(path))
        raise EventLogError(f"cannot read {name}: {e.strerror or type(e).__name__}") from None
    except (*_CONTAINER_ERRORS, *_FIELD_ERRORS, MemoryError) as e:
        # the last line of defence; the fuzz tests keep this unreached
        raise EventLogError(f"cannot read this log (internal error: {internal_cause(e)})") from None


#: lines fed to the builder between two checkpoints (a MiB of empty lines is a million of them:
#: ~1 s; 8,192 lines of real events take 10-50 ms)
_FEED_LINES = 8192


class _Reading:
    """Bytes read and decoded and CPU time spent over every part of one log: the whole-log limits
    are checked against these, once per decoded chunk (~1 MiB). The meter's checkpoint
    (:meth:`checkpoint`) comes at least that often, and on every raw read, every gzip member
    and every :data:`_FEED_LINES` lines fed: a bomb that decodes to nothing, or to empty
    lines, still meets one every ~0.1 s (its load's deadline, and its turn in the load slots)."""

    def __init__(self, src: LogSource, progress: ProgressFn | None, limits: Limits,
                 meter: "LoadMeter | None" = None):
        self.limits = limits
        self.meter = meter
        self.progress = progress
        self.total = src.total_size
        self.done = 0
        self.decoded = 0  # of the current part
        self.decoded_all = 0
        self.started = time.thread_time()
        # members of a zip/tar are counted decompressed: take the ratio against the archive
        self.basis = src.container_size if src.container in ("zip", "tar") else None

    def on_read(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total)
        self.checkpoint()

    def checkpoint(self) -> None:
        if self.meter is not None:
            self.meter.check_time()

    def counted(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """Whole-log limits, checked once per decoded chunk (~1 MiB)."""
        limits = self.limits
        for c in chunks:
            self.decoded += len(c)
            self.decoded_all += len(c)
            decoded_all = self.decoded_all
            if decoded_all > limits.max_decompressed_bytes:
                raise LimitExceeded(codecs.size_limit_message(limits.max_decompressed_bytes))
            raw = self.basis if self.basis is not None else self.done
            if decoded_all > limits.ratio_grace_bytes and decoded_all > limits.max_expansion_ratio * max(raw, 1):
                raise LimitExceeded(codecs.ratio_limit_message(decoded_all, raw, limits.max_expansion_ratio))
            if limits.max_seconds is not None and time.thread_time() - self.started > limits.max_seconds:
                raise LimitExceeded(codecs.time_limit_message(limits.max_seconds))
            if self.meter is not None:
                self.meter.check_time()
            yield c


def _load_source(src: LogSource, progress: ProgressFn | None, limits: Limits, keep_tasks: bool,
                 meter: "LoadMeter | None" = None, hand_over: "HandOver | None" = None,
                 on_final: "Callable[[EventLog, SQLExecution], None] | None" = None,
                 packed: bool = True, focus: "Focus | None" = None) -> EventLog:
    log = EventLog(path=src.path, layout=src.layout, parts=[p.name for p in src.parts])
    log.warnings.extend(src.warnings)
    log.notes.extend(src.notes)
    b = _Builder(log, keep_tasks, limits, meter)
    if hand_over is not None:
        b.hand_over_to(hand_over)
    if focus is not None:
        b.read_alone(focus)
        log.notes.append(NOT_READ_NOTE)
    b.on_final = on_final
    b.packs = b.packs and packed
    try:
        reading = _Reading(src, progress, limits, meter)
        fatal: str | None = None
        for idx, part in enumerate(src.parts):
            fatal = _read_part(src, part, idx == len(src.parts) - 1, b, reading)
            if fatal:
                break
        log.bytes_read = reading.done
        if b.line_no == 0 and fatal is None and not log.warnings:
            raise EventLogError(f"{os.path.basename(src.path)}: no events found (empty log)")
        if fatal is not None and not b.order and b.handed is None:
            raise LimitExceeded(fatal)
        b.finish()
        _sum_up(src, log, b)
        return log
    finally:
        b.close()


def _read_part(src: LogSource, part: Part, last: bool, b: _Builder, reading: _Reading) -> str | None:
    """Feed one part of the log to the builder; what went wrong becomes a warning or a note.
    Returns the message of a whole-log limit hit (reading stops), else None."""
    log = b.log
    limits = reading.limits
    name = part.name.rsplit("/", 1)[-1]
    lines = _Lines(limits.max_line_bytes)
    reading.decoded = 0
    fatal: str | None = None
    expected_trunc = last and src.complete_by_name is False
    feed = b.feed if b.focus is None else partial(feed_focused, b)
    try:
        for batch in lines.split(reading.counted(_open_part_stream(part, limits, reading.on_read, log,
                                                                   expected_trunc, reading.checkpoint))):
            if len(batch) <= _FEED_LINES:
                feed(batch)
                continue
            for i in range(0, len(batch), _FEED_LINES):
                feed(batch[i:i + _FEED_LINES])
                reading.checkpoint()
    except codecs.TruncatedInput as e:
        msg = f"{name}: {e}"
        if expected_trunc:
            log.notes.append(msg + " (expected for a log still being written)")
            log.cut.append(msg + " (a log still being written)")
        else:
            log.warnings.append(msg + "; the events after it are missing")
            log.cut.append(log.warnings[-1])
    except BudgetExceeded:
        raise  # the server's per-source limits and budget refuse the whole source
    except LimitExceeded as e:
        log.warnings.append(f"{name}: {e}; stopped reading")
        log.cut.append(log.warnings[-1])
        fatal = str(e)
    except DecodeError as e:
        if b.line_no == 0 and len(src.parts) == 1:
            raise EventLogError(str(e)) from None
        log.warnings.append(f"{e}; the events after it are missing")
        log.cut.append(log.warnings[-1])
    except OSError as e:
        log.warnings.append(f"{name}: read error ({e.strerror or type(e).__name__})")
        log.cut.append(log.warnings[-1])
    except _CONTAINER_ERRORS as e:  # a corrupt zip/tar member, bad CRC, cut archive
        log.warnings.append(f"{name}: the archive member is corrupt or cut"
                            f" ({type(e).__name__}); the events after it are missing")
        log.cut.append(log.warnings[-1])
    log.bytes_decoded += reading.decoded
    if lines.oversize:
        log.warnings.append(
            f"{name}: skipped {len(lines.oversize)} line(s) longer than the "
            f"{limits.max_line_bytes // (1024 * 1024)} MiB line limit (largest {max(lines.oversize)} bytes)"
        )
    if lines.partial_tail:
        msg = f"{name}: the last line is cut ({lines.partial_tail} bytes) and was dropped"
        if expected_trunc or (last and not b.saw_app_end):
            log.notes.append(msg)
        else:
            log.warnings.append(msg)
        log.cut.append(msg)
    return fatal


def _sum_up(src: LogSource, log: EventLog, b: _Builder) -> None:
    """Counts, completeness, and the notes and warnings about the log as a whole."""
    app = log.application
    log.events = b.line_no
    log.event_counts = {k.decode("utf-8", "replace"): v for k, v in sorted(b.counts.items())}
    log.complete = b.saw_app_end
    if not b.saw_app_end:
        log.notes.append("no ApplicationEnd event: the application was still running or crashed (incomplete log)")
        log.cut.append(log.notes[-1])
    if not b.saw_log_start and src.layout == "single":
        log.notes.append("no SparkListenerLogStart event (not an Apache Spark log, or its start is missing)")
    if app.id is None:
        log.warnings.append("no ApplicationStart event: application id and name are unknown")
    if b.bad_lines:
        log.warnings.append(f"{b.bad_lines} line(s) are not JSON events and were skipped")
        log.warnings.extend(b.bad_samples)
    if b.field_errors:
        total_err = sum(b.field_errors.values())
        kinds = ", ".join(f"{k} x{v}" for k, v in sorted(b.field_errors.items()))
        log.warnings.append(f"{total_err} event(s) lack expected fields and were skipped ({kinds})")
        log.warnings.extend(b.field_samples)
    log.notes.extend(b.kept.notes())
    if b.line_no and not log.executions and not b.counts:
        log.warnings.append("no Spark events recognised")
    unknown = [k for k in log.event_counts
               if not (k.startswith("SparkListener") or k.startswith(SQL_EVENT_PREFIX)) and k != LISTENER_EVENT
               and k not in b.used_events]
    if unknown:
        log.notes.append("skipped events of types this reader does not use: " + ", ".join(unknown[:10]))
    log.excluded_events = excluded.excluded_events(log.spark_properties, log.event_counts, app.spark_version)
    ex_notes, ex_warnings = excluded.messages(log.excluded_events)
    log.notes.extend(ex_notes)
    log.warnings.extend(ex_warnings)
    if b.task_read_sizes:  # (executions whose reads' sizes are the reduce tasks')
        log.notes.append(
            "Spark 3.0.x logs have no metrics on CustomShuffleReader: per-partition sizes are derived from the "
            "reduce tasks' shuffle read metrics (bytes actually read), not the MapStatus sizes AQE used"
        )


def not_in_log() -> list[str]:
    return list(NOT_IN_LOG)
