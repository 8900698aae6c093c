"""``hot-keys``' answer, one entry per skewed reducer (issue 42): the reducer as the views list it,
its keys where they were counted (:mod:`aqe_core.live.hot_keys`), the checks, the fixes
(:mod:`aqe_core.advise.hot_key_fixes`) and, where no key was counted, the SQL for the user's own
cluster (:func:`aqe_core.views.hot_keys.cluster_code`). The CLI, the MCP tools and the Partitions
page draw this same data; the counting itself (Spark) is their caller's, passed in as ``found``.
"""
from __future__ import annotations

from typing import Any, Optional

from aqe_core.advise.hot_key_fixes import capture_split_settings, key_fixes, split_fixes
from aqe_core.model.hot_keys import HotKeyTarget, ShuffleKeys, SideSQL
from aqe_core.views.hot_keys import ClusterCode, SkewedShuffle, cluster_code
from aqe_core.views.query import QueryView, ShuffleView

__all__ = ["CODE_LABEL", "capture_of", "hot_key_entries", "hot_key_targets", "side_sql_targets"]

CODE_LABEL = "code for you to run on your cluster; AQE Lens did not run it"


def capture_of(view: QueryView) -> Optional[tuple[Any, Any]]:
    """(capture, query) behind a capture's or listener log's view; None for a plain log."""
    raw = view.model.raw if view.model is not None else None
    if not raw:
        return None
    capture, index = raw
    q = next((x for x in capture.queries if x.index == index), None)
    return (capture, q) if q is not None else None


def hot_key_targets(skewed: list[SkewedShuffle]) -> list[HotKeyTarget]:
    """What to count on Spark: the skewed reducers of every shuffle a capture names."""
    return [HotKeyTarget(s.shuffle_id, dict(s.reducers), s.label, s.view.stage_id) for s in skewed
            if s.shuffle_id is not None and s.reducers]


def side_sql_targets(view: QueryView, skewed: list[SkewedShuffle]) -> dict[int, SideSQL]:
    """What ``hot-keys --spark`` runs for a log: skewed shuffle (its index in ``skewed``) -> its
    SQL, where the plan's text reads as SQL that runs (:func:`cluster_code`)."""
    out = {}
    for i, s in enumerate(skewed):
        code = cluster_code(s, view.final_plan)
        if code is None or code.side_sql is None:
            continue
        named = {} if s.positions_only else dict(s.reducers)
        out[i] = SideSQL(code.side_sql, code.key_sql, code.keys, code.num_partitions, named, s.label, s.view.stage_id,
                         code.input_kind, code.records_written, s.view.sizes_before,
                         heaviest=max(1, s.unnamed_splits, len(s.reducers)), note=code.why_not)
    return out


def _other_side_bytes(view: QueryView, sv: ShuffleView, q: Any) -> Optional[int]:
    other = next((o for o in view.shuffles if o is not sv and o.group_key and o.group_key == sv.group_key), None)
    stage = q.stage(other.stage_id) if other is not None and q is not None else None
    return stage.size_in_bytes if stage is not None else None


def _entry(view: QueryView, s: SkewedShuffle, reducer: Optional[int], splits: Optional[int]) -> dict[str, Any]:
    sv = s.view
    sizes = sv.sizes_before if sv.sizes_before is not None else sv.sizes_after
    size = sizes[reducer] if sizes is not None and reducer is not None and 0 <= reducer < len(sizes) else None
    return {"execution": view.query_id, "shuffle": s.shuffle_id, "stage": sv.stage_id, "side": s.label,
            "reducer": reducer, "reducer_is_position": s.positions_only,
            "reducer_chosen_by_count": False, "rows": None, "rows_evidence": None,
            "bytes": size, "bytes_evidence": sv.evidence.value if sv.sizes_before is not None else "spark-metric",
            "splits": splits, "keys": None, "key_names": [], "key_types": [], "verified": False, "checks": [],
            "notes": [], "error": None, "fixes": [], "code_for_your_cluster": None}


def _counted_fields(view: QueryView, s: SkewedShuffle, sk: ShuffleKeys) -> dict[int, dict[str, Any]]:
    """reducer -> the entry fields of its counted keys, with the fixes for them."""
    got = capture_of(view)
    capture, q = got if got is not None else (None, None)
    sv = s.view
    median = sv.side_analysis.median if sv.side_analysis is not None else None
    out = {}
    for rk in sk.reducers:
        split = (capture_split_settings(capture, q, sv.stage_id, view.conf, view.spark_version)
                 if capture is not None and q is not None and not rk.splits else None)
        fixes = key_fixes(sk, rk, conf=view.conf, v=view.spark_version, median=median, join_type=sv.join_type,
                          side=sv.side, other_side_bytes=_other_side_bytes(view, sv, q), split_settings=split)
        ok = sk.error is None
        out[rk.reducer] = {
            "rows": rk.rows if ok else None, "rows_evidence": sk.rows_evidence.value if ok else None,
            "keys": [k.to_dict(sk.key_names) for k in rk.keys] if ok else None,
            "key_names": sk.key_names, "key_types": sk.key_types, "distinct_keys": rk.distinct_keys,
            "input_kind": sk.input_kind, "partitioning": sk.partitioning, "sample_fraction": sk.sample_fraction,
            "bytes_estimate_how": sk.avg_row_bytes_how, "verified": sk.verified,
            "checks": [c.to_dict() for c in sk.checks], "notes": list(sk.notes), "error": sk.error,
            "fixes": [f.to_dict() for f in fixes]}
    return out


def _code(code: Optional[ClusterCode]) -> Optional[dict[str, str]]:
    return None if code is None else {"sql": code.sql, "note": code.note, "label": CODE_LABEL}


def hot_key_entries(view: QueryView, skewed: list[SkewedShuffle], found: Optional[list[ShuffleKeys]] = None,
                    by_sql: Optional[dict[int, ShuffleKeys]] = None) -> list[dict[str, Any]]:
    """One entry per skewed reducer of ``view`` (``found``: the keys counted for
    :func:`hot_key_targets`, in order; ``by_sql``: the keys counted with a log's SQL, by index in
    ``skewed`` (:func:`side_sql_targets`); None where nothing was counted)."""
    counted: dict[int, dict[int, dict[str, Any]]] = {}
    for t, sk in zip(hot_key_targets(skewed), found or []):
        i = next(i for i, x in enumerate(skewed) if x.shuffle_id == t.shuffle_id)
        counted[i] = _counted_fields(view, skewed[i], sk)
    for i, sk in (by_sql or {}).items():
        counted[i] = _counted_fields(view, skewed[i], sk)
    doc = []
    for i, s in enumerate(skewed):
        code = _code(cluster_code(s, view.final_plan))
        if i in (by_sql or {}) and (s.positions_only or s.unnamed_splits):  # the count named the reducers
            split_note = ([f"Spark split {s.unnamed_splits} reducer(s) of this read (its metric); the log does not"
                           " say which"] if s.unnamed_splits else [])
            for r, fields in counted[i].items():
                e = {**_entry(view, s, r, None), "bytes": None, "reducer_is_position": False, **fields,
                     "reducer_chosen_by_count": True}
                e["notes"] = split_note + e["notes"]
                doc.append(e)
            continue
        if s.unnamed_splits:
            e = _entry(view, s, None, None)
            e["notes"] = [f"Spark split {s.unnamed_splits} reducer(s) of this read (its metric); the log does not say"
                          " which"]
            e["code_for_your_cluster"] = code
            doc.append(e)
        for reducer, splits in s.reducers.items():
            e = _entry(view, s, reducer, splits)
            e.update(counted.get(i, {}).get(reducer, {}))
            if e["keys"] is None:
                e["code_for_your_cluster"] = code
                median = s.view.side_analysis.median if s.view.side_analysis is not None else None
                e["fixes"] = [f.to_dict() for f in split_fixes(e["bytes"], splits, median, conf=view.conf,
                                                               v=view.spark_version, is_join=bool(s.view.join))]
            doc.append(e)
    return doc
