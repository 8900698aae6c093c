"""Presets side by side, and the what-if, shaped for people: each read under a preset as a chart
draws it, the what-if page's query with its lines under the overrides, the skew line.

The answers come from the advice layer, one call each (:mod:`aqe_core.advise.whatif`: lines and
decisions together). A capture's presets are replayed exactly; an event log only has the sizes
after AQE, so its presets are estimated over those sizes and labelled approximate.
"""
from __future__ import annotations

from copy import copy
from dataclasses import dataclass, field
from typing import Optional

from aqe_core.advise.whatif import PresetOutcome, ShuffleOutcome, WhatIf, what_if_beside_run
from aqe_core.engine.estimate import read_of
from aqe_core.engine.pipeline import skew_after_coalescing
from aqe_core.views.from_capture import skew_rows_from_replay
from aqe_core.views.query import QueryView, ShuffleView, SkewRow, regroup_coalesce_lines, use_replayed_targets

__all__ = ["WhatIfView", "outcome_shuffle_view", "preset_shuffle_views", "skew_sentence", "whatif", "whatif_view"]


def _with_lines(view: QueryView, got: WhatIf) -> QueryView:
    new = copy(view)
    new.conf = got.conf
    new.shuffles = []
    for s, sl in zip(view.shuffles, got.lines):
        ns = copy(s)
        ns.lines, ns.skew_rows = [], []
        if sl is not None:
            ns.side_analysis = sl.side_analysis
            ns.lines = list(sl.lines)
            ns.skew_rows = [SkewRow(p.partition, p.size, None, p.explanation) for p in sl.skewed]
        new.shuffles.append(ns)
    if not skew_after_coalescing(view.spark_version):  # the two sides of a join share one target, as run
        regroup_coalesce_lines(new.shuffles, got.conf, view.default_parallelism)
    if got.outcome is not None:
        use_replayed_targets(new.shuffles, got.outcome.coalesce_targets, got.outcome.local_stages)
    if got.replay is not None and got.replay.queries:  # exact: each skewed partition split or why not, in the rules' words
        reads = {f"stage-{r.stage_id}-{r.fragment}": r for r in got.replay.queries[0].reads}
        for ns in new.shuffles:
            if ns.skew_rows and ns.key in reads:
                ns.skew_rows = skew_rows_from_replay(ns, reads[ns.key])
    return new


def whatif_view(view: QueryView, overrides: dict[str, str]) -> tuple[QueryView, list[str]]:
    """The same query with lines recomputed under changed settings (errors come back as text)."""
    got = whatif(view, overrides)
    return got.view, got.errors


def outcome_shuffle_view(base: Optional[ShuffleView], outcome: PresetOutcome, s: ShuffleOutcome, *,
                         lines: bool = True) -> ShuffleView:
    """One read under a preset as a chart draws it: its partitions after AQE, with the reducers
    each reads where the replay knows them. The preset "actual" is the run (exact for a capture,
    Spark's metric for a plain log: ``base``, the as-run shuffle, says which); any other preset's
    partitions are our rules' prediction and say so."""
    actual = outcome.preset == "actual"
    sv = copy(base) if base is not None else ShuffleView(key=s.key, label=s.label)
    sv.sizes_after = list(s.sizes_after)
    sv.partitions_after = s.partitions_after
    if not lines:
        sv.lines, sv.skew_rows = [], []
    if actual:
        sv.exact = base.exact if base is not None else False
        return sv
    sv.after_reducers, sv.after_split = s.reducers, s.split
    if outcome.local_stages is not None and sv.stage_id is not None:  # a what-if may turn a local read on or off
        sv.local = sv.stage_id in outcome.local_stages
    sv.predicted = True
    sv.predicted_note = "replayed over the captured statistics" if outcome.exact else "estimated over Spark's post-AQE sizes"
    return sv


def preset_shuffle_views(view: QueryView, outcome: PresetOutcome) -> list[ShuffleView]:
    """Each read of ``outcome`` as the Compare page charts it, in a narrow column: its partitions
    only (the lines of a setting are the What-if page's)."""
    return [outcome_shuffle_view(read_of(view.shuffles, s.key), outcome, s, lines=False) for s in outcome.shuffles]


def skew_sentence(before: ShuffleView, after: ShuffleView) -> str:
    """The what-if's skew line for one shuffle, each count with how it is known: as run it is
    Spark's (a plain log's read metrics; an exact source's split reducers), under the what-if
    our rules' (exact over captured statistics, an estimate over a plain log's sizes after AQE)."""
    if before.exact:
        ran = f"{len(before.skew_rows)} as run (exact)"
    elif before.skewed_partitions is not None or before.has_read_metrics:
        n = before.skewed_partitions or 0
        parts = f", {before.skew_splits} parts" if n and before.skew_splits is not None else ""
        ran = f"{n} split as run (Spark's metric{parts})"
    else:
        ran = "not in the log as run (Spark 3.0 logs no read metrics)"
    how = "exact" if after.exact else "estimate over the sizes after AQE"
    split = sum(1 for r in after.skew_rows if r.splits) if after.exact else None
    then = f"{len(after.skew_rows)} under the what-if" + (f", {split} of them split" if split is not None and after.skew_rows else "")
    return f"Skewed partitions: {ran}; {then} ({how})"


@dataclass
class WhatIfView:
    """The what-if page's answer: the query with its lines under the overrides, AQE's decisions as
    run and under the overrides (empty without overrides, or when a setting does not parse)."""

    view: QueryView
    errors: list[str] = field(default_factory=list)
    outcomes: list[PresetOutcome] = field(default_factory=list)

    def predicted(self, shuffle: ShuffleView) -> Optional[ShuffleView]:
        """``shuffle`` (of :attr:`view`, with the what-if's lines) with the partitions our rules
        predict under the overrides; None without a what-if, or when the what-if has no such
        read (a join re-planned away from it)."""
        if len(self.outcomes) < 2:
            return None
        s = self.outcomes[1].shuffle(shuffle.key)
        return outcome_shuffle_view(shuffle, self.outcomes[1], s) if s is not None else None

    @property
    def note(self) -> Optional[str]:
        """How the what-if's decisions are known (exact replay, or estimate over what)."""
        return self.outcomes[1].note if len(self.outcomes) > 1 else None


def whatif(view: QueryView, overrides: dict[str, str]) -> WhatIfView:
    """Lines and decisions under ``overrides`` in one advice call, with Spark's own run beside them
    (the presets "actual" and "what-if" of :func:`~aqe_core.advise.whatif.compare_presets`)."""
    try:
        conf = view.conf.with_overrides(overrides)
    except ValueError as exc:
        return WhatIfView(view, [str(exc)])
    if not overrides:
        return WhatIfView(view)  # nothing changed: the lines as run
    got, actual = what_if_beside_run(view, conf)
    assert got.outcome is not None  # (what_if_beside_run always asks for the decisions)
    return WhatIfView(_with_lines(view, got), [], [actual, got.outcome])
