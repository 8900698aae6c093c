"""The server's load slots, shared fairly: which loads may read now (issue 37, "fair loads").

A plain semaphore of ``max_concurrent_loads`` gave each slot to whoever came first for as
long as it read: two sessions opening decompression bombs held both slots for the whole
``max_load_s`` (124 s), and a third user's small sample behind them took 102 s instead of 9.
The slots are the server's CPU budget beside :mod:`~aqe_core.readers.budget`'s memory, so they
are shared like a CPU, by the time each load has read in a slot (its *service*):

- **One load at a time per owner** (a Streamlit session, the MCP server): an owner's second
  load waits for its first to end, apart from the queue, so one session never holds two
  slots however many loads it starts. (Refusing it instead would fail a user whose earlier
  load is merely being stopped after a click; waiting costs a parked thread.)
- **Least served first, by quanta.** A free slot goes to the waiting load that has read the
  least (first come first among equals). A load that has held its slot for a quantum gives it
  up at its next checkpoint (:meth:`Slot.checkpoint`, called by :meth:`LoadMeter.check_time
  <aqe_core.readers.budget.LoadMeter.check_time>`) when a waiting load has read less, and
  queues again. So a new load gets a slot within about a quantum whatever holds them.
- **Loads far ahead wait.** A load that has read more than a quantum longer than the least
  served one waits, even with a slot free: loads share one process and its GIL, so a second
  slot adds little speed, and a load beside a bomb reads 3-8 times slower (the tpcds-like
  sample: 0.64 s alone, 2.2 s beside a zip of task ends, 5.4 s beside a zip of empty gzip
  members). A small load thus reads alone until it ends or has caught up with the long ones,
  which then share the slots by turns again. (Least-served-first starves long loads while new
  ones keep coming; the wait cap below ends that with a transient refusal.)
- **Waiting is not reading**: the time a load waits moves its meter's ``max_load_s``
  deadline; ``max_wait_s`` in all bounds the waits (the server passes ``max_load_s``, as long
  as the semaphore waited), then a transient refusal names ``max_concurrent_loads``.

A load that has not reached a checkpoint cannot be paused: the readers call the meter's
``check_time`` at least every ~0.1 s of work, bombs included (the loader, gzip's member loop,
the archive listing).
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Optional

from aqe_core.readers.eventlog.errors import BudgetExceeded

#: how long a load reads before it gives its slot to a load that has read less; also how far
#: ahead of the least served load a load may be and still read
QUANTUM_S = 1.0
#: after its quantum, how often a reading load looks whether it should give way
_LOOK_S = 0.05
#: how often a waiting load looks whether the loads' progress made it eligible
_POLL_S = 0.1
#: loads kept in :attr:`LoadSlots.recent` (for tests, benchmarks and diagnostics)
RECENT = 64


@dataclass
class LoadRecord:
    """What one load got from the slots: its waits and its time in a slot (seconds)."""

    owner: Optional[str]
    waits: list[float]
    served: float = 0.0
    #: "done" (the load ended, loaded or not), "refused" (waited too long), else "running"
    outcome: str = "running"

    @property
    def waited(self) -> float:
        return sum(self.waits)

    @property
    def longest_wait(self) -> float:
        return max(self.waits, default=0.0)


class Slot:
    """One load's place: waiting for its owner, waiting for a slot, or reading in one."""

    def __init__(self, slots: "LoadSlots", owner: Optional[str], seq: int, max_wait_s: float) -> None:
        self._slots = slots
        self.owner = owner
        self.seq = seq
        self.max_wait_s = max_wait_s
        self.record = LoadRecord(owner, [])
        self.since: Optional[float] = None  # when the slot was granted (None: not in a slot)
        self.look_after = float("inf")  # the next checkpoint that looks at the other loads
        self.granted = False

    def served(self, now: float) -> float:
        """Seconds this load has read in a slot, the current turn included."""
        return self.record.served + (now - self.since if self.since is not None else 0.0)

    def checkpoint(self) -> float:
        """Give the slot up and queue again when other loads should read first (see the
        module); returns the seconds waited, 0.0 almost always (one clock read, no lock).
        Raises :class:`BudgetExceeded` (transient) when the waits pass ``max_wait_s``."""
        if time.monotonic() < self.look_after:
            return 0.0
        return self._slots._look(self)


class LoadSlots:
    """``n`` loads read at once; the rest wait (see the module's docstring for the order)."""

    def __init__(self, n: int, quantum_s: float = QUANTUM_S) -> None:
        self.n = n
        self.quantum_s = quantum_s
        self._cond = threading.Condition(threading.Lock())
        self._running: set[Slot] = set()
        self._waiting: list[Slot] = []
        self._owners: set[str] = set()
        self._seq = itertools.count()
        self.recent: deque[LoadRecord] = deque(maxlen=RECENT)

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def resize(self, n: int) -> None:
        """Follow the settings: more slots start waiting loads now, fewer let running ones end."""
        with self._cond:
            if n != self.n:
                self.n = n
                self._dispatch(time.monotonic())

    @contextmanager
    def load(self, owner: Optional[str], max_wait_s: float) -> Iterator[Slot]:
        """A slot for one load of ``owner`` (None: no per-owner limit) for the ``with`` block,
        after the owner's earlier load has ended. Raises :class:`BudgetExceeded` (transient)
        when waiting would pass ``max_wait_s`` in all."""
        slot = self._enter(owner, max_wait_s)
        try:
            yield slot
        finally:
            self._leave(slot)

    # -- inside the lock ------------------------------------------------------------------
    def _enter(self, owner: Optional[str], max_wait_s: float) -> Slot:
        with self._cond:
            slot = Slot(self, owner, next(self._seq), max_wait_s)
            self.recent.append(slot.record)
            start = time.monotonic()
            if owner is not None and owner in self._owners:
                self._cond.wait_for(lambda: owner not in self._owners, timeout=max_wait_s)
                if owner in self._owners:
                    slot.record.waits.append(time.monotonic() - start)
                    slot.record.outcome = "refused"
                    raise BudgetExceeded(f"this session is still opening another source (one at a time per session)"
                                         f" and this one waited {max_wait_s:g} s; try again when it has opened",
                                         "max_concurrent_loads", transient=True)
            if owner is not None:
                self._owners.add(owner)
            try:
                self._queue(slot, start)
            except BaseException:
                self._owners.discard(owner)
                self._cond.notify_all()
                raise
            return slot

    def _queue(self, slot: Slot, start: float) -> float:
        """Queue ``slot`` and wait for a slot (``start``: when this wait began); the seconds
        waited. Waiting loads look again every :data:`_POLL_S`: the loads reading make them
        eligible as they go, with no event to tell."""
        slot.granted = False
        self._waiting.append(slot)
        deadline = start + slot.max_wait_s - slot.record.waited
        now = time.monotonic()
        while True:
            self._dispatch(now)
            if slot.granted or now >= deadline:
                break
            self._cond.wait(min(_POLL_S, deadline - now))
            now = time.monotonic()
        waited = now - start
        slot.record.waits.append(waited)
        if not slot.granted:
            self._waiting.remove(slot)
            slot.record.outcome = "refused"
            raise BudgetExceeded(f"the server is opening {self.n} other source(s) and this one waited"
                                 f" {slot.record.waited:.0f} s in all; try again in a moment",
                                 "max_concurrent_loads", transient=True)
        return waited

    def _floor(self, now: float) -> float:
        """The service of the least served load, reading or waiting."""
        return min(s.served(now) for s in itertools.chain(self._running, self._waiting))

    def _look(self, slot: Slot) -> float:
        """A reading load past its quantum: give way (and wait) when it is more than a quantum
        ahead of the least served load, or a waiting load has read less."""
        with self._cond:
            now = time.monotonic()
            if slot.since is None:
                return 0.0
            self._dispatch(now)  # (the waiting loads this one's reading made eligible)
            mine = slot.served(now)
            if mine <= self._floor(now) + self.quantum_s and not any(w.record.served < mine for w in self._waiting):
                slot.look_after = now + _LOOK_S
                return 0.0
            slot.record.served, slot.since, slot.look_after = mine, None, float("inf")
            self._running.discard(slot)
            return self._queue(slot, now)

    def _dispatch(self, now: float) -> None:
        """Give free slots to waiting loads at most a quantum ahead of the least served, the
        least served first."""
        granted = False
        while self._waiting and len(self._running) < self.n:
            best = min(self._waiting, key=lambda w: (w.record.served, w.seq))
            if best.record.served > self._floor(now) + self.quantum_s:
                break
            self._waiting.remove(best)
            best.granted, best.since, best.look_after = True, now, now + self.quantum_s
            self._running.add(best)
            granted = True
        if granted:
            self._cond.notify_all()

    def _leave(self, slot: Slot) -> None:
        with self._cond:
            now = time.monotonic()
            if slot.since is not None:
                slot.record.served = slot.served(now)
                slot.since = None
            slot.look_after = float("inf")
            if slot in self._waiting:
                self._waiting.remove(slot)
            self._running.discard(slot)
            if slot.record.outcome == "running":
                slot.record.outcome = "done"
            if slot.owner is not None:
                self._owners.discard(slot.owner)
            self._dispatch(now)
            self._cond.notify_all()
