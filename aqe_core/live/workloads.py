"""Built-in workloads: queries that make AQE take each of its decisions, on data Spark generates.

Every workload registers its tables as temporary views built from ``spark.range`` (no
downloads, no files), then runs one SQL query, once per *preset* (a set of ``spark.sql.*``
settings). ``scale`` multiplies the row counts: ``1`` runs in seconds on a laptop
(``local[2]``); 100-1000 make the same shapes meaningful on a cluster. Sizes are tuned
together with the presets' byte thresholds, which scale with the data, so each workload shows
the same decision at every scale.

The catalogue covers: skewed joins of every join type (inner, left/right outer, semi, anti,
full outer), both sides skewed, aggregations that coalesce (minPartitionNum, parallelismFirst,
advisory size), repartition by number and by column, rebalance hints (3.2+), runtime broadcast
conversion (of a filtered table, an aggregate, a filtered aggregate and a union of aggregates,
under the static and the adaptive thresholds), broadcast demotion by empty partitions, unions,
multi-way joins, a skew join whose split would break the aggregation above it, and a runtime
shuffled-hash join.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from aqe_core import config
from aqe_core.versions import SparkVersion, as_version

A = config.ADAPTIVE_PREFIX


def _kb(n: float) -> str:
    return f"{max(1, int(round(n)))}k"


@dataclass(frozen=True)
class WorkloadPreset:
    """One named set of settings a workload runs under (not :class:`aqe_core.model.presets.Preset`,
    the what-if presets of the compare page)."""

    name: str
    conf: dict[str, str]
    doc: str = ""
    min_version: str = "3.0.0"


#: the old name, kept for callers (issue 9)
Preset = WorkloadPreset


@dataclass(frozen=True)
class Workload:
    """One query shape. ``views(spark, scale)`` registers the tables; ``sql`` is the query;
    ``base_conf(scale)`` holds settings every preset shares; ``presets`` vary them."""

    name: str
    doc: str
    sql: str
    views: Callable[[Any, float], dict[str, str]]
    base_conf: Callable[[float], dict[str, str]]
    presets: tuple[WorkloadPreset, ...]
    min_version: str = "3.0.0"
    decisions: tuple[str, ...] = ()

    def supports(self, version: "str | SparkVersion") -> bool:
        return as_version(version) >= as_version(self.min_version)

    def presets_for(self, version: "str | SparkVersion", names: Optional[list[str]] = None) -> list[WorkloadPreset]:
        v = as_version(version)
        out = [p for p in self.presets if v >= as_version(p.min_version)]
        if names:
            unknown = [n for n in names if n not in {p.name for p in self.presets}]
            if unknown:
                raise KeyError(f"workload {self.name} has no preset {unknown[0]!r}; presets: "
                               + ", ".join(p.name for p in self.presets))
            out = [p for p in out if p.name in names]
        return out

    def conf_for(self, preset: WorkloadPreset, scale: float) -> dict[str, str]:
        return {**self.base_conf(scale), **preset.conf}


# ----------------------------------------------------------------------------------------
# Data

#: rows of the big, skewed fact table at scale 1; 8 map tasks so skewed partitions can split
FACT_ROWS = 200_000
FACT_MAPS = 8
DIM_ROWS = 2_000
KEYS = 1_000


def murmur3_hash_long(value: int, seed: int = 42) -> int:
    """Spark's ``Murmur3_x86_32.hashLong`` (what ``hash(bigint)`` and hash partitioning use)."""
    def i32(x: int) -> int:
        x &= 0xFFFFFFFF
        return x - (1 << 32) if x & 0x80000000 else x

    def rotl(x: int, r: int) -> int:
        x &= 0xFFFFFFFF
        return i32((x << r) | (x >> (32 - r)))

    def mix_k1(k1: int) -> int:
        return i32(rotl(i32(k1 * 0xCC9E2D51), 15) * 0x1B873593)

    def mix_h1(h1: int, k1: int) -> int:
        return i32(rotl(h1 ^ k1, 13) * 5 + 0xE6546B64)

    v = value & 0xFFFFFFFFFFFFFFFF
    h1 = mix_h1(seed, mix_k1(i32(v)))
    h1 = mix_h1(h1, mix_k1(i32(v >> 32)))
    h1 ^= 8
    h1 = i32(h1 ^ ((h1 & 0xFFFFFFFF) >> 16))
    h1 = i32(h1 * 0x85EBCA6B)
    h1 = i32(h1 ^ ((h1 & 0xFFFFFFFF) >> 13))
    h1 = i32(h1 * 0xC2B2AE35)
    return i32(h1 ^ ((h1 & 0xFFFFFFFF) >> 16))


def same_partition_key(key: int, num_partitions: int, start: int = 1) -> int:
    """The smallest key >= ``start`` (other than ``key``) that hash partitioning puts in the
    same partition as ``key``: two different hot keys skewing one reducer on both join sides."""
    target = murmur3_hash_long(key) % num_partitions
    k = start
    while k == key or murmur3_hash_long(k) % num_partitions != target:
        k += 1
    return k


def _rows(n: int, scale: float) -> int:
    return max(1, int(n * scale))


def _maps(scale: float, base: int = FACT_MAPS) -> int:
    return max(2, min(2000, int(round(base * max(1.0, scale) ** 0.5))))


def _register(spark: Any, name: str, sql: str) -> str:
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {sql}")
    return f"CREATE TEMPORARY VIEW {name} AS {sql}"


def _facts(spark: Any, scale: float, name: str = "facts", hot_key: int = 0, hot_pct: int = 30, seed: int = 1) -> str:
    """``hot_pct`` % of rows carry ``hot_key``; the rest spread over KEYS keys."""
    n, maps = _rows(FACT_ROWS, scale), _maps(scale)
    return _register(spark, name, (
        f"SELECT id, CASE WHEN id % 100 < {hot_pct} THEN {hot_key} ELSE (id * {7919 + 8 * (seed - 1)}) % {KEYS} END AS k, "
        f"(id * 31 + {seed}) % 9973 AS v, CAST(id % 97 AS STRING) AS tag FROM range(0, {n}, 1, {maps})"))


def _dims(spark: Any, scale: float, name: str = "dims") -> str:
    n = _rows(DIM_ROWS, scale)
    return _register(spark, name, (
        f"SELECT id % {KEYS} AS k, id AS dim_id, concat('name-', CAST(id AS STRING)) AS name "
        f"FROM range(0, {n}, 1, 4)"))


def _views_fact_dim(spark: Any, scale: float) -> dict[str, str]:
    return {"facts": _facts(spark, scale), "dims": _dims(spark, scale)}


SHUFFLE_PARTITIONS = 40


def _views_two_skewed(spark: Any, scale: float) -> dict[str, str]:
    # facts2's hot key differs from facts' (so the join output stays small) but hashes to the
    # same one of the SHUFFLE_PARTITIONS reducers: that reducer is skewed on both sides
    hot2 = same_partition_key(0, SHUFFLE_PARTITIONS, start=KEYS + 1)
    return {"facts": _facts(spark, scale), "facts2": _facts(spark, scale / 2, "facts2", hot_key=hot2, hot_pct=30, seed=2)}


def _views_three(spark: Any, scale: float) -> dict[str, str]:
    d = _views_fact_dim(spark, scale)
    d["regions"] = _register(spark, "regions", (
        f"SELECT id % {max(2, _rows(200, scale))} AS dim_id_mod, id AS region_id FROM range(0, {_rows(400, scale)}, 1, 2)"))
    return d


def _views_broadcast(spark: Any, scale: float) -> dict[str, str]:
    d = _views_fact_dim(spark, scale)
    # a big table that a filter shrinks to almost nothing at run time (statically it looks big);
    # the workloads filter on `item % 997`, which the optimizer cannot turn into a constraint on
    # the join key (so the other side stays big)
    d["catalog"] = _register(spark, "catalog", (
        f"SELECT id % {KEYS} AS k, id AS item, id % 1000 AS bucket FROM range(0, {_rows(100_000, scale)}, 1, 4)"))
    return d


def _views_broadcast_union(spark: Any, scale: float) -> dict[str, str]:
    d = _views_broadcast(spark, scale)
    d["catalog2"] = _register(spark, "catalog2", (
        f"SELECT id % {KEYS} AS k, id AS item FROM range(0, {_rows(50_000, scale)}, 1, 4)"))
    return d


# ----------------------------------------------------------------------------------------
# Settings (byte thresholds scale with the data so every scale shows the same decisions)


def _base(scale: float, *, broadcast: bool = False) -> dict[str, str]:
    s = max(scale, 1e-3)
    conf = {
        A + "enabled": "true",
        config.SHUFFLE_PARTITIONS: str(SHUFFLE_PARTITIONS),
        A + "advisoryPartitionSizeInBytes": _kb(96 * s),
        A + "coalescePartitions.minPartitionSize": _kb(4 * s),
        A + "skewJoin.skewedPartitionThresholdInBytes": _kb(64 * s),
        # keep planned joins sort-merge: the runtime decisions are what we look at
        config.AUTO_BROADCASTJOIN_THRESHOLD: "-1" if not broadcast else _kb(256 * s),
    }
    return conf


def _skew_presets(extra: tuple[WorkloadPreset, ...] = ()) -> tuple[WorkloadPreset, ...]:
    return (
        WorkloadPreset("default", {}, "small-data thresholds: skewed partitions split, the rest coalesced"),
        WorkloadPreset("factor_2", {A + "skewJoin.skewedPartitionFactor": "2"}, "a lower skew factor"),
        WorkloadPreset("skew_join_off", {A + "skewJoin.enabled": "false"}, "skew join handling disabled"),
    ) + extra


WORKLOADS: dict[str, Workload] = {}


def _add(w: Workload) -> None:
    WORKLOADS[w.name] = w


_add(Workload(
    "skew_join_inner", "Inner join of a skewed fact table with a dimension: the hot key's partition is split.",
    "SELECT count(*) AS n, sum(f.v) AS sv, max(d.name) AS mx FROM facts f JOIN dims d ON f.k = d.k",
    _views_fact_dim, _base, _skew_presets(), decisions=("skew_split", "coalesce")))
_add(Workload(
    "skew_join_left_outer", "Left outer join: the skewed left side may be split.",
    "SELECT count(*) AS n, sum(f.v) AS sv, count(d.name) AS matched FROM facts f LEFT OUTER JOIN dims d ON f.k = d.k",
    _views_fact_dim, _base, _skew_presets(), decisions=("skew_split",)))
_add(Workload(
    "skew_join_right_outer", "Right outer join with the skewed table on the right: the right side may be split.",
    "SELECT count(*) AS n, sum(f.v) AS sv FROM dims d RIGHT OUTER JOIN facts f ON d.k = f.k",
    _views_fact_dim, _base, _skew_presets(), decisions=("skew_split",)))
_add(Workload(
    "skew_join_left_semi", "Left semi join (EXISTS): the skewed left side may be split.",
    "SELECT count(*) AS n, sum(f.v) AS sv FROM facts f LEFT SEMI JOIN dims d ON f.k = d.k",
    _views_fact_dim, _base, _skew_presets(), decisions=("skew_split",)))
_add(Workload(
    "skew_join_left_anti", "Left anti join (NOT EXISTS): the skewed left side may be split.",
    "SELECT count(*) AS n, sum(f.v) AS sv FROM facts f LEFT ANTI JOIN dims d ON f.k = d.k + 1",
    _views_fact_dim, _base, _skew_presets(), decisions=("skew_split",)))
_add(Workload(
    "skew_join_full_outer", "Full outer join: skewed, but Spark never splits either side of a full outer join.",
    "SELECT count(*) AS n, sum(f.v) AS sv, count(d.dim_id) AS dn FROM facts f FULL OUTER JOIN dims d ON f.k = d.k",
    _views_fact_dim, _base, _skew_presets()[:2], decisions=("skew_not_split", "coalesce")))
_add(Workload(
    "skew_join_both_sides", "Both sides skewed on the same key: the split parts are paired as a cartesian product.",
    "SELECT count(*) AS n, sum(a.v + b.v) AS sv FROM facts a JOIN facts2 b ON a.k = b.k",
    _views_two_skewed, _base, _skew_presets(), decisions=("skew_split_both",)))
_add(Workload(
    "skew_join_then_aggregate", "Skewed join feeding an aggregation on the join key: splitting would break the"
    " aggregation's distribution, so Spark keeps the join unsplit (unless forced, 3.3+).",
    "SELECT f.k, count(*) AS n, sum(f.v) AS sv FROM facts f JOIN dims d ON f.k = d.k GROUP BY f.k",
    _views_fact_dim, _base,
    (WorkloadPreset("default", {}), WorkloadPreset("force", {A + "forceOptimizeSkewedJoin": "true"}, "split anyway, adding a shuffle", "3.3.0")),
    decisions=("skew_not_split_distribution",)))
_add(Workload(
    "aggregate_coalesce", "Group-by over many small shuffle partitions: AQE coalesces them.",
    "SELECT k % 300 AS g, count(*) AS n, sum(v) AS sv FROM facts GROUP BY k % 300",
    _views_fact_dim, _base, (
        WorkloadPreset("default", {}, "parallelismFirst (3.2+) aims at the default parallelism"),
        WorkloadPreset("parallelism_first_off", {A + "coalescePartitions.parallelismFirst": "false"},
               "respect the advisory size instead of the default parallelism", "3.2.0"),
        WorkloadPreset("min_partition_num_6", {A + "coalescePartitions.minPartitionNum": "6"}, "at least 6 partitions"),
        WorkloadPreset("advisory_8k", {A + "advisoryPartitionSizeInBytes": "8k"}, "a smaller advisory size"),
        WorkloadPreset("coalesce_off", {A + "coalescePartitions.enabled": "false"}, "no coalescing"),
    ), decisions=("coalesce",)))
_add(Workload(
    "repartition_by_number", "A user repartition(30) is never coalesced; the aggregation after it is.",
    "SELECT k % 50 AS g, count(*) AS n FROM (SELECT /*+ REPARTITION(30) */ * FROM facts) GROUP BY k % 50",
    _views_fact_dim, _base, (WorkloadPreset("default", {}),), decisions=("no_coalesce_user_repartition",)))
_add(Workload(
    "repartition_by_column", "A user repartition by column: coalesced from 3.2 (origin REPARTITION_BY_COL), not in 3.0/3.1.",
    "SELECT k, count(*) AS n, sum(v) AS sv FROM (SELECT /*+ REPARTITION(k) */ k, v FROM facts WHERE v % 5 = 0) GROUP BY k",
    _views_fact_dim, _base, (WorkloadPreset("default", {}), WorkloadPreset("advisory_8k", {A + "advisoryPartitionSizeInBytes": "8k"})),
    decisions=("coalesce",)))
_add(Workload(
    "rebalance", "REBALANCE hint on skewed data: the hot partition is split by map ranges, the rest coalesced.",
    "SELECT /*+ REBALANCE(k) */ k, v FROM facts WHERE v % 4 = 0",
    _views_fact_dim, lambda sc: {**_base(sc), A + "advisoryPartitionSizeInBytes": _kb(16 * sc)}, (
        WorkloadPreset("default", {}),
        WorkloadPreset("small_factor", {A + "rebalancePartitionsSmallPartitionFactor": "0.5"}, "merge small splits more", "3.3.0"),
        WorkloadPreset("rebalance_skew_off", {A + "optimizeSkewsInRebalancePartitions.enabled": "false"}),
    ), min_version="3.2.0", decisions=("rebalance_split", "coalesce")))
_add(Workload(
    "rebalance_no_column", "REBALANCE without columns (round robin): splits and local reads (3.2+).",
    "SELECT /*+ REBALANCE */ k, v FROM facts WHERE v % 4 = 1",
    _views_fact_dim, lambda sc: {**_base(sc), A + "advisoryPartitionSizeInBytes": _kb(16 * sc)}, (WorkloadPreset("default", {}),), min_version="3.2.0", decisions=("rebalance",)))
_add(Workload(
    "runtime_broadcast", "A join whose filtered side is tiny at run time becomes a broadcast hash join"
    " (the planner, seeing the unfiltered size, chose sort-merge).",
    "SELECT count(*) AS n, sum(f.v) AS sv FROM facts f JOIN (SELECT * FROM catalog WHERE item % 997 = 7) c ON f.k = c.k",
    _views_broadcast, lambda s: _base(s, broadcast=True), (
        WorkloadPreset("default", {}),
        WorkloadPreset("threshold_off", {A + "autoBroadcastJoinThreshold": "-1"}, "no runtime broadcast (3.2+ AQE threshold)", "3.2.0"),
        WorkloadPreset("local_read_off", {A + "localShuffleReader.enabled": "false"},
                       "no local shuffle read: from 4.2.0 the skewed streamed side is split (SPARK-44065)"),
    ), decisions=("runtime_broadcast", "local_read")))
_add(Workload(
    "demote_broadcast", "The small side has data in only a few partitions: AQE demotes broadcasting it"
    " (nonEmptyPartitionRatioForBroadcastJoin) and keeps a sort-merge join.",
    "SELECT count(*) AS n, sum(f.v) AS sv FROM facts f JOIN (SELECT * FROM catalog WHERE item % 997 = 7 AND item < 5000) c"
    " ON f.k = c.k",
    _views_broadcast, lambda s: _base(s, broadcast=True), (
        WorkloadPreset("default", {}),
        WorkloadPreset("no_demotion", {A + "nonEmptyPartitionRatioForBroadcastJoin": "0"}, "never demote"),
    ), decisions=("demote_broadcast",)))
_add(Workload(
    "union_aggregates", "A union of two aggregations: each branch is coalesced on its own (coalesce groups, 3.3+).",
    "SELECT k % 200 AS g, count(*) AS n FROM facts GROUP BY k % 200 "
    "UNION ALL SELECT k % 7 AS g, count(*) AS n FROM dims GROUP BY k % 7",
    _views_fact_dim, _base, (WorkloadPreset("default", {}), WorkloadPreset("min_partition_num_8", {A + "coalescePartitions.minPartitionNum": "8"})),
    decisions=("coalesce_groups",)))
_add(Workload(
    "multi_way_join", "Three-way join on different keys: each join is its own stage, each can be split.",
    "SELECT count(*) AS n, sum(f.v) AS sv FROM facts f JOIN dims d ON f.k = d.k JOIN regions r ON d.dim_id % 200 = r.dim_id_mod",
    _views_three, _base, (WorkloadPreset("default", {}), WorkloadPreset("factor_2", {A + "skewJoin.skewedPartitionFactor": "2"})),
    decisions=("skew_split", "coalesce")))
_add(Workload(
    "multi_way_join_same_key", "Three tables joined on the same key in one stage: a split would break the"
    " upper join's distribution, so neither join is split.",
    "SELECT count(*) AS n, sum(f.v) AS sv FROM facts f JOIN dims a ON f.k = a.k JOIN dims2 b ON f.k = b.k",
    lambda spark, s: {**_views_fact_dim(spark, s), "dims2": _dims(spark, s, "dims2")}, _base,
    (WorkloadPreset("default", {}), WorkloadPreset("force", {A + "forceOptimizeSkewedJoin": "true"}, "split anyway", "3.3.0")),
    decisions=("skew_not_split_distribution",)))
_add(Workload(
    "shuffled_hash_join", "Every partition of one side fits maxShuffledHashJoinLocalMapThreshold: the sort-merge"
    " join becomes a shuffled hash join at run time (3.2+).",
    "SELECT count(*) AS n, sum(f.v) AS sv FROM facts f JOIN dims d ON f.k = d.k",
    _views_fact_dim, _base, (WorkloadPreset("default", {A + "maxShuffledHashJoinLocalMapThreshold": "8m",
                                                A + "advisoryPartitionSizeInBytes": "1m"}, "SHJ preferred"),
                             WorkloadPreset("local_map_too_small", {A + "maxShuffledHashJoinLocalMapThreshold": "1k",
                                                                    A + "advisoryPartitionSizeInBytes": "1k"},
                                            "partitions larger than the local map threshold: sort-merge stays")),
    min_version="3.2.0", decisions=("shuffled_hash_join",)))


#: the small side of the runtime-broadcast shapes: an aggregate over a filter that leaves ~0.1%
#: of `catalog` (statically the aggregate looks as big as the table, so the planner keeps SMJ)
_SMALL_AGG = "SELECT k, max(item) AS w FROM catalog WHERE item % 997 = 7 GROUP BY k"
_SMALL_AGG2 = "SELECT k, max(item) AS w FROM catalog2 WHERE item % 991 = 3 GROUP BY k"


def _threshold_presets(doc_above: str, doc_below: str) -> tuple[WorkloadPreset, ...]:
    """The static threshold alone, then the adaptive one above and below it (3.2+)."""
    return (
        WorkloadPreset("default", {}, "the static broadcast threshold only (256 KiB x scale)"),
        WorkloadPreset("adaptive_above_static", {config.AUTO_BROADCASTJOIN_THRESHOLD: "-1",
                                                 config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD: "1m"}, doc_above, "3.2.0"),
        WorkloadPreset("adaptive_below_static", {config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD: "1k"}, doc_below, "3.2.0"),
    )


_add(Workload(
    "broadcast_aggregate", "The build side is an aggregate over a small shuffle stage: AQE takes the side's"
    " size from the query stage below the aggregate (LogicalQueryStage) and broadcasts it at run time.",
    f"SELECT count(*) AS n, sum(f.v) AS sv FROM facts f JOIN ({_SMALL_AGG}) c ON f.k = c.k",
    _views_broadcast, lambda s: _base(s, broadcast=True), _threshold_presets(
        "static threshold off, adaptive 1m: the stage's runtime size uses the adaptive threshold -> broadcast",
        "adaptive 1k, below the runtime size: no broadcast although the static threshold would allow it"),
    decisions=("runtime_broadcast",)))
_add(Workload(
    "broadcast_aggregate_filtered", "A filter (HAVING) above the small aggregate: Spark's size-only statistics"
    " carry the size through the filter but not its runtime flag, so the static threshold decides.",
    f"SELECT count(*) AS n, sum(f.v) AS sv FROM facts f JOIN ({_SMALL_AGG} HAVING max(item) > 0) c ON f.k = c.k",
    _views_broadcast, lambda s: _base(s, broadcast=True), _threshold_presets(
        "static threshold off, adaptive 1m: the filtered size is not a runtime statistic -> sort-merge stays",
        "adaptive 1k: the static threshold still applies to the filtered size -> broadcast"),
    decisions=("runtime_broadcast",)))
_add(Workload(
    "broadcast_union", "The build side is a union of two small aggregates: its size is the sum of the two"
    " stages' sizes (4.x: the union keeps the hash partitioning, so no exchange above it).",
    f"SELECT count(*) AS n, sum(f.v) AS sv FROM facts f JOIN ({_SMALL_AGG} UNION ALL {_SMALL_AGG2}) c ON f.k = c.k",
    _views_broadcast_union, lambda s: _base(s, broadcast=True), _threshold_presets(
        "static threshold off, adaptive 1m: broadcast only where a shuffle stage sits above the union (3.x)",
        "adaptive 1k: the union's summed size is not a runtime statistic, the static threshold decides"),
    decisions=("runtime_broadcast",)))


def names() -> list[str]:
    return list(WORKLOADS)


def get(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; built-in workloads: {', '.join(WORKLOADS)}") from None
