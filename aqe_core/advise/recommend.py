"""Minimal fixes (issue 13): for each finding of a query (:mod:`aqe_core.advise.fix_findings`:
skew left unsplit, over-coalesced, too many small partitions or small files after a rebalance,
a missed or demoted broadcast), the smallest change of settings whose replay reaches the
finding's goal, with what it does to every other read and join of the query and, set for the
session, to the other queries of the application.

The search tries each candidate alone; a skew candidate that gets the read past one condition
but not the next (skew handling switched on, but the partition under the threshold) is
extended with the setting for the next condition the trace stops at, up to three settings.
Among the candidates that reach the goal the fix is the one with the fewest settings, then the
fewest side effects; the others are listed as alternatives. Exact sources only: the prediction
replays captured statistics; a shuffle the change adds, or a plan the planner would build
differently, is named as something only a run can size.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core import config
from aqe_core.config import AQEConf
from aqe_core.advise.fix_findings import SKEW, Finding, find, next_settings, probe_settings
from aqe_core.advise.session_replay import session_replays
from aqe_core.engine.results import NOT_PREDICTED, STAGE_NOT_CREATED, UNDECIDED_NEW_STAGE, QueryResult
from aqe_core.engine.simulate import one_query, simulate
from aqe_core.engine.spec_sizes import spec_sizes
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec, spec_to_dict,
)
from aqe_core.versions import SparkVersion, as_version

__all__ = ["Alternative", "Fix", "application_effects", "recommend"]


@dataclass
class Alternative:
    settings: dict[str, str]
    effects: list[str]
    assumes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"settings": dict(self.settings), "effects": list(self.effects), "assumes": list(self.assumes)}


@dataclass
class Fix:
    finding: str
    stage_id: Optional[int]
    why: str  # the finding, with its numbers
    settings: dict[str, str]
    predicted: Optional[QueryResult]  # the exact replay under the change (None: an estimate, see ``assumes``)
    effects: list[str] = field(default_factory=list)
    join_node: Optional[int] = None
    alternatives: list[Alternative] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    assumes: list[str] = field(default_factory=list)
    application: list[str] = field(default_factory=list)  # the other queries, with the change set for the session
    today: Optional[list[int]] = None  # bytes per partition of the finding's read, as Spark read it
    after: Optional[list[int]] = None  # ... as the replay under the fix reads it

    @property
    def exact(self) -> bool:
        return self.predicted is not None

    def conf_lines(self) -> list[str]:
        return ([f'spark.conf.set("{k}", "{v}")' for k, v in self.settings.items()]
                + [" ".join(f"--conf {k}={v}" for k, v in self.settings.items())])

    def to_dict(self) -> dict[str, Any]:
        return {"finding": self.finding, "evidence": "exact" if self.exact else "estimate", "stage_id": self.stage_id, "join_node": self.join_node, "why": self.why,
                "settings": dict(self.settings), "conf_lines": self.conf_lines(), "effects": list(self.effects),
                "alternatives": [a.to_dict() for a in self.alternatives], "hints": list(self.hints),
                "assumes": list(self.assumes), "application": list(self.application),
                "partition_bytes_today": self.today, "partition_bytes_predicted": self.after,
                "predicted_reads": [{"stage_id": r.stage_id, "specs": [spec_to_dict(s) for s in r.simulated_specs or []],
                                     "not_predicted": _reason(r, NOT_PREDICTED), "not_created": _reason(r, STAGE_NOT_CREATED)}
                                    for r in (self.predicted.reads if self.predicted else [])]}


def _split(specs: Optional[list]) -> bool:
    return any(isinstance(s, PartialReducerPartitionSpec) for s in specs or ())


def _same_specs(a: Any, b: Any) -> bool:
    """Spark's specs of read ``a`` against the replay's of ``b`` (specs are frozen dataclasses:
    equal by type and fields, as their JSON forms are)."""
    return list(a.spark_specs or ()) == list(b.simulated_specs or ())


def _count(specs: Optional[list]) -> str:
    """A read's size in words: "1 partition", "21 partitions", "read locally (16 tasks)"."""
    n = len(specs or [])
    if any(isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)) for s in specs or ()):
        return f"read locally ({n} task{'s' if n != 1 else ''}, by map output)"
    return f"{n} partition{'s' if n != 1 else ''}"


def _reason(r: Any, code: str) -> Optional[str]:
    return next((x.message for x in r.reasons if x.code == code), None)


def _effects(before: QueryResult, after: QueryResult, q: Optional[QueryCapture] = None) -> list[str]:
    """What changes from Spark's decisions (``before``, the replay of what Spark did) to the
    replay under new settings, read by read (matched by stage) and join by join. A read the
    replay cannot size says "not predicted" and why; one the change removes says so."""
    out = []
    mine = {r.stage_id: r for r in after.reads if r.shuffle_id is not None}
    for a in before.reads:
        b = mine.pop(a.stage_id, None)
        na = len(a.spark_specs) if a.spark_specs is not None else None
        if b is None:
            out.append(f"stage {a.stage_id}: not predicted (the plan above it changes: a run decides)")
            continue
        unsized, gone = _reason(b, NOT_PREDICTED), _reason(b, STAGE_NOT_CREATED)
        if gone is not None:
            out.append(f"stage {a.stage_id}: not created: {gone}")
            continue
        if unsized is not None:
            out.append(f"stage {a.stage_id}: {unsized}")
            continue
        if a.spark_specs and b.simulated_specs is None:
            out.append(f"stage {a.stage_id}: not predicted (the plan above it changes: a run decides)")
            continue
        if not _same_specs(a, b):
            was = _count(a.spark_specs) if na is not None else "read as is"
            now = _count(b.simulated_specs)
            out.append(f"stage {a.stage_id}: {was} -> {now}" + (" (other ranges)" if now == was else "")
                       + (", skewed partitions split" if _split(b.simulated_specs) and not _split(a.spark_specs) else ""))
    for b in mine.values():
        if b.simulated_specs:
            sh = q.shuffle(b.shuffle_id) if q is not None else None
            n = sh.num_reducers if sh is not None else "?"
            out.append(f"stage {b.stage_id}: read as is ({n} partitions) -> {_count(b.simulated_specs)}")
    for b in after.reads:
        if b.shuffle_id is None and _reason(b, NOT_PREDICTED):
            out.append(f"a new stage: {_reason(b, NOT_PREDICTED)}")
    joins = {j.node: j for j in after.joins}
    for ja in before.joins:
        jb = joins.get(ja.node)
        if jb is not None and ja.spark != (jb.simulated or ja.spark):
            out.append(f"{ja.join_type} join: {ja.spark} -> {jb.simulated}")
        elif jb is not None and jb.simulated is None and _reason(jb, UNDECIDED_NEW_STAGE):
            out.append(f"{ja.join_type} join: strategy not predicted: {_reason(jb, UNDECIDED_NEW_STAGE)}")
        elif jb is not None and jb.simulated_skew is None and jb.simulated is not None:
            out.append(f"{ja.join_type} join: whether it splits skewed partitions is not predicted (it reads the new"
                       " shuffle, whose size only a run can tell)")
    return out


def _try(f: Finding, one: Capture, q: QueryCapture, conf: AQEConf, v: SparkVersion,
         first: dict[str, str], budget: int = 8) -> Optional[tuple[dict[str, str], QueryResult]]:
    """Breadth first from ``first``: a skew candidate that stops at a later condition of the
    trace is extended with each setting that gets past that one (at most three settings)."""
    queue, seen = [dict(first)], set()
    while queue and budget > 0:
        settings = queue.pop(0)
        key = tuple(sorted(settings.items()))
        if key in seen:
            continue
        seen.add(key)
        budget -= 1
        after = simulate(one, settings).queries[0]
        if f.goal(after):
            return settings, after
        r = next((x for x in after.reads if x.stage_id == f.stage_id), None)
        if f.kind != SKEW or r is None or len(settings) >= 3:
            continue
        for more in next_settings(r, q, conf.with_overrides(settings), v):
            if any(settings.get(k) != val for k, val in more.items()):
                queue.append({**settings, **more})
    return None


def _sizes(q: QueryCapture, r: Any, simulated: bool) -> Optional[list[int]]:
    if r is None or (simulated and (_reason(r, NOT_PREDICTED) or _reason(r, STAGE_NOT_CREATED))):
        return None  # never today's sizes in the prediction's place
    sh = q.shuffle(r.shuffle_id)
    if sh is None or not sh.bytes_by_partition_id:
        return None
    specs = r.simulated_specs if simulated else r.spark_specs
    return list(sh.bytes_by_partition_id) if specs is None else spec_sizes(specs, list(sh.bytes_by_partition_id), q,
                                                                         r.shuffle_id)


def _assumes(settings: dict[str, str]) -> list[str]:
    if config.AUTO_BROADCASTJOIN_THRESHOLD in settings:
        return [f"{config.AUTO_BROADCASTJOIN_THRESHOLD} also steers the plan Spark builds before AQE: the prediction"
                " assumes the planner still plans this join shuffled (a run tells)"]
    return []


def _fix(f: Finding, one: Capture, q: QueryCapture, base: QueryResult, conf: AQEConf, v: SparkVersion) -> Optional[Fix]:
    found = [x for x in (_try(f, one, q, conf, v, c) for c in f.candidates) if x is not None]
    if not found:
        return None
    ranked = sorted(((len(s), len(_effects(base, a, q)), i, s, a) for i, (s, a) in enumerate(found)), key=lambda t: t[:3])
    _, _, _, settings, after = ranked[0]
    fix = Fix(f.kind, f.stage_id, f.why, settings, after, _effects(base, after, q), join_node=f.join_node,
              hints=list(f.hints),
              alternatives=[Alternative(s, _effects(base, a, q), _assumes(s)) for _, _, _, s, a in ranked[1:]])
    if config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN in settings and not any(r.shuffle_id is None for r in after.reads):
        fix.effects.append("adds a shuffle to restore the distribution the split breaks (its size only a run can tell)")
    fix.assumes += _assumes(settings)
    before_read = next((r for r in base.reads if r.stage_id == f.stage_id), None)
    if before_read is None and f.stage_id is not None:
        sh_id = next((s.shuffle_id for s in q.stages if s.stage_id == f.stage_id), None)
        sh = q.shuffle(sh_id)
        fix.today = list(sh.bytes_by_partition_id) if sh is not None and sh.bytes_by_partition_id else None
    else:
        fix.today = _sizes(q, before_read, False)
    fix.after = _sizes(q, next((r for r in after.reads if r.stage_id == f.stage_id), None), True)
    return fix


def application_effects(capture: Capture, q: QueryCapture, settings: dict[str, str], limit: int = 20) -> list[str]:
    """The change set for the whole session: which other queries of the application it changes."""
    others = session_replays(capture, settings, skip=q)
    if not others:
        return []
    changed = [(x, _effects(b, a, x)) for x, b, a in others]
    lines = [f"{x.label}: {'; '.join(e)}" for x, e in changed if e]
    them = f"{len(others)} other quer{'y' if len(others) == 1 else 'ies'} of this capture"
    head = (f"set for the session, it changes {len(lines)} of the {them}" if lines else
            f"set for the session, it changes none of the {them}")
    return [head] + lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


def recommend(capture: Capture, q: QueryCapture, *, application: bool = True) -> list[Fix]:
    """One fix per finding of query ``q`` that some setting reaches, smallest change first."""
    v = as_version(capture.spark_version)
    one = one_query(capture, q)
    base = simulate(one).queries[0]
    conf = AQEConf.resolve(v, [q.conf], validate=False)
    probe_over = probe_settings(conf, v)
    probe = simulate(one, probe_over).queries[0] if probe_over else base
    fixes: list[Fix] = []
    for f in find(base, q, conf, v, probe):
        fix = _fix(f, one, q, base, conf, v)
        if fix is not None and not any(x.settings == fix.settings and x.stage_id == fix.stage_id for x in fixes):
            fixes.append(fix)
    if application:
        for fix in fixes:
            fix.application = application_effects(capture, q, fix.settings)
    return fixes
