"""Two runs of one job compared, as people read it: the matched queries ranked by time lost,
each with its numbers in both runs, AQE's decisions, the settings that differ and one sentence
saying whether the data, the settings or the release made the difference (issue 28).

Alignment is :mod:`aqe_core.views.align_runs`; the causes are the advice's
(:func:`aqe_core.advise.attribute_runs.attribute`): this module only lays them out.
"""
from __future__ import annotations

from typing import Optional, Sequence, cast

from aqe_core.advise.attribute_runs import (JOIN_STRATEGY, PARTITIONS_AFTER, SKEW_SPLIT, Attribution, attribute, settings_changed,
                                            skew_flag_only)
from aqe_core.engine.adaptive import plan_facts
from aqe_core.model.engines import spark_name
from aqe_core.model.evidence import Evidence
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import is_shuffle_exchange, own_walk
from aqe_core.model.run_diff import DATA, RELEASE, SETTINGS, Cause, QueryDiff, QueryRef, RunDiff, SettingChange, ShuffleDiff
from aqe_core.units import format_bytes
from aqe_core.views.align_runs import align_queries, align_shuffles, fingerprint
from aqe_core.views.diff_groups import diff_groups
from aqe_core.views.query import QueryView, ShuffleView

__all__ = ["caused_by", "cause_rows", "diff_query", "diff_rows", "diff_views", "query_sentence", "same_data", "setting_rows",
           "shuffle_rows"]


def _ref(view: QueryView, shape: Optional[str] = None) -> QueryRef:
    return QueryRef(view.query_id, view.description, shape if shape is not None else fingerprint(view)[0])


def _task_ms(view: QueryView) -> Optional[int]:
    """The sum of the query's task durations: a capture's task events, else the successful
    tasks of each stage the view times (an event log's task ends, a listener log's included:
    its exact view carries the log's stage times); None where unknown."""
    model = view.model
    if model is not None and model.kind == "capture" and model.raw is not None:
        capture, index = model.raw
        q = next((x for x in capture.queries if x.index == index), None)
        times = [ms for t in (q.spark_stages if q else []) for ms in (t.task_ms or []) if ms >= 0]
        if times:
            return sum(times)
    totals = [t.total_ms for t in view.stage_times.values()]
    return sum(totals) if totals and None not in totals else None  # type: ignore[arg-type]


def _slowest_stage(view: QueryView) -> Optional[tuple[int, int]]:
    timed = [(t.stage_ms if t.stage_ms is not None else t.max_ms, sid) for sid, t in view.stage_times.items()]
    if not timed:
        return None
    ms, sid = max(timed)
    return sid, ms


def _largest(s: Optional[ShuffleView]) -> Optional[tuple[int, int]]:
    sizes = s.sizes_before if s is not None else None
    if not sizes:
        return None
    i = max(range(len(sizes)), key=lambda k: (sizes[k], -k))
    return i, sizes[i]


def _skewed(s: Optional[ShuffleView]) -> Optional[int]:
    """Reducers split for skew: a read whose metrics Spark logged and that names none split none
    (Spark logs the skew metrics only on a read it split), and a shuffle read as planned (no
    adaptive read) none; None where the log does not say."""
    if s is None:
        return None
    known = s.has_read_metrics or not s.adaptive_read
    return 0 if s.skewed_partitions is None and known else s.skewed_partitions


def _get(s: Optional[ShuffleView], name: str):
    return getattr(s, name) if s is not None else None


def _shuffle_diff(a: Optional[ShuffleView], b: Optional[ShuffleView]) -> ShuffleDiff:
    def total(s: Optional[ShuffleView]) -> Optional[int]:
        sizes = s.sizes_for_lines if s is not None else None
        return sum(sizes) if sizes else None

    label = (a or b).label if (a or b) is not None else ""  # type: ignore[union-attr]
    return ShuffleDiff(
        label=label, key_a=_get(a, "key"), key_b=_get(b, "key"), stage=(_get(a, "stage_id"), _get(b, "stage_id")),
        shuffle_bytes=(total(a), total(b)), partitions_before=(_get(a, "partitions_before"), _get(b, "partitions_before")),
        partitions_after=(_get(a, "partitions_after"), _get(b, "partitions_after")),
        skewed_reducers=(_skewed(a), _skewed(b)),
        skew_splits=(_get(a, "skew_splits"), _get(b, "skew_splits")), largest_reducer=(_largest(a), _largest(b)),
        local=(bool(_get(a, "local")), bool(_get(b, "local"))),
        evidence=(a.evidence if a is not None else Evidence.ESTIMATE, b.evidence if b is not None else Evidence.ESTIMATE),
        sizes_after=(_get(a, "sizes_after"), _get(b, "sizes_after")),
        sizes_before=(_get(a, "sizes_before"), _get(b, "sizes_before")))


def _joins(view: QueryView) -> list[str]:
    """The final plan's joins by Spark's names (an engine's join is the one it stands for: a run
    on Photon and one on Spark decided the same way when their strategies are the same)."""
    plan = view.final_plan
    names = [spark_name(n.name or "", n.description or "") for n in own_walk(plan)] if plan is not None else []
    return [n for n in names if "Join" in n]


def _is_exchange(node: PlanNode) -> bool:
    """A shuffle exchange that writes (an engine's too); a reused one's writes are its original's."""
    return is_shuffle_exchange(node) and node.name != "ReusedExchange"


def _shuffled(view: QueryView) -> Optional[list[tuple[int, Optional[int]]]]:
    """(bytes, records) each first exchange of the final plan wrote (one with no exchange below:
    what the input gave, before any of AQE's decisions shaped it), by Spark's metrics, sorted;
    None where one lacks either (a log that does not keep them says nothing). A capture keeps no
    exchange metrics but its map statistics: the bytes its query stage's map tasks reported to
    Spark (records unknown)."""
    plan = view.final_plan
    if plan is None:
        return None
    out: list[tuple[int, Optional[int]]] = []
    for node, stage in _exchanges(plan, None):
        if any(_is_exchange(n) for n in node.walk() if n is not node):
            continue
        size, rows = ((node.metric(m) or {}).get("total") for m in ("shuffle bytes written", "shuffle records written"))
        if isinstance(size, int) and isinstance(rows, int):
            out.append((size, rows))
            continue
        mapped = _map_bytes(view, stage)
        if mapped is None:
            return None
        out.append((mapped, None))
    return sorted(out, key=lambda r: (r[0], r[1] or 0)) or None


def _exchanges(node: PlanNode, stage: Optional[int]):
    """Each writing exchange of a plan with the id of the query stage right above it (None: none)."""
    desc = (node.description or "").split()
    if node.name == "ShuffleQueryStage" and len(desc) > 1 and desc[1].isdigit():
        stage = int(desc[1])
    elif _is_exchange(node):
        yield node, stage
        stage = None
    for child in node.children:
        yield from _exchanges(child, stage)


def _map_bytes(view: QueryView, stage: Optional[int]) -> Optional[int]:
    """The bytes a query stage's map tasks wrote, by the exact map statistics of its shuffle."""
    s = next((x for x in view.shuffles if x.exact and x.stage_id == stage), None) if stage is not None else None
    return sum(s.sizes_before) if s is not None and s.sizes_before else None


def same_data(a: QueryView, b: QueryView) -> Optional[bool]:
    """Did both runs shuffle the very same data, by the log's own numbers? Every exchange wrote
    the same bytes and records in both (True), not (False), or a run's log does not say (None).
    What AQE decides on is what the map stages wrote, so identical writes rule the data out."""
    sa, sb = _shuffled(a), _shuffled(b)
    if sa is None or sb is None:
        return None
    if any(r is None for _, r in sa + sb):  # a capture's side: its bytes, the records unknown
        return sorted(x for x, _ in sa) == sorted(x for x, _ in sb)
    return sa == sb


def _is_command(v: QueryView) -> bool:
    """The query's plan is a command (no query below it: createOrReplaceTempView, DDL, metadata)."""
    plan = v.initial_plan or v.final_plan
    return plan is not None and plan_facts(plan).is_command


def diff_query(a: QueryView, b: QueryView, shapes: tuple[Optional[str], Optional[str]] = (None, None)) -> QueryDiff:
    """One matched query: both runs' numbers, the settings that differ, the causes, a sentence
    (``shapes``: each run's plan shape hash, where the caller has it)."""
    pairs = align_shuffles(a, b)
    d = QueryDiff(_ref(a, shapes[0]), _ref(b, shapes[1]), duration_ms=(a.duration_ms, b.duration_ms), task_ms=(_task_ms(a), _task_ms(b)),
                  slowest_stage=(_slowest_stage(a), _slowest_stage(b)),
                  release=(str(a.spark_version), str(b.spark_version)), joins=(_joins(a), _joins(b)))
    d.shuffles = [_shuffle_diff(sa, sb) for sa, sb in pairs]
    d.command = _is_command(a) and _is_command(b)
    d.settings = [SettingChange(*row) for row in settings_changed(a.conf, b.conf)]
    if a.adaptive and b.adaptive and (a.shuffles or b.shuffles):
        got = attribute(a, b, [(sd.key_a, sd.key_b, sd.label) for sd in d.shuffles], same_data(a, b))
    else:
        got = Attribution()
    d.causes = got.causes
    d.notes = list(got.notes)
    d.sentence = query_sentence(d, got.evidence)
    if a.adaptive != b.adaptive:  # nothing to replay side by side: say which run AQE skipped, and why
        off = b if a.adaptive else a
        d.sentence = (f"AQE applied in run {'a' if a.adaptive else 'b'} only"
                      + (f": in run {'b' if a.adaptive else 'a'}, {off.adaptive_reason}" if off.adaptive_reason else ""))
    return d


def _factor_words(c: Cause, d: QueryDiff) -> str:
    parts = []
    if DATA in c.factors:
        parts.append("the data changed")
    if SETTINGS in c.factors:
        keys = [f"{s.key.split('.', 2)[-1]} {s.a} -> {s.b}" for s in d.settings if s.in_both]  # without "spark.sql."
        parts.append("the settings changed" + (f" ({', '.join(keys[:2])}{', ...' if len(keys) > 2 else ''})" if keys else ""))
    if RELEASE in c.factors:
        parts.append(f"the release changed ({d.release[0]} -> {d.release[1]})")
    if not parts and c.untold:
        return c.untold[0].lower() + c.untold[1:]
    return " and ".join(parts) if parts else "no single change explains it in our replay"


def _growth(d: QueryDiff, c: Cause) -> str:
    sd = next((s for s in d.shuffles if s.label == c.shuffle), None)
    if sd is None or sd.largest_reducer[0] is None or sd.largest_reducer[1] is None:
        return ""
    (ia, sa), (ib, sb) = sd.largest_reducer  # type: ignore[misc]
    if ia == ib:
        grew = "grew" if sb > sa else "shrank" if sb < sa else ""
        return f"reducer {ib} {grew} from {format_bytes(sa)} to {format_bytes(sb)}; " if grew else ""
    return f"the largest reducer went from {format_bytes(sa)} (reducer {ia}) to {format_bytes(sb)} (reducer {ib}); "


def _what(c: Cause, d: QueryDiff) -> str:
    where = f" in {c.shuffle.split(':')[0]}" if c.shuffle else ""
    if c.decision == SKEW_SPLIT:
        if not c.b:
            return f"the skewed reducers{where} are no longer split (run a split {c.a})"
        if not c.a:
            sd = next((s for s in d.shuffles if s.label == c.shuffle), None)
            parts = sd.skew_splits[1] if sd is not None else None
            return f"{c.b} reducer(s){where} are now split for skew" + (f" into {parts} parts" if parts else "")
        return f"reducers split for skew{where}: {c.a} -> {c.b}"
    if skew_flag_only(c):
        now = sum("(skew" in j for j in c.b) > sum("(skew" in j for j in c.a)
        return (f"a join {'now splits' if now else 'no longer splits'} skewed partitions"
                f" ({', '.join(c.a)} -> {', '.join(c.b)})")
    if c.decision == JOIN_STRATEGY:
        return f"the joins changed from {', '.join(c.a) or 'none'} to {', '.join(c.b) or 'none'}"
    return f"partitions after AQE{where}: {c.a} -> {c.b}"


def _counterfactual(c: Cause) -> str:
    if SETTINGS not in c.factors and RELEASE not in c.factors or c.b_under_a is None:
        return ""
    if c.decision == SKEW_SPLIT:
        parts = f" into {c.b_under_a_parts} parts" if c.b_under_a_parts else ""
        would = f"split {c.b_under_a} reducer(s){parts}" if c.b_under_a else "split none"
    elif c.decision == JOIN_STRATEGY:
        would = "use " + ", ".join(c.b_under_a)
    else:
        would = f"read {c.b_under_a} partitions"
    return f"; with run a's settings and release run b would {would}"


_ORDER = {SKEW_SPLIT: 0, JOIN_STRATEGY: 1, PARTITIONS_AFTER: 2}


def query_sentence(d: QueryDiff, evidence: Evidence = Evidence.EXACT) -> str:
    """What made the difference in one query, in one sentence."""
    pct = d.duration_change_pct
    timing = f" (duration {pct:+.0f}%)" if pct is not None else ""
    tail = " [estimated: plain event logs]" if evidence is Evidence.ESTIMATE and d.causes else ""
    if not d.causes:
        same = "AQE decided the same way in both runs"
        changed = ([f"the release changed ({d.release[0]} -> {d.release[1]})"] if d.release[0] != d.release[1] else []) + (
            [f"{n} setting(s) differ (release defaults included)"] if (n := sum(s.in_both for s in d.settings)) else [])
        if changed:
            same += "; " + " and ".join(changed) + " without changing a decision"
        return same + timing + tail
    c = min(d.causes, key=lambda x: _ORDER.get(x.decision, 9))
    growth = _growth(d, c) if c.decision == SKEW_SPLIT else ""
    return f"{growth}{_what(c, d)}: {_factor_words(c, d)}{_counterfactual(c)}{timing}{tail}"


def diff_views(a: Sequence[QueryView], b: Sequence[QueryView], *, source_a: str = "a", source_b: str = "b",
               kind: tuple[str, str] = ("", ""), release: tuple[str, str] = ("", ""),
               app: tuple[str, str] = ("", "")) -> RunDiff:
    """Two runs' query views compared: matched queries ranked by time lost (most first); where
    either run ran a query more than once, its executions grouped by query side by side."""
    prints = {id(v): fingerprint(v) for v in (*a, *b)}  # once each: a plan's normal text is the diff's most work
    matches, only_a, only_b = align_queries(a, b, prints)
    out = RunDiff(source_a, source_b, kind, release, app=app)
    out.matched = sorted((diff_query(m.a, m.b, (prints[id(m.a)][0], prints[id(m.b)][0])) for m in matches),
                         key=lambda q: -(q.time_lost_ms or 0))
    out.only_a = [_ref(v, prints[id(v)][0]) for v in only_a]
    out.only_b = [_ref(v, prints[id(v)][0]) for v in only_b]
    out.groups = diff_groups(a, b, prints)
    if not matches and a and b:
        out.notes.append("no query of run a matches one of run b: these look like two different jobs")
    return out


def diff_rows(d: RunDiff, *, only_changed: bool = False) -> list[dict[str, object]]:
    """The aligned query list as table rows, most time lost first (``only_changed``: the queries
    where AQE decided differently or that took longer)."""
    rows: list[dict[str, object]] = []
    for q in d.matched:
        if only_changed and not q.causes and (q.time_lost_ms or 0) <= 0:
            continue
        factors = sorted({f for c in q.causes for f in c.factors})
        rows.append({"query a": q.a.query_id, "query b": q.b.query_id, "description": q.b.description,
                     "duration a (ms)": q.duration_ms[0], "duration b (ms)": q.duration_ms[1],
                     "change %": q.duration_change_pct, "time lost (ms)": q.time_lost_ms,
                     "decisions changed": len(q.causes), "caused by": ", ".join(factors), "what happened": q.sentence})
    return rows


# -- the page's tables: words and units for people (the JSON keeps the raw fields) -------------
_SHUFFLE_FIELDS = (("stage", "stage", None), ("shuffle_bytes", "shuffle bytes", "bytes"),
                   ("partitions_before", "partitions before AQE", None),
                   ("partitions_after", "partitions after AQE", None),
                   ("skewed_reducers", "reducers split for skew", None), ("skew_splits", "skew split parts", None),
                   ("largest_reducer", "largest reducer before AQE", "reducer"), ("local", "local read", "yes"))


def _cell(value: object, unit: Optional[str]) -> str:
    if value is None:
        return "-"
    if unit == "bytes":
        return f"{format_bytes(value)} ({value:,} B)"  # type: ignore[arg-type]
    if unit == "reducer":
        reducer, size = cast(tuple[int, int], value)
        return f"#{reducer}: {format_bytes(size)}"
    if unit == "yes":
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)


def shuffle_rows(s: ShuffleDiff) -> list[dict[str, str]]:
    """One read's numbers in both runs, a row per quantity, with the evidence of each run's."""
    rows = [{"": words, "run a": _cell(getattr(s, name)[0], unit), "run b": _cell(getattr(s, name)[1], unit)}
            for name, words, unit in _SHUFFLE_FIELDS]
    rows.append({"": "how the sizes are known", "run a": s.evidence[0].label, "run b": s.evidence[1].label})
    return rows


def caused_by(c: Cause) -> str:
    """A cause's factors in a table cell: what changed it, or that the log cannot tell."""
    return ", ".join(c.factors) or ("the log cannot tell" if c.untold else "unexplained")


def cause_rows(q: QueryDiff) -> list[dict[str, str]]:
    """Each changed decision with what changed it and the replays that tell."""
    return [{"decision": c.decision, "read": c.shuffle or "", "run a": _cell(c.a, None), "run b": _cell(c.b, None),
             "caused by": caused_by(c),
             "run b under run a's settings": _cell(c.b_under_a, None),
             "run a under run b's settings": _cell(c.a_under_b, None), "evidence": c.evidence.label}
            for c in q.causes]


def setting_rows(q: QueryDiff) -> list[dict[str, str]]:
    """The settings that differ, the ones a run set first; a key one release does not have says so."""
    ra, rb = q.release

    def value(v: Optional[str], was_set: bool, release: str) -> str:
        if v is None:
            return f"(not in Spark {release})" if release else "(unknown)"
        return v + ("" if was_set else " (default)")

    ordered = sorted(q.settings, key=lambda s: (not (s.set_in_a or s.set_in_b), s.key))
    return [{"setting": s.key, "run a": value(s.a, s.set_in_a, ra), "run b": value(s.b, s.set_in_b, rb)}
            for s in ordered]
