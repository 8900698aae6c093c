"""What AQE would do to an event-log query under other settings, estimated.

An event log holds only the partition sizes after AQE (Spark's metrics), so a preset re-runs
coalescing and skew detection over those sizes; every outcome built here says it is an
estimate (:data:`ESTIMATE_NOTE`). Captures are replayed exactly instead (:mod:`.whatif`).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Sequence

from aqe_core.config import AQEConf
from aqe_core.model.evidence import Evidence
from aqe_core.model.specs import CoalescedPartitionSpec, ShufflePartitionSpec
from aqe_core.rules.coalesce_shuffle_partitions import min_num_from_parallelism, min_num_partitions, min_partition_size
from aqe_core.rules.optimize_skewed_join import analyze_side
from aqe_core.rules.shuffle_partitions_util import coalesce_partitions
from aqe_core.units import mib

#: said with an estimate whose coalescing needs the cores a plain log does not hold
PARALLELISM_UNKNOWN = ("coalescing is not estimated: it aims at the default parallelism (the cluster's cores), which"
                       " the log does not say; the partitions are shown as Spark read them")

ESTIMATE_NOTE = ("approximate: re-applies coalescing and skew detection to the partition sizes after AQE"
                 " (an event log has no pre-AQE or per-map sizes)")


class ShuffleSizes(Protocol):
    """What the engine reads of a shuffle the views hold (a :class:`~aqe_core.views.query.ShuffleView`)."""

    key: str
    label: str
    stage_id: Optional[int]
    side: Optional[str]
    join: Optional[str]
    join_type: Optional[str]
    local: bool
    partitions_before: Optional[int]
    partitions_after: Optional[int]
    sizes_after: Optional[list[int]]
    skewed_partitions: Optional[int]
    skew_splits: Optional[int]
    has_read_metrics: bool

    @property
    def sizes_for_lines(self) -> Optional[list[int]]: ...


def read_of(reads: Sequence[Any], key: Optional[str]) -> Any:
    """The read of ``key`` (``stage-<stage id>-<fragment>``) among ``reads`` (anything with a
    ``key``), else the one read of that stage: a replay under other settings may cut the plan
    into other fragments (a shuffle Spark added above a forced skew split is folded back and cut
    again), so a key's fragment need not be the one the view was made with; the stage is Spark's."""
    if key is None:
        return None
    got = next((s for s in reads if s.key == key), None)
    if got is not None or not key.startswith("stage-"):
        return got
    stage = key.rsplit("-", 1)[0] + "-"
    same = [s for s in reads if s.key.startswith(stage)]
    return same[0] if len(same) == 1 else None


@dataclass
class ShuffleOutcome:
    """One shuffle read under a preset: how many partitions, their sizes, the skew splits, and
    how that is known (Spark's own metrics as run, our rules replayed exactly, or an estimate)."""

    key: str
    label: str
    partitions_before: Optional[int]
    partitions_after: int
    sizes_after: list[int]
    skewed: Optional[int]  # reducers split (None: the source cannot tell)
    splits: Optional[int]  # their parts in all (None: not known)
    evidence: Evidence = Evidence.ESTIMATE
    #: per partition in ``sizes_after`` (replays only): the reducers it reads ``(start, end)`` and
    #: whether it is a part of a split reducer, for the charts' hovers; not in :meth:`to_dict`
    reducers: Optional[list[tuple[int, int]]] = None
    split: Optional[list[bool]] = None

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("reducers", "split")}
        return {**d, "evidence": self.evidence.value}


@dataclass
class PresetOutcome:
    """A query's shuffle reads and joins under one preset (``exact``: replayed on pre-AQE statistics
    or Spark's own record; otherwise an estimate, and ``note`` says over what)."""

    preset: str
    spark_version: str
    exact: bool
    note: str
    shuffles: list[ShuffleOutcome] = field(default_factory=list)
    #: how the outcome is known: a replay is exact, Spark's own record of a plain log is Spark's
    #: metric, anything re-derived from a plain log's sizes after AQE is an estimate
    evidence: Evidence = Evidence.ESTIMATE
    join_strategies: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    #: stage id -> the coalescing target our rules used (replayed captures: the target of the
    #: group the stage was coalesced with in the re-planned plan)
    coalesce_targets: dict[int, int] = field(default_factory=dict)
    #: stage ids read locally (replayed captures; None: not known)
    local_stages: Optional[set[int]] = None
    #: the reason code of each read left out of ``shuffles`` (``results.NOT_PREDICTED``: only a run
    #: can size it; ``results.STAGE_NOT_CREATED``: the change removes its stage), in read order
    unsized_codes: list[str] = field(default_factory=list)

    def shuffle(self, key: Optional[str]) -> Optional[ShuffleOutcome]:
        """The read of ``key``, or of its stage (:func:`read_of`)."""
        return read_of(self.shuffles, key)

    @property
    def partitions_after(self) -> int:
        return sum(s.partitions_after for s in self.shuffles)

    @property
    def largest(self) -> int:
        return max((max(s.sizes_after) for s in self.shuffles if s.sizes_after), default=0)

    @property
    def median(self) -> int:
        sizes = [x for s in self.shuffles for x in s.sizes_after]
        return int(statistics.median(sizes)) if sizes else 0

    @property
    def splits(self) -> Optional[int]:
        known = [s.splits for s in self.shuffles if s.splits is not None]
        return sum(known) if known else None

    @property
    def skewed(self) -> Optional[int]:
        """Reducers split in all (None when no read says)."""
        known = [s.skewed for s in self.shuffles if s.skewed is not None]
        return sum(known) if known else None

    def summary_row(self) -> dict[str, Any]:
        """One table row; a query without an adaptive read says so instead of "0 partitions, 0 B"."""
        none = "no adaptive read"
        return {
            "preset": self.preset, "spark": self.spark_version,
            "partitions after AQE": self.partitions_after if self.shuffles else none,
            "largest partition": mib(self.largest) if self.shuffles else "-",
            "median partition": mib(self.median) if self.shuffles else "-",
            "skewed reducers split": _count(self.skewed, self.shuffles),
            "skew split parts": _count(self.splits, self.shuffles),
            "joins": "; ".join(self.join_strategies) or "-", "evidence": self.evidence.label,
        }


def _count(n: Optional[int], shuffles: Sequence[ShuffleOutcome]) -> Any:
    if not shuffles:
        return "-"
    if n is not None:
        return n
    return "not in the log" if all(s.evidence is Evidence.SPARK_METRIC for s in shuffles) else "not estimated"


def as_logged(shuffles: Sequence[ShuffleSizes]) -> list[ShuffleOutcome]:
    """The reads as Spark did them, from the log's metrics: partitions read, reducers split and
    their parts (Spark posts the two skew metrics only when it split a reducer, so a read with
    metrics and neither split none; a read without metrics, Spark 3.0, cannot tell)."""
    out = []
    for s in shuffles:
        sizes = list(s.sizes_after or [])
        metrics = s.has_read_metrics
        skewed = s.skewed_partitions if s.skewed_partitions is not None else (0 if metrics else None)
        splits = s.skew_splits if s.skew_splits is not None else (0 if metrics and not skewed else None)
        out.append(ShuffleOutcome(s.key, s.label, s.partitions_before, s.partitions_after or len(sizes), sizes,
                                  skewed, splits, Evidence.SPARK_METRIC))
    return out


def needs_parallelism(conf: AQEConf) -> bool:
    """Whether coalescing's minimum partition number comes from the default parallelism (3.0/3.1,
    or ``parallelismFirst`` without ``minPartitionNum``): then it cannot be estimated without it."""
    return min_num_from_parallelism(conf, spark_version=conf.spark_version)


def _read_bytes(sizes: list[int], spec: ShufflePartitionSpec) -> int:
    """Bytes one coalesced read reads: the sum of its reducers' (coalescing without input specs
    makes only :class:`CoalescedPartitionSpec`)."""
    if not isinstance(spec, CoalescedPartitionSpec):
        raise TypeError(f"coalescing made a {type(spec).__name__}, not a CoalescedPartitionSpec")
    return sum(sizes[spec.start_reducer_index:spec.end_reducer_index])


def estimate_shuffles(shuffles: Sequence[ShuffleSizes], conf: AQEConf,
                      default_parallelism: Optional[int]) -> list[ShuffleOutcome]:
    """Coalescing and skew detection re-run over the post-AQE sizes: the sides of a join are
    coalesced together when their partition counts are equal (as Spark does), else one by one.
    Where coalescing needs the default parallelism and it is unknown, it is not re-run (never a
    default in the cores' place): :data:`PARALLELISM_UNKNOWN`."""
    v = conf.spark_version
    unknown = default_parallelism is None and needs_parallelism(conf)
    min_num, _ = min_num_partitions(conf, spark_version=v, default_parallelism=default_parallelism or 1)
    min_size = min_partition_size(conf, spark_version=v)
    groups: dict[str, list[ShuffleSizes]] = {}
    for s in shuffles:
        if s.local or not s.sizes_after:
            continue
        groups.setdefault(s.join or s.key, []).append(s)
    out: list[ShuffleOutcome] = []
    for members in groups.values():
        stats = [list(m.sizes_after or []) for m in members]
        same = len({len(x) for x in stats}) == 1
        index_groups = [list(range(len(members)))] if same else [[i] for i in range(len(members))]
        for idxs in index_groups:
            specs = None if unknown else coalesce_partitions(
                [stats[i] for i in idxs], advisory_target_size=conf.advisory_partition_size,
                min_num_partitions=min_num, min_partition_size=min_size, spark_version=v)
            for pos, i in enumerate(idxs):
                m, sizes = members[i], stats[i]
                after = [_read_bytes(sizes, sp) for sp in specs[pos]] if specs else list(sizes)
                skewed = len(analyze_side(sizes, conf, spark_version=v).skewed_indices) if m.join else 0
                out.append(ShuffleOutcome(m.key, m.label, m.partitions_before, len(after), after, skewed, None,
                                          Evidence.ESTIMATE))
    return out
