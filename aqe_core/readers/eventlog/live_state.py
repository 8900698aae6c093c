"""Live state of the event-log reader while it streams a log, mirroring Spark's
``SQLAppStatusListener`` (``LiveStageMetrics``, ``LiveExecutionData``): per-task metric slots
kept until their execution ends, charged to one budget so a hostile log cannot allocate
gigabytes.
"""
from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

from aqe_core.model.eventlog import SQLExecution
from aqe_core.readers.eventlog import metrics as M
from aqe_core.readers.eventlog.errors import LimitExceeded
from aqe_core.readers.eventlog.planinfo import pack_plan_description

if TYPE_CHECKING:
    from aqe_core.readers.budget import LoadMeter



class _SlotBudget:
    """Per-task arrays are sized by a stage's task count, which the log states: a one-line log
    claiming 2**31 tasks must not allocate gigabytes. Every array is charged here first, and to
    the load's meter (the server's per-source limit and memory budget) when there is one."""

    __slots__ = ("left", "limit", "meter")

    def __init__(self, limit: int, meter: "LoadMeter | None" = None):
        self.left = self.limit = limit
        self.meter = meter

    def __reduce__(self):  # a spilled read store's copy: the meter stays with the load (revived: replaced)
        return (_SlotBudget, (self.limit,))

    def zeros(self, n: int, fill: int = 0, typecode: str = "q") -> array:
        if self.meter is not None:  # (first: the server refuses the whole source, naming its setting)
            self.meter.slots(max(0, n))
        if n > self.left:
            raise LimitExceeded(f"the log's stages declare more tasks than the reader keeps values for "
                                f"({self.limit} per-task values in all)")
        self.left -= n
        return array(typecode, [fill]) * n  # (one allocation: no bytes(8 * n) beside it)

    def grow(self, arr: "array | None", index: int, n: int, fill: int = 0, typecode: str = "q") -> array:
        """``arr`` (None: a new array) long enough to hold slot ``index`` (< ``n``, the stage's
        stated task count): sized by the slots tasks have used, doubling, never past ``n``. A log
        that claims 400 million tasks and ends one costs a few slots, not 400 million; slots
        not reached read as ``fill``. The growth is charged as :meth:`zeros` charges."""
        have = 0 if arr is None else len(arr)
        size = min(n, max(index + 1, 2 * have, 16))
        more = self.zeros(size - have, fill, typecode)
        if arr is None:
            return more
        arr.extend(more)
        return arr


_SUM = M.SUM


class _StageMetrics:
    """Per-stage SQL metric slots indexed by task index (LiveStageMetrics)."""

    __slots__ = ("stage_id", "attempt", "num_tasks", "types", "values", "completed", "maxes", "budget")

    def __init__(self, stage_id: int, attempt: int, num_tasks: int, types: dict[int, str], budget: _SlotBudget):
        self.stage_id = stage_id
        self.attempt = attempt
        self.num_tasks = max(0, num_tasks)
        self.types = types  # shared with the execution: metrics added later are tracked too
        self.values: dict[int, array] = {}
        self.completed: set[int] = set()
        self.maxes: dict[int, list[int]] = {}
        self.budget = budget

    def update(self, task_id: int, index: int, successful: bool, accs) -> None:
        """One task's SQL metric values (``accs``: id, value, id, value, ...); a task end of the
        bulk of a log, so the loop keeps its lookups in locals."""
        if index in self.completed:
            return
        types_get = self.types.get
        values = self.values
        maxes = self.maxes
        n = self.num_tasks
        inside = 0 <= index < n
        it = iter(accs)
        for acc, value in zip(it, it):
            t = types_get(acc)
            if t is None:
                continue
            arr = values.get(acc)
            if inside:
                if arr is None or index >= len(arr):
                    arr = values[acc] = self.budget.grow(arr, index, n)
                arr[index] = value
            elif arr is None:
                values[acc] = array("q")  # (slots never reached count as zeros: :meth:`missing`)
            if t != _SUM:
                mx = maxes.get(acc)
                if mx is None:
                    maxes[acc] = [value, task_id]
                elif value > mx[0]:
                    mx[0] = value
                    mx[1] = task_id
        if successful:
            self.completed.add(index)

    def missing(self, acc: int) -> int:
        """Slots of metric ``acc`` no task reached (zeros, as in Spark's arrays of ``numTasks``)."""
        return self.num_tasks - len(self.values[acc])


class _ReadStore:
    """Per-stage shuffle read sizes of successful tasks, by task index (ours, not the UI's)."""

    __slots__ = ("num_tasks", "by_acc", "tracked", "budget")

    def __init__(self, num_tasks: int, tracked: dict[int, str], budget: _SlotBudget):
        self.num_tasks = max(0, num_tasks)
        self.by_acc: dict[int, array] = {}
        self.tracked = tracked  # exchange read-metric ids of the execution (shared)
        self.budget = budget

    def record(self, index: int, accs) -> None:
        n = self.num_tasks
        if not 0 <= index < n:
            return
        tracked = self.tracked
        it = iter(accs)
        for acc, value in zip(it, it):
            if acc in tracked:
                arr = self.by_acc.get(acc)
                if arr is None or index >= len(arr):
                    arr = self.by_acc[acc] = self.budget.grow(arr, index, n)
                arr[index] = value


_READ_METRICS = {"local bytes read": "local", "remote bytes read": "remote", "records read": "records"}



class _LiveExec:
    __slots__ = ("model", "types", "jobs", "stages", "driver_updates", "driver_all", "end_events",
                 "aggregated", "read_ids", "reads_snapshot", "read_tasks", "live", "subquery_size_ids",
                 "plan_text")

    def __init__(self, model: SQLExecution):
        self.model = model
        self.types: dict[int, str] = {}
        self.jobs: dict[int, str] = {}
        self.stages: dict[int, None] = {}
        self.driver_updates: list[tuple[int, int]] = []  # while live (UI semantics)
        self.driver_all = array("q")  # every update (partition sizes): acc, value, acc, value, ...
        self.end_events = 0
        self.aggregated = False
        self.read_ids: dict[int, str] = {}
        self.reads_snapshot: dict[int, dict[int, array]] = {}
        self.read_tasks: dict[int, int] = {}  # a snapshot stage's task count (its arrays stop at the last task seen)
        self.live = True
        self.subquery_size_ids: list[int] = []
        self.plan_text: str | None = None  # the latest physicalPlanDescription, until the execution ends

    def keep_plan_text(self, packed: bool = True) -> None:
        """Hand the latest plan text to the model (compressed unless ``packed`` is False: a
        listing reader's) and let go of it."""
        if self.plan_text is not None:
            self.model.physical_plan_z = pack_plan_description(self.plan_text, packed)
            self.plan_text = None
