"""Decision traces (issue 13): for one adaptive read, the rules of its release in Spark's order,
each with the conditions it checks, what each found, and the first that failed.

Built from the replay's own reasons and what each rule module declares
(:mod:`aqe_core.model.vocabulary`): its trace's conditions, in order, each with the settings it
reads and the codes that fail it or show it met. A condition fails when its rule gave a reason
with a failing code, passes when one shows it was met, and after the first failure the rest of
that rule is "not reached". Each rule's verdict (in its declared words) is what it did to the
read in the replay (``ReadResult.rules`` and the specs), so a trace never claims a split the
specs do not show. This module knows no condition's sentence, no verdict's and no rule's codes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from aqe_core.engine.pipeline import pipeline_for
from aqe_core.engine.results import JoinResult, ReadResult
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import TraceSpec, declared_codes, declared_conditions, trace_spec
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
    condition: str  # the declared condition's sentence, for people
    result: str  # pass | fail | info | not reached | not applicable
    detail: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    id: str = ""  # the declared condition's stable id: code switches on it (not written to the JSON)

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


def _with_settings(checks: list[Check], conf: "AQEConf | None") -> list[Check]:
    """Each reached check with the values in force of the settings its condition reads (the
    rule's own numbers, from its reason, win on a name clash). The settings are declared with the
    condition; keys a release lacks are left out."""
    if conf is None:
        return checks
    out = []
    for c in checks:
        keys = [k for k in _CONDITIONS[c.id].settings if k in conf.keys] if c.id in _CONDITIONS else []
        if c.result in (NOT_REACHED, NOT_APPLICABLE) or not keys:
            out.append(c)
            continue
        out.append(Check(c.condition, c.result, c.detail, {**{k: conf.get(k) for k in keys}, **c.inputs}, c.id))
    return out


def _belongs(reason: Reason, rule: Optional[str]) -> bool:
    """A reason about one rule (a per-rule code, e.g. the final-stage filter) belongs to the rule
    it names in ``numbers["rule"]``; ``rule=None``: no filter."""
    return rule is None or reason.code not in _PER_RULE or reason.numbers.get("rule") == rule


def _checks(spec: TraceSpec, reasons: list[Reason], rule: Optional[str], applicable: bool,
            applied: bool = False) -> list[Check]:
    """The checks of ``spec``'s conditions, from the codes of ``reasons``. ``applied``: the rule
    changed the read, so a failure about one partition (another was split) is information, not
    where the rule stopped."""
    codes = {r.code: r for r in reasons if _belongs(r, rule)}
    out: list[Check] = []
    failed = False
    for cond in spec.conditions:
        sentence, cid = cond.sentence, cond.id
        if failed:
            out.append(Check(sentence, NOT_REACHED, id=cid))
            continue
        if cond.informs:
            info = next((codes[c] for c in cond.informs if c in codes), None)
            out.append(Check(sentence, INFO, info.message, dict(info.numbers), cid) if info
                       else Check(sentence, NOT_APPLICABLE, id=cid))
            continue
        hit = next((codes[c] for c in cond.fails if c in codes), None)
        if hit is not None and applied and "partition" in hit.subject:
            out.append(Check(sentence, INFO, hit.message, dict(hit.numbers), cid))
        elif hit is not None:
            out.append(Check(sentence, FAIL, hit.message, dict(hit.numbers), cid))
            failed = True
        elif any(c in codes for c in cond.meets):
            met = next(codes[c] for c in cond.meets if c in codes)
            out.append(Check(sentence, PASS, met.message, dict(met.numbers), cid))
        else:
            out.append(Check(sentence, PASS if applicable else NOT_APPLICABLE, id=cid))
    return out


def _verdict(spec: TraceSpec, changed: bool, applied: bool) -> str:
    """The rule's declared verdict: it changed the read, it ran but left this one, or neither."""
    return spec.verdicts["changed" if changed else "applied" if applied else "unchanged"]


def _span(spec: Any) -> int:
    """How many reducer partitions one spec reads (a local read keeps coalesced ranges)."""
    if isinstance(spec, CoalescedMapperPartitionSpec):
        return spec.num_reducers
    if isinstance(spec, (CoalescedPartitionSpec, PartialMapperPartitionSpec)):
        return spec.end_reducer_index - spec.start_reducer_index
    return 1


#: the traces the rules declare (the pipeline imports every rule module, so all are registered)
_SKEW, _SKEW_STREAM = trace_spec("OptimizeSkewedJoin"), trace_spec("OptimizeSkewedJoin/broadcast stream")
_REBALANCE, _COALESCE = trace_spec("OptimizeSkewInRebalancePartitions"), trace_spec("CoalesceShufflePartitions")
_JOIN_SIDE, _JOIN_STRATEGY = trace_spec("join side"), trace_spec("join strategy")
_CONDITIONS = declared_conditions()
_PER_RULE = frozenset(c for c in declared_codes() if c.per_rule)
#: the codes a skew rule's trace reads (the per-rule ones are taken by the rule they name)
_SKEW_CODES = (_SKEW.codes | _SKEW_STREAM.codes | _REBALANCE.codes) - _PER_RULE


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
    rebalance = "OptimizeSkewInRebalancePartitions" in r.rules or _REBALANCE.marked(r.reasons)
    for rule in pipeline_for(v).rules:
        applied = rule in r.rules
        if rule in ("OptimizeSkewedJoin", "OptimizeSkewInRebalancePartitions"):
            mine = rebalance == (rule == "OptimizeSkewInRebalancePartitions")
            reasons = [x for x in r.reasons if (mine and x.code in _SKEW_CODES) or
                       (x.code in _PER_RULE and x.numbers.get("rule") == rule)]
            table = (_REBALANCE if rule == "OptimizeSkewInRebalancePartitions" else _SKEW_STREAM
                     if _SKEW_STREAM.marked(reasons) else _SKEW)
            checks = _checks(table, reasons, rule, applied or bool(reasons), applied)
            split = applied and any(isinstance(x, PartialReducerPartitionSpec) for x in r.simulated_specs or ())
            out.append(RuleTrace(rule, _with_settings(checks, conf), _verdict(table, split, applied)))
        elif rule == "CoalesceShufflePartitions":
            merged = applied and any(_span(x) > 1 for x in r.simulated_specs or ())
            out.append(RuleTrace(rule, _with_settings(_checks(_COALESCE, r.reasons, rule, True), conf),
                                 _verdict(_COALESCE, merged, applied)))
        else:  # OptimizeLocalShuffleReader / OptimizeShuffleWithLocalRead: met when it changed the read
            spec = trace_spec(rule)
            checks = [Check(c.sentence, PASS if applied else NOT_APPLICABLE, id=c.id) for c in spec.conditions]
            out.append(RuleTrace(rule, _with_settings(checks, conf), _verdict(spec, applied, False)))
    return out




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
        mine = [x for x in j.reasons if x.subject.get("side") == side or x.about.get("side") == side]
        checks = _checks(_JOIN_SIDE, mine, None, bool(mine))
        broadcast = (j.simulated or "").startswith("BroadcastHashJoin") and build == side
        out.append(RuleTrace(_JOIN_SIDE.label.format(side=side), _with_settings(checks, conf),
                             _verdict(_JOIN_SIDE, broadcast, False)))
    verdict = j.simulated or _JOIN_STRATEGY.verdicts["undecided"]
    out.append(RuleTrace(_JOIN_STRATEGY.label, _with_settings(_checks(_JOIN_STRATEGY, j.reasons, None, False), conf),
                         verdict))
    return out
