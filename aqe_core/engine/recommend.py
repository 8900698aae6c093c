"""Minimal fixes (issue 13, first version): for a skewed partition AQE left unsplit, the one
setting whose change makes our rules split it, replayed on every read and join of the query so
the side effects show next to the fix.

Candidates come from where the decision trace stopped (:mod:`aqe_core.engine.trace`): skew
handling switched off (``skewJoin.enabled``), or a split that would need an extra shuffle
(``forceOptimizeSkewedJoin``, 3.3+). A candidate is kept only if the replay under it splits the
read. Exact sources only: the prediction replays the captured statistics; a new shuffle the
change would add is named as something only a run can size.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core import config
from aqe_core.engine.results import QueryResult
from aqe_core.engine.simulate import simulate
from aqe_core.engine.trace import trace_read
from aqe_core.engine.whatif import one_query
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.specs import PartialReducerPartitionSpec, spec_to_dict
from aqe_core.versions import SparkVersion, as_version

__all__ = ["Fix", "recommend"]

_STOP_TO_SETTING = {
    "skew handling is enabled": (config.SKEW_JOIN_ENABLED, "true", SparkVersion(3, 0, 0)),
    "splitting needs no extra shuffle (or forceOptimizeSkewedJoin is on)":
        (config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN, "true", SparkVersion(3, 3, 0)),
}


@dataclass
class Fix:
    finding: str
    stage_id: Optional[int]
    why: str  # where the trace stopped, in the rule's words
    settings: dict[str, str]
    predicted: QueryResult
    effects: list[str] = field(default_factory=list)

    def conf_lines(self) -> list[str]:
        return ([f'spark.conf.set("{k}", "{v}")' for k, v in self.settings.items()]
                + [" ".join(f"--conf {k}={v}" for k, v in self.settings.items())])

    def to_dict(self) -> dict[str, Any]:
        return {"finding": self.finding, "stage_id": self.stage_id, "why": self.why, "settings": dict(self.settings),
                "conf_lines": self.conf_lines(), "effects": list(self.effects),
                "predicted_reads": [{"stage_id": r.stage_id, "specs": [spec_to_dict(s) for s in r.simulated_specs or []]}
                                    for r in self.predicted.reads]}


def _split(specs: Optional[list]) -> bool:
    return any(isinstance(s, PartialReducerPartitionSpec) for s in specs or ())


def _effects(before: QueryResult, after: QueryResult) -> list[str]:
    out = []
    for a, b in zip(before.reads, after.reads):
        na, nb = len(a.spark_specs or []), len(b.simulated_specs or [])
        if a.spark_specs and not b.simulated_specs:
            out.append(f"stage {a.stage_id}: not predicted (the plan above it changes: a run decides)")
            continue
        if [spec_to_dict(s) for s in a.spark_specs or []] != [spec_to_dict(s) for s in b.simulated_specs or []]:
            out.append(f"stage {a.stage_id}: {na} -> {nb} partitions"
                       + (", skewed partitions split" if _split(b.simulated_specs) and not _split(a.spark_specs) else ""))
    for a, b in zip(before.joins, after.joins):
        if a.spark != (b.simulated or a.spark):
            out.append(f"{a.join_type} join: {a.spark} -> {b.simulated}")
    return out


def recommend(capture: Capture, q: QueryCapture) -> list[Fix]:
    """One fix per distinct cause of unsplit skew in query ``q`` (its reads with skewed
    partitions that the replay of what Spark did left whole)."""
    v = as_version(capture.spark_version)
    base = simulate(one_query(capture, q)).queries[0]
    tried: dict[tuple[str, str], Fix] = {}
    for r in base.reads:
        if _split(r.spark_specs):
            continue
        osj = next((t for t in trace_read(r, v) if t.rule == "OptimizeSkewedJoin"), None)
        stop = osj.first_failed if osj is not None else None
        if stop is None or stop.condition not in _STOP_TO_SETTING:
            continue
        key, value, since = _STOP_TO_SETTING[stop.condition]
        if v < since or (key, value) in tried:
            continue
        overrides = {key: value}
        after = simulate(one_query(capture, q), overrides).queries[0]
        fixed = next((x for x in after.reads if x.stage_id == r.stage_id), None)
        if fixed is None or not _split(fixed.simulated_specs):
            continue
        fix = Fix("skew left unsplit", r.stage_id, stop.detail or stop.condition, overrides, after, _effects(base, after))
        if key == config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN:
            fix.effects.append("adds a shuffle to restore the distribution the split breaks (its size only a run can"
                               " tell)")
        tried[(key, value)] = fix
    return list(tried.values())
