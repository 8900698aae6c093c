"""Verify (issue 13): a fix's prediction scored against what Spark did when the query ran again
with the change.

Reads are matched by their statistics: a re-run of the same query over the same data writes the
same bytes per reducer, so a read of the new run is "the same read" when its shuffle's
``bytes_by_partition_id`` equals the original's (two shuffles with equal statistics are paired
in stage order). A shuffle whose writing stage runs other tasks under the change writes other
bytes; its read is matched by the shuffle's shape instead (its partitioning and the scans under
it, expression ids aside). Every read is scored: exactly as predicted, differs, not predicted
(the prediction said why; Spark's number is shown beside it), or not comparable (no read of the
new run is that read: the data changed). A read only the re-run has is listed too: a shuffle
the change adds, which the prediction names as not predicted, or one it missed.

Presets are verified the same way (:func:`rerun_rows`): each preset's simulation beside what
Spark did when the query ran again under it.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core.advise.recommend import Fix
from aqe_core.advise.whatif import PresetOutcome, QuerySizes, simulate_preset
from aqe_core.engine.results import NOT_PREDICTED as _NOT_PREDICTED_CODE, STAGE_NOT_CREATED, ReadResult
from aqe_core.engine.simulate import one_query, simulate
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.presets import BUILTIN_PRESETS
from aqe_core.model.specs import spec_to_dict

__all__ = ["ReadScore", "VerifyScore", "rerun_exact", "rerun_rows", "score_fix", "stats_key"]

SAME, DIFFERS, NOT_PREDICTED, NOT_COMPARABLE = "exactly as predicted", "differs", "not predicted", "not comparable"
_IDS = re.compile(r"#\d+L?|\[plan_id=\d+\]|,\s*\[plan_id=\d+\]")


def stats_key(q: QueryCapture, shuffle_id: Optional[int]) -> Optional[tuple[int, ...]]:
    """A shuffle's identity across runs of the same query: its bytes per reducer."""
    sh = q.shuffle(shuffle_id)
    return tuple(sh.bytes_by_partition_id) if sh is not None and sh.bytes_by_partition_id else None


def shape_key(q: QueryCapture, stage_node: int) -> Optional[tuple[str, tuple[str, ...]]]:
    """A shuffle's identity when its bytes change: its exchange's partitioning and the scans
    under it, without expression or plan ids."""
    if q.final_plan is None or stage_node < 0:
        return None
    nodes = q.final_plan.nodes()
    if stage_node >= len(nodes) or not nodes[stage_node].children:
        return None
    ex = nodes[stage_node].children[0]
    leaves = sorted(_IDS.sub("", n.description) for n in ex.walk() if not n.children)
    return _IDS.sub("", ex.description).strip(), tuple(leaves)


@dataclass
class ReadScore:
    stage_id: Optional[int]
    predicted: Optional[int]  # partitions the replay predicted (None: not predicted, or not created)
    spark: Optional[int]  # partitions Spark read in the new run (None: no such read)
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
        return [r for r in self.reads if r.verdict in (SAME, DIFFERS)]

    @property
    def not_predicted(self) -> list[ReadScore]:
        return [r for r in self.reads if r.verdict == NOT_PREDICTED]

    @property
    def exact(self) -> bool:
        """Every read the prediction sized is as Spark read it, and every join; a read it says it
        cannot size does not count against it (it said so, and why)."""
        return bool(self.comparable) and all(r.verdict == SAME for r in self.comparable) and self.joins_agree

    #: joins whose strategy the prediction left to a run (it reads a new shuffle), not scored
    joins_not_predicted: int = 0

    @property
    def joins_agree(self) -> bool:
        left = Counter(self.joins_spark)
        left.subtract(Counter(self.joins_predicted))
        return min(left.values(), default=0) >= 0 and sum(left.values()) == self.joins_not_predicted

    def summary(self) -> str:
        same = sum(1 for r in self.comparable if r.verdict == SAME)
        joins = ("joins as predicted" + (f" ({self.joins_not_predicted} not predicted)" if self.joins_not_predicted else "")
                 if self.joins_agree else None) or (
            f"joins differ: predicted {', '.join(self.joins_predicted) or '-'}, Spark {', '.join(self.joins_spark) or '-'}")
        skipped = sum(1 for r in self.reads if r.verdict == NOT_COMPARABLE)
        unsized = len(self.not_predicted)
        return (f"Verified on Spark {self.spark_version}: {same} of {len(self.comparable)} comparable reads exactly as"
                f" predicted, {joins}" + (f"; {unsized} read(s) not predicted (Spark's numbers shown)" if unsized else "")
                + (f"; {skipped} read(s) not comparable" if skipped else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"spark_version": self.spark_version, "exact": self.exact, "summary": self.summary(),
                "reads": [r.to_dict() for r in self.reads], "joins_predicted": self.joins_predicted,
                "joins_not_predicted": self.joins_not_predicted, "joins_spark": self.joins_spark}


def _partitions(q: QueryCapture, r: ReadResult, specs: Optional[list]) -> Optional[int]:
    if specs is not None:
        return len(specs)
    sh = q.shuffle(r.shuffle_id)
    return sh.num_reducers if sh is not None else None


def _why(r: ReadResult, code: str) -> Optional[str]:
    return next((x.message for x in r.reasons if x.code == code), None)


def _pair(original: QueryCapture, predicted: list[ReadResult], rq: QueryCapture,
          spark: list[ReadResult]) -> dict[int, ReadResult]:
    """Index in ``predicted`` -> the re-run's read: by statistics (equal ones paired in stage
    order), then by the shuffle's shape for those whose bytes changed."""
    out: dict[int, ReadResult] = {}
    used: set[int] = set()
    for key_of, key_rq in ((lambda r: stats_key(original, r.shuffle_id), lambda r: stats_key(rq, r.shuffle_id)),
                           (lambda r: shape_key(original, r.stage_node), lambda r: shape_key(rq, r.stage_node))):
        pool: dict[Any, list[int]] = {}
        for j in sorted(range(len(spark)), key=lambda j: (spark[j].stage_id is None, spark[j].stage_id or 0)):
            k = key_rq(spark[j])
            if k is not None and j not in used:
                pool.setdefault(k, []).append(j)
        for i in sorted(range(len(predicted)), key=lambda i: (predicted[i].stage_id is None, predicted[i].stage_id or 0)):
            k = key_of(predicted[i]) if predicted[i].shuffle_id is not None else None
            if i in out or k is None or not pool.get(k):
                continue
            j = pool[k].pop(0)
            out[i] = spark[j]
            used.add(j)
    return out


def score_fix(fix: Fix, original: QueryCapture, rerun: Capture, query: Optional[QueryCapture] = None) -> VerifyScore:
    """Score ``fix`` (predicted for ``original``) against ``rerun`` (the query run with the fix's
    settings; its first query unless ``query`` is given)."""
    rq = query or rerun.queries[0]
    did = simulate(one_query(rerun, rq)).queries[0]  # what Spark did in the new run, as the replay reads it
    spark_reads = [r for r in did.reads if r.spark_specs is not None or r.read_node is not None]
    out = VerifyScore(rerun.spark_version)
    mine = list(fix.predicted.reads) if fix.predicted else []
    pairs = _pair(original, mine, rq, spark_reads)
    added_why = None
    for i, r in enumerate(mine):
        got = pairs.get(i)
        unsized = _why(r, _NOT_PREDICTED_CODE)
        gone = _why(r, STAGE_NOT_CREATED)
        if r.shuffle_id is None:  # a shuffle the change adds: scored with the re-run's reads only it has
            added_why = unsized or added_why
            continue
        spark = _partitions(rq, got, got.spark_specs) if got is not None else None
        if gone is not None:
            out.reads.append(ReadScore(r.stage_id, None, spark, SAME if got is None else DIFFERS,
                                       f"not created, as predicted: {gone}" if got is None else
                                       f"predicted not created ({gone}), but Spark read it"))
            continue
        if unsized is not None:
            out.reads.append(ReadScore(r.stage_id, None, spark, NOT_PREDICTED, unsized))
            continue
        if got is None:
            out.reads.append(ReadScore(r.stage_id, _partitions(original, r, r.simulated_specs), None, NOT_COMPARABLE,
                                       "no read of the new run has this shuffle's statistics"))
            continue
        predicted = _partitions(original, r, r.simulated_specs)
        same = [spec_to_dict(s) for s in got.spark_specs or []] == [spec_to_dict(s) for s in r.simulated_specs or []]
        out.reads.append(ReadScore(r.stage_id, predicted, spark, SAME if same else DIFFERS,
                                   "" if same else "same shuffle, other partition specs"))
    matched = {id(x) for x in pairs.values()}
    for s in spark_reads:
        if id(s) in matched:
            continue
        n = _partitions(rq, s, s.spark_specs)
        out.reads.append(ReadScore(s.stage_id, None, n, NOT_PREDICTED if added_why else DIFFERS,
                                   f"a read only the re-run has: {added_why}" if added_why else
                                   "a read only the re-run has, which the prediction did not foresee"))
    out.joins_predicted = [j.simulated for j in fix.predicted.joins if j.simulated is not None] if fix.predicted else []
    out.joins_not_predicted = sum(1 for j in fix.predicted.joins if j.simulated is None) if fix.predicted else 0
    out.joins_spark = [j.spark for j in did.joins]
    return out


def rerun_exact(sim: PresetOutcome, spark: PresetOutcome) -> str:
    """"yes" only when the simulation is what Spark did in the re-run: every read's partitions and
    sizes, the skew splits and the joins; else "no: " and the first thing that differs.

    A read the simulation could not size (code ``not_predicted``) makes it "no"; a stage it predicts
    is never created (``stage_not_created``) is a prediction like any other: the re-run has no
    read there either when it holds (as :func:`score_fix` scores it)."""
    mine = [(s.partitions_after, list(s.sizes_after)) for s in sim.shuffles]
    theirs = [(s.partitions_after, list(s.sizes_after)) for s in spark.shuffles]
    if _NOT_PREDICTED_CODE in sim.unsized_codes:
        return "no: some reads are not predicted (see the preset's note)"
    if [n for n, _ in mine] != [n for n, _ in theirs]:
        return (f"no: partitions {' + '.join(str(n) for n, _ in mine) or '-'} simulated,"
                f" {' + '.join(str(n) for n, _ in theirs) or '-'} in Spark")
    if [z for _, z in mine] != [z for _, z in theirs]:
        return "no: same partition counts, other partition sizes"
    if sim.splits != spark.splits:
        return f"no: {sim.splits} skew split parts simulated, {spark.splits} in Spark"
    if sim.join_strategies != spark.join_strategies:
        return f"no: joins {'; '.join(sim.join_strategies)} simulated, {'; '.join(spark.join_strategies)} in Spark"
    return "yes"


def rerun_rows(names: list[str], outcomes: list[PresetOutcome], rerun: list[QuerySizes]) -> list[dict]:
    """Re-run for real: one row per preset, the simulation's partitions, splits and joins beside
    what Spark did when the query ran again under the preset (``rerun``: the new run's views, in
    preset order), and whether they are the same (:func:`rerun_exact`)."""
    actual = next(p for p in BUILTIN_PRESETS if p.name == "actual")
    rows = []
    for name, sim, real in zip(names, outcomes, rerun):
        spark = simulate_preset(real, actual)
        rows.append({"preset": name, "simulated partitions": sim.partitions_after,
                     "Spark partitions": spark.partitions_after,
                     "simulated splits": sim.splits, "Spark splits": spark.splits,
                     "simulated joins": "; ".join(sim.join_strategies), "Spark joins": "; ".join(spark.join_strategies),
                     "Spark duration (ms)": real.duration_ms, "exact": rerun_exact(sim, spark)})
    return rows
