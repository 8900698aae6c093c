"""Flat memory while a big log is read (issue 14): the builder's ended executions, with the
stages and read stores only they use, go to a spill file (:mod:`aqe_core.readers.eventlog.spill_file`) past
``Limits.spill_after``, and any later event for one of them brings it back whole.

A spilled execution is also finalised then (its model as the end of the log would leave it),
so the end of the log does not read it back: the model depends only on the execution's own
state, which no event changes without bringing it back, and on the log's release and Spark
properties, which are checked at the end (a change finalises it again from its state).
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Callable, Optional, cast

from aqe_core.model.eventlog import EventLog, StageInfo
from aqe_core.readers.eventlog.spill_file import SpillFile, SpillMap
from aqe_core.server_settings import lens_home

if TYPE_CHECKING:
    from aqe_core.readers.budget import LoadMeter
    from aqe_core.readers.eventlog.focus import Focus
    from aqe_core.model.eventlog import SQLExecution
    from aqe_core.readers.eventlog.live_state import _LiveExec, _ReadStore, _SlotBudget, _StageMetrics

#: what a listing reader hands each ended execution to: the log (its release, its stages), the
#: execution finalised, and the lowest execution id the reader still holds (None at the end of
#: the log): Spark numbers executions in start order, so every one handed over later has an id of
#: at least that, and a consumer that wants id order can let go of everything below it
HandOver = Callable[[EventLog, "Optional[SQLExecution]", Optional[int]], None]


class HandedOver:
    """The ids of executions a listing reader has handed over and forgotten: a bit per id for
    Spark's dense ids (125 KB for a million), a set for ids past :data:`DENSE` (a stranger's log)."""

    DENSE = 1 << 27

    def __init__(self) -> None:
        self.bits = bytearray()
        self.sparse: set[int] = set()
        self.late = 0  # events for an execution after it was handed over (skipped)

    def add(self, eid: int) -> None:
        if 0 <= eid < self.DENSE:
            i = eid >> 3
            if i >= len(self.bits):
                self.bits.extend(bytes(max(i + 1 - len(self.bits), len(self.bits))))
            self.bits[i] |= 1 << (eid & 7)
        else:
            self.sparse.add(eid)

    def __contains__(self, eid: int) -> bool:
        if 0 <= eid < self.DENSE:
            i = eid >> 3
            return i < len(self.bits) and bool(self.bits[i] & (1 << (eid & 7)))
        return eid in self.sparse


def spill_file() -> SpillFile | None:
    """A new spill file in ``$AQE_LENS_HOME/tmp`` (on disk: ``/tmp`` is memory on some systems),
    else in the system's temporary directory; None when neither can hold one."""
    home = lens_home() / "tmp"
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        return SpillFile(str(home))
    except OSError:
        pass
    try:
        return SpillFile(None)
    except OSError:
        return None


class Spilling:
    """The builder's spilling half (a mixin of :class:`~aqe_core.readers.eventlog.builder._Builder`,
    whose execution, stage and read-store tables it moves). An execution stays in memory while
    a stage of it is shared with another execution or still has live metric slots: one pickle
    holds an execution with its read stores, so what they share stays shared when it is back."""

    # the builder's tables this half moves (set by the builder's __init__)
    log: EventLog
    execs: dict[int, _LiveExec]
    read_store: dict[int, _ReadStore]
    stage_to_exec: dict[int, int]
    stage_metrics: dict[int, _StageMetrics]
    job_to_exec: dict[int, int]
    order: dict[int, None]
    task_read_sizes: set[int]
    budget: _SlotBudget
    meter: Optional[LoadMeter]
    if TYPE_CHECKING:
        def finalize(self, ex: _LiveExec) -> SQLExecution: ...

    @property
    def _stage_map(self) -> SpillMap[int, StageInfo]:
        return cast("SpillMap[int, StageInfo]", self.log.stages)  # (init_spilling made it one)

    @property
    def _payload_map(self) -> SpillMap[int, bytes]:
        return cast("SpillMap[int, bytes]", self.log.listener_payloads)  # (init_spilling made it one)

    def init_spilling(self, log: EventLog, spill_after: int | None) -> None:
        self.spill_after = spill_after
        self.spill_file: SpillFile | None = None
        self.cold: SpillMap[int, tuple[_LiveExec, dict[int, _ReadStore]]] = SpillMap()
        self.ended: deque[int] = deque()
        self.spilled_owner: dict[int, int] = {}  # spilled stage id -> its execution
        self.pinned: set[int] = set()  # executions sharing a stage with another: kept in memory
        log.stages = SpillMap(log.stages)
        log.listener_payloads = SpillMap(log.listener_payloads)
        self.stages_mem: dict[int, StageInfo] = log.stages.mem  # (the task-end path reads it directly)
        self.env_updates = 0
        # spilled execution id -> its finalised model's place in the file, and what it was made with
        self.finals: dict[int, tuple[tuple[int, int], tuple]] = {}
        self.sink: HandOver | None = None  # a listing reader's consumer (:meth:`hand_over_to`)
        #: told of each execution finalised into the log: as it is spilled, or at the end
        #: (``load(..., on_final=)``)
        self.on_final: Callable[[EventLog, "SQLExecution"], None] | None = None
        self.handed: HandedOver | None = None
        #: the one execution a listing reader reads (:mod:`aqe_core.readers.eventlog.focus`), or None
        self.focus: Focus | None = None
        #: plans and plan text kept compressed; not for a listing reader, nor where the caller
        #: takes what it needs of each execution as it is finalised (``load(..., packed=False)``)
        self.packs = True

    def hand_over_to(self, sink: HandOver) -> None:
        """Listing mode: an ended execution leaves the reader where it would be spilled, finalised
        and handed to ``sink``, then forgotten with its stages and jobs (nothing is written to the
        spill file): memory stays flat however many executions the log holds, and a consumer keeps
        only what it needs of each (issue 41: a summary per execution, counters per query)."""
        self.sink = sink
        self.handed = HandedOver()
        self.packs = False

    def read_alone(self, focus: Focus) -> None:
        """Listing mode reading one execution's events and the application's (:mod:`.focus`)."""
        assert self.sink is not None, "a focus needs a listing reader"
        self.focus = focus

    def another_ended(self, eid: int) -> None:
        """The end of an execution a focused reader skips (it did not see it start): counted among the ends, so
        each one read is handed over after as many later ends as a whole reading hands it over after."""
        if self.focus is not None and self.handed is not None and eid not in self.handed:
            self._ended_id(eid)

    def _made_with(self) -> tuple:
        return self.log.application.spark_version, self.env_updates

    def finished_spilled(self, eid: int) -> tuple[int, int] | None:
        """The finalised model of spilled execution ``eid`` (None: finalise it again)."""
        ref, made_with = self.finals.pop(eid, (None, None))
        return ref if made_with == self._made_with() else None

    def _ended(self, ex: _LiveExec) -> None:
        self._ended_id(ex.model.id)

    def _ended_id(self, eid: int) -> None:
        if self.spill_after is None:
            return
        self.ended.append(eid)
        while self.spill_after is not None and len(self.ended) > self.spill_after:  # (None after a failed write)
            self._spill(self.ended.popleft())

    def _spill(self, eid: int) -> None:
        """Move an ended execution, its stages and its read stores to the spill file, unless a
        stage is shared with another execution or still has live metric slots."""
        ex = self.execs.get(eid)
        if ex is None or ex.live or eid in self.pinned:
            return
        stores = {}
        for sid in ex.stages:
            rs = self.read_store.get(sid)
            if self.stage_to_exec.get(sid) != eid or sid in self.stage_metrics or (
                    rs is not None and rs.tracked is not ex.read_ids):
                self.pinned.add(eid)
                return
            if rs is not None:
                stores[sid] = rs
        if self.sink is not None:
            self._hand_over(eid, ex)
            return
        if self.spill_file is None and not self._start_spilling():
            return
        assert self.spill_file is not None  # (_start_spilling opened one)
        try:
            state = self.spill_file.put((ex, stores))  # (as it is: the model is finalised next, in place)
        except OSError as e:
            self.spill_failed(e)
            return
        self.cold.add_spilled(eid, state)
        del self.execs[eid]
        for sid in ex.stages:
            self.read_store.pop(sid, None)
        own = [sid for sid in ex.stages if sid in self.stages_mem]
        try:
            model = self.finalize(ex)
            final = self.spill_file.put(model)
            self._stage_map.spill_together(own)
        except OSError as e:
            self.spill_failed(e)
            self._revive(eid)  # its state from before finalising, in memory again
            return
        self.finals[eid] = (final, self._made_with())
        for sid in own:
            self.spilled_owner[sid] = eid
        if self.on_final is not None:  # (its plans were just built: what the caller reads costs least now)
            self.on_final(self.log, model)

    def _hand_over(self, eid: int, ex: _LiveExec) -> None:
        assert self.sink is not None and self.handed is not None
        m = self.finalize(ex)
        del self.execs[eid]
        self.order.pop(eid, None)
        self.handed.add(eid)
        self.task_read_sizes.discard(eid)
        self._give(m, min(self.execs, default=eid + 1))
        if self.focus is not None:
            self.focus.handed_over(eid)
        stages = self._stage_map
        for sid in ex.stages:
            self.read_store.pop(sid, None)
            if self.stage_to_exec.get(sid) == eid:
                del self.stage_to_exec[sid]
                if sid in stages:
                    del stages[sid]
        for jid in ex.jobs:
            if self.job_to_exec.get(jid) == eid:
                del self.job_to_exec[jid]

    def _give(self, m: "SQLExecution", floor: int) -> None:
        """Execution ``m``, finalised, to the sink; its charge given back (it leaves the reader)."""
        assert self.sink is not None
        self.sink(self.log, m, floor)
        if self.meter is not None:
            self.meter.forget(m.id)

    def late_event(self, eid: int) -> _LiveExec:
        """A stand-in for an execution already handed over, which an event came too late for (Spark
        posts nothing for an execution long after its end): the event is read into it and dropped."""
        from aqe_core.readers.eventlog.live_state import _LiveExec
        from aqe_core.model.eventlog import SQLExecution

        assert self.handed is not None
        self.handed.late += 1
        ex = _LiveExec(SQLExecution(id=eid))
        ex.live = False
        return ex

    def hand_over_rest(self) -> None:
        """The end of the log in listing mode: every execution still held, in id order, handed
        over (finalised as the end of the log leaves it), then the sink told the log is done."""
        assert self.sink is not None
        for eid in sorted(self.order):
            ex = self.execs.pop(eid, None)
            if ex is None and eid in self.cold:
                ex = self._revive(eid)
                self.execs.pop(eid, None)
            if ex is not None:
                self._give(self.finalize(ex), eid)
        self.order.clear()
        self.sink(self.log, None, None)
        self.log.executions = SpillMap()

    def spill_failed(self, e: OSError) -> None:
        """The spill file cannot be written (a full disk): from now on everything stays in memory."""
        if self.spill_after is not None:
            self.spill_after = None
            self.log.notes.append(f"the reader's temporary file could not be written ({e.strerror or type(e).__name__}):"
                                  " the rest of the log was held in memory")

    def _start_spilling(self) -> bool:
        f = spill_file()
        if f is None:  # no temporary file can be made: keep everything in memory
            self.spill_after = None
            return False
        self.spill_file = self.cold.file = self._stage_map.file = self._payload_map.file = f
        try:
            for eid in list(self.log.listener_payloads):
                self._payload_map.spill(eid)
        except OSError as e:
            self.spill_failed(e)
            return False
        return True

    def spill_into(self, values: SpillMap, key: int) -> None:
        """``values[key]`` to the spill file while spilling is on (a failed write turns it off)."""
        if self.spill_after is not None and self.spill_file is not None:
            try:
                values.spill(key)
            except OSError as e:
                self.spill_failed(e)

    def _revive(self, eid: int) -> _LiveExec:
        ex, stores = self.cold.pop(eid)
        self.finals.pop(eid, None)
        self.task_read_sizes.discard(eid)
        self.execs[eid] = ex
        for sid, rs in stores.items():
            rs.budget = self.budget  # (the pickled copy's budget is not the log's)
            self.read_store[sid] = rs
        for sid in ex.stages:
            if self.spilled_owner.get(sid) == eid:
                del self.spilled_owner[sid]
                self._stage_map.take(sid)
        if not ex.live:
            self.ended.append(eid)
        return ex

    def _stage_revived(self, sid: int) -> StageInfo | None:
        """Stage ``sid`` when its execution was spilled: brought back with it (else None)."""
        owner = self.spilled_owner.get(sid)
        if owner is None:
            return None
        self._revive(owner)
        return self.stages_mem.get(sid)

