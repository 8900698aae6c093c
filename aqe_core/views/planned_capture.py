"""A capture's shuffles that no adaptive read reads: AQE left them as planned (issue 39).

The recorder captures every shuffle stage's map output statistics but only the adaptive reads
of the final plan, so a shuffle AQE did not touch had no view, and comparing a run that read
it as planned with one that split it lost the decision. Here each such shuffle becomes a view
with its partitions as planned and Spark's own ``bytesByPartitionId`` (exact), and the reason
AQE left it alone in those numbers, as a plain event log's are
(:func:`aqe_core.views.from_eventlog.planned_shuffle`).
"""
from __future__ import annotations

from typing import Optional

from aqe_core.config import AQEConf
from aqe_core.engine import QueryResult
from aqe_core.model.capture import QueryCapture
from aqe_core.model.plan import PlanNode
from aqe_core.views.from_eventlog import left_alone_reason
from aqe_core.views.query import ShuffleView, compute_lines, join_type_of

__all__ = ["planned_shuffles"]


def _stage_sides(plan: Optional[PlanNode]) -> dict[int, tuple[str, str, Optional[str]]]:
    """pre-order index of the first shuffle stage on each join side -> (join, side, join type)."""
    if plan is None:
        return {}
    nodes = list(plan.walk())
    index = {id(n): i for i, n in enumerate(nodes)}
    out: dict[int, tuple[str, str, Optional[str]]] = {}
    for node in nodes:
        if "Join" not in node.name or len(node.children) != 2:
            continue
        for side, child in zip(("left", "right"), node.children):
            for n in child.walk():
                if "Broadcast" in n.name or "Join" in n.name:
                    break
                if n.name.startswith(("ShuffleQueryStage", "Exchange")):
                    out.setdefault(index[id(n)], (node.name, side, join_type_of(node)))
                    break
    return out


def planned_shuffles(q: QueryCapture, qr: QueryResult, conf: AQEConf) -> list[ShuffleView]:
    """Every shuffle stage of ``q`` with more than one partition that none of ``qr``'s reads
    reads, as a view read as planned (none coalesced, none split)."""
    read = {r.shuffle_id for r in qr.reads}
    sides = _stage_sides(q.final_plan.root if q.final_plan else None)
    out = []
    for st in q.stages:
        sh = q.shuffle(st.shuffle_id)
        if st.kind != "shuffle" or sh is None or sh.shuffle_id in read or sh.num_reducers <= 1:
            continue
        join, side, jtype = sides.get(st.node, (None, None, None))
        sizes = list(sh.bytes_by_partition_id) if sh.bytes_by_partition_id is not None else None
        label = f"shuffle {sh.shuffle_id} (stage {st.stage_id}): read as planned" + (f", {side} side of {join}" if join else "")
        sv = ShuffleView(key=f"stage-{st.stage_id}-planned", label=label, stage_id=st.stage_id, side=side, join=join,
                         join_type=jtype, read_description="no adaptive read", partitions_before=sh.num_reducers,
                         partitions_after=sh.num_reducers, sizes_before=sizes, sizes_after=sizes, skewed_partitions=0,
                         skew_splits=0, coalesced_partitions=0, exact=True, adaptive_read=False)
        sv.reasons.append(left_alone_reason(sh.num_reducers, sum(sizes) if sizes is not None else None, conf,
                                            st.output_partitioning or "", sizes=sizes, cores=q.default_parallelism,
                                            join=(join, side, jtype) if join and side else None))
        compute_lines(sv, conf, q.default_parallelism)  # (what AQE measured the shuffle against)
        out.append(sv)
    return out
