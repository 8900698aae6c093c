"""Errors and limits of the event-log reader."""
from __future__ import annotations

import sys

from dataclasses import dataclass

from aqe_core.units import GiB, MiB, format_bytes


class EventLogError(Exception):
    """The input cannot be read as a Spark event log. The message is one clear line."""


class DecodeError(EventLogError):
    """The bytes do not follow the codec's stream format (corrupt, truncated, wrong codec)."""


class LimitExceeded(EventLogError):
    """An explicit safety limit was hit (decompressed size, expansion ratio, decode time)."""


class BudgetExceeded(LimitExceeded):
    """A limit of :class:`~aqe_core.readers.budget.LoadMeter` (executions, plan nodes, task
    values, wall time, the server's memory): the whole load stops and nothing is kept, as
    what was read so far is already as big as the server allows. ``setting`` names the server
    setting behind the limit; ``transient``: the server was busy with other loads (the same
    source may open later), so the refusal is not remembered."""

    def __init__(self, message: str, setting: str, transient: bool = False):
        super().__init__(message)
        self.setting = setting
        self.transient = transient


@dataclass(frozen=True)
class Limits:
    """Safety limits; see docs/eventlog-limits.md.

    ``max_line_bytes``: a longer line is skipped (with a warning) without being buffered whole.
    ``max_decompressed_bytes``: total decoded bytes of one log; reading stops past it.
    ``max_expansion_ratio``: for compressed input, decoded bytes may not exceed this many times
    the compressed bytes consumed (checked once ``ratio_grace_bytes`` have been decoded), which
    stops decompression bombs early. Spark logs compress 5-40x.
    ``max_block_bytes``: the largest single codec block/chunk accepted (lz4, snappy, lzf).
    ``max_files``: parts of a rolling directory or members of a zip/tar.
    ``max_seconds``: CPU time (of the reading thread) to decode and parse one log; None = no
    limit. Checked once per decoded chunk (about 1 MiB), so a log stops within a chunk of it.
    ``max_task_slots``: per-task metric values kept at once (8 bytes each; a stage's arrays are
    sized by its task count, which a log may overstate).
    ``spill_after``: ended SQL executions held in memory while reading; past it, the oldest go
    to a temporary file (``$AQE_LENS_HOME/tmp``) and are read back when asked, so memory stays
    flat however long the log (:mod:`aqe_core.readers.eventlog.spill_file`). None keeps everything in memory.

    Size limits count decoded bytes of the whole log (every part of a rolling directory or
    archive), and the expansion ratio is taken against the archive's size for zip/tar members.
    The CLI keeps these generous defaults; the app passes :func:`server limits
    <aqe_core.opening.server_limits>` derived from the server settings, and a
    :class:`~aqe_core.readers.budget.LoadMeter` for its per-source limits and memory budget.
    """

    max_line_bytes: int = 64 * MiB
    max_decompressed_bytes: int = 256 * GiB
    max_expansion_ratio: int = 1000
    ratio_grace_bytes: int = 64 * MiB
    max_block_bytes: int = 64 * MiB
    max_files: int = 100_000
    max_seconds: float | None = None
    max_task_slots: int = 512 * MiB
    spill_after: int | None = 64


def describe_bytes(n: int) -> str:
    """``n`` bytes for people (limit messages)."""
    return format_bytes(n, "limit")


DEFAULT_LIMITS = Limits()


def internal_cause(exc: BaseException) -> str:
    """What an unexpected exception was and where (never its message, which may quote the
    file): its type, what it means for an input, and the innermost AQE Lens function it
    left, so a report of it can be acted on.

    >>> try:
    ...     int(float("inf"))
    ... except OverflowError as e:
    ...     internal_cause(e).startswith("OverflowError: a number past the 64-bit range")
    True
    """
    meanings: dict[type[BaseException], str] = {
        OverflowError: "a number past the 64-bit range", RecursionError: "nested too deeply", MemoryError: "out of memory"}
    meaning = meanings.get(type(exc))
    if isinstance(exc, ImportError) and exc.name:  # a Python without the project's packages (a Spark worker's)
        meaning = f"this Python ({sys.executable}) lacks the module {exc.name!r} (requirements.txt)"
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.startswith("aqe_core."):
            where = f" in {module}.{tb.tb_frame.f_code.co_name}"
        tb = tb.tb_next
    return f"{type(exc).__name__}{': ' + meaning if meaning else ''}{where}"
