"""One server's memory for every load and every cached source together, and one load's share
of it (issue 24: limits per load let three loads of one small log reach 6 GB together).

Memory is estimated from what the reader counts, not measured: a process's RSS says neither
which load holds what nor shrinks when objects are freed. A load is charged as it reads, per
SQL execution, per plan node of every plan version and per task value (sizes measured on real
logs, below), and for every string it keeps at that string's size (descriptions, messages,
settings, names, plan JSON: :mod:`aqe_core.readers.eventlog.kept_text`), so a hostile log is
stopped before it allocates, not after. A loaded source keeps
its charge until the last reference to it goes (the cache's included, see
:func:`hold_until_freed`); a load that needs room first asks the cache to let sources go
(:meth:`MemoryBudget.add_reclaimer`).

The CLI passes no meter: it reads the user's own files with the reader's generous limits.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
import traceback
import weakref
from typing import Callable, Optional

from aqe_core.readers.eventlog.errors import BudgetExceeded
from aqe_core.units import MiB

#: one SQL execution's model and view, plans aside (20,000 one-node executions: 3.4 KiB each)
EXEC_BYTES = 4096
#: one plan node of one plan version, read and built into the views (a 33-execution Spark 4.3
#: log with 13,983 nodes over its versions: 1.3 KiB a node, everything included)
NODE_BYTES = 1536
#: one per-task value (an ``array('q')`` slot)
SLOT_BYTES = 8
#: a load takes the budget in steps of this much (one lock per step, not per execution)
_STEP = 1 * MiB


def _mb(n: int) -> str:
    return f"{n / MiB:,.0f} MB"


class MemoryBudget:
    """Bytes (estimated) held by every load in progress and every loaded source still alive."""

    def __init__(self, limit: int, *, setting: str = "memory_budget_mb") -> None:
        self.limit = limit
        self.setting = setting  # what a refusal names: the server's setting, or the CLI's --budget
        self.used = 0
        # reentrant: a source freed by the garbage collector inside a locked section gives back here
        self._lock = threading.RLock()
        self._reclaimers: list[Callable[[], Optional[Callable[[int], None]]]] = []

    def add_reclaimer(self, fn: Callable[[int], None]) -> None:
        """``fn(short)`` is asked to let go of about ``short`` bytes of sources it keeps (a
        cache dropping its least recently used entries) when a load finds the budget full.
        A bound method is held weakly: a cache that is gone is not kept alive by the budget."""
        ref = weakref.WeakMethod(fn) if hasattr(fn, "__self__") else (lambda: fn)
        with self._lock:
            self._reclaimers = [r for r in self._reclaimers if r() is not None and r() != fn] + [ref]

    def take(self, n: int, own: int) -> None:
        """Charge ``n`` more bytes to a load that holds ``own`` already, or raise
        :class:`BudgetExceeded`: not remembered (``transient``) when other loads or sources
        hold the rest, remembered when this one source is bigger than the whole budget."""
        if own + n > self.limit:
            raise BudgetExceeded(f"this source needs more memory than the server's budget for all sources"
                                 f" ({_mb(self.limit)})", self.setting)
        for attempt in range(2):
            with self._lock:
                if self.used + n <= self.limit:
                    self.used += n
                    return
                short = self.used + n - self.limit
                reclaimers = [r() for r in self._reclaimers]
            if attempt == 0:
                for fn in reclaimers:  # (outside the lock: a reclaimer gives back through give())
                    if fn is not None:
                        fn(short)
        others = max(0, self.used - own)
        raise BudgetExceeded(f"the server's memory budget ({_mb(self.limit)}) is held by other sources now"
                             f" ({_mb(others)}; this one had taken {_mb(own)} and needed more);"
                             " try again in a moment", self.setting, transient=True)

    def give(self, n: int) -> None:
        with self._lock:
            self.used = max(0, self.used - n)


def drop_frames(exc: BaseException) -> None:
    """Clear the finished frames ``exc`` (and the exceptions it chains) still hold: a failed
    load's traceback keeps its lines and strings alive, so giving its charge back first lets
    another load take memory that is not free yet (three bombs at once grew RSS past the budget).
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    _trim()


def _libc_trim() -> Optional[Callable[[int], int]]:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to call, freed memory stays with the allocator
        return None


_MALLOC_TRIM = _libc_trim()


def _trim() -> None:
    """Hand memory the allocator holds free back to the system (glibc's ``malloc_trim``): each
    thread allocates from its own arena, so a failed load's freed lines would otherwise stay in
    the process's RSS beside the next load's."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class LoadMeter:
    """One load's counts against the per-source limits (None: no limit), charged to
    ``budget`` as they grow. Every limit raises :class:`BudgetExceeded` naming its setting."""

    #: the server setting ``max_seconds`` comes from (what a refusal for time names)
    time_setting = "max_load_s"

    def __init__(self, budget: Optional[MemoryBudget], *, max_executions: Optional[int] = None,
                 max_plan_nodes: Optional[int] = None, max_task_slots: Optional[int] = None,
                 max_seconds: Optional[float] = None, pause: Optional[Callable[[], float]] = None) -> None:
        self.budget = budget
        self.max_executions = max_executions
        self.max_plan_nodes = max_plan_nodes
        self.max_task_slots = max_task_slots
        self.max_seconds = max_seconds
        self.deadline = None if max_seconds is None else time.monotonic() + max_seconds
        #: at each checkpoint: let other loads read a while, returning the seconds waited (a
        #: :class:`~aqe_core.readers.load_slots.Slot`'s ``checkpoint``), not counted against max_seconds
        self.pause = pause
        self.executions = self.plan_nodes = self.task_slots = self.text_bytes = 0
        self.used = 0  # estimated bytes of what was read
        self.held = 0  # bytes taken from the budget (used, rounded up to a step)
        self.reserved = 0  # bytes taken for the load's passing work only (see reserve)
        self.peak = 0  # the most taken from the budget at once (held)
        self._closed = False

    def execution(self, eid: Optional[int] = None) -> None:
        """A new SQL execution (``eid``: its id, when the reader knows it) was read."""
        self.executions += 1
        if self.max_executions is not None and self.executions > self.max_executions:
            raise BudgetExceeded(f"this source holds more than {self.max_executions:,} SQL executions", "max_executions")
        self._use(EXEC_BYTES)

    def nodes(self, n: int) -> None:
        """``n`` plan nodes of one plan version were read."""
        self.plan_nodes += n
        if self.max_plan_nodes is not None and self.plan_nodes > self.max_plan_nodes:
            raise BudgetExceeded(f"this source's plans hold more than {self.max_plan_nodes:,} nodes"
                                 " (every plan version counted)", "max_plan_nodes")
        self._use(n * NODE_BYTES)

    def slots(self, n: int) -> None:
        """``n`` per-task values are about to be allocated."""
        self.task_slots += n
        if self.max_task_slots is not None and self.task_slots > self.max_task_slots:
            raise BudgetExceeded(f"this source's stages declare more tasks than the server keeps values for"
                                 f" ({self.max_task_slots:,} per-task values)", "max_task_slots")
        self._use(n * SLOT_BYTES)

    def text(self, n: int) -> None:
        """``n`` bytes of strings kept (descriptions, messages, settings, names, plan JSON:
        :mod:`aqe_core.readers.eventlog.kept_text`), charged as they are: unlike executions or
        nodes, a string has no typical size."""
        self.text_bytes += n
        self._use(n)

    def reserve(self, n: int) -> None:
        """Take ``n`` bytes for as long as the load runs: the line being parsed and what its
        parse allocates, which no count above sees (a 16 MiB description is its bytes and its
        string at once). Given back when the load ends, kept or not."""
        if self.budget is not None and n > 0:
            self.budget.take(n, self.held)
            self.reserved += n

    def check_time(self) -> None:
        """A checkpoint (the readers call it at least every ~0.2 s of work): the load may give
        its slot to others here (``pause``), and stops past ``max_seconds`` of its own time."""
        if self.pause is not None:
            waited = self.pause()
            if waited and self.deadline is not None:
                self.deadline += waited
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise BudgetExceeded(f"opening this source took more than {self.max_seconds:g} s", self.time_setting)

    def _use(self, n: int) -> None:
        self.used += n
        if self.used > self.held:
            more = max(self.used - self.held, _STEP)
            if self.budget is not None:
                self.budget.take(more, self.held + self.reserved)
            self.held += more
            self.peak = max(self.peak, self.held)

    def forget(self, eid: int) -> None:
        """Execution ``eid`` left the reader (listing mode): see :class:`ListingMeter`."""

    def settle(self, n: int) -> None:
        """What the loaded object keeps is about ``n`` bytes: charge that from now on, giving back
        the rest (a view opened alone from a listed log: the reader forgot everything else)."""
        self.used = 0
        self._use(n)
        spare = self.held - max(self.used, _STEP)
        if spare > 0 and not self._closed:
            self.held -= spare
            if self.budget is not None:
                self.budget.give(spare)

    def keep(self, n: int) -> None:
        """``n`` bytes the load keeps for good whatever execution leaves (a listing's query groups)."""
        self._use(n)

    def release(self) -> None:
        """Give the whole charge back (a failed load)."""
        if not self._closed:
            self._closed = True
            if self.budget is not None:
                self.budget.give(self.held + self.reserved)

    def hold_until_freed(self, obj: object) -> int:
        """Keep the charge while ``obj`` (the loaded source) lives; the estimate in bytes."""
        if not self._closed:
            self._closed = True
            if self.budget is not None:
                self.budget.give(self.reserved)
                weakref.finalize(obj, self.budget.give, self.held)
        return self.used


#: what a listed execution leaves behind: its id in its query group (8 bytes) and its bit among
#: the executions handed over, with room to spare
LISTED_EXEC_BYTES = 16


class ListingMeter(LoadMeter):
    """A listing load's meter (issue 41: a log past ``max_executions`` listed by query). The
    reader summarises each ended execution and forgets it, so what an execution charged (its
    plan nodes, task values and strings) is given back when it leaves (:meth:`forget`): the
    limits and the budget then hold what the reader holds at once, however long the log, and
    every execution costs :data:`LISTED_EXEC_BYTES` for good. A charge is put on the execution
    read last: a late event of an older one is charged to a newer one, which leaves later, so
    nothing is given back early; what comes before the first execution stays charged."""

    time_setting = "max_listing_s"

    def __init__(self, budget: Optional[MemoryBudget], **limits) -> None:
        limits.pop("max_executions", None)  # (passing it is the point)
        super().__init__(budget, **limits)
        self._owed: dict[int, list[int]] = {}  # execution id -> [bytes, plan nodes, task values]
        self._newest: Optional[list[int]] = None

    def execution(self, eid: Optional[int] = None) -> None:
        self.executions += 1
        self._newest = self._owed.setdefault(eid, [0, 0, 0]) if eid is not None else None
        self._use(LISTED_EXEC_BYTES)

    def nodes(self, n: int) -> None:
        super().nodes(n)
        self._owe(n * NODE_BYTES, n, 0)

    def slots(self, n: int) -> None:
        super().slots(n)
        self._owe(n * SLOT_BYTES, 0, n)

    def text(self, n: int) -> None:
        super().text(n)
        self._owe(n, 0, 0)

    def _owe(self, n: int, nodes: int, slots: int) -> None:
        if self._newest is not None:
            self._newest[0] += n
            self._newest[1] += nodes
            self._newest[2] += slots

    def forget(self, eid: int) -> None:
        owed = self._owed.pop(eid, None)
        if owed is None:
            return
        if owed is self._newest:
            self._newest = None
        self.used -= owed[0]
        self.plan_nodes -= owed[1]
        self.task_slots -= owed[2]
        spare = self.held - max(self.used, _STEP)
        if spare > 4 * _STEP:  # given back in steps, as taken
            self.held -= spare
            if self.budget is not None:
                self.budget.give(spare)
