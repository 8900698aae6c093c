"""Fixes on a plain event log (issue 13): the same findings as on exact sources where the log's
metrics can show them, each fix an estimate that says what it assumes.

A plain log holds only the partition sizes after AQE (Spark's metrics). So the prediction
re-runs coalescing and skew detection over those sizes (:mod:`aqe_core.engine.estimate`): a
read AQE left skewed is judged by its post-AQE partitions, and coalescing can only merge what
Spark read. Over-coalescing is named but not fixed (a merged partition cannot be taken apart
again without the pre-AQE sizes), and joins are not re-planned; both need exact statistics
(a capture, or a log written with the AQE Lens listener).
"""
from __future__ import annotations

from typing import Optional

from aqe_core import config
from aqe_core.advise.fix_findings import SKEW, SMALL, bytes_below, factor_below
from aqe_core.advise.recommend import Fix
from aqe_core.advise.whatif import QuerySizes, what_if_beside_run
from aqe_core.engine.estimate import ShuffleSizes
from aqe_core.engine.histogram_lines import can_split_left, can_split_right, median_size
from aqe_core.units import format_bytes, num

__all__ = ["NO_CORES", "recommend_estimated"]

#: why a plain log's query gets no fix for small partitions when its cores are unknown
NO_CORES = ("the log does not say how many cores the application had (no executor-added events,"
            f" {config.DEFAULT_PARALLELISM} or local master): too many small partitions is not judged, and no"
            " coalescing fix is proposed")

ASSUMES = ("estimate: re-applies skew detection and coalescing to the partition sizes after AQE (a plain event"
           " log has no pre-AQE or per-map sizes); joins are not re-planned; a capture or a log written with"
           " the AQE Lens listener gives the exact prediction")


def _skew_settings(s: ShuffleSizes, view: QuerySizes) -> Optional[tuple[str, dict[str, str]]]:
    sizes = s.sizes_after or []
    if not s.join or not s.join_type or len(sizes) < 2 or (s.skew_splits or s.skewed_partitions):
        return None
    if not (can_split_left(s.join_type) if s.side == "left" else can_split_right(s.join_type)):
        return None
    conf, v = view.conf, view.spark_version
    largest, median = max(sizes), median_size(sizes)
    if largest <= 5 * median or largest <= conf.advisory_partition_size:
        return None
    settings: dict[str, str] = {}
    if not conf.get_or(config.SKEW_JOIN_ENABLED, True):
        settings[config.SKEW_JOIN_ENABLED] = "true"
    if largest <= conf.get_or(config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD, 0):
        settings[config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD] = bytes_below(largest)
    factor = factor_below(largest / median, v)
    if factor is not None and largest <= conf.get_or(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR, 5) * median:
        settings[config.SKEW_JOIN_SKEWED_PARTITION_FACTOR] = factor
    why = (f"a partition of {format_bytes(largest)} (as Spark read it), {num(round(largest / median, 1))}x the median"
           f" {format_bytes(median)} and above the advisory size {format_bytes(conf.advisory_partition_size)}, was not split")
    return (why, settings) if settings else None


def _small_settings(s: ShuffleSizes, view: QuerySizes) -> Optional[tuple[str, dict[str, str]]]:
    sizes = s.sizes_after or []
    if s.local or not sizes:
        return None
    if view.default_parallelism is None:
        return None  # (how many partitions are too many, and what coalescing would aim at, needs the cores)
    conf, cores = view.conf, view.default_parallelism
    how = getattr(view, "parallelism_how", "") or f"{cores} cores"
    advisory, total = conf.advisory_partition_size, sum(sizes)
    needed = -(-total // max(advisory, 1))
    if len(sizes) <= max(2 * cores, 2 * needed) or median_size(sizes) >= advisory // 4:
        return None
    settings: dict[str, str] = {}
    if not conf.get_or(config.COALESCE_PARTITIONS_ENABLED, True):
        settings[config.COALESCE_PARTITIONS_ENABLED] = "true"
    elif conf.get_or(config.COALESCE_PARTITIONS_PARALLELISM_FIRST, False):  # (a key from 3.2)
        settings[config.COALESCE_PARTITIONS_PARALLELISM_FIRST] = "false"
    why = (f"{len(sizes)} partitions of {format_bytes(total)} in all (median {format_bytes(median_size(sizes))}), more"
           f" than twice the default parallelism ({how}) and twice the {needed} the advisory size"
           f" {format_bytes(advisory)} calls for")
    return (why, settings) if settings else None


def recommend_estimated(view: QuerySizes) -> list[Fix]:
    """Estimated fixes for a query of a plain event log (see the module doc). Too many small
    partitions is judged against the cluster's cores: where the log does not say them, no such
    fix is proposed (:data:`NO_CORES` says why)."""
    out: list[Fix] = []
    for s in view.shuffles:
        for kind, found in ((SKEW, _skew_settings(s, view)), (SMALL, _small_settings(s, view))):
            if found is None:
                continue
            why, settings = found
            try:
                conf = view.conf.with_overrides(settings)
            except ValueError:
                continue
            got, actual = what_if_beside_run(view, conf, lines=False)
            assert got.outcome is not None
            before = {x.key: x for x in actual.shuffles}
            after = {x.key: x for x in got.outcome.shuffles}
            mine = after.get(s.key)
            if mine is None or (kind == SKEW and not mine.skewed) or (kind == SMALL and mine.partitions_after >= len(s.sizes_after or [])):
                continue
            effects = [f"{x.label}: {before[k].partitions_after} -> {x.partitions_after} partitions (estimate)"
                       + (f", {x.skewed} skewed to split" if x.skewed else "")
                       for k, x in after.items() if k in before and (x.partitions_after != before[k].partitions_after
                                                                     or x.skewed != before[k].skewed)]
            fix = Fix(kind, s.stage_id, why, settings, None, effects, assumes=[ASSUMES],
                      today=list(s.sizes_after or []), after=None if kind == SKEW else list(mine.sizes_after))
            if not any(_same_fix(x, fix) for x in out):  # one finding, one box (a join's sides share a stage)
                out.append(fix)
    return out


def _same_fix(a: Fix, b: Fix) -> bool:
    """The same change proposed for the same stage: the two sides of one join read in one stage
    find the same small partitions, and the page would draw the same box twice."""
    return a.stage_id == b.stage_id and a.finding == b.finding and a.settings == b.settings
