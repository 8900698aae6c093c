"""Captures as :class:`~aqe_core.analysis.QueryView` s, and their exact preset simulator.

A capture holds the pre-AQE ``bytesByPartitionId`` and per-map sizes, so its lines are exact
and a preset is answered by re-running the rules (:func:`aqe_core.capture.simulate.simulate`),
never Spark.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from aqe_core.analysis import (
    QueryView, ShuffleView, SkewRow, compute_lines, join_reads, join_type_of, regroup_coalesce_lines,
)
from aqe_core.capture.model import DEFAULT_MAX_CAPTURE_BYTES, Capture, QueryCapture, load_capture
from aqe_core.capture.simulate import QueryResult, ReadResult, simulate
from aqe_core.compare import SIMULATORS, PresetOutcome, ShuffleOutcome
from aqe_core.config import AQEConf, checked_layers
from aqe_core.model.plan import PlanNode
from aqe_core.presets import Preset
from aqe_core.model.reasons import Reason
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec,
    CoalescedPartitionSpec,
    PartialMapperPartitionSpec,
    PartialReducerPartitionSpec,
)
from aqe_core.sources import LoadedSource
from aqe_core.versions import SparkVersion, as_version



def _one_query(capture: Capture, q: QueryCapture) -> Capture:
    return replace(capture, queries=[q])


def _spec_sizes(specs: list[Any], bytes_: Optional[list[int]], q: QueryCapture, shuffle_id: Optional[int]) -> Optional[list[int]]:
    """Bytes each spec reads (data sizes where Spark recorded them, else summed from the statistics)."""
    if bytes_ is None:
        return None
    sh = q.shuffle(shuffle_id)
    out: list[int] = []
    for s in specs:
        if isinstance(s, CoalescedPartitionSpec):
            out.append(s.data_size if s.data_size is not None else sum(bytes_[s.start_reducer_index:s.end_reducer_index]))
        elif isinstance(s, PartialReducerPartitionSpec):
            if s.data_size is not None:
                out.append(s.data_size)
            else:
                maps = sh.map_sizes.for_reducer(s.reducer_index) if (sh and sh.map_sizes) else None
                if maps is None:
                    return None
                out.append(sum(maps[s.start_map_index:s.end_map_index]))
        elif isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)):
            return None  # local reads: per-task sizes are not what AQE sized
    return out


def _pre_split_sizes(specs: list[Any], bytes_: list[int]) -> list[int]:
    """3.0/3.1: the coalesced partitions OptimizeSkewedJoin judged, before it split them. Splits
    of one reducer (and the other side's spec repeated for each of them) collapse back to one."""
    out: list[int] = []
    prev: Any = None
    for s in specs:
        if isinstance(s, PartialReducerPartitionSpec):
            key = ("r", s.reducer_index)
            size = bytes_[s.reducer_index]
        else:
            key = ("c", s.start_reducer_index, s.end_reducer_index)
            size = sum(bytes_[s.start_reducer_index:s.end_reducer_index])
        if key != prev:
            out.append(size)
        prev = key
    return out


def _join_context(plan: Optional[PlanNode]) -> dict[int, tuple[str, str, Optional[str], int]]:
    """pre-order index of each read -> (join name, side, join type, join's pre-order index)."""
    out: dict[int, tuple[str, str, Optional[str], int]] = {}
    for jr in join_reads(plan):
        out.setdefault(jr.read_index, (jr.join.name, jr.side, join_type_of(jr.join), jr.join_index))
    return out


def _shuffle_view(q: QueryCapture, r: ReadResult, v: SparkVersion, conf: AQEConf, ctx: dict, keys: dict) -> ShuffleView:
    sh = q.shuffle(r.shuffle_id)
    before = list(sh.bytes_by_partition_id) if (sh and sh.bytes_by_partition_id is not None) else None
    specs = r.spark_specs
    after = _spec_sizes(specs, before, q, r.shuffle_id) if specs is not None else before
    join, side, jtype = ctx.get(r.read_node, (None, None, None)) if r.read_node is not None else (None, None, None)
    local = bool(specs) and any(isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)) for s in specs)
    desc = r.description or ("no adaptive read" if specs is None else "")
    label = f"shuffle {r.shuffle_id} (stage {r.stage_id})" + (f": {desc}" if desc else "")
    if join:
        label += f", {side} side of {join}"
    skew_reducers = sorted({s.reducer_index for s in specs or [] if isinstance(s, PartialReducerPartitionSpec)})
    sv = ShuffleView(
        key=f"stage-{r.stage_id}-{r.fragment}", label=label, stage_id=r.stage_id, side=side, join=join, join_type=jtype,
        read_description=desc, partitions_before=sh.num_reducers if sh else None,
        partitions_after=len(specs) if specs is not None else (sh.num_reducers if sh else None),
        sizes_before=before, sizes_after=after,
        coalesced_partitions=sum(1 for s in specs or [] if isinstance(s, CoalescedPartitionSpec) and s.is_coalesced),
        skewed_partitions=len(skew_reducers),
        skew_splits=sum(1 for s in specs or [] if isinstance(s, PartialReducerPartitionSpec)),
        local=local, exact=True, reasons=list(r.reasons), group_key=keys.get(r.read_node) if r.read_node is not None else None)
    if sh and sh.map_sizes is None:
        sv.reasons.append(Reason("map_sizes_unknown", f"per-map sizes were not captured for shuffle {sh.shuffle_id}"
                                 + (f": {sh.map_sizes_note}" if sh.map_sizes_note else "")))
    if v < SparkVersion(3, 2, 0) and join and specs and before is not None and not local:
        # 3.0/3.1 judge skew on the coalesced partitions, after CoalesceShufflePartitions
        tmp = replace(sv, sizes_before=None, sizes_after=_pre_split_sizes(specs, before), lines=[], skew_rows=[])
        compute_lines(tmp, conf, q.default_parallelism)
        sv.lines, sv.skew_rows, sv.side_analysis = tmp.lines, tmp.skew_rows, tmp.side_analysis
    else:
        compute_lines(sv, conf, q.default_parallelism)
    # the rules' own sentence per skewed partition (split into N, or why not)
    by_part: dict[int, Reason] = {}
    general: list[Reason] = []
    for reason in r.reasons:
        p = reason.subject.get("partition") if reason.subject else None
        if p is None:
            general.append(reason)
        elif reason.subject.get("side") in (None, side, ""):
            by_part[int(p)] = reason
    blocking = next((g for g in general if g.code in ("distribution_broken", "skew_join_disabled", "final_stage_rules_off",
                                                       "skew_join_error")), None)
    decided = r.simulated_specs if r.simulated_specs is not None else specs
    rows = []
    for row in sv.skew_rows:
        parts = {(s.start_map_index, s.end_map_index) for s in decided or []
                 if isinstance(s, PartialReducerPartitionSpec) and s.reducer_index == row.partition}
        reason = by_part.get(row.partition)
        text = reason.message if reason else row.explanation
        if not parts:
            if reason is not None and reason.code == "split":
                text = text.replace("; split into", "; would split into")
            if blocking is not None:
                text += "; " + blocking.message
        rows.append(SkewRow(row.partition, row.size, len(parts) or None, text))
    sv.skew_rows = rows
    return sv


def view_from_query(capture: Capture, q: QueryCapture, qr: Optional[QueryResult] = None) -> QueryView:
    v = as_version(capture.spark_version)
    layers, conf_notes = checked_layers(v, [q.conf])
    conf = AQEConf.resolve(v, layers, validate=False)
    if qr is None:
        qr = simulate(_one_query(capture, q)).queries[0]
    updates = sorted(q.plan_updates, key=lambda u: u.sequence)
    initial = next((u.plan for u in updates if u.event == "start"), q.initial_plan.root if q.initial_plan else None)
    versions = [u.plan for u in updates if u.event == "update"]
    final = versions[-1] if versions else (q.final_plan.root if q.final_plan else initial)
    ctx = _join_context(q.final_plan.root if q.final_plan else None)
    joins = [f"{j.initial} -> {j.spark}" for j in qr.joins if j.initial and j.initial != j.spark]
    joins += [f"{j.spark} (skew)" for j in qr.joins if j.spark_skew and (not j.initial or j.initial == j.spark)]
    view = QueryView(
        source_kind="capture", query_id=str(q.index), description=q.label + (f" [{q.preset}]" if q.preset and q.preset not in q.label else ""),
        spark_version=v, conf=conf, default_parallelism=q.default_parallelism, status="COMPLETED",
        duration_ms=int(q.duration_ms) if q.duration_ms is not None else None, initial_plan=initial,
        plan_versions=versions or ([final] if final is not None else []), final_plan=final, join_changes=joins,
        adaptive=q.adaptive, warnings=list(q.notes) + [n for n in conf_notes if n not in q.notes])
    keys = {idx: f"join-{j}" for idx, (_n, _s, _t, j) in ctx.items()}
    view.shuffles = [_shuffle_view(q, r, v, conf, {k: c[:3] for k, c in ctx.items()}, keys) for r in qr.reads]
    if v >= SparkVersion(3, 2, 0):  # 3.0/3.1 lines are over each side's own coalesced partitions
        regroup_coalesce_lines(view.shuffles, conf, q.default_parallelism)
    parts = [f"{s.partitions_before}->{s.partitions_after}" + (f" ({s.skewed_partitions} skewed -> {s.skew_splits} splits)" if s.skewed_partitions else "")
             for s in view.shuffles if s.partitions_before is not None]
    agree = sum(1 for r in qr.reads if r.agrees)
    view.outcome = (("partitions " + ", ".join(parts) if parts else "no shuffle read changes")
                    + (" | joins: " + "; ".join(joins) if joins else "")
                    + f" | rules agree with Spark on {agree}/{len(qr.reads)} reads")
    view.source = (capture, q.index)
    return view


def views_from_capture_file(path: str, *, max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
                            max_seconds: Optional[float] = None) -> LoadedSource:
    """Views of every query of a capture file. Raises :class:`CaptureFormatError` for a file
    that is not a well-formed capture (bounded by ``max_bytes`` decoded / ``max_seconds``)."""
    capture = load_capture(path, max_bytes=max_bytes, max_seconds=max_seconds)
    report = simulate(capture)
    by_index = {qr.index: qr for qr in report.queries}
    views = [view_from_query(capture, q, by_index.get(q.index)) for q in capture.queries]
    run = capture.run or {}
    what = run.get("workload") or ("SQL" if run.get("sql") else run.get("kind", "capture"))
    label = f"capture of {what}, Spark {capture.spark_version} ({report.agreement.agreeing}/{report.agreement.total} reads agree)"
    return LoadedSource("capture", label, path, capture.spark_version, views, warnings=list(capture.warnings),
                        notes=list(report.notes))


def _capture_simulator(view: QueryView, conf: AQEConf, preset: Preset) -> PresetOutcome:
    capture, index = view.source
    q = next(x for x in capture.queries if x.index == index)
    overrides = {k: val for k, val in conf.to_strings().items() if val is not None}
    rep = simulate(_one_query(capture, q), overrides, conf.spark_version)
    qr = rep.queries[0]
    out = PresetOutcome(preset.name, str(conf.spark_version), True,
                        "exact: our rules replayed over the captured statistics" + ("; " + "; ".join(rep.notes) if rep.notes else ""),
                        settings=dict(conf.explicit))
    if preset.name == "actual":
        out.note = "what Spark did (captured)"
    for r in qr.reads:
        sh = q.shuffle(r.shuffle_id)
        before = list(sh.bytes_by_partition_id) if sh and sh.bytes_by_partition_id is not None else []
        specs = r.spark_specs if preset.name == "actual" else r.simulated_specs
        sizes = (_spec_sizes(specs, before, q, r.shuffle_id) if specs is not None else before) or []
        n = len(specs) if specs is not None else len(before)
        splits = sum(1 for s in specs or [] if isinstance(s, PartialReducerPartitionSpec))
        skewed = len({s.reducer_index for s in specs or [] if isinstance(s, PartialReducerPartitionSpec)})
        out.shuffles.append(ShuffleOutcome(f"stage-{r.stage_id}-{r.fragment}", f"shuffle {r.shuffle_id} (stage {r.stage_id})",
                                           sh.num_reducers if sh else None, n, sizes, skewed, splits))
    out.join_strategies = [(j.spark if preset.name == "actual" else (j.simulated or j.spark))
                           + (" (skew)" if (j.spark_skew if preset.name == "actual" else j.simulated_skew) else "")
                           for j in qr.joins]
    return out


SIMULATORS["capture"] = _capture_simulator
