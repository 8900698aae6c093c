"""Which Spark stage ran a plan node, and how long its tasks took (event logs).

Spark's SQL metrics say it themselves: a metric's max is held by a task of one stage
(``max_task``), so an exchange's ``shuffle bytes written`` names its map stage and an operator's
``number of output rows`` the stage it ran in. An adaptive read has only driver metrics; its
stage is the one whose tasks read its exchange (``ShuffleView.stage_id``).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, is_shuffle_exchange
from aqe_core.model.task_time import TaskTime
from aqe_core.units import human_ms, mib
from aqe_core.views.query import QueryView

_READS = SHUFFLE_READ_NAMES  # (an engine's read too: RAPIDS' GpuCustomShuffleReader)
#: the metric that names the stage an exchange's map side ran in ("num bytes written": Photon's
#: sink, aqe_core/model/engines.py)
_MAP_METRICS = ("shuffle bytes written", "shuffle records written", "data size", "num bytes written")
#: the metrics an exchange's reduce tasks update
_READ_METRICS = ("local bytes read", "remote bytes read", "records read")


def metric_stage(m: Mapping[str, Any]) -> Optional[int]:
    """The stage of the task holding the metric's max, or None (driver-side or not aggregated).

    >>> metric_stage({"name": "shuffle bytes written", "max_task": {"stage": 3, "attempt": 0, "task": 9}})
    3
    >>> metric_stage({"name": "partition data size", "max_task": "driver"}) is None
    True
    """
    where = m.get("max_task")
    if isinstance(where, dict) and isinstance(where.get("stage"), int):
        return where["stage"]
    return None


def node_stage(node: PlanNode, read_stages: Mapping[int, int],
               stage_of: Callable[[Mapping[str, Any]], Optional[int]] = metric_stage) -> Optional[int]:
    """The Spark stage a node ran in: a read's from ``read_stages`` (node id -> stage), an
    exchange's map stage, else the stage of the first metric ``stage_of`` places."""
    if node.name.startswith(_READS):
        return read_stages.get(node.id) if node.id is not None else None
    by_name = {str(m.get("name", "")).strip(): m for m in node.metrics}
    if _is_exchange(node):
        for key in _MAP_METRICS:
            if key in by_name and stage_of(by_name[key]) is not None:
                return stage_of(by_name[key])
        return None
    for m in node.metrics:
        sid = stage_of(m)
        if sid is not None:
            return sid
    return None


def _is_exchange(node: PlanNode) -> bool:
    """A shuffle exchange drawn as itself (Spark's ``Exchange``, an engine's: Photon's sink)."""
    return is_shuffle_exchange(node) and node.name != "ReusedExchange"


def stages_by_accumulators(plan: Optional[PlanNode], acc_stage: Mapping[int, int]) -> dict[int, int]:
    """Node id -> Spark stage for a plan whose metrics carry no values (a live capture), from
    which stage's tasks updated each metric's accumulator; a read's stage is the one whose
    tasks read its exchange (``local/remote bytes read``).

    >>> ex = PlanNode(2, "Exchange", "Exchange", [{"name": "shuffle bytes written", "accumulator_id": 7},
    ...                                           {"name": "local bytes read", "accumulator_id": 8}])
    >>> read = PlanNode(1, "AQEShuffleRead", "AQEShuffleRead coalesced", [], [ex])
    >>> stages_by_accumulators(PlanNode(0, "Sort", "Sort", [], [read]), {7: 3, 8: 5})
    {1: 5, 2: 3}
    """
    if plan is None:
        return {}

    def stage_of(m: Mapping[str, Any]) -> Optional[int]:
        acc = m.get("accumulator_id")
        return acc_stage.get(acc) if isinstance(acc, int) else None

    reads: dict[int, int] = {}
    for node in plan.walk():
        if node.name.startswith(_READS) and node.id is not None:
            for ex in node.walk():
                if _is_exchange(ex):
                    sid = next((stage_of(m) for m in ex.metrics if str(m.get("name", "")).strip() in _READ_METRICS
                                and stage_of(m) is not None), None)
                    if sid is not None:
                        reads[node.id] = sid
                    break
    out: dict[int, int] = {}
    for node in plan.walk():
        sid = node_stage(node, reads, stage_of)
        if sid is not None and node.id is not None:
            out[node.id] = sid
    return out


def final_node_stages(view: QueryView) -> dict[int, int]:
    """Node id -> Spark stage for the view's final plan (kept with the view: an exact view of
    the same execution, whose plan carries the same node ids, shows it too)."""
    reads = {s.node_id: s.stage_id for s in view.shuffles if s.node_id is not None and s.stage_id is not None}
    out: dict[int, int] = {}
    for node in view.final_plan.walk() if view.final_plan is not None else ():
        sid = node_stage(node, reads)
        if sid is not None and node.id is not None:
            out[node.id] = sid
    return out


def plan_stage_times(view: QueryView, plan: Optional[PlanNode] = None) -> "NodeTimes":
    """The view's stage times, keyed the way the plan figures look them up; the final plan's
    known node stages apply only to the final plan (other versions number their nodes anew)."""
    reads = {s.node_id: s.stage_id for s in view.shuffles if s.node_id is not None and s.stage_id is not None}
    final = plan is None or plan is view.final_plan or (bool(view.plan_versions) and plan is view.plan_versions[-1])
    return NodeTimes(dict(view.stage_times), reads, view.node_stages if final else {})


class NodeTimes:
    """Stage times for the nodes of a plan (empty for sources without task events)."""

    def __init__(self, stage_times: dict[int, TaskTime], read_stages: dict[int, int],
                 node_stages: Optional[dict[int, int]] = None) -> None:
        self.stage_times = stage_times
        self.read_stages = read_stages
        self.node_stages = node_stages or {}

    def __bool__(self) -> bool:
        return bool(self.stage_times)

    def of(self, node: PlanNode) -> Optional[TaskTime]:
        sid = node_stage(node, self.read_stages)
        if sid is None and node.id is not None:
            sid = self.node_stages.get(node.id)
        return self.stage_times.get(sid) if sid is not None else None

    def stage_ms(self, node: PlanNode) -> Optional[tuple[int, float]]:
        """(stage id, duration) of the stage a boundary node (an exchange or a read) stands for;
        None for any other node or a stage without a time (so a path counts each stage once)."""
        if not node.name.startswith(_READS) and not _is_exchange(node):
            return None
        t = self.of(node)
        return (t.stage_id, float(t.stage_ms)) if t is not None and t.stage_ms is not None else None

    def label(self, node: PlanNode) -> list[str]:
        """The short lines on the figure: exchanges and reads only (the stage boundaries).

        >>> t = TaskTime(4, 0, 8, 140, 758, 1, 5, 3200)
        >>> NodeTimes({4: t}, {7: 4}).label(PlanNode(7, "AQEShuffleRead", "AQEShuffleRead skewed"))
        ['stage 4: 3.2 s', 'tasks max 758 ms, med 140 ms']
        """
        if not node.name.startswith(_READS) and not _is_exchange(node):
            return []
        t = self.of(node)
        if t is None:
            return []
        took = f": {human_ms(t.stage_ms)}" if t.stage_ms is not None else ""
        if node.name.startswith(_READS):
            return [f"stage {t.stage_id}{took}", f"tasks max {human_ms(t.max_ms)}, med {human_ms(t.median_ms)}"]
        return [f"map stage {t.stage_id}{took}"]


def node_at(plan: PlanNode, path: str) -> Optional[PlanNode]:
    """The node at a figure path ("0" the root, "0.1" its second child, ...)."""
    parts = path.split(".")
    if not parts or parts[0] != "0":
        return None
    node = plan
    for p in parts[1:]:
        if not p.isdigit() or int(p) >= len(node.children):
            return None
        node = node.children[int(p)]
    return node


def stage_sentence(t: TaskTime, node: Optional[PlanNode]) -> str:
    """What the details panel says about a node's stage (``node`` None: an adaptive read's, on
    the Partitions page); a read names its slowest task.

    >>> t = TaskTime(4, 0, 8, 140, 758, 1, 5, 3200, 9 * 1024 * 1024)
    >>> print(stage_sentence(t, PlanNode(7, "AQEShuffleRead", "AQEShuffleRead skewed")))
    Read in stage 4 (3.2 s, 8 tasks). Slowest task: index 1 (task id 5), 758 ms, read 9 MiB; median task 140 ms (5x).
    """
    took = f"{human_ms(t.stage_ms)}, " if t.stage_ms is not None else ""
    what = ("Read in" if node is None or node.name.startswith(_READS)
            else "Map side ran in" if _is_exchange(node) else "Ran in")
    read = f", read {mib(t.slowest_bytes_read)}" if t.slowest_bytes_read is not None else ""
    ratio = f" ({t.ratio:.0f}x)" if t.ratio is not None and t.ratio >= 1.5 else ""
    return (f"{what} stage {t.stage_id}{'.' + str(t.attempt) if t.attempt else ''} ({took}{t.tasks} tasks). Slowest task:"
            f" index {t.slowest_index} (task id {t.slowest_task_id}), {human_ms(t.max_ms)}{read}; median task"
            f" {human_ms(t.median_ms)}{ratio}.")
