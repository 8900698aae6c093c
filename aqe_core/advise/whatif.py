"""One what-if path: a query's lines AND AQE's decisions under other settings, in one call.

:func:`what_if` dispatches on :attr:`Query.evidence <aqe_core.model.query.Query.evidence>`:
a capture (exact pre-AQE statistics) is replayed through Spark's rules with
:func:`aqe_core.engine.simulate`; an event log (Spark's post-AQE metrics only) gets the
estimate of :mod:`aqe_core.engine.estimate`, labelled as such. The presets side by side, the
what-if page, the fixes on plain logs and the release comparison all go through it; the views
shape its answer for people (:mod:`aqe_core.views.compare`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Protocol, Sequence

from aqe_core.model.engines import spark_name
from aqe_core.config import AQEConf
from aqe_core.engine.codes import COALESCED
from aqe_core.engine.estimate import (
    ESTIMATE_NOTE, PARALLELISM_UNKNOWN, PresetOutcome, ShuffleOutcome, ShuffleSizes, as_logged, estimate_shuffles,
    needs_parallelism,
)
from aqe_core.engine.histogram_lines import ShuffleLines, shuffle_lines
from aqe_core.engine.results import NOT_PREDICTED, STAGE_NOT_CREATED, QueryResult
from aqe_core.engine.simulate import SimulationReport, one_query, simulate
from aqe_core.engine.spec_sizes import spec_reducers, spec_sizes
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.evidence import Evidence
from aqe_core.model.plan import PlanNode
from aqe_core.model.presets import BUILTIN_PRESETS, Preset
from aqe_core.model.query import Query
from aqe_core.model.specs import CoalescedMapperPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec
from aqe_core.versions import SparkVersion

__all__ = ["PresetOutcome", "QuerySizes", "ShuffleOutcome", "WhatIf", "compare_presets", "join_names",
           "query_what_if", "simulate_preset", "what_if", "what_if_beside_run"]

EXACT_NOTE = "exact: our rules replayed over the captured statistics"
#: the reads a replay cannot put at a size (left out of an outcome's shuffles, with why)
_UNSIZED = (NOT_PREDICTED, STAGE_NOT_CREATED)


@dataclass
class WhatIf:
    """What :func:`what_if` found: ``lines`` has one entry per shuffle asked about (None where no
    line is drawn: a local read, or no sizes); ``outcome`` the decisions (None if not asked)."""

    conf: AQEConf
    lines: list[Optional[ShuffleLines]] = field(default_factory=list)
    outcome: Optional[PresetOutcome] = None
    #: the replay behind ``outcome`` (exact sources only): every read's reasons, for callers that
    #: explain the decisions without replaying again
    replay: Optional[SimulationReport] = None


def _replay(query: Query, conf: AQEConf, name: str, actual: bool) -> tuple[PresetOutcome, SimulationReport]:
    """Spark's rules replayed on the captured statistics (``actual``: what Spark did, captured),
    with the replay's report."""
    capture, q = _captured(query)
    overrides = {k: val for k, val in conf.to_strings().items() if val is not None}
    rep = simulate(one_query(capture, q), overrides, conf.spark_version)
    return replay_outcome(q, rep.queries[0], rep.notes, conf, name, actual), rep


def _captured(query: Query) -> tuple[Capture, QueryCapture]:
    """An exact query's capture and its captured query (the first with its index)."""
    capture, index = query.raw
    return capture, next(x for x in capture.queries if x.index == index)


def replay_outcome(q: QueryCapture, qr: QueryResult, notes: Sequence[str], conf: AQEConf, name: str,
                   actual: bool) -> PresetOutcome:
    """The outcome of query ``q``'s replay ``qr`` under ``conf`` (``notes``: the replay's own;
    ``actual``: Spark's own decisions, read by the replay)."""
    out = PresetOutcome(name, str(conf.spark_version), True,
                        EXACT_NOTE + ("; " + "; ".join(notes) if notes else ""), settings=dict(conf.explicit),
                        evidence=Evidence.EXACT)
    if actual:
        out.note = "what Spark did (captured)"
    out.local_stages = set()
    unsized = [] if actual else [(r, next(x for x in r.reasons if x.code in _UNSIZED))
                                 for r in qr.reads if any(x.code in _UNSIZED for x in r.reasons)]
    if unsized:  # never drawn at today's value: said, with why
        out.note += "; " + "; ".join(f"{'stage ' + str(r.stage_id) if r.stage_id is not None else 'a new stage'}:"
                                     f" {why.message}" for r, why in unsized)
        out.unsized_codes = [why.code for _, why in unsized]
    for r in qr.reads:
        if any(r is x for x, _ in unsized) or (not actual and r.shuffle_id is None):
            continue
        specs_now = r.spark_specs if actual else r.simulated_specs
        if r.stage_id is not None and specs_now and isinstance(specs_now[0], (PartialMapperPartitionSpec,
                                                                             CoalescedMapperPartitionSpec)):
            out.local_stages.add(r.stage_id)
        target = next((x.numbers.get("target_size") for x in r.reasons if x.code == COALESCED), None)
        if r.stage_id is not None and isinstance(target, int):
            out.coalesce_targets[r.stage_id] = target
        sh = q.shuffle(r.shuffle_id)
        before = list(sh.bytes_by_partition_id) if sh and sh.bytes_by_partition_id is not None else []
        specs = r.spark_specs if actual else r.simulated_specs
        sizes = (spec_sizes(specs, before, q, r.shuffle_id) if specs is not None else before) or []
        n = len(specs) if specs is not None else len(before)
        splits = sum(1 for s in specs or [] if isinstance(s, PartialReducerPartitionSpec))
        skewed = len({s.reducer_index for s in specs or [] if isinstance(s, PartialReducerPartitionSpec)})
        reducers, split = spec_reducers(specs, len(sizes))
        out.shuffles.append(ShuffleOutcome(f"stage-{r.stage_id}-{r.fragment}", f"shuffle {r.shuffle_id} (stage {r.stage_id})",
                                           sh.num_reducers if sh else None, n, sizes, skewed, splits,
                                           Evidence.EXACT, reducers, split))
    out.join_strategies = [(j.spark if actual else (j.simulated or f"{j.spark} as recorded (not re-decided)"))
                           + (" (skew)" if (j.spark_skew if actual else j.simulated_skew) else
                              " (skew split: not predicted)" if not actual and j.simulated_skew is None else "")
                           for j in qr.joins]
    return out


def _estimate(shuffles: Sequence[ShuffleSizes], joins: list[str], conf: AQEConf, name: str, actual: bool,
              default_parallelism: Optional[int]) -> PresetOutcome:
    """The event-log estimate over post-AQE sizes (``actual``: Spark's own record, from the log)."""
    out = PresetOutcome(name, str(conf.spark_version), False, ESTIMATE_NOTE,
                        settings={k: conf.raw(k) for k in conf.explicit})
    if actual:  # Spark's own record: its metrics, never an estimate (and not exact either)
        out.note = "what Spark did: the log's own metrics (partitions read, reducers split and their parts)"
        out.evidence = Evidence.SPARK_METRIC
        out.shuffles = as_logged(shuffles)
    else:
        out.shuffles = estimate_shuffles(shuffles, conf, default_parallelism)
        if default_parallelism is None and needs_parallelism(conf):
            out.note += "; " + PARALLELISM_UNKNOWN
    out.join_strategies = list(joins)
    return out


def _lines(shuffles: Sequence[ShuffleSizes], conf: AQEConf, default_parallelism: Optional[int],
           local_stages: Optional[set[int]] = None) -> list[Optional[ShuffleLines]]:
    """Lines per shuffle; ``local_stages``: the stages a replay reads locally under ``conf`` (a
    changed join strategy moves a shuffle in or out of a local read), else as run."""
    out: list[Optional[ShuffleLines]] = []
    for s in shuffles:
        sizes = s.sizes_for_lines
        stage_id = getattr(s, "stage_id", None)
        local = s.local if local_stages is None or stage_id is None else stage_id in local_stages
        if not sizes or local:
            out.append(None)
            continue
        evidence = getattr(s, "evidence", Evidence.ESTIMATE)
        out.append(shuffle_lines(sizes, conf, default_parallelism, side=s.side or "", evidence=evidence,
                                 rebalance=getattr(s, "rebalance", False)))
    return out


def what_if(query: Optional[Query], shuffles: Sequence[ShuffleSizes], joins: list[str], conf: AQEConf, *,
            name: str = "what-if", default_parallelism: Optional[int] = None, actual: bool = False,
            lines: bool = True, decisions: bool = True) -> WhatIf:
    """Lines (per shuffle, over its sizes) and decisions (per read, and the joins) under ``conf``.

    ``query`` is the view's :class:`Query`: with exact evidence (a capture) the decisions replay
    Spark's rules on its statistics; otherwise (an event log, or no query) they are the estimate
    over ``shuffles``' post-AQE sizes. ``joins``: the join nodes of the recorded final plan (the
    estimate cannot replan joins). ``actual``: report what Spark did instead of deciding anew."""
    out = WhatIf(conf)
    if decisions:
        if query is not None and query.evidence is Evidence.EXACT and query.raw is not None:
            out.outcome, out.replay = _replay(query, conf, name, actual)
        else:
            out.outcome = _estimate(shuffles, joins, conf, name, actual, default_parallelism)
    if lines:
        local = out.outcome.local_stages if out.outcome is not None else None
        out.lines = _lines(shuffles, conf, default_parallelism, local)
    return out


class QuerySizes(Protocol):
    """What advice reads of a query the views hold (a :class:`~aqe_core.views.query.QueryView`;
    advice never imports views, which build on it)."""

    spark_version: SparkVersion
    conf: AQEConf
    model: Optional[Query]
    default_parallelism: Optional[int]
    initial_plan: Optional[PlanNode]
    final_plan: Optional[PlanNode]
    duration_ms: Optional[int]

    @property
    def shuffles(self) -> Sequence[ShuffleSizes]: ...


def join_names(view: QuerySizes) -> list[str]:
    """The join operators of the view's final plan (what the estimate keeps for a plain log), by
    Spark's names (an engine's join is the Spark join it stands for: aqe_core/model/engines.py)."""
    plan = view.final_plan
    if plan is None:
        return []
    names = [spark_name(n.name, n.description) for n in plan.walk()]
    return [n for n in names if "Join" in n]


def query_what_if(view: QuerySizes, conf: AQEConf, name: str, *, actual: bool = False, lines: bool = True,
                  decisions: bool = True) -> WhatIf:
    """:func:`what_if` over a view's query (its model, shuffles, joins and parallelism)."""
    return what_if(view.model, view.shuffles, join_names(view), conf, name=name, actual=actual,
                   default_parallelism=view.default_parallelism, lines=lines, decisions=decisions)


def simulate_preset(view: QuerySizes, preset: Preset, conf: Optional[AQEConf] = None, *,
                    replay: Optional[QueryResult] = None) -> PresetOutcome:
    """What AQE does to ``view``'s query under ``preset`` (exact for a capture, else estimated).
    ``conf``: ``preset.conf_for(view.conf)`` when the caller has it already (the fleet scan
    makes it once per preset for the executions that share a conf). ``replay``: for the
    ``actual`` preset of an exact view, the replay the view was made from; what Spark did is read
    from it, not from a replay made again (partitions, splits and joins are the same)."""
    conf = preset.conf_for(view.conf) if conf is None else conf
    model = view.model
    if (replay is not None and preset.name == "actual" and model is not None and model.evidence is Evidence.EXACT
            and model.raw is not None):
        return replay_outcome(_captured(model)[1], replay, (), conf, preset.name, True)
    got = query_what_if(view, conf, preset.name, actual=preset.name == "actual", lines=False)
    assert got.outcome is not None
    return got.outcome


def compare_presets(view: QuerySizes, presets: list[Preset]) -> list[PresetOutcome]:
    return [simulate_preset(view, p) for p in presets]


def what_if_beside_run(view: QuerySizes, conf: AQEConf, *, lines: bool = True) -> tuple[WhatIf, PresetOutcome]:
    """Lines and decisions under ``conf`` in one engine call, with Spark's own run beside them
    (the presets "what-if" and "actual")."""
    got = query_what_if(view, conf, "what-if", lines=lines)
    actual = simulate_preset(view, next(p for p in BUILTIN_PRESETS if p.name == "actual"))
    assert got.outcome is not None
    return got, actual
