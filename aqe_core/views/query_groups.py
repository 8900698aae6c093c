"""Executions grouped by query: how AQE decided each time one query ran (issue 41).

Long-running applications write the same query over and over: Structured Streaming runs AQE per
micro-batch (Spark 4.1+), a Thrift server or a notebook runs one statement many times. A group
is every execution of one query; for each it counts the executions, their time span and, for
each AQE decision (partitions after AQE per shuffle read, reducers split for skew, each join's
strategy), how often each outcome was taken and the executions where it changed, in a sentence
with the log's own numbers.

**Which fingerprint.** Executions group by the third component of Compare runs'
:func:`~aqe_core.views.align_runs.fingerprint`: the plan's shape with join strategies aside
(every join one ``Join`` with its type and keys, the exchanges and local sorts a strategy needs
dropped; literals, ids, paths and partition counts normalised). The fingerprint reads the
initial plan (the final one where a source has none), so a join AQE alone flips leaves the plain
shape alone; but the planner's own choice flips too where its statistics grow past
``spark.sql.autoBroadcastJoinThreshold`` (a file source's sizes, a streaming query's state), and
a source without the initial plan shows only the final strategy: the plain shape would then cut
one query's runs in two exactly where the change a group must show happens; the SQL-text component is empty for most event logs (PySpark logs a
call site) and differs between batches that carry their batch id; the inputs component merges
queries that only aggregate the same join differently.

**Streaming.** :class:`QueryGrouper` takes one :class:`~aqe_core.views.execution_summary.ExecutionSummary`
at a time, in execution order, and keeps per group only counters, the ids and the first
:data:`MAX_CHANGES` change points of each decision, so a reader can feed it a million executions
without holding a million views.
"""
from __future__ import annotations

import re
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional

from aqe_core.model.evidence import Evidence
from aqe_core.views.execution_summary import ExecutionSummary, JoinFacts

__all__ = ["Change", "Decision", "MAX_CHANGES", "QueryGroup", "QueryGrouper", "distribution_text", "group_executions",
           "group_views", "groups_json", "groups_lines", "long_running", "repeated"]

#: change points kept per decision of a group (the rest are counted)
MAX_CHANGES = 20
#: the words for a join strategy (Spark's operator name)
STRATEGY_WORDS = {"BroadcastHashJoin": "broadcast hash join", "SortMergeJoin": "sort-merge join",
                  "ShuffledHashJoin": "shuffled hash join", "BroadcastNestedLoopJoin": "broadcast nested loop join",
                  "CartesianProduct": "cartesian product"}
#: decision kinds, in the order a group lists them
KINDS = ("join", "partitions", "skew")


def _n(x: object) -> str:
    """A number with thousands separators (``5,231``), anything else as it is."""
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x)


def _execution(ex: ExecutionSummary) -> str:
    """``execution 5,231 (batch 5,231)``: the batch only where the description names it."""
    return f"execution {_n(int(ex.execution)) if ex.execution.isdigit() else ex.execution}" + (
        f" (batch {_n(ex.batch)})" if ex.batch is not None else "")


def _read(key: str) -> str:
    """``read of the shuffle on hashpartitioning(k)``; ``read of a shuffle (left side of a join)``
    where the source does not name the shuffle's partitioning (a capture's read)."""
    return f"read of {key}" if key.startswith("a shuffle") else f"read of the shuffle on {key}"


@dataclass(frozen=True)
class Change:
    """A decision of one execution that differs from the previous execution of its query."""

    kind: str
    key: str
    execution: str
    batch: Optional[int]
    previous: str
    before: Any
    after: Any
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "execution": self.execution, "batch": self.batch,
                "previous_execution": self.previous, "before": self.before, "after": self.after,
                "sentence": self.sentence}


@dataclass
class Decision:
    """One decision of a query (a join's strategy, a read's partitions after AQE or its skew
    splits) over the group's executions: how many took each outcome, and where it changed."""

    kind: str
    key: str
    counts: Counter = field(default_factory=Counter)
    changes: list[Change] = field(default_factory=list)
    changed: int = 0
    last: Any = None
    last_execution: Optional[ExecutionSummary] = None

    @property
    def label(self) -> str:
        if self.kind == "join":
            return f"{self.key}: strategy"
        what = "partitions after AQE" if self.kind == "partitions" else "reducers split for skew"
        return f"{self.subject}: {what}"

    @property
    def subject(self) -> str:
        """What the decision is about: the join, or the shuffle read."""
        return self.key if self.kind == "join" else _read(self.key)

    def distribution(self) -> list[tuple[Any, int]]:
        """(outcome, executions) by outcome: joins most taken first, counts in their order."""
        if self.kind == "join":
            return sorted(self.counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
        return sorted(self.counts.items(), key=lambda kv: (kv[0] is None, kv[0] if kv[0] is not None else 0))

    def distribution_text(self) -> str:
        """``sort-merge join in 3, broadcast hash join in 17`` / ``2 in 10, 3 in 4``."""
        return distribution_text(self.kind, self.distribution())

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "label": self.label,
                "distribution": [{"value": v, "executions": k} for v, k in self.distribution()],
                "changed": self.changed, "changes": [c.to_dict() for c in self.changes]}


def distribution_text(kind: str, pairs: Iterable[tuple[Any, int]]) -> str:
    """A decision's outcomes with how many executions took each, in words.

    >>> distribution_text("join", [("BroadcastHashJoin", 17), ("SortMergeJoin", 3)])
    'broadcast hash join in 17, sort-merge join in 3'
    >>> distribution_text("partitions", [(2, 1500), (None, 1)])
    '2 in 1,500, not in the log in 1'
    """
    def words(v: Any) -> str:
        if kind == "join":
            return str(STRATEGY_WORDS.get(v, v))
        return "not in the log" if v is None else _n(v)

    return ", ".join(f"{words(v)} in {_n(k)}" for v, k in pairs)


def _join_reason(j: JoinFacts) -> str:
    """Why the join took its strategy, where the log has the numbers: the side's shuffle size
    (Spark's ``data size`` metric, the runtime statistics AQE re-plans with) against the threshold."""
    if j.side_bytes is None or j.threshold is None:
        return ""
    if j.threshold < 0:
        return f": broadcasting is off ({j.threshold_key} = {_n(j.threshold)})"
    fits = 0 <= j.side_bytes <= j.threshold
    if j.strategy == "BroadcastHashJoin" and fits:
        return (f": its {j.side} side's shuffle wrote {_n(j.side_bytes)} B (Spark's metric 'data size'), within"
                f" {j.threshold_key} = {_n(j.threshold)} B")
    if j.strategy != "BroadcastHashJoin" and not fits:
        return (f": the smaller side it could broadcast ({j.side}) wrote {_n(j.side_bytes)} B (Spark's metric"
                f" 'data size'), over {j.threshold_key} = {_n(j.threshold)} B")
    return ""


def _known(ex: ExecutionSummary) -> str:
    """How a read's numbers are known: ``exact`` (a capture, listener events) or ``Spark's metric``."""
    try:
        return Evidence(ex.evidence).label
    except ValueError:
        return ex.evidence


def _sentence(d: Decision, ex: ExecutionSummary, value: Any, facts: Any) -> str:
    prev = d.last_execution
    since = f"{_execution(prev)}" if prev is not None else "the execution before"
    if d.kind == "join":
        now, was = STRATEGY_WORDS.get(value, value), STRATEGY_WORDS.get(d.last, d.last)
        return (f"From {_execution(ex)} the {d.key} is a {now} (a {was} in {since})"
                + (_join_reason(facts) if isinstance(facts, JoinFacts) else "") + ".")
    if d.kind == "partitions":
        return (f"From {_execution(ex)} the {_read(d.key)} has {_n(value)} partitions after AQE"
                f" ({_n(d.last)} in {since}; {_known(ex)}).")
    return (f"From {_execution(ex)} AQE splits {_n(value)} skewed reducer{'s' if value != 1 else ''} of the"
            f" {_read(d.key)} ({_n(d.last)} in {since}; {_known(ex)}).")


def _number(eid: object) -> Optional[int]:
    """``eid`` as the number it writes, when it is a plain one (Spark's ids; no sign, no leading
    zero) that fits in eight bytes; else None."""
    if isinstance(eid, str) and eid.isdigit() and str(int(eid)) == eid and int(eid) < 1 << 63:
        return int(eid)
    return None


class ExecutionIds:
    """A group's execution ids in the order added: eight bytes an id while every id is a plain
    number (Spark's), as text past the first that is not (a capture's query ids), so a query run
    a million times keeps 8 MB of ids, not 60.

    >>> ids = ExecutionIds(); ids.append("7"); ids.append("12"); (len(ids), ids[0], ids[-1], ids[:5])
    (2, '7', '12', ['7', '12'])
    >>> ids.append("q-3"); list(ids)
    ['7', '12', 'q-3']
    """

    def __init__(self) -> None:
        self._nums: "array[int] | None" = array("q")
        self._text: list[str] = []

    def append(self, eid: str) -> None:
        nums = self._nums
        if nums is not None:
            n = _number(eid)
            if n is not None:
                nums.append(n)
                return
            self._text, self._nums = [str(n) for n in nums], None
        self._text.append(eid)

    def __len__(self) -> int:
        return len(self._nums) if self._nums is not None else len(self._text)

    def __getitem__(self, i: Any) -> Any:
        if self._nums is None:
            return self._text[i]
        got = self._nums[i]
        return [str(n) for n in got] if isinstance(i, slice) else str(got)

    def __iter__(self) -> Iterator[str]:
        return iter(self._text) if self._nums is None else (str(n) for n in self._nums)

    def __contains__(self, eid: object) -> bool:
        if self._nums is None:
            return eid in self._text
        n = _number(eid)
        return n is not None and n in self._nums

    def index(self, eid: str) -> int:
        """The position of ``eid`` (ValueError if absent): a scan in C over the numbers, so the
        app's picker finds an execution among a million at once.

        >>> ids = ExecutionIds(); ids.append("7"); ids.append("12"); ids.index("12")
        1
        """
        if self._nums is None:
            return self._text.index(eid)
        n = _number(eid)
        if n is None:
            raise ValueError(f"{eid!r} is not an execution of this group")
        return self._nums.index(n)

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, ExecutionIds)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


@dataclass
class QueryGroup:
    """Every execution of one query, and what AQE decided across them."""

    query: str
    name: str
    execution_ids: ExecutionIds = field(default_factory=ExecutionIds)
    first_start_ms: Optional[int] = None
    last_end_ms: Optional[int] = None
    evidence: set[str] = field(default_factory=set)
    decisions: dict[tuple[str, str], Decision] = field(default_factory=dict)
    #: executions whose adaptive plan never became final (no decision of theirs is counted)
    not_final: int = 0
    #: executions AQE did not run in (spark.sql.adaptive.enabled=false, a Spark 3.x micro-batch)
    not_adaptive: int = 0
    #: the name its first execution gives (``name`` adds what tells it from a group of the same name)
    given_name: str = ""

    def __post_init__(self) -> None:
        self.given_name = self.given_name or self.name

    @property
    def count(self) -> int:
        return len(self.execution_ids)

    def ordered_decisions(self) -> list[Decision]:
        return sorted(self.decisions.values(), key=lambda d: (KINDS.index(d.kind), d.key))

    def changes(self) -> list[Change]:
        """Every change point kept: joins' first (a strategy flip is the news), each kind in execution order."""
        out = [c for d in self.decisions.values() for c in d.changes]
        return sorted(out, key=lambda c: (KINDS.index(c.kind), int(c.execution) if c.execution.isdigit() else 0))

    def span_text(self) -> str:
        """``12.3 s (first start .. last end)`` from the log's own times, or "" where it has none."""
        if self.first_start_ms is None or self.last_end_ms is None:
            return ""
        from aqe_core.units import human_ms

        return human_ms(max(0, self.last_end_ms - self.first_start_ms))

    def decisions_text(self) -> str:
        """Each decision with its outcomes and how many executions took each."""
        return "; ".join([f"{d.label}: {d.distribution_text()}" for d in self.shown_decisions()]
                         + ([self.not_final_text()] if self.not_final else []))

    def not_final_text(self) -> str:
        return (f"{_n(self.not_final)} execution{'s' if self.not_final != 1 else ''} without AQE's final plan"
                " (isFinalPlan=false: a micro-batch's root, whose plan ran in its sub-execution, or a run that did"
                " not finish), not counted")

    def shown_decisions(self) -> list[Decision]:
        """The decisions people read: all but a read's skew splits where none was ever split."""
        return [d for d in self.ordered_decisions() if d.kind != "skew" or set(d.counts) - {0}]

    def add(self, ex: ExecutionSummary) -> None:
        self.execution_ids.append(ex.execution)
        if ex.start_ms is not None:
            self.first_start_ms = ex.start_ms if self.first_start_ms is None else min(self.first_start_ms, ex.start_ms)
        if ex.end_ms is not None:
            self.last_end_ms = ex.end_ms if self.last_end_ms is None else max(self.last_end_ms, ex.end_ms)
        self.evidence.add(ex.evidence)
        if not ex.final:
            self.not_final += 1
        if not ex.adaptive:
            self.not_adaptive += 1
        if not ex.adaptive or not ex.final:
            return
        facts: list[tuple[str, str, Any, Any]] = [("join", j.key, j.strategy, j) for j in ex.joins]
        for r in ex.reads:
            facts.append(("partitions", r.key, r.partitions_after, r))
            if r.skewed is not None:
                facts.append(("skew", r.key, r.skewed, r))
        for kind, key, value, fact in facts:
            self._decide(kind, key, value, fact, ex)

    def _decide(self, kind: str, key: str, value: Any, fact: Any, ex: ExecutionSummary) -> None:
        d = self.decisions.get((kind, key))
        if d is None:
            d = self.decisions[(kind, key)] = Decision(kind, key)
        d.counts[value] += 1
        if d.last_execution is not None and value != d.last:
            d.changed += 1
            if len(d.changes) < MAX_CHANGES:
                d.changes.append(Change(kind, key, ex.execution, ex.batch, d.last_execution.execution, d.last, value,
                                        _sentence(d, ex, value, fact)))
        d.last, d.last_execution = value, ex

    def row(self) -> dict[str, Any]:
        """The Overview's row of the group (people's words; :meth:`to_dict` is the data)."""
        first, last = self.execution_ids[0], self.execution_ids[-1]
        return {"query": self.name, "executions": self.count, "first / last execution": f"{first} / {last}",
                "span": self.span_text(), "AQE's decisions (executions)": self.decisions_text(),
                "changes": sum(d.changed for d in self.decisions.values())}

    def to_dict(self, ids: int = 1000) -> dict[str, Any]:
        """The group as JSON (``ids``: at most this many execution ids, the first ones)."""
        levels = sorted(self.evidence)
        return {"query": self.query, "name": self.name, "executions": self.count,
                "execution_ids": self.execution_ids[:ids], "first_start_ms": self.first_start_ms,
                "last_end_ms": self.last_end_ms, "evidence": levels[0] if len(levels) == 1 else levels,
                "not_final": self.not_final, "decisions": [d.to_dict() for d in self.ordered_decisions()],
                "changes": [c.sentence for c in self.changes()]}


#: the first line of an unnamed streaming query's micro-batch description: StreamExecution
#: .getBatchDescriptionString writes the query's name (empty without queryName), then "id = <uuid>"
_UNNAMED = re.compile(r"id = ([0-9a-fA-F-]{8,})")


def _name(ex: ExecutionSummary) -> str:
    """A group's name: its first execution's description; a streaming query's name (the first
    line of a micro-batch's description) and the batch it starts at.

    A query the job did not name (``queryName``) starts its description with its id: it is named
    by the id's first eight characters, so names fit a column.

    >>> _name(ExecutionSummary("8", "rows\\nid = e43d\\nrunId = cb52\\nbatch = 0", "q", 0))
    'rows (streaming query, from batch 0)'
    >>> _name(ExecutionSummary("8", "\\nid = 986ef544-7937-4855-8a8b-703b286bc450\\nrunId = 31\\nbatch = 3", "q", 3))
    'streaming query 986ef544 (from batch 3)'
    """
    if ex.batch is not None:
        lines = [x.strip() for x in ex.description.splitlines() if x.strip()]
        unnamed = _UNNAMED.fullmatch(lines[0]) if lines else None
        if unnamed is not None or not lines:
            tag = f" {unnamed.group(1)[:8]}" if unnamed is not None else ""
            return f"streaming query{tag} (from batch {_n(ex.batch)})"
        return f"{lines[0]} (streaming query, from batch {_n(ex.batch)})"
    return ex.description.replace("\n", " ")[:120]


class QueryGrouper:
    """Groups :class:`ExecutionSummary` values by query as they come (in execution order)."""

    def __init__(self) -> None:
        self._groups: dict[str, QueryGroup] = {}

    def add(self, ex: ExecutionSummary) -> None:
        g = self._groups.get(ex.query)
        if g is None:
            g = self._groups[ex.query] = QueryGroup(ex.query, _name(ex))
        g.add(ex)

    def __len__(self) -> int:
        """How many groups so far (a listing's memory grows with them)."""
        return len(self._groups)

    def groups(self) -> list[QueryGroup]:
        """The groups, most executions first (then by their first execution), each named apart
        from the others (:func:`named_apart`)."""
        return named_apart(sorted(self._groups.values(), key=lambda g: -g.count))


def named_apart(groups: list[QueryGroup]) -> list[QueryGroup]:
    """``groups`` with a name each: where several share their first execution's description (a
    streaming query's foreachBatch runs two statements per batch, both described by the query's
    id), each name adds its first decision's subject ("Inner join on [k] = [k]", "read of the
    shuffle on hashpartitioning(id)"), else its query's number among them.

    >>> a, b = QueryGroup("qa", "id = 98"), QueryGroup("qb", "id = 98")
    >>> [g.name for g in named_apart([a, b, QueryGroup("qc", "SELECT 1")])]
    ['id = 98 (query 1 of 2 so named)', 'id = 98 (query 2 of 2 so named)', 'SELECT 1']
    """
    shared = Counter(g.given_name for g in groups)
    nth: Counter = Counter()
    for g in groups:
        g.name = g.given_name
        if shared[g.given_name] > 1:
            nth[g.given_name] += 1
            subject = next((d.subject for d in g.shown_decisions()), None)
            g.name = (f"{g.given_name}: {subject}" if subject else
                      f"{g.given_name} (query {nth[g.given_name]} of {shared[g.given_name]} so named)")
    again, nth = Counter(g.name for g in groups), Counter()
    for g in groups:
        if again[g.name] > 1:  # (the same first decision's subject too)
            nth[g.name] += 1
            g.name = f"{g.name} (query {nth[g.name]} of {again[g.name]} so named)"
    return groups


def group_executions(summaries: Iterable[ExecutionSummary]) -> list[QueryGroup]:
    """:class:`QueryGrouper` over ``summaries`` (in execution order)."""
    grouper = QueryGrouper()
    for s in summaries:
        grouper.add(s)
    return grouper.groups()


#: a query run this many times makes the source a long-running application's: the Overview
#: opens on its queries rather than its executions
LONG_RUNNING = 20


def repeated(groups: list[QueryGroup]) -> bool:
    """Whether any query ran more than once (the Overview then offers its queries)."""
    return any(g.count > 1 for g in groups)


def long_running(groups: list[QueryGroup]) -> bool:
    """Whether a query ran :data:`LONG_RUNNING` times or more (the Overview opens on queries)."""
    return any(g.count >= LONG_RUNNING for g in groups)


def _order(v: Any) -> tuple[int, str]:
    qid = getattr(v, "query_id", "")
    return (int(qid) if qid.isdigit() else -1, qid)


def group_views(views: Iterable[Any]) -> list[QueryGroup]:
    """The query groups of a source's views (:class:`~aqe_core.views.query.QueryView`), in
    execution order whatever order the source lists them in."""
    from aqe_core.views.execution_summary import summary_of

    return group_executions(summary_of(v) for v in sorted(views, key=_order))


def groups_json(groups: list[QueryGroup], ids: int = 1000) -> list[dict[str, Any]]:
    """The groups as JSON (the ``query_groups`` key of ``explain --json`` and ``inspect --json``)."""
    return [g.to_dict(ids) for g in groups]


def groups_lines(groups: list[QueryGroup], changes: int = 10, only_repeated: bool = True) -> list[str]:
    """The CLI's text: one block per query that ran more than once (nothing when none did);
    ``only_repeated=False``: every query (``inspect --queries``)."""
    out: list[str] = []
    for g in groups:
        if g.count < 2 and only_repeated:
            continue
        span = g.span_text()
        out.append(f"{_n(g.count)} execution{'s' if g.count != 1 else ''} of {g.name!r} (executions {', '.join(g.execution_ids[:6])}"
                   + (" ..." if g.count > 6 else "") + ")" + (f", over {span}" if span else ""))
        out += [f"  {d.label}: {d.distribution_text()}" for d in g.shown_decisions()]
        out += [f"  {g.not_final_text()}"] if g.not_final else []
        kept = g.changes()
        out += [f"  - {c.sentence}" for c in kept[:changes]]
        if len(kept) > changes:
            out.append(f"  ... and {len(kept) - changes} more changes (--json lists them)")
    return out
