"""Decision traces (issue 13): for one adaptive read, the rules of its release in Spark's order,
each with the conditions it checks, what each found, and the first that failed.

Built from the replay's own reasons (each rule module states what it checked and with which
numbers, see :mod:`aqe_core.model.reasons`): a condition fails when its rule gave the reason
that says so, passes when a later step shows it was met, and after the first failure the rest
of that rule is "not reached". Each rule's verdict is what it did to the read in the replay
(``ReadResult.rules`` and the specs), so a trace never claims a split the specs do not show.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from aqe_core import config as K
from aqe_core.engine.pipeline import pipeline_for
from aqe_core.engine.results import JoinResult, ReadResult
from aqe_core.model.reasons import Reason
from aqe_core.rules import optimize_skewed_join_stream as stream
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, CoalescedPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
)
from aqe_core.versions import SparkVersion, as_version

if TYPE_CHECKING:
    from aqe_core.config import AQEConf

__all__ = ["Check", "FAIL", "inputs_text", "INFO", "NOT_APPLICABLE", "NOT_REACHED", "PASS", "RuleTrace", "STREAM_BLOCKING_CODES",
           "stream_split_why", "trace_join", "trace_read"]

#: the broadcast streamed-side case's words, for the views' sentences (the rule module owns them)
STREAM_BLOCKING_CODES = stream.BLOCKING_CODES
stream_split_why = stream.split_why

PASS, FAIL, INFO, NOT_REACHED, NOT_APPLICABLE = "pass", "fail", "info", "not reached", "not applicable"


@dataclass(frozen=True)
class Check:
    condition: str
    result: str  # pass | fail | info | not reached | not applicable
    detail: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"condition": self.condition, "result": self.result, "detail": self.detail, "inputs": dict(self.inputs)}

    def inputs_text(self) -> str:
        return inputs_text(self.inputs)


def inputs_text(inputs: dict[str, Any]) -> str:
    """A check's inputs as ``name=value`` (settings under their Spark names, conf spelling).

    >>> inputs_text({"spark.sql.adaptive.skewJoin.enabled": True, "median": 10, "threshold": None})
    'spark.sql.adaptive.skewJoin.enabled=true, median=10, threshold=unset'
    """
    def text(v: Any) -> str:
        return str(v).lower() if isinstance(v, bool) else ("unset" if v is None else str(v))
    return ", ".join(f"{k}={text(v)}" for k, v in inputs.items())


@dataclass
class RuleTrace:
    rule: str
    checks: list[Check]
    verdict: str

    @property
    def first_failed(self) -> Optional[Check]:
        return next((c for c in self.checks if c.result == FAIL), None)

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failed
        return {"rule": self.rule, "verdict": self.verdict, "first_failed": first.condition if first else None,
                "checks": [c.to_dict() for c in self.checks]}


# (condition, codes that fail it, codes that show it was met): in the order they are looked for, so a
# condition failed by two reasons names the same one whatever the hash seed (sets did not)
_SKEW = (
    ("skew handling is enabled", ("skew_join_disabled", "disabled"), ()),
    ("the rule runs on this stage", ("final_stage_rule_excluded", "final_stage_rules_off", "not_eligible", "not_rebalance",
                                     "partition_counts_differ", "streaming"), ()),
    ("the join type lets this side be split", ("join_type_not_supported", "side_not_splittable"), ("split",)),
    ("a partition is over the skew threshold", ("no_split", "no_large_partition"),
     ("split", "not_splittable_by_maps", "side_not_splittable", "distribution_broken")),
    ("its map outputs can be cut into parts", ("not_splittable_by_maps", "map_sizes_unknown"), ("split",)),
    ("splitting needs no extra shuffle (or forceOptimizeSkewedJoin is on)", ("distribution_broken",), ("forced",)),
)
#: a broadcast join's streamed side (SPARK-44065, 4.2.0): the rule module's own conditions
_SKEW_STREAM = _SKEW[:2] + stream.TRACE_CONDITIONS + _SKEW[-1:]
_REBALANCE = (
    ("skew handling of REBALANCE shuffles is enabled", ("disabled",), ()),
    ("the shuffle is a REBALANCE", ("not_rebalance",), ("split", "no_large_partition")),
    ("the rule runs on this stage", ("final_stage_rule_excluded", "final_stage_rules_off"), ()),
    ("a partition is over the advisory size", ("no_large_partition",), ("split", "not_splittable_by_maps")),
    ("its map outputs can be cut into parts", ("not_splittable_by_maps", "map_sizes_unknown"), ("split",)),
)
_COALESCE = (
    ("coalescing is enabled", ("coalesce_disabled",), ()),
    ("the rule runs on this stage", ("final_stage_rule_excluded", "final_stage_rules_off"), ()),
    ("the shuffle may change its number of partitions", ("unsupported_shuffle", "user_hint"), ("coalesced", "no_change")),
    ("the minimum number of partitions", (), ()),
    ("coalescing towards the target gives fewer partitions", ("no_change",), ("coalesced",)),
)
_MIN_NUM = ("min_num_from_parallelism", "min_num_from_conf", "min_num_one")

#: the settings each condition reads: a check carries their values in force as inputs, whatever
#: its result, so a passed condition shows what it was checked against (keys a release lacks
#: are left out)
_SETTINGS: dict[str, tuple[str, ...]] = {
    "skew handling is enabled": (K.SKEW_JOIN_ENABLED,),
    "the rule runs on this stage": (K.ADAPTIVE_APPLY_FINAL_STAGE_SHUFFLE_OPTIMIZATIONS,),
    "a partition is over the skew threshold": (K.SKEW_JOIN_SKEWED_PARTITION_FACTOR, K.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD),
    "splitting needs no extra shuffle (or forceOptimizeSkewedJoin is on)": (K.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN,),
    "skew handling of REBALANCE shuffles is enabled": (K.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED,),
    "a partition is over the advisory size": (K.ADVISORY_PARTITION_SIZE_IN_BYTES,
                                              K.ADAPTIVE_REBALANCE_PARTITIONS_SMALL_PARTITION_FACTOR),
    "coalescing is enabled": (K.COALESCE_PARTITIONS_ENABLED,),
    "coalescing towards the target gives fewer partitions": (
        K.ADVISORY_PARTITION_SIZE_IN_BYTES, K.COALESCE_PARTITIONS_MIN_PARTITION_SIZE,
        K.COALESCE_PARTITIONS_PARALLELISM_FIRST, K.COALESCE_PARTITIONS_MIN_PARTITION_NUM),
    "the stage's consumer needs no shuffle (a side of a broadcast join)": (K.LOCAL_SHUFFLE_READER_ENABLED,),
    "the side's size fits the broadcast threshold": (K.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD, K.AUTO_BROADCASTJOIN_THRESHOLD),
    "enough non-empty partitions (not demoted)": (K.NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN,),
    "every partition fits the local hash map threshold": (K.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD,
                                                          K.PREFER_SORTMERGEJOIN),
    **stream.TRACE_SETTINGS,
}


def _with_settings(checks: list[Check], conf: "AQEConf | None") -> list[Check]:
    """Each reached check with the values in force of the settings it reads (the rule's own
    numbers, from its reason, win on a name clash)."""
    if conf is None:
        return checks
    out = []
    for c in checks:
        keys = [k for k in _SETTINGS.get(c.condition, ()) if k in conf.keys]
        if c.result in (NOT_REACHED, NOT_APPLICABLE) or not keys:
            out.append(c)
            continue
        out.append(Check(c.condition, c.result, c.detail, {**{k: conf.get(k) for k in keys}, **c.inputs}))
    return out


def _mentions(reason: Reason, rule: str) -> bool:
    """A final-stage reason belongs to the rule it names."""
    return rule in reason.message if reason.code.startswith("final_stage") else True


def _checks(table: tuple, reasons: list[Reason], rule: str, applicable: bool, applied: bool = False) -> list[Check]:
    """``applied``: the rule changed the read, so a failure about one partition (another was
    split) is information, not where the rule stopped."""
    codes = {r.code: r for r in reasons if _mentions(r, rule)}
    out: list[Check] = []
    failed = False
    for condition, fails, meets in table:
        if failed:
            out.append(Check(condition, NOT_REACHED))
            continue
        hit = next((codes[c] for c in fails if c in codes), None)
        if condition == "the minimum number of partitions":
            info = next((codes[c] for c in _MIN_NUM if c in codes), None)
            out.append(Check(condition, INFO, info.message, dict(info.numbers)) if info else Check(condition, NOT_APPLICABLE))
            continue
        if hit is not None and applied and "partition" in hit.subject:
            out.append(Check(condition, INFO, hit.message, dict(hit.numbers)))
        elif hit is not None:
            out.append(Check(condition, FAIL, hit.message, dict(hit.numbers)))
            failed = True
        elif any(c in codes for c in meets):
            met = next(codes[c] for c in meets if c in codes)
            out.append(Check(condition, PASS, met.message, dict(met.numbers)))
        else:
            out.append(Check(condition, PASS if applicable else NOT_APPLICABLE))
    return out


def _span(spec: Any) -> int:
    """How many reducer partitions one spec reads (a local read keeps coalesced ranges)."""
    if isinstance(spec, CoalescedMapperPartitionSpec):
        return spec.num_reducers
    if isinstance(spec, (CoalescedPartitionSpec, PartialMapperPartitionSpec)):
        return spec.end_reducer_index - spec.start_reducer_index
    return 1


_REBALANCE_ONLY = {"disabled", "not_rebalance", "no_large_partition"}
_SKEW_CODES = {"skew_join_disabled", "join_type_not_supported", "side_not_splittable", "no_split", "distribution_broken",
               "partition_counts_differ", "forced", "split", "not_splittable_by_maps", "map_sizes_unknown", "streaming",
               "not_eligible"} | _REBALANCE_ONLY | stream.CODES


def trace_read(r: ReadResult, spark_version: "str | SparkVersion", conf: "AQEConf | None" = None) -> list[RuleTrace]:
    """The trace of one read: every shuffle-read rule of the release, in Spark's order; each
    verdict is what that rule did to the read in the replay (``ReadResult.rules``). With
    ``conf`` (the settings the replay used), each reached check carries the settings it reads.

    >>> from aqe_core.model.specs import CoalescedPartitionSpec as C
    >>> r = ReadResult(0, 1, 0, 0, 0, None, [C(0, 3), C(3, 4)], rules=["CoalesceShufflePartitions"],
    ...                reasons=[Reason("skew_join_disabled", "skewJoin.enabled is false"),
    ...                         Reason("coalesced", "4 partitions coalesced into 2", {"before": 4, "after": 2})])
    >>> for t in trace_read(r, "3.5.9"):
    ...     print(t.rule, "|", t.verdict, "|", t.first_failed.condition if t.first_failed else "-")
    OptimizeSkewedJoin | not split | skew handling is enabled
    OptimizeSkewInRebalancePartitions | not split | -
    CoalesceShufflePartitions | coalesced | -
    OptimizeShuffleWithLocalRead | not read locally | -
    """
    v = as_version(spark_version)
    out: list[RuleTrace] = []
    rebalance = "OptimizeSkewInRebalancePartitions" in r.rules or any(x.code in _REBALANCE_ONLY for x in r.reasons)
    for rule in pipeline_for(v).rules:
        applied = rule in r.rules
        if rule in ("OptimizeSkewedJoin", "OptimizeSkewInRebalancePartitions"):
            mine = rebalance == (rule == "OptimizeSkewInRebalancePartitions")
            reasons = [x for x in r.reasons if (mine and x.code in _SKEW_CODES) or
                       (x.code.startswith("final_stage") and rule in x.message)]
            table = (_REBALANCE if rule == "OptimizeSkewInRebalancePartitions" else _SKEW_STREAM
                     if any(x.code in stream.CODES or x.subject.get("stream") for x in reasons) else _SKEW)
            checks = _checks(table, reasons, rule, applied or bool(reasons), applied)
            split = applied and any(isinstance(x, PartialReducerPartitionSpec) for x in r.simulated_specs or ())
            verdict = "split" if split else ("not split; the other side's splits each read these partitions again"
                                             if applied else "not split")
            out.append(RuleTrace(rule, _with_settings(checks, conf), verdict))
        elif rule == "CoalesceShufflePartitions":
            merged = applied and any(_span(x) > 1 for x in r.simulated_specs or ())
            out.append(RuleTrace(rule, _with_settings(_checks(_COALESCE, r.reasons, rule, True), conf),
                                 "coalesced" if merged else
                                 ("not coalesced: every partition stays on its own" if applied else "not coalesced")))
        else:  # OptimizeLocalShuffleReader / OptimizeShuffleWithLocalRead
            out.append(RuleTrace(rule, _with_settings([Check("the stage's consumer needs no shuffle (a side of a broadcast "
                                                             "join)", PASS if applied else NOT_APPLICABLE)], conf),
                                 "read locally" if applied else "not read locally"))
    return out




# A join, per side, as AQE re-plans it: the size against the broadcast threshold
# (JoinSelection with the runtime statistics), the join type's buildable side, then
# DemoteBroadcastHashJoin; and, for the joins that stay shuffled, the shuffled-hash preference.
_JOIN_SIDE = (
    ("the side's size fits the broadcast threshold", ("broadcast_off", "too_big_to_broadcast", "size_unknown"),
     ("runtime_broadcast", "broadcast_before_stage", "planned_broadcast", "demoted", "demote_broadcast")),
    ("the join type can build this side", ("cannot_build_side",), ("runtime_broadcast", "demoted")),
    # (the rule's own reason first: it gives the non-empty count and the ratio this condition checks)
    ("enough non-empty partitions (not demoted)", ("demote_broadcast", "demoted"), ("runtime_broadcast",)),
)
_SHJ = (
    ("every partition fits the local hash map threshold", ("cannot_build",), ("prefer_shuffled_hash", "convert_to_shj")),
)


def trace_join(j: JoinResult, conf: "AQEConf | None" = None) -> list[RuleTrace]:
    """A join's trace: each side's broadcast conditions (JoinSelection over the runtime sizes,
    DemoteBroadcastHashJoin), then the shuffled-hash preference; the verdict is the strategy the
    replay chose (``simulated``), "not re-decided" when the replay could not decide.

    >>> j = JoinResult(7, "Inner", "k = k", "SortMergeJoin", "SortMergeJoin", "SortMergeJoin", reasons=[
    ...     Reason("too_big_to_broadcast", "the left side's size 4.6 MiB exceeds 256 KiB", subject={"side": "left"}),
    ...     Reason("demoted", "the right side fits 256 KiB but was demoted", subject={"side": "right"})])
    >>> for t in trace_join(j):
    ...     print(t.rule, "|", t.verdict, "|", t.first_failed.condition if t.first_failed else "-")
    broadcast the left side | not broadcast | the side's size fits the broadcast threshold
    broadcast the right side | not broadcast | enough non-empty partitions (not demoted)
    the strategy | SortMergeJoin | -
    """
    out: list[RuleTrace] = []
    build = j.simulated_build_side
    for side in ("left", "right"):
        mine = [x for x in j.reasons if x.subject.get("side") == side or f"the {side} side" in x.message
                or f"{side} side" in x.message]
        checks = _checks(_JOIN_SIDE, mine, "", bool(mine))
        broadcast = (j.simulated or "").startswith("BroadcastHashJoin") and build == side
        out.append(RuleTrace(f"broadcast the {side} side", _with_settings(checks, conf),
                             "broadcast" if broadcast else "not broadcast"))
    verdict = j.simulated or "not re-decided"
    out.append(RuleTrace("the strategy", _with_settings(_checks(_SHJ, j.reasons, "", False), conf), verdict))
    return out
