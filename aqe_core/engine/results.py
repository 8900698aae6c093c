"""What a simulation returns: per read, per join, per query, and the agreement with Spark.

Plain data (``to_dict`` for the CLI's JSON and the report); no plotting, no Spark.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core.engine.adaptive import AdaptiveVerdict
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.rules.join_selection_helper import SIZE_UNKNOWN
from aqe_core.model.specs import ShufflePartitionSpec, spec_to_dict
from aqe_core.versions import as_version


@dataclass
class ReadResult:
    """One shuffle stage's read in one fragment: Spark's specs and ours."""

    stage_node: int
    read_node: Optional[int]  # Spark's read node in the final plan (None: Spark read the stage as is)
    stage_id: Optional[int]
    shuffle_id: Optional[int]
    fragment: int
    spark_specs: Optional[list[ShufflePartitionSpec]]  # None: no adaptive read in Spark's plan
    simulated_specs: Optional[list[ShufflePartitionSpec]]  # None: our rules put no read there
    rules: list[str] = field(default_factory=list)
    description: str = ""
    reasons: list[Reason] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return _norm(self.spark_specs) == _norm(self.simulated_specs)

    def first_difference(self) -> Optional[str]:
        a, b = _norm(self.spark_specs), _norm(self.simulated_specs)
        if a == b:
            return None
        if a is None or b is None:
            return f"Spark {'had no read' if a is None else f'read {len(a)} specs'}; simulation " \
                   f"{'puts no read' if b is None else f'gives {len(b)} specs'}"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"spec {i}: Spark {x} vs simulated {y}"
        return f"Spark has {len(a)} specs, simulation {len(b)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage_node": self.stage_node, "read_node": self.read_node, "stage_id": self.stage_id,
            "shuffle_id": self.shuffle_id, "fragment": self.fragment, "agrees": self.agrees,
            "rules": self.rules, "description": self.description,
            "spark_specs": None if self.spark_specs is None else [spec_to_dict(s) for s in self.spark_specs],
            "simulated_specs": None if self.simulated_specs is None else [spec_to_dict(s) for s in self.simulated_specs],
            "difference": self.first_difference(), "reasons": [r.to_dict() for r in self.reasons],
        }


def _norm(specs: Optional[list[ShufflePartitionSpec]]) -> Optional[list[ShufflePartitionSpec]]:
    return None if specs is None else list(specs)


AGREES, DIFFERS, UNDECIDED = "agrees", "differs", "undecided"

# -- the engine's own reason codes (:mod:`aqe_core.model.vocabulary`): what the replay could not
# re-decide or place, not what a rule decided (the rules declare theirs)
V = Vocabulary("engine", __name__)
UNDECIDED_SHAPE = V.code("undecided_shape", "The captured plan does not give the join two sides and its keys.",
                         "the captured plan does not give this join two sides and its keys: its strategy cannot be"
                         " re-decided")
UNDECIDED_INITIAL = V.code("undecided_initial", "The join is not in the initial plan under the same keys: AQE's"
                           " starting strategy is unknown.", "this join is not in the initial plan under the same keys,"
                           " so the strategy AQE started from is unknown")
UNDECIDED_NEW_STAGE = V.code(
    "undecided_new_stage", "Under the change the join reads a new shuffle whose runtime size decides it: only a run"
    " can tell.", "it reads the new shuffle the forced split adds, whose runtime size decides whether AQE broadcasts"
    " it: only a run can tell", union="under these settings Spark would shuffle the {side} side (a union without the"
    " join's partitioning) and re-plan the join from that new query stage's runtime size, which only a run can tell")
UNCHANGED = V.code("unchanged", "The replay keeps the join's initial strategy.", "stays {strategy}")
STAGE_NOT_CREATED = V.code("stage_not_created", "Under the change this shuffle stage is never created.", "{why}")
UNPLACED_READ = V.code("unplaced_read", "A read Spark made that no stage fragment accounts for (should not happen).",
                       "this read is outside every stage fragment")
NOT_PREDICTED = V.code("not_predicted", "The read's size depends on a stage the change adds or runs differently:"
                       " only a run can tell.", "not predicted: {why}")
#: reason codes that leave a join's strategy undecided
UNDECIDED_CODES = frozenset({UNDECIDED_SHAPE, UNDECIDED_INITIAL, SIZE_UNKNOWN, UNDECIDED_NEW_STAGE})


@dataclass
class JoinResult:
    """A join's strategy: planned (initial plan), Spark's final, and simulated."""

    node: int  # final-plan node
    join_type: str
    keys: str
    initial: Optional[str]
    spark: str
    simulated: Optional[str]
    spark_skew: bool = False
    simulated_skew: Optional[bool] = None
    reasons: list[Reason] = field(default_factory=list)
    simulated_build_side: Optional[str] = None  # "left" / "right" for a simulated broadcast
    #: plan index of what is broadcast when it is not the side's stage itself (the input of a
    #: shuffle stage that, broadcast earlier, is never created)
    simulated_build_root: Optional[int] = None

    @property
    def outcome(self) -> str:
        """``agrees``, ``differs`` or ``undecided`` (the strategy was not re-decided: see
        :attr:`undecided_reason`). Undecided is never agreement."""
        if self.simulated is None:
            return UNDECIDED
        if self.simulated != self.spark or (self.simulated_skew is not None and self.simulated_skew != self.spark_skew):
            return DIFFERS
        return AGREES

    @property
    def agrees(self) -> bool:
        return self.outcome == AGREES

    @property
    def undecided_reason(self) -> Optional[str]:
        if self.simulated is not None:
            return None
        why = [r.message for r in self.reasons if r.code in UNDECIDED_CODES]
        return "; ".join(why) if why else "the strategy was not re-decided"

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "join_type": self.join_type, "keys": self.keys, "initial": self.initial,
                "spark": self.spark, "simulated": self.simulated, "spark_skew": self.spark_skew,
                "simulated_skew": self.simulated_skew, "outcome": self.outcome, "agrees": self.agrees,
                "undecided_reason": self.undecided_reason, "simulated_build_side": self.simulated_build_side,
                "reasons": [r.to_dict() for r in self.reasons]}


@dataclass
class QueryResult:
    index: int
    label: str
    preset: Optional[str]
    reads: list[ReadResult] = field(default_factory=list)
    joins: list[JoinResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: why AQE did not apply (``InsertAdaptiveSparkPlan``), for a query that ran without it
    adaptive: Optional[AdaptiveVerdict] = None

    @property
    def reads_agreeing(self) -> int:
        return sum(1 for r in self.reads if r.agrees)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label, "preset": self.preset,
                "reads": [r.to_dict() for r in self.reads], "joins": [j.to_dict() for j in self.joins],
                "notes": self.notes, **({"adaptive": self.adaptive.to_dict()} if self.adaptive else {})}


@dataclass
class Agreement:
    """How many decisions the rules reproduced exactly: adaptive reads and join strategies.
    A join is agreeing, differing or undecided; ``percent`` counts undecided joins as not
    agreeing, so 100% means every decision was re-made and matched."""

    total: int = 0
    agreeing: int = 0
    joins_total: int = 0
    joins_agreeing: int = 0
    joins_undecided: int = 0
    mismatches: list[str] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)

    @property
    def decisions(self) -> int:
        return self.total + self.joins_total

    @property
    def decisions_agreeing(self) -> int:
        return self.agreeing + self.joins_agreeing

    @property
    def percent(self) -> float:
        return 100.0 if self.decisions == 0 else 100.0 * self.decisions_agreeing / self.decisions

    @property
    def joins_differing(self) -> int:
        return self.joins_total - self.joins_agreeing - self.joins_undecided

    @property
    def complete(self) -> bool:
        return self.decisions_agreeing == self.decisions

    def summary(self) -> str:
        """``12/12 reads, 3/4 joins agree (1 undecided)``: how the CLI and the app say it."""
        extra = [f"{n} {what}" for n, what in ((self.joins_differing, "differing"), (self.joins_undecided, "undecided")) if n]
        return (f"{self.agreeing}/{self.total} reads, {self.joins_agreeing}/{self.joins_total} joins agree"
                + (f" ({', '.join(extra)})" if extra else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"reads": self.total, "reads_agreeing": self.agreeing, "percent": round(self.percent, 3),
                "joins": self.joins_total, "joins_agreeing": self.joins_agreeing,
                "joins_differing": self.joins_differing, "joins_undecided": self.joins_undecided,
                "complete": self.complete, "mismatches": self.mismatches, "undecided": self.undecided}


@dataclass
class SimulationReport:
    spark_version: str
    captured_version: str
    overrides: dict[str, str]
    queries: list[QueryResult]
    agreement: Agreement
    elapsed_ms: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def is_replay(self) -> bool:
        """No override and the captured release: the agreement figures are meaningful."""
        return not self.overrides and as_version(self.spark_version) == as_version(self.captured_version)

    def to_dict(self) -> dict[str, Any]:
        return {"spark_version": self.spark_version, "captured_version": self.captured_version,
                "overrides": self.overrides, "replay": self.is_replay, "agreement": self.agreement.to_dict(),
                "elapsed_ms": round(self.elapsed_ms, 3), "notes": self.notes,
                "queries": [q.to_dict() for q in self.queries]}


