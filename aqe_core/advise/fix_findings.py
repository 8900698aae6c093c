"""What a minimal fix is for (issue 13): the findings in one replayed query that a setting can
change, each with the goal a fix must reach and the settings to try first.

A finding is judged against Spark's own defaults, never against the settings that caused it:
skew is a partition over 5x (the default factor) the median and over the advisory size (so a
split would cut it); a broadcast is missed when the side fits Spark's default 10 MiB threshold;
a read is over-coalesced when it has fewer partitions than the cores while every core could
get at least the minimum partition size; it has too many small partitions when it has more
than the cores and more than twice what the advisory size calls for. The goal is tested on the
replay under the candidate settings (:mod:`aqe_core.advise.recommend`), never assumed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

from aqe_core import config
from aqe_core.config import AQEConf, default_conf
from aqe_core.engine.results import JoinResult, QueryResult, ReadResult
from aqe_core.engine.trace import trace_read
from aqe_core.model.capture import QueryCapture
from aqe_core.engine.codes import (
    BROADCAST_OFF, DEMOTE_BROADCAST, MAP_OUTPUTS_CUT, NO_SPLIT, RUNTIME_BROADCAST, SKEW_ENABLED, SKEW_NO_EXTRA_SHUFFLE,
    SKEW_OVER_THRESHOLD, STREAM_OVER_THRESHOLD, TOO_BIG_TO_BROADCAST)
from aqe_core.engine.codes import DEMOTED as DEMOTED_CODE
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
)
from aqe_core.engine.histogram_lines import median_size
from aqe_core.units import format_bytes, num
from aqe_core.versions import SparkVersion

__all__ = ["Finding", "bytes_above", "bytes_below", "factor_below", "find", "next_settings"]

SKEW, OVER, SMALL, SMALL_FILES, MISSED, DEMOTED = ("skew left unsplit", "over-coalesced", "too many small partitions",
                                                   "small files after rebalance", "missed broadcast", "demoted broadcast")
_K, _M = 1 << 10, 1 << 20


def bytes_below(n: int) -> str:
    """The largest round size string strictly below ``n`` bytes (two significant digits in the
    largest unit that keeps them whole), for thresholds a partition must be *over*.

    >>> bytes_below(380592), bytes_below(100 * 1024), bytes_below(950)
    ('370k', '99k', '940')
    """
    unit, suffix = (_M, "m") if n >= 10 * _M else (_K, "k") if n >= 10 * _K else (1, "")
    whole = (n - 1) // unit
    step = 10 ** max(len(str(whole)) - 2, 0)
    return f"{max(whole // step * step, 1)}{suffix}"


def bytes_above(n: int) -> str:
    """The smallest round size string at or above ``n`` bytes, for thresholds a side must *fit*.

    >>> bytes_above(1616), bytes_above(96), bytes_above(380592)
    ('1700', '96', '380k')
    """
    unit, suffix = (_M, "m") if n >= 10 * _M else (_K, "k") if n >= 10 * _K else (1, "")
    step = 10 ** max(len(str(-(-n // unit))) - 2, 0)
    return f"{-(-n // (unit * step)) * step}{suffix}"


def factor_below(ratio: float, v: SparkVersion) -> Optional[str]:
    """A skew factor the partition passes (``size > factor x median``), of the type the release's
    registry entry gives it (an int before 3.4).

    >>> factor_below(7.83, SparkVersion(3, 5, 9)), factor_below(7.0, SparkVersion(3, 3, 4))
    ('7.8', '6')
    """
    entry = config.keys_for(v).get(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR)
    if entry is not None and entry.type == "double":
        f = math.floor(ratio * 10 - 1e-9) / 10
        return num(f) if f >= 1 else None
    f = math.ceil(ratio) - 1
    return str(f) if f >= 1 else None


@dataclass
class Finding:
    kind: str
    stage_id: Optional[int]
    why: str
    goal: Callable[[QueryResult], bool]
    candidates: list[dict[str, str]]  # each tried alone, in order; the search may extend one
    hints: list[str] = field(default_factory=list)
    join_node: Optional[int] = None


def _read_at(qr: QueryResult, stage_id: Optional[int]) -> Optional[ReadResult]:
    return next((r for r in qr.reads if r.stage_id == stage_id), None)


def _is_split(specs: Optional[list]) -> bool:
    return any(isinstance(s, PartialReducerPartitionSpec) for s in specs or ())


def _local(specs: Optional[list]) -> bool:
    return any(isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)) for s in specs or ())


def next_settings(r: ReadResult, q: QueryCapture, conf: AQEConf, v: SparkVersion) -> list[dict[str, str]]:
    """Where this read's skew trace stops, the settings that get it past that condition."""
    osj = next((t for t in trace_read(r, v) if t.rule == "OptimizeSkewedJoin"), None)
    stop = osj.first_failed if osj is not None else None
    if stop is None:
        return []
    if stop.id == SKEW_ENABLED.id:
        return [{config.SKEW_JOIN_ENABLED: "true"}]
    if stop.id == SKEW_NO_EXTRA_SHUFFLE.id:
        # (the setting exists from 3.3: the registry knows each release's SQLConf)
        return [{config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN: "true"}] if config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN in \
            config.keys_for(v) else []
    sizes = _sizes(q, r)
    if not sizes:
        return []
    largest, median = max(sizes), median_size(sizes)
    if stop.id in (SKEW_OVER_THRESHOLD.id, STREAM_OVER_THRESHOLD.id):
        threshold = {}
        if largest <= conf.get_or(config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD, 0):
            threshold[config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD] = bytes_below(largest)
        # the median Spark used: 3.0/3.1 take it over the coalesced partitions (the no_split reason says)
        used = [m for x in r.reasons if x.code == NO_SPLIT for m in (x.numbers.get("left_median"),
                                                                     x.numbers.get("right_median")) if m]
        factors = sorted({f for m in [median, *used] if (f := factor_below(largest / m, v)) is not None},
                         key=float, reverse=True)
        at = conf.get_or(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR, 5)
        options = [{**threshold, config.SKEW_JOIN_SKEWED_PARTITION_FACTOR: f} for f in factors if float(f) < at]
        return ([threshold] if threshold else []) + options
    if stop.id == MAP_OUTPUTS_CUT.id:
        return [{config.ADVISORY_PARTITION_SIZE_IN_BYTES: bytes_below(largest // 2)}]
    return []


def _sizes(q: QueryCapture, r: ReadResult) -> Optional[list[int]]:
    sh = q.shuffle(r.shuffle_id)
    return list(sh.bytes_by_partition_id) if sh is not None and sh.bytes_by_partition_id else None


def _skew(r: ReadResult, q: QueryCapture, conf: AQEConf, v: SparkVersion) -> Optional[Finding]:
    sizes = _sizes(q, r)
    if not sizes or _is_split(r.spark_specs) or _local(r.spark_specs) or r.spark_specs is None:
        return None
    largest, median = max(sizes), median_size(sizes)
    default_factor = default_conf(v).get(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR)
    if largest <= default_factor * median or largest <= conf.advisory_partition_size:
        return None
    first = next_settings(r, q, conf, v)
    if not first:
        return None
    why = (f"partition {sizes.index(largest)} is {format_bytes(largest)}, {num(round(largest / median, 1))}x the median"
           f" {format_bytes(median)} and above the advisory size {format_bytes(conf.advisory_partition_size)}, but AQE"
           " left it whole")
    stage = r.stage_id
    return Finding(SKEW, stage, why, lambda qr: _is_split(getattr(_read_at(qr, stage), "simulated_specs", None)), first)


def _reducers(q: QueryCapture, r: ReadResult) -> int:
    sh = q.shuffle(r.shuffle_id)
    return sh.num_reducers if sh is not None else 0


def _partitions(r: ReadResult, simulated: bool) -> Optional[int]:
    specs = r.simulated_specs if simulated else r.spark_specs
    if specs is None:
        return None
    return len(specs)


def _coalescing(r: ReadResult, q: QueryCapture, conf: AQEConf, v: SparkVersion) -> Optional[Finding]:
    sizes = _sizes(q, r)
    if not sizes or _local(r.spark_specs) or _is_split(r.spark_specs):
        return None
    n_now = len(r.spark_specs) if r.spark_specs is not None else len(sizes)
    total, cores, stage = sum(sizes), max(q.default_parallelism, 1), r.stage_id
    want = min(cores, len(sizes))
    min_size = conf.get_or(config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE, _M)
    advisory = conf.advisory_partition_size
    if n_now < want and total >= want * min_size:
        why = (f"{len(sizes)} partitions ({format_bytes(total)}) coalesced into {n_now}, fewer than the {cores} cores"
               f" although each core could get at least {format_bytes(min_size)}")
        cands = []
        if not conf.get_or(config.COALESCE_PARTITIONS_PARALLELISM_FIRST, True):  # (a key from 3.2)
            cands.append({config.COALESCE_PARTITIONS_PARALLELISM_FIRST: "true"})
        cands.append({config.ADVISORY_PARTITION_SIZE_IN_BYTES: bytes_below(total // want + 1)})
        return Finding(OVER, stage, why, lambda qr: (_partitions(_read_at(qr, stage) or r, True) or 0) >= want, cands)
    needed = -(-total // max(advisory, 1))
    enough = max(2 * cores, 2 * needed)
    if n_now <= enough or median_size(sizes) >= advisory // 4:
        return None
    st = q.stage(stage)
    rebalance = bool(st and st.origin and st.origin.startswith("REBALANCE"))
    why = (f"{n_now} partitions of {format_bytes(total)} in all (median {format_bytes(median_size(sizes))}), more than"
           f" twice the {cores} cores and twice the {needed} the advisory size {format_bytes(advisory)} calls for")
    cands = []
    if not conf.get_or(config.COALESCE_PARTITIONS_ENABLED, True):
        cands.append({config.COALESCE_PARTITIONS_ENABLED: "true"})
    if conf.get_or(config.COALESCE_PARTITIONS_PARALLELISM_FIRST, False):
        cands.append({config.COALESCE_PARTITIONS_PARALLELISM_FIRST: "false"})
    hints = (["a `REBALANCE` hint lets AQE size the output files; a `REPARTITION(n)` hint fixes n partitions and AQE"
              " never coalesces it"] if rebalance or (st and st.origin == "REPARTITION_BY_NUM") else [])
    if not cands and not hints:
        return None
    kind = SMALL_FILES if rebalance else SMALL
    return Finding(kind, stage, why, lambda qr: 0 < (_partitions(_read_at(qr, stage) or r, True) or n_now) <= enough,
                   cands, hints)


def _demoted(j: JoinResult, v: SparkVersion) -> Optional[Finding]:
    r = next((x for x in j.reasons if x.code == DEMOTE_BROADCAST), None)
    demoted = next((x for x in j.reasons if x.code == DEMOTED_CODE), None)
    if r is None or demoted is None or (j.spark or "").startswith("Broadcast"):
        return None
    ratio = r.numbers["non_empty"] / max(r.numbers["partitions"], 1)
    if ratio <= 0:
        return None
    value = math.floor(ratio * 100 + 1e-9) / 100
    side = demoted.subject.get("side", "build")
    why = (f"the {side} side ({format_bytes(demoted.numbers.get('size'))}) fits the broadcast threshold, but only"
           f" {r.numbers['non_empty']} of its {r.numbers['partitions']} partitions have data ({num(round(ratio, 3))} <"
           f" {num(r.numbers['ratio'])}), so AQE keeps a sort-merge join, whose tasks for empty partitions finish at once")
    node = j.node
    return Finding(DEMOTED, demoted.subject.get("stage_id"), why, lambda qr: _strategy(qr, node).startswith("Broadcast"),
                   [{config.NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN: num(value)}], join_node=node)


def _strategy(qr: QueryResult, node: int) -> str:
    j = next((x for x in qr.joins if x.node == node), None)
    return (j.simulated or j.spark or "") if j is not None else ""


def missed_broadcast(j: JoinResult, probe: QueryResult, v: SparkVersion) -> Optional[Finding]:
    """``probe``: the replay under Spark's default broadcast thresholds. A side that it
    broadcasts, where this query's thresholds kept a shuffled join, is a missed broadcast."""
    if (j.spark or "").startswith("Broadcast") or any(x.code in (DEMOTED_CODE, DEMOTE_BROADCAST) for x in j.reasons):
        return None
    pj = next((x for x in probe.joins if x.node == j.node), None)
    took = next((x for x in (pj.reasons if pj else []) if x.code == RUNTIME_BROADCAST), None)
    if pj is None or took is None or not (pj.simulated or "").startswith("Broadcast"):
        return None
    size, key = took.numbers["size"], took.config_keys[0] if took.config_keys else config.AUTO_BROADCASTJOIN_THRESHOLD
    side = took.subject.get("side", "build")
    cands = [{key: bytes_above(size)}]
    if key == config.AUTO_BROADCASTJOIN_THRESHOLD and config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD in config.keys_for(v):
        cands.insert(0, {config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD: bytes_above(size)})
    now = next((x for x in j.reasons if x.code in (BROADCAST_OFF, TOO_BIG_TO_BROADCAST)
                and x.subject.get("side") == side), None)
    limit = (f" ({now.config_keys[0]} = {format_bytes(now.numbers['threshold'])})" if now is not None and
             now.config_keys and now.numbers.get("threshold", -1) >= 0 else
             f" ({now.config_keys[0]} = -1: broadcasting is off)" if now is not None and now.config_keys else "")
    why = (f"the {side} side is {format_bytes(size)} at run time, within Spark's default broadcast threshold"
           f" {format_bytes(default_conf(v).get(config.AUTO_BROADCASTJOIN_THRESHOLD))}, but this query's threshold{limit}"
           f" kept a {j.spark}")
    hint = (f"per query instead: a `BROADCAST` join hint on the {side} side's relation (it changes the plan before AQE,"
            " so the replay cannot size it; a run can)")
    node = j.node
    return Finding(MISSED, took.subject.get("stage_id"), why, lambda qr: _strategy(qr, node).startswith("Broadcast"),
                   cands, [hint], join_node=node)


def probe_settings(conf: AQEConf, v: SparkVersion) -> dict[str, str]:
    """Spark's default broadcast thresholds where this query's are lower (for :func:`missed_broadcast`)."""
    default = default_conf(v).get(config.AUTO_BROADCASTJOIN_THRESHOLD)
    out = {}
    if conf.get_or(config.AUTO_BROADCASTJOIN_THRESHOLD, default) < default:
        out[config.AUTO_BROADCASTJOIN_THRESHOLD] = str(default)
    aqe = conf.get_or(config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD, None)  # (a key from 3.2)
    if aqe is not None and aqe < default:
        out[config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD] = str(default)
    return out


def find(base: QueryResult, q: QueryCapture, conf: AQEConf, v: SparkVersion,
         probe: Optional[QueryResult] = None) -> list[Finding]:
    """Every finding of one replayed query (``base``: the replay of what Spark did)."""
    out: list[Finding] = []
    seen = {r.shuffle_id for r in base.reads}
    for r in base.reads:
        f = _skew(r, q, conf, v) or _coalescing(r, q, conf, v)
        if f is not None:
            out.append(f)
    for sid, sh in q.shuffles.items():  # shuffles read as they are (no adaptive read in Spark's plan)
        st = next((s for s in q.stages if s.shuffle_id == sid and s.kind == "shuffle"), None)
        if sid in seen or st is None:
            continue
        f = _coalescing(ReadResult(-1, None, st.stage_id, sid, -1, None, None), q, conf, v)
        if f is not None:
            out.append(f)
    for j in base.joins:
        f = _demoted(j, v) or (missed_broadcast(j, probe, v) if probe is not None else None)
        if f is not None:
            out.append(f)
    return out
