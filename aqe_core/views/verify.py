"""Verify (issue 13): a fix's prediction scored against what Spark did when the query ran again
with the change.

Reads are matched by their statistics: a re-run of the same query over the same data writes the
same bytes per reducer, so a read of the new run is "the same read" when its shuffle's
``bytes_by_partition_id`` equals the original's. Where no read of the new run has those
statistics (the data changed, or the change re-planned the stage: a shuffle it adds), the read
is "not comparable" and said so; it never counts as agreement.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core.engine.simulate import simulate
from aqe_core.engine.whatif import one_query
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.specs import spec_to_dict
from aqe_core.views.recommend import Fix

__all__ = ["ReadScore", "VerifyScore", "score_fix", "stats_key"]

SAME, DIFFERS, NOT_COMPARABLE = "exactly as predicted", "differs", "not comparable"


def stats_key(q: QueryCapture, shuffle_id: Optional[int]) -> Optional[tuple[int, ...]]:
    """A shuffle's identity across runs of the same query: its bytes per reducer."""
    sh = q.shuffle(shuffle_id)
    return tuple(sh.bytes_by_partition_id) if sh is not None and sh.bytes_by_partition_id else None


@dataclass
class ReadScore:
    stage_id: Optional[int]
    predicted: Optional[int]  # partitions the replay predicted (None: not predicted)
    spark: Optional[int]  # partitions Spark read in the new run
    verdict: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage_id, "predicted partitions": self.predicted, "Spark partitions": self.spark,
                "verdict": self.verdict, "detail": self.detail}


@dataclass
class VerifyScore:
    spark_version: str
    reads: list[ReadScore] = field(default_factory=list)
    joins_predicted: list[str] = field(default_factory=list)
    joins_spark: list[str] = field(default_factory=list)

    @property
    def comparable(self) -> list[ReadScore]:
        return [r for r in self.reads if r.verdict != NOT_COMPARABLE]

    @property
    def exact(self) -> bool:
        return bool(self.comparable) and all(r.verdict == SAME for r in self.comparable) and self.joins_agree

    @property
    def joins_agree(self) -> bool:
        return sorted(self.joins_predicted) == sorted(self.joins_spark)

    def summary(self) -> str:
        same = sum(1 for r in self.comparable if r.verdict == SAME)
        joins = "joins as predicted" if self.joins_agree else (
            f"joins differ: predicted {', '.join(self.joins_predicted) or '-'}, Spark {', '.join(self.joins_spark) or '-'}")
        skipped = len(self.reads) - len(self.comparable)
        return (f"Verified on Spark {self.spark_version}: {same} of {len(self.comparable)} comparable reads exactly as"
                f" predicted, {joins}" + (f"; {skipped} read(s) not comparable" if skipped else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"spark_version": self.spark_version, "exact": self.exact, "summary": self.summary(),
                "reads": [r.to_dict() for r in self.reads], "joins_predicted": self.joins_predicted,
                "joins_spark": self.joins_spark}


def score_fix(fix: Fix, original: QueryCapture, rerun: Capture, query: Optional[QueryCapture] = None) -> VerifyScore:
    """Score ``fix`` (predicted for ``original``) against ``rerun`` (the query run with the fix's
    settings; its first query unless ``query`` is given)."""
    rq = query or rerun.queries[0]
    did = simulate(one_query(rerun, rq)).queries[0]  # what Spark did in the new run, as the replay reads it
    by_key = {stats_key(rq, r.shuffle_id): r for r in did.reads if stats_key(rq, r.shuffle_id) is not None}
    out = VerifyScore(rerun.spark_version)
    for r in fix.predicted.reads if fix.predicted else []:
        got = by_key.get(stats_key(original, r.shuffle_id))
        predicted = len(r.simulated_specs) if r.simulated_specs is not None else None
        if got is None:
            out.reads.append(ReadScore(r.stage_id, predicted, None, NOT_COMPARABLE,
                                       "no read of the new run has this shuffle's statistics"))
            continue
        spark = len(got.spark_specs) if got.spark_specs is not None else None
        if r.simulated_specs is None:
            out.reads.append(ReadScore(r.stage_id, None, spark, NOT_COMPARABLE, "the change re-planned this stage"))
            continue
        same = [spec_to_dict(s) for s in got.spark_specs or []] == [spec_to_dict(s) for s in r.simulated_specs]
        out.reads.append(ReadScore(r.stage_id, predicted, spark, SAME if same else DIFFERS,
                                   "" if same else "same statistics, other partition specs"))
    out.joins_predicted = [j.simulated or j.spark for j in fix.predicted.joins] if fix.predicted else []
    out.joins_spark = [j.spark for j in did.joins]
    return out
