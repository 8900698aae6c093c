"""Triage: every SQL execution of a source, ranked by what AQE did to it and what it cost, so a
user finds the query worth opening among hundreds (issue 12).

Each row's findings come from the views (Spark's metrics for a plain log, the replay for an
exact source); nothing is inferred beyond what the view already states.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core import config
from aqe_core.model.task_time import TaskTime
from aqe_core.engine.pipeline import skew_join_splits
from aqe_core.engine.codes import DEMOTED
from aqe_core.units import mib
from aqe_core.views.query import QueryView, ShuffleView

#: finding -> (label, the page that shows it)
FINDINGS: dict[str, tuple[str, str]] = {
    "skew_split": ("skewed reducers split", "partitions"),
    "skew_not_split": ("skew left unsplit", "partitions"),
    "coalesced": ("partitions coalesced", "partitions"),
    "straggler": ("a read stage waits on one task", "partitions"),
    "broadcast": ("join became broadcast", "plans"),
    "shuffled_hash": ("join became shuffled hash", "plans"),
    "demoted": ("broadcast demoted (too many empty partitions)", "overview"),
    "join_kept": ("join strategy kept", "plans"),
    "no_aqe": ("AQE not applied", "overview"),
}


@dataclass
class TriageRow:
    query_id: str
    description: str
    findings: list[str] = field(default_factory=list)
    summary: str = ""
    duration_ms: Optional[int] = None
    partitions: str = ""
    #: the slowest read stage's task times (max vs median), from the log's task events
    stage_time: str = ""
    #: what can help where a finding has no setting to replay (a straggler): skew handling,
    #: salting the hot key, or that no AQE setting splits this read
    next_step: str = ""
    wasted_ms: int = 0
    score: float = 0.0

    @property
    def page(self) -> str:
        """The page that shows the row's first finding."""
        return FINDINGS[self.findings[0]][1] if self.findings else "overview"

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query_id, "description": self.description[:120],
                "findings": ", ".join(FINDINGS[f][0] for f in self.findings), "read stage tasks": self.stage_time,
                "partitions": self.partitions, "duration (ms)": self.duration_ms, "what AQE did": self.summary,
                "next step": self.next_step}


def triage_row(v: QueryView) -> TriageRow:
    """One execution's findings and a score: skew and strategy changes first, then the time
    the query took and how much coalescing shrank its partitions."""
    row = TriageRow(v.query_id, v.description.replace("\n", " ").strip(), duration_ms=v.duration_ms)
    if not v.adaptive:
        row.findings.append("no_aqe")
        row.summary = "no AQE" + (f": {v.adaptive_reason}" if v.adaptive_reason else "")
        row.score = 0.1
        return row
    split = sum(s.skewed_partitions or 0 for s in v.shuffles)
    unsplit = sum(len(s.skew_rows) for s in v.shuffles if not s.skewed_partitions and s.exact)
    before = sum(s.partitions_before or 0 for s in v.shuffles if not s.local)
    after = sum(s.partitions_after or 0 for s in v.shuffles if not s.local)
    if split:
        row.findings.append("skew_split")
    if unsplit:
        row.findings.append("skew_not_split")
    if any(s.coalesced_partitions for s in v.shuffles) or (after and before > after):
        row.findings.append("coalesced")
    changes = " ".join(v.join_changes)
    if "BroadcastHashJoin" in changes and "-> BroadcastHashJoin" in changes:
        row.findings.append("broadcast")
    if "-> ShuffledHashJoin" in changes:
        row.findings.append("shuffled_hash")
    if DEMOTED in v.join_reason_codes:  # DemoteBroadcastHashJoin kept a small side from broadcasting
        row.findings.append("demoted")
    slow_read = _slowest_read(v)
    if slow_read is not None:
        sv, slow = slow_read
        row.stage_time = slow.short()
        row.wasted_ms = slow.wasted_ms
        if _straggler(slow):
            row.findings.append("straggler")
            row.next_step = straggler_help(v, sv)
    if before:
        row.partitions = f"{before} -> {after}" + (f" ({before / after:.1f}x fewer)" if after and before > after else "")
    row.summary = v.outcome
    if unsplit:  # say why, in the rule's own words (exact sources only)
        why = next(r.explanation for s in v.shuffles if s.exact and not s.skewed_partitions for r in s.skew_rows)
        row.summary = f"skew left unsplit: {why.split('; ', 1)[-1][:300]} | {row.summary}"
    weight = {"skew_split": 8.0, "skew_not_split": 9.0, "straggler": 6.0, "broadcast": 5.0, "demoted": 5.0,
              "shuffled_hash": 4.0, "coalesced": 1.0}
    row.score = (sum(weight.get(f, 0.0) for f in row.findings) + (v.duration_ms or 0) / 60_000.0
                 + row.wasted_ms / 10_000.0)
    return row


#: a read stage "waits on one task" when its slowest task runs this many times the median and
#: at least STRAGGLER_MS longer (short stages are noise, not cost)
STRAGGLER_RATIO = 4.0
STRAGGLER_MS = 1_000


def _slowest_read(v: QueryView) -> Optional[tuple[ShuffleView, TaskTime]]:
    """The read stage whose slowest task ran longest past its median (skewed reads first), with
    the shuffle it reads."""
    times = [(s, s.task_time) for s in v.shuffles if s.task_time is not None]
    skewed = [(s, t) for s, t in times if s.skewed_partitions or s.skew_rows]
    pool = skewed or times
    return max(pool, key=lambda st: st[1].wasted_ms) if pool else None


def straggler_help(v: QueryView, s: ShuffleView) -> str:
    """What can shorten a read stage that waits on one task, by what AQE can and cannot split:
    its skew-join rule splits only the sides of a sort-merge (3.2+: or shuffled hash) join, and
    OptimizeSkewInRebalancePartitions only a rebalance read; any other read (an aggregation,
    a window) no AQE setting splits."""
    join = s.join or ""
    t = s.task_time
    why = ""
    if t is not None and t.slowest_bytes_read is not None and s.sizes_after:
        med = sorted(s.sizes_after)[len(s.sizes_after) // 2]
        if med and t.slowest_bytes_read <= 2 * med:
            return (f"the slowest task read {mib(t.slowest_bytes_read)}, no more than about twice the median"
                    f" partition ({mib(med)}): not data skew, so no AQE setting helps; look at that task's executor"
                    " (GC, a slow node) or turn on speculation (spark.speculation)")
    if s.skewed_partitions:
        return ("AQE already split a skewed reducer here and a task still waits: a smaller split target"
                f" ({config.ADVISORY_PARTITION_SIZE_IN_BYTES}) cuts more parts; a single hot key in one map"
                " task cannot be split further: salt the key")
    if s.rebalance:
        on = v.conf.get_or(config.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED, True)
        return (f"rebalance skew handling is off: set {config.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED}"
                "=true" if not on else f"a smaller {config.ADVISORY_PARTITION_SIZE_IN_BYTES} lets the rebalance split"
                " the hot partition into more parts")
    if skew_join_splits(join, v.spark_version):
        if not v.conf.get_or(config.SKEW_JOIN_ENABLED, True):
            return (f"skew-join handling is off ({config.SKEW_JOIN_ENABLED}=false): turn it on and AQE can split the"
                    " hot reducer of this join; or salt the hot key")
        return (f"the hot reducer of this {join} stayed under the skew threshold: lower"
                f" {config.SKEW_JOIN_SKEWED_PARTITION_FACTOR} or {config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD}"
                " (the Partitions page draws both lines), or salt the hot key" + why)
    what = f"the {join} side" if join else "an aggregation, window or other non-join read"
    return (f"no AQE setting can split this read ({what}): AQE splits skewed reducers only on the sides of a"
            " sort-merge join (from Spark 3.2 also a shuffled hash join) and in rebalance reads; salt the hot key (a random prefix, aggregate in two steps)"
            " or handle the hot key apart")


def _straggler(t: TaskTime) -> bool:
    """
    >>> _straggler(TaskTime(4, 0, 8, 200, 5200, 3, 17)), _straggler(TaskTime(4, 0, 8, 200, 900, 3, 17))
    (True, False)
    """
    return t.ratio is not None and t.ratio >= STRAGGLER_RATIO and t.wasted_ms >= STRAGGLER_MS


def triage(views: list[QueryView], text: str = "", findings: Optional[list[str]] = None) -> list[TriageRow]:
    """Rows ranked (highest score first), filtered by ``text`` (in the id, description, SQL or
    outcome, case-insensitive) and by ``findings`` (a row must have one of them)."""
    needle = text.strip().lower()
    rows = []
    for v in views:
        row = triage_row(v)
        if needle and needle not in " ".join((v.query_id, v.description, v.outcome, _sql(v))).lower():
            continue
        if findings and not set(findings) & set(row.findings):
            continue
        rows.append(row)
    rows.sort(key=_rank)
    return rows


def ranked_views(views: list[QueryView]) -> list[QueryView]:
    """``views`` in :func:`triage`'s order, unfiltered (what a server prepares first)."""
    return [v for _, v in sorted(((triage_row(v), v) for v in views), key=lambda t: _rank(t[0]))]


def _rank(r: TriageRow) -> tuple[float, int]:
    return -r.score, int(r.query_id) if r.query_id.isdigit() else 0


def _sql(v: QueryView) -> str:
    raw = v.model.raw if v.model is not None else None
    if raw is None:
        return ""
    capture, index = raw
    q = next((x for x in capture.queries if x.index == index), None)
    return (q.sql or "") if q is not None else ""
