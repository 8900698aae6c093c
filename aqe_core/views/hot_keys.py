"""Which key is skewed, shaped for people (issue 42): which reducers to ask about, and the code a
user runs on their own cluster when AQE Lens cannot re-run the query (an event log).

The skewed reducers are the ones the views already list: a shuffle's ``skew_rows`` (the rules'
lines over its sizes) and every reducer Spark split (``after_split``). For a capture the
reducer index is exact; for an event log's adaptive read the log has only post-AQE partitions,
so the reducer index is known only where the read kept reducer order (no adaptive read, or
:attr:`ShuffleView.after_reducers`); elsewhere the code lists the heaviest reducers' keys.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from aqe_core.model.plan import PlanNode
from aqe_core.model.scala_text import split_top_level
from aqe_core.views.plan_sql import NotSQL, conjuncts, expression_sql, project_aliases, quote_name, read_schema
from aqe_core.views.query import QueryView, ShuffleView

__all__ = ["ClusterCode", "SkewedShuffle", "cluster_code", "exchange_below", "key_display_names", "skewed_shuffles"]

_EXPR_ID = re.compile(r"#\d+L?")
_ATTR_ONLY = re.compile(r"^([A-Za-z_][\w$]*)#(\d+)L?$")
#: a scan of a catalog table (not of a DataFrame, a file path, a local table or ``range``)
_TABLE_SCAN = re.compile(r"(?:FileScan \w+|BatchScan|Scan hive)\s+((?:[\w`]+\.)+[\w`]+|[\w`]+(?=\[))")
#: filters Spark plans at run time: no SQL spells them (a subquery's result, a bloom filter)
_RUNTIME_FILTER = re.compile(r"dynamicpruning|might_contain|[Ss]ubquery")
#: names Spark's optimizer gives the expressions it pulls out into a Project
_MADE_UP = ("_groupingexpression", "_nondeterministic", "_common_expr")
_AGGREGATES = ("HashAggregate", "ObjectHashAggregate", "SortAggregate")
_HASH = re.compile(r"hashpartitioning\((.*)\)", re.S)
_PASS_THROUGH = ("WholeStageCodegen", "InputAdapter", "ColumnarToRow", "Project", "Filter", "Sort", "AQEShuffleRead",
                 "CustomShuffleReader", "ShuffleQueryStage")


@dataclass
class SkewedShuffle:
    """One shuffle with skewed reducers: reducer -> parts Spark split it into (None: not split)."""

    view: ShuffleView
    shuffle_id: Optional[int]
    reducers: dict[int, Optional[int]] = field(default_factory=dict)
    #: the reducer numbers are post-AQE partition positions, not reducer indices (an event log's read)
    positions_only: bool = False
    #: reducers Spark split that the source does not name (a plain log's skew metric): the code
    #: for the cluster lists the heaviest reducers instead
    unnamed_splits: int = 0

    @property
    def label(self) -> str:
        if self.view.join:
            return f"{self.view.side} side of {self.view.join}" + (f" ({self.view.join_type})" if self.view.join_type else "")
        return "shuffle read" + (" (rebalance)" if self.view.rebalance else "")


def _shuffle_id(view: QueryView, sv: ShuffleView) -> Optional[int]:
    raw = view.model.raw if view.model is not None else None
    if not raw:
        return None
    capture, index = raw
    q = next((x for x in capture.queries if x.index == index), None)
    stage = next((s for s in q.stages if s.stage_id == sv.stage_id), None) if q is not None else None
    return stage.shuffle_id if stage is not None else None


def skewed_shuffles(view: QueryView) -> list[SkewedShuffle]:
    """Every shuffle of ``view`` with a skewed (split or unsplit) reducer, as the views list them."""
    out = []
    for sv in view.shuffles:
        if sv.local:
            continue
        reducers: dict[int, Optional[int]] = {r.partition: r.splits for r in sv.skew_rows}
        positions = sv.sizes_before is None and sv.adaptive_read
        if positions and sv.after_reducers:  # post-AQE positions -> the reducers they read
            reducers = {sv.after_reducers[p][0]: s for p, s in reducers.items() if p < len(sv.after_reducers)}
            positions = False
        if sv.after_reducers and sv.after_split:
            for (start, _end), split in zip(sv.after_reducers, sv.after_split):
                if split:
                    reducers[start] = sum(1 for (s, _), p in zip(sv.after_reducers, sv.after_split) if p and s == start)
        unnamed = 0
        if not reducers and sv.skewed_partitions:  # Spark's metric: split, but not which reducers
            positions, unnamed = True, sv.skewed_partitions
        elif not reducers:
            continue
        out.append(SkewedShuffle(sv, _shuffle_id(view, sv), dict(sorted(reducers.items())), positions, unnamed))
    return out


def exchange_below(plan: Optional[PlanNode], node_id: Optional[int], stage_id: Optional[int] = None) -> Optional[PlanNode]:
    """The shuffle exchange a read (plan node ``node_id``, else the query stage ``stage_id``) reads."""
    if plan is None:
        return None
    start = next((n for n in plan.walk() if node_id is not None and n.id == node_id), None)
    if start is None and stage_id is not None:
        start = next((n for n in plan.walk() if n.name.startswith("ShuffleQueryStage")
                      and n.description.split()[-1:] == [str(stage_id)]), None)
    if start is None:
        return None
    for n in start.walk():
        if n.name.endswith("Exchange") and "Broadcast" not in n.name:
            return n
    return None


def _partitioning(exchange: PlanNode) -> Optional[tuple[list[str], int]]:
    """(key expressions as printed, ids kept; partition count) of ``hashpartitioning(k#1, k2#2, 200)``."""
    m = _HASH.search(exchange.description)
    if m is None:
        return None
    depth, end = 0, len(m.group(1))
    for i, ch in enumerate(m.group(1)):  # the hashpartitioning(...) call ends at its own ")"
        depth += ch == "("
        if ch == ")":
            if depth == 0:
                end = i
                break
            depth -= 1
    parts = split_top_level(m.group(1)[:end])
    if len(parts) < 2 or not parts[-1].strip().isdigit():
        return None
    return [p.strip() for p in parts[:-1]], int(parts[-1])


@dataclass
class _Side:
    """What feeds an exchange, read from the plan: its one table (None: not one scan), its filters
    and ``Project`` aliases as printed, the scan's column types, and what the plan shows."""

    table: Optional[str]
    filters: list[str]
    aliases: dict[str, str]
    types: dict[str, str]
    what: str
    input_kind: str = "join side"


def _side(exchange: PlanNode) -> _Side:
    """Walk the chain below ``exchange`` (a partial aggregate is stepped over: its input rows are
    counted, as :mod:`aqe_core.live.hot_keys` does) down to one table scan."""
    leaves, filters, aliases, simple, kind = [], [], {}, True, "join side"
    types: dict[str, str] = {}
    for n in exchange.children[0].walk() if exchange.children else []:
        if not n.children:
            leaves.append(n.description or n.name)
            types = read_schema(n.description)
        elif n.name.startswith("Filter"):
            filters.append(n.description[len("Filter"):].strip())
        elif n.name.startswith("Project"):
            aliases.update(project_aliases(n.description))
        elif n.name.startswith(_AGGREGATES) and "partial_" in n.description and kind == "join side":
            kind = "aggregation input"
        elif not n.name.startswith(_PASS_THROUGH):
            simple = False
    what = "; ".join(_EXPR_ID.sub("", x)[:200] for x in leaves) or "?"
    table = _TABLE_SCAN.match(leaves[0]) if len(leaves) == 1 else None
    return _Side(table.group(1) if simple and table is not None else None, filters, aliases, types, what, kind)


def _runnable(side: _Side, keys: list[str]) -> tuple[Optional[str], list[str], str]:
    """(the side's query, the keys as SQL, "") where the plan's text reads as SQL; else
    (None, [], why not). Attributes a ``Project`` aliased become the aliased expression."""
    if side.table is None:
        return None, [], f"the exchange's input is not one table scan under filters ({side.what})"

    def resolve(name: str, expr_id: str) -> str:
        if expr_id in side.aliases:
            return "(" + expression_sql(side.aliases[expr_id], side.types, resolve) + ")"
        return quote_name(name)

    parts = [c for f in side.filters for c in conjuncts(f)]
    runtime = [c for c in parts if _RUNTIME_FILTER.search(c)]
    try:
        where = " AND ".join(expression_sql(c, side.types, resolve) for c in parts if c not in runtime)
        key_sql = [expression_sql(k, side.types, resolve) for k in keys]
    except NotSQL as e:
        return None, [], f"the plan's text does not read as SQL with certainty: {e}"
    table = ".".join(quote_name(p.strip("`")) for p in side.table.split("."))
    dropped = (f"left out {len(runtime)} filter(s) Spark made at run time (dynamic partition pruning, a bloom"
               " filter): the side holds rows Spark pruned, so the rows check may fail" if runtime else "")
    return f"SELECT * FROM {table}" + (f" WHERE {where}" if where else ""), key_sql, dropped


def key_display_names(keys: list[str], aliases: dict[str, str]) -> list[str]:
    """The keys as people name them: ids dropped, and a name Spark made up (``_groupingexpression``:
    a grouping expression ``PullOutGroupingExpressions`` moved into a ``Project``) replaced by the
    expression it stands for; the user's own aliases stay."""
    def one(k: str) -> str:
        m = _ATTR_ONLY.match(k.strip())
        made_up = m is not None and m.group(2) in aliases and m.group(1).startswith(_MADE_UP)
        return _EXPR_ID.sub("", aliases[m.group(2)] if made_up and m is not None else k).strip()

    return [one(k) for k in keys]


@dataclass
class ClusterCode:
    """SQL for the user to run on their own cluster: AQE Lens did not run it. ``side_sql`` and
    ``key_sql``: the exchange's input and keys as SQL that runs (names quoted, literals typed),
    None where the plan's text could not be written so (``why_not`` says why, or what was left out
    where it could); ``hot-keys --spark`` runs them."""

    sql: str
    keys: list[str]
    num_partitions: int
    reducers: list[int]
    note: str
    side_sql: Optional[str] = None
    key_sql: list[str] = field(default_factory=list)
    why_not: str = ""
    input_kind: str = "join side"
    records_written: Optional[int] = None  # Spark's "shuffle records written" of the exchange


def cluster_code(sk: SkewedShuffle, plan: Optional[PlanNode], top: int = 20) -> Optional[ClusterCode]:
    """The top keys of ``sk``'s reducers as SQL to run where the tables are, from the exchange's
    ``hashpartitioning`` text in the plan (keys in Spark's order and types, casts included; Spark's
    SQL ``hash`` is the partitioning's Murmur3 with seed 42). None without a hash-partitioned exchange."""
    exchange = exchange_below(plan, sk.view.node_id, sk.view.stage_id)
    got = _partitioning(exchange) if exchange is not None else None
    if exchange is None or got is None:
        return None
    raw_keys, n = got
    side = _side(exchange)
    keys = key_display_names(raw_keys, side.aliases)
    query, key_sql, why_not = _runnable(side, raw_keys)
    shown = key_sql or keys
    cols = ", ".join(f"{k} AS key{i}" for i, k in enumerate(shown))
    reducer = f"pmod(hash({', '.join(shown)}), {n})"
    body = query or f"<the rows that feed this exchange: {side.what}>"
    groups = ", ".join(f"key{i}" for i in range(len(keys)))
    sql = "\n".join([
        "-- CODE FOR YOU TO RUN on your cluster (AQE Lens did not run it): the top keys of reducers of",
        f"-- {sk.label}, exchange hashpartitioning({', '.join(keys)}, {n}). Spark puts a row in",
        f"-- reducer pmod(hash(keys), {n}) (HashPartitioning.partitionIdExpression, Murmur3 seed 42).",
        "-- Check the side's query: it must give the rows this exchange hashed (same filters).",
        f"WITH side AS ({body}),",
        f"keyed AS (SELECT {reducer} AS reducer, {cols} FROM side)",
        f"SELECT reducer, {groups}, count(*) AS rows,",
        "       count(*) / sum(count(*)) OVER (PARTITION BY reducer) AS share",
        "FROM keyed",
        f"GROUP BY reducer, {groups}",
        "ORDER BY rows DESC",
        f"LIMIT {top}",
    ])
    if not sk.positions_only:
        sql = sql.replace("FROM keyed\n", f"FROM keyed\nWHERE reducer IN ({', '.join(str(r) for r in sk.reducers)})\n")
    else:
        sql = sql.replace("FROM keyed\n", "FROM keyed\n-- (the log names post-AQE partitions, not reducers: the"
                                          " heaviest reducers come first)\n")
    note = ("the exchange's input is one table scan under filters, written from the plan (names quoted, literals"
            " typed from the scan's schema): check it" + (f"; {why_not}" if why_not else "") if query else
            f"fill in the side's query ({why_not}); the plan shows {side.what}")
    written = (exchange.metric("shuffle records written") or {}).get("total")
    return ClusterCode(sql, keys, n, sorted(sk.reducers), note, query, key_sql, why_not, side.input_kind,
                       int(written) if isinstance(written, (int, float)) else None)
