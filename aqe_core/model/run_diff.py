"""Two runs of one job side by side, as data: which queries match, what AQE did in each, and
what made the difference (issue 28).

Run ``a`` is the baseline (yesterday), run ``b`` the run asked about (today). Every pair of
values is ``(a, b)``; a value a source does not hold is None. A :class:`Cause` says which of the
data, the settings or the release changed one decision, found by replaying one run's statistics
under the other run's settings and release (:mod:`aqe_core.advise.attribute_runs`), with the
:class:`~aqe_core.model.evidence.Evidence` of that replay (exact on captures and listener logs,
an estimate on plain event logs).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core.model.evidence import Evidence

__all__ = ["DATA", "DEFAULT_MIN_MS", "DEFAULT_THRESHOLD_PCT", "FACTORS", "RELEASE", "SETTINGS", "Cause", "DecisionSpread",
           "Gate", "GroupDiff", "GroupSide", "QueryDiff", "QueryRef", "RunDiff", "SettingChange", "ShuffleDiff"]

#: what can make a decision change between two runs
DATA = "data"
SETTINGS = "settings"
RELEASE = "release"
FACTORS = (DATA, SETTINGS, RELEASE)


#: a regression needs both: the query took this many percent longer, and this many milliseconds
#: (a 9 -> 18 ms command or 227 -> 255 ms is run-to-run noise, not a regression a CI gate should fail on)
DEFAULT_THRESHOLD_PCT = 10.0
DEFAULT_MIN_MS = 1000


def _pct(a: Optional[float], b: Optional[float]) -> Optional[float]:
    """How much larger ``b`` is than ``a``, in percent (None when either is unknown or a is 0)."""
    if a is None or b is None or a <= 0:
        return None
    return round(100.0 * (b - a) / a, 1)


@dataclass(frozen=True)
class QueryRef:
    """One query of one run: its id in the source and what people call it."""

    query_id: str
    description: str
    fingerprint: str

    def to_dict(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "description": self.description, "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class SettingChange:
    """A setting whose effective value differs (each run's release default where unset)."""

    key: str
    a: Optional[str]
    b: Optional[str]
    set_in_a: bool = False
    set_in_b: bool = False

    @property
    def in_both(self) -> bool:
        """Both releases know the key (else it is new in, or gone from, one release)."""
        return self.a is not None and self.b is not None

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "a": self.a, "b": self.b, "set_in_a": self.set_in_a, "set_in_b": self.set_in_b,
                "in_both_releases": self.in_both}


@dataclass(frozen=True)
class Cause:
    """One decision that changed, and what changed it.

    ``decision`` names it (``skew split``, ``partitions after AQE``, ``join strategy``);
    ``a`` / ``b`` are what Spark did in each run; ``factors`` the subset of :data:`FACTORS`
    whose change alone changes it in the replay; ``b_under_a`` what our rules do with run b's
    statistics under run a's settings and release, ``a_under_b`` the reverse."""

    decision: str
    a: Any
    b: Any
    factors: tuple[str, ...]
    b_under_a: Any = None
    a_under_b: Any = None
    evidence: Evidence = Evidence.EXACT
    shuffle: Optional[str] = None
    #: a skew split under run a's settings: the parts the split reducers of run b would make
    b_under_a_parts: Optional[int] = None
    #: why the source cannot tell what changed the decision ("" where ``factors`` says it)
    untold: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "shuffle": self.shuffle, "a": self.a, "b": self.b,
                "factors": list(self.factors), "b_under_a_settings": self.b_under_a,
                "b_under_a_split_parts": self.b_under_a_parts, "a_under_b_settings": self.a_under_b,
                "evidence": self.evidence.value, "untold": self.untold or None}


@dataclass
class ShuffleDiff:
    """One shuffle read matched by its place in the plan: each run's numbers."""

    label: str
    key_a: Optional[str]
    key_b: Optional[str]
    stage: tuple[Optional[int], Optional[int]] = (None, None)
    shuffle_bytes: tuple[Optional[int], Optional[int]] = (None, None)
    partitions_before: tuple[Optional[int], Optional[int]] = (None, None)
    partitions_after: tuple[Optional[int], Optional[int]] = (None, None)
    skewed_reducers: tuple[Optional[int], Optional[int]] = (None, None)
    skew_splits: tuple[Optional[int], Optional[int]] = (None, None)
    #: the largest reducer before AQE: (reducer index, bytes) per run
    largest_reducer: tuple[Optional[tuple[int, int]], Optional[tuple[int, int]]] = (None, None)
    local: tuple[bool, bool] = (False, False)
    evidence: tuple[Evidence, Evidence] = (Evidence.EXACT, Evidence.EXACT)
    #: each run's partition sizes after AQE and, where known, before (by reducer), for the
    #: overlaid chart (not in :meth:`to_dict`)
    sizes_after: tuple[Optional[list[int]], Optional[list[int]]] = (None, None)
    sizes_before: tuple[Optional[list[int]], Optional[list[int]]] = (None, None)

    def to_dict(self) -> dict[str, Any]:
        def pair(p: tuple) -> dict[str, Any]:
            return {"a": p[0], "b": p[1]}

        return {"label": self.label, "key_a": self.key_a, "key_b": self.key_b, "stage": pair(self.stage),
                "shuffle_bytes": pair(self.shuffle_bytes), "partitions_before": pair(self.partitions_before),
                "partitions_after": pair(self.partitions_after), "skewed_reducers": pair(self.skewed_reducers),
                "skew_splits": pair(self.skew_splits),
                "largest_reducer": pair(tuple(None if x is None else {"reducer": x[0], "bytes": x[1]}
                                              for x in self.largest_reducer)),
                "local": pair(self.local), "evidence": pair(tuple(e.value for e in self.evidence))}


@dataclass
class QueryDiff:
    """One query matched across the runs: durations, AQE's decisions, settings, causes."""

    a: QueryRef
    b: QueryRef
    duration_ms: tuple[Optional[int], Optional[int]] = (None, None)
    task_ms: tuple[Optional[int], Optional[int]] = (None, None)
    #: the slowest Spark stage of each run: (stage id, milliseconds)
    slowest_stage: tuple[Optional[tuple[int, int]], Optional[tuple[int, int]]] = (None, None)
    release: tuple[str, str] = ("", "")
    shuffles: list[ShuffleDiff] = field(default_factory=list)
    joins: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))
    settings: list[SettingChange] = field(default_factory=list)
    causes: list[Cause] = field(default_factory=list)
    #: one sentence: what made the difference
    sentence: str = ""
    notes: list[str] = field(default_factory=list)
    #: both runs' plans are commands (``createOrReplaceTempView``, DDL, metadata): not gated by default
    command: bool = False

    @property
    def duration_change_pct(self) -> Optional[float]:
        return _pct(*self.duration_ms)

    @property
    def time_lost_ms(self) -> Optional[int]:
        a, b = self.duration_ms
        return None if a is None or b is None else b - a

    def to_dict(self) -> dict[str, Any]:
        def pair(p: tuple) -> dict[str, Any]:
            return {"a": p[0], "b": p[1]}

        return {"a": self.a.to_dict(), "b": self.b.to_dict(), "duration_ms": pair(self.duration_ms),
                "duration_change_pct": self.duration_change_pct, "task_ms": pair(self.task_ms),
                "slowest_stage": pair(tuple(None if s is None else {"stage_id": s[0], "ms": s[1]}
                                            for s in self.slowest_stage)),
                "release": pair(self.release), "joins": pair(self.joins),
                "shuffles": [s.to_dict() for s in self.shuffles], "settings": [s.to_dict() for s in self.settings],
                "causes": [c.to_dict() for c in self.causes], "sentence": self.sentence, "notes": list(self.notes), "command": self.command}


@dataclass(frozen=True)
class GroupSide:
    """One run's executions of one query (a query group, :mod:`aqe_core.views.query_groups`):
    how many, when, and the first of the executions where one of AQE's decisions changed."""

    query: str
    name: str
    executions: int
    #: the first execution ids (all of them up to the diff's limit)
    execution_ids: tuple[str, ...] = ()
    first_start_ms: Optional[int] = None
    last_end_ms: Optional[int] = None
    #: executions whose adaptive plan never became final (none of their decisions counted)
    not_final: int = 0
    #: executions AQE did not run in (none of their decisions counted)
    not_adaptive: int = 0
    evidence: tuple[str, ...] = ()
    #: decisions that changed from one execution to the next, in all
    changed: int = 0
    #: the first change sentences (the log's numbers)
    changes: tuple[str, ...] = ()

    @property
    def span_ms(self) -> Optional[int]:
        if self.first_start_ms is None or self.last_end_ms is None:
            return None
        return max(0, self.last_end_ms - self.first_start_ms)

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "name": self.name, "executions": self.executions,
                "execution_ids": list(self.execution_ids), "first_start_ms": self.first_start_ms,
                "last_end_ms": self.last_end_ms, "span_ms": self.span_ms, "not_final": self.not_final,
                "not_adaptive": self.not_adaptive,
                "evidence": list(self.evidence), "changed": self.changed, "changes": list(self.changes)}


#: one run's outcomes of a decision over a group's executions: (outcome, executions) pairs
Spread = tuple[tuple[Any, int], ...]


@dataclass(frozen=True)
class DecisionSpread:
    """One of AQE's decisions of a query (``kind``: ``join``, ``partitions`` or ``skew``; ``key``:
    the join or the read) over each run's executions: how many took each outcome (None: the run
    has no such decision)."""

    kind: str
    key: str
    label: str
    a: Optional[Spread] = None
    b: Optional[Spread] = None
    changed: tuple[Optional[int], Optional[int]] = (None, None)

    @property
    def differs(self) -> bool:
        """The runs' outcomes differ (in kind or in how many executions took them)."""
        return self.a != self.b

    def to_dict(self) -> dict[str, Any]:
        def side(s: Optional[Spread]) -> Optional[list[dict[str, Any]]]:
            return None if s is None else [{"value": v, "executions": n} for v, n in s]

        return {"kind": self.kind, "key": self.key, "label": self.label, "a": side(self.a), "b": side(self.b),
                "changed": {"a": self.changed[0], "b": self.changed[1]}}


@dataclass
class GroupDiff:
    """One query's executions in both runs, side by side, or in one run only (the other None)."""

    a: Optional[GroupSide]
    b: Optional[GroupSide]
    #: how the groups were matched ("" where one run only has it)
    how: str = ""
    decisions: list[DecisionSpread] = field(default_factory=list)
    sentence: str = ""

    @property
    def only(self) -> Optional[str]:
        """``"a"`` or ``"b"``: the run that alone has the query; None: both have it."""
        return "a" if self.b is None else "b" if self.a is None else None

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a.to_dict() if self.a else None, "b": self.b.to_dict() if self.b else None,
                "only": self.only, "how": self.how or None, "decisions": [d.to_dict() for d in self.decisions],
                "sentence": self.sentence}


@dataclass
class RunDiff:
    """Two sources compared: matched queries (ranked by time lost), and those only one run has."""

    source_a: str
    source_b: str
    kind: tuple[str, str]
    release: tuple[str, str]
    matched: list[QueryDiff] = field(default_factory=list)
    only_a: list[QueryRef] = field(default_factory=list)
    only_b: list[QueryRef] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: each run's application name (what a gate's failure names first)
    app: tuple[str, str] = ("", "")
    #: the queries either run ran more than once, their executions grouped side by side
    groups: list[GroupDiff] = field(default_factory=list)

    def regressions(self, gate: "Gate | float") -> list[QueryDiff]:
        """Matched queries the gate fails (a bare number: a threshold in percent, no minimum)."""
        g = gate if isinstance(gate, Gate) else Gate(float(gate), 0)
        return [q for q in self.matched if g.fails(q)]

    def to_dict(self) -> dict[str, Any]:
        return {"format": "aqe-lens-run-diff", "version": 1,
                "a": {"source": self.source_a, "kind": self.kind[0], "spark_version": self.release[0], "app": self.app[0]},
                "b": {"source": self.source_b, "kind": self.kind[1], "spark_version": self.release[1], "app": self.app[1]},
                "matched": [q.to_dict() for q in self.matched], "only_a": [q.to_dict() for q in self.only_a],
                "only_b": [q.to_dict() for q in self.only_b], "query_groups": [g.to_dict() for g in self.groups],
                "notes": list(self.notes)}


@dataclass(frozen=True)
class Gate:
    """When a matched query is a regression: its duration grew by more than ``threshold_pct``
    percent *and* by at least ``min_ms`` milliseconds; commands only when ``commands``."""

    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    min_ms: int = DEFAULT_MIN_MS
    commands: bool = False

    def fails(self, q: QueryDiff) -> bool:
        """
        >>> q = QueryDiff(QueryRef("1", "q", ""), QueryRef("1", "q", ""), duration_ms=(227, 255))
        >>> Gate(10, 1000).fails(q), Gate(10, 20).fails(q), Gate(20, 0).fails(q)
        (False, True, False)
        """
        if q.command and not self.commands:
            return False
        pct, lost = q.duration_change_pct, q.time_lost_ms
        return pct is not None and lost is not None and pct > self.threshold_pct and lost >= self.min_ms

    def failure(self, q: QueryDiff, app: str = "") -> str:
        """One line naming the application, the query (id and description) and the measure."""
        a, b = q.duration_ms
        return (f"{app + ': ' if app else ''}query #{q.b.query_id} ({q.b.description[:80]}) took {a} ms -> {b} ms"
                f" ({q.duration_change_pct:+.0f}%, +{q.time_lost_ms} ms): over {self.threshold_pct:g}% and"
                f" {self.min_ms} ms")

    def to_dict(self) -> dict[str, Any]:
        return {"threshold_pct": self.threshold_pct, "min_ms": self.min_ms, "commands": self.commands}
