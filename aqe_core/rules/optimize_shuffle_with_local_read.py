"""Spark's ``OptimizeShuffleWithLocalRead`` (3.2+) / ``OptimizeLocalShuffleReader`` (3.0/3.1):
local shuffle reads.

Mirrors ``OptimizeShuffleWithLocalRead.getPartitionSpecs`` / ``equallyDivide`` /
``canUseLocalShuffleRead`` (and 3.0/3.1's ``OptimizeLocalShuffleReader`` twins; 3.0.1 - 4.3.0).
When a shuffle no longer needs its data redistributed (its consumer became a
broadcast join, or it is the root of the stage), each task reads map outputs where they are.

Worked example: 2 mappers and 4 reducers read by 4 tasks: each mapper's output is read in
``4 / 2 = 2`` reducer ranges. From 3.2, with more mappers (4) than tasks (2), groups of
mappers are read whole instead (3.1 keeps one task per mapper):

    >>> [(s.map_index, s.start_reducer_index, s.end_reducer_index) for s in local_read_specs(2, 4, 4, spark_version="3.5.1")]
    [(0, 0, 2), (0, 2, 4), (1, 0, 2), (1, 2, 4)]
    >>> [(s.start_map_index, s.end_map_index) for s in local_read_specs(4, 3, 2, spark_version="3.5.1")]
    [(0, 2), (2, 4)]
    >>> len(local_read_specs(4, 3, 2, spark_version="3.1.3"))
    4
    >>> equally_divide(10, 3)  # bucket starts: the first 10 % 3 buckets get one more
    [0, 4, 7]
"""
from __future__ import annotations

from aqe_core import config
from aqe_core.model.stage import Fragment, SpecState, StageNode, StageStats
from aqe_core.model.specs import CoalescedMapperPartitionSpec, PartialMapperPartitionSpec, ShufflePartitionSpec
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.model import shared_vocabulary as shared
from aqe_core.versions import SparkVersion, as_version

# -- vocabulary (:mod:`aqe_core.model.vocabulary`): its reason code and its trace
V = Vocabulary("OptimizeShuffleWithLocalRead", __name__)
DISTRIBUTION_BROKEN = V.reuse(shared.DISTRIBUTION_BROKEN, "local shuffle read not applied: it would break the plan's"
                              " distribution ({broken})")
#: (the trace shows it met when the rule changed the read, "not applicable" otherwise)
CONSUMER_NEEDS_NO_SHUFFLE = V.condition(
    "local_read.consumer_needs_no_shuffle", "the stage's consumer needs no shuffle (a side of a broadcast join)",
    "A stage whose consumer became a broadcast join (or the root) is read where its map outputs are.",
    settings=(config.LOCAL_SHUFFLE_READER_ENABLED,))
_VERDICTS = {"changed": "read locally", "unchanged": "not read locally"}
TRACE = V.trace("OptimizeShuffleWithLocalRead", CONSUMER_NEEDS_NO_SHUFFLE, verdicts=_VERDICTS)
TRACE_3_1 = V.trace("OptimizeLocalShuffleReader", CONSUMER_NEEDS_NO_SHUFFLE, verdicts=_VERDICTS)  # its 3.0/3.1 name


def equally_divide(num_elements: int, num_buckets: int) -> list[int]:
    """Start indices of ``num_buckets`` near-equal buckets; the first ``n % k`` get one more."""
    size = num_elements // num_buckets
    remainder = num_elements % num_buckets
    return [i * size + min(i, remainder) for i in range(num_buckets)]


def local_read_specs(
    num_mappers: int,
    num_reducers: int,
    expected_parallelism: int | None = None,
    *,
    spark_version: "str | SparkVersion",
) -> list[ShufflePartitionSpec]:
    """``getPartitionSpecs``: with ``expected`` = the current reader's spec count (else the
    reducer count), every mapper reads ``expected / mappers`` reducer ranges; from 3.2, when
    there are more mappers than ``expected``, groups of mappers read all reducers."""
    v = as_version(spark_version)
    expected = expected_parallelism if expected_parallelism is not None else num_reducers
    if num_mappers <= 0:
        return []
    if expected >= num_mappers or v < SparkVersion(3, 2, 0):
        split_points = max(1, expected // num_mappers)
        starts = equally_divide(num_reducers, split_points)
        out: list[ShufflePartitionSpec] = []
        for m in range(num_mappers):
            for k, s in enumerate(starts):
                e = starts[k + 1] if k + 1 < len(starts) else num_reducers
                out.append(PartialMapperPartitionSpec(m, s, e))
        return out
    starts = equally_divide(num_mappers, expected)
    return [CoalescedMapperPartitionSpec(s, starts[k + 1] if k + 1 < len(starts) else num_mappers, num_reducers)
            for k, s in enumerate(starts)]


def can_use_local_read(origin: str, has_map_stats: bool, *, spark_version: "str | SparkVersion",
                       over_existing_read: bool = False, user_specified_num_partitions: bool = False) -> bool:
    """Eligibility of a stage: 3.0/3.1 ``canChangeNumPartitions`` and map stats; 3.2+ a bare
    stage with map stats and origin ENSURE_REQUIREMENTS or REBALANCE_PARTITIONS_BY_NONE, or an
    existing read over an ENSURE_REQUIREMENTS stage."""
    v = as_version(spark_version)
    if not has_map_stats:
        return False
    if v < SparkVersion(3, 2, 0):
        return not user_specified_num_partitions
    if over_existing_read:
        return origin == "ENSURE_REQUIREMENTS"
    return origin in {"ENSURE_REQUIREMENTS", "REBALANCE_PARTITIONS_BY_NONE"}


# ------------------------------------------------------------------------------------------
# OptimizeShuffleWithLocalRead's plan-shape check on a stage fragment (the engine's stage plan, seen
# through the protocols of :mod:`aqe_core.model.stage`)


def apply(ctx: StageStats, fr: Fragment, state: SpecState) -> None:
    """``OptimizeShuffleWithLocalRead.apply`` / 3.0-3.1 ``OptimizeLocalShuffleReader.apply`` on a
    fragment: the stage at the root, else the probe sides of broadcast hash joins, kept only if
    the plan's distribution holds."""
    v, conf = ctx.v, ctx.conf
    if not conf.get(config.LOCAL_SHUFFLE_READER_ENABLED):
        return

    def eligible(st: StageNode) -> bool:
        if not st.is_shuffle_stage:
            return False
        sc = ctx.stage(st)
        has_stats = ctx.bytes(st) is not None
        origin = ctx.origin(st)
        existing = st.idx in state.specs
        if v < SparkVersion(3, 2, 0):
            if sc is not None and sc.can_change_num_partitions is False:
                return False
            if sc is not None and sc.origin is not None and sc.origin != "ENSURE_REQUIREMENTS":
                return False
            return not existing or bool(state.specs[st.idx])
        if not has_stats or ctx.single_partition(st):
            return False
        if existing:
            return origin == "ENSURE_REQUIREMENTS" and not _has_local(state.specs[st.idx])
        return origin in ("ENSURE_REQUIREMENTS", "REBALANCE_PARTITIONS_BY_NONE")

    def make(st: StageNode) -> list[ShufflePartitionSpec]:
        sc = ctx.stage(st)
        sh = ctx.shuffle(st)
        n_maps = (sc.num_maps if sc and sc.num_maps is not None else sh.num_maps if sh else None) or 0
        n_red = (sh.num_reducers if sh else None) or (sc.num_partitions if sc else 0) or 0
        expected = len(state.specs[st.idx]) if st.idx in state.specs else None
        return local_read_specs(n_maps, n_red, expected, spark_version=v)

    root = fr.root
    if root.is_shuffle_stage and eligible(root):
        specs = make(root)
        broken = ctx.breaks_distribution(fr, [root], state.skew_joins) if fr.is_final else None
        if broken is None:
            state.put(root, specs, "OptimizeShuffleWithLocalRead" if v >= SparkVersion(3, 2, 0) else "OptimizeLocalShuffleReader")
            state.descriptions[root.idx] = "local"
        return
    trial = state.copy()
    changed: list[StageNode] = []
    for node in root.walk():
        if not node.name.startswith("BroadcastHashJoin") or len(node.children) != 2:
            continue
        build = node.info.get("build_side", "")
        probe = node.children[0] if build == "BuildRight" else node.children[1] if build == "BuildLeft" else None
        if probe is None or not eligible(probe):
            continue
        trial.put(probe, make(probe), "OptimizeShuffleWithLocalRead" if v >= SparkVersion(3, 2, 0) else "OptimizeLocalShuffleReader")
        trial.descriptions[probe.idx] = "local"
        changed.append(probe)
    if not changed:
        return
    broken = ctx.breaks_distribution(fr, changed, trial.skew_joins)
    if broken is None:
        state.adopt(trial)
    else:
        for n in changed:
            state.why(n, [DISTRIBUTION_BROKEN.reason(broken=broken)])


def _has_local(specs: list[ShufflePartitionSpec]) -> bool:
    return any(isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)) for s in specs)
