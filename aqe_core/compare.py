"""Presets side by side: what AQE would do to one query under several configurations.

A capture has the pre-AQE statistics, so its presets are simulated exactly (a source can plug
its own simulator in through :data:`SIMULATORS`). An event log only has the sizes after AQE, so
its presets re-run coalescing and skew detection over those sizes and are labelled approximate.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from aqe_core.analysis import QueryView, ShuffleView, compute_lines
from aqe_core.config import AQEConf
from aqe_core.presets import Preset
from aqe_core.rules.coalesce_shuffle_partitions import min_num_partitions, min_partition_size
from aqe_core.units import mib
from aqe_core.rules.shuffle_partitions import coalesce_partitions
from aqe_core.rules.skew_join import analyze_side


@dataclass
class ShuffleOutcome:
    key: str
    label: str
    partitions_before: Optional[int]
    partitions_after: int
    sizes_after: list[int]
    skewed: int
    splits: Optional[int]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class PresetOutcome:
    preset: str
    spark_version: str
    exact: bool
    note: str
    shuffles: list[ShuffleOutcome] = field(default_factory=list)
    join_strategies: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

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

    def summary_row(self) -> dict[str, Any]:
        return {
            "preset": self.preset, "spark": self.spark_version, "partitions after AQE": self.partitions_after,
            "largest partition": mib(self.largest), "median partition": mib(self.median),
            "skewed partitions": sum(s.skewed for s in self.shuffles),
            "skew splits": self.splits if self.splits is not None else "unknown",
            "joins": "; ".join(self.join_strategies) or "-", "exact": "yes" if self.exact else "approximate",
        }


Simulator = Callable[[QueryView, AQEConf, Preset], PresetOutcome]
#: source kind -> exact simulator (registered by sources that have pre-AQE statistics)
SIMULATORS: dict[str, Simulator] = {}


def _joins(view: QueryView) -> list[str]:
    plan = view.final_plan
    if plan is None:
        return []
    return [n.name for n in plan.walk() if "Join" in n.name]


def simulate_preset(view: QueryView, preset: Preset) -> PresetOutcome:
    conf = preset.conf_for(view.conf)
    if view.source_kind == "capture":
        import aqe_core.capture_view  # noqa: F401  (registers the exact simulator)
    sim = SIMULATORS.get(view.source_kind)
    if sim is not None:
        return sim(view, conf, preset)
    return _approximate(view, conf, preset)


def _approximate(view: QueryView, conf: AQEConf, preset: Preset) -> PresetOutcome:
    v = conf.spark_version
    out = PresetOutcome(preset.name, str(v), False,
                        "approximate: re-applies coalescing and skew detection to the partition sizes after AQE"
                        " (an event log has no pre-AQE or per-map sizes)",
                        settings={k: conf.raw(k) for k in conf.explicit})
    if preset.name == "actual":
        out.note = "what Spark did (from the log)"
        out.exact = True
        for s in view.shuffles:
            sizes = list(s.sizes_after or [])
            out.shuffles.append(ShuffleOutcome(s.key, s.label, s.partitions_before, s.partitions_after or len(sizes), sizes,
                                               s.skewed_partitions or 0, s.skew_splits))
        out.join_strategies = _joins(view)
        return out
    dp = view.default_parallelism or 1
    min_num, _ = min_num_partitions(conf, spark_version=v, default_parallelism=dp)
    min_size = min_partition_size(conf, spark_version=v)
    # the two sides of a join are coalesced together, as one group
    groups: dict[str, list[ShuffleView]] = {}
    for s in view.shuffles:
        if s.local or not s.sizes_after:
            continue
        groups.setdefault(s.join or s.key, []).append(s)
    for members in groups.values():
        stats = [list(m.sizes_after or []) for m in members]
        # equal partition counts are coalesced together (as Spark does); otherwise one by one
        index_groups = [list(range(len(members)))] if len({len(x) for x in stats}) == 1 else [[i] for i in range(len(members))]
        for idxs in index_groups:
            specs = coalesce_partitions([stats[i] for i in idxs], advisory_target_size=conf.advisory_partition_size,
                                        min_num_partitions=min_num, min_partition_size=min_size, spark_version=v)
            for pos, i in enumerate(idxs):
                m, sizes = members[i], stats[i]
                after = [sum(sizes[sp.start_reducer_index:sp.end_reducer_index]) for sp in specs[pos]] if specs else list(sizes)
                skewed = len(analyze_side(sizes, conf, spark_version=v).skewed_indices) if m.join else 0
                out.shuffles.append(ShuffleOutcome(m.key, m.label, m.partitions_before, len(after), after, skewed, None))
    out.join_strategies = _joins(view)
    return out


def compare_presets(view: QueryView, presets: list[Preset]) -> list[PresetOutcome]:
    return [simulate_preset(view, p) for p in presets]


def whatif_view(view: QueryView, overrides: dict[str, str]) -> tuple[QueryView, list[str]]:
    """The same query with lines recomputed under changed settings (errors come back as text)."""
    from copy import copy

    errors: list[str] = []
    try:
        conf = view.conf.with_overrides(overrides)
    except ValueError as exc:
        return view, [str(exc)]
    new = copy(view)
    new.conf = conf
    new.shuffles = []
    for s in view.shuffles:
        ns = copy(s)
        ns.lines, ns.skew_rows = [], []
        compute_lines(ns, conf, view.default_parallelism)
        new.shuffles.append(ns)
    return new, errors
