"""Two runs' executions grouped by query, side by side (issue 41: ``diff`` grouped by query).

A streaming job's micro-batches, a Thrift server's or a notebook's statements run one query
again and again; compared execution by execution, two such runs are hundreds of rows that say
the same thing. Here each run's executions are grouped by query as the Overview groups them
(:mod:`aqe_core.views.query_groups`: the plan fingerprint with join strategies aside), and each
group of run a is set beside its group in run b: how many executions, their span, and for each
of AQE's decisions (a join's strategy, a read's partitions after AQE, reducers split for skew)
how many executions took each outcome in each run. A group only one run has is said so.

**Matching.** Groups match on their fingerprint first (the same query planned the same way in
both runs). Where another release plans it otherwise, the fingerprints differ; then a group of
run a takes the group of run b its executions were matched to most by the diff's own alignment
(:func:`~aqe_core.views.align_runs.align_queries`: the SQL text, the same inputs, filters and
joins), and says so.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Optional, Sequence

from aqe_core.model.plan_walk import own_walk
from aqe_core.model.run_diff import DecisionSpread, GroupDiff, GroupSide
from aqe_core.views.align_runs import EMPTY_DIGEST as _EMPTY
from aqe_core.views.execution_summary import summary_of
from aqe_core.views.plan_match import base_name, is_join
from aqe_core.views.query import QueryView
from aqe_core.views.query_groups import KINDS, Decision, QueryGroup, distribution_text, group_executions

__all__ = ["FINGERPRINT", "MAX_CHANGE_SENTENCES", "MAX_IDS", "diff_groups", "group_diff_lines", "group_diff_rows",
           "match_groups"]

#: execution ids kept per group and run (the first ones)
MAX_IDS = 50
#: change sentences kept per group and run (the first ones; ``changed`` counts them all)
MAX_CHANGE_SENTENCES = 5
#: how two groups with the same fingerprint match
FINGERPRINT = "plan fingerprint (join strategies aside)"

Prints = dict[int, tuple[str, str, str, str]]


def _order(v: QueryView) -> tuple[int, str]:
    qid = v.query_id
    return (int(qid) if qid.isdigit() else -1, qid)


def _groups(views: Sequence[QueryView], prints: Prints) -> list[QueryGroup]:
    """A run's query groups, its executions in execution order, keyed on the fingerprints the
    diff computed already (their third component is what groups key on)."""
    return group_executions(summary_of(v, prints[id(v)][2]) for v in sorted(views, key=_order))


#: how groups left over match, after the fingerprint: (words, index of the fingerprint component)
_PASSES = (("the SQL text", 1), ("the same inputs, filters and joins, planned otherwise", 3))


def _combines(view: QueryView) -> bool:
    """The query filters or joins what it reads: only then do the same inputs say it is the same
    query (two unrelated jobs both scan a range or a table now and then)."""
    plan = view.initial_plan or view.final_plan
    return plan is not None and any(is_join(n) or n == "Filter" for n in (base_name(x.name or "") for x in own_walk(plan)))


def _keys(views: Sequence[QueryView], prints: Prints) -> dict[str, tuple[str, ...]]:
    """group key -> each fingerprint component most of the group's executions have (the inputs
    component left empty for a group whose query neither filters nor joins)."""
    seen: dict[str, list[Counter]] = {}
    first: dict[str, QueryView] = {}
    for v in views:
        f = prints[id(v)]
        first.setdefault(f[2], v)
        for c, part in zip(seen.setdefault(f[2], [Counter() for _ in f]), f):
            c[part] += 1
    out = {q: tuple(c.most_common(1)[0][0] for c in cs) for q, cs in seen.items()}
    return {q: k if _combines(first[q]) else (*k[:3], "") for q, k in out.items()}


def match_groups(ga: Sequence[QueryGroup], gb: Sequence[QueryGroup], keys_a: dict[str, tuple[str, ...]],
                 keys_b: dict[str, tuple[str, ...]]) -> list[tuple[Optional[QueryGroup], Optional[QueryGroup], str]]:
    """(group of a, group of b, how) for each pair, then a's groups alone, then b's.

    The same fingerprint matches first. A group left over then takes a group of the other run
    whose executions mostly have its SQL text (where the source keeps one), then its inputs,
    filters and joins where it has filters or joins (``keys_*``: each group's most common
    fingerprint components, by group key; "" where not to match on); of several, the one whose
    execution count is closest.

    >>> a, b = [QueryGroup("x", "q"), QueryGroup("y", "r")], [QueryGroup("x", "q"), QueryGroup("z", "r")]
    >>> got = match_groups(a, b, {"x": ("", "", "x", "i"), "y": ("", "", "y", "j")},
    ...                    {"x": ("", "", "x", "i"), "z": ("", "", "z", "j")})
    >>> [(p and p.query, q and q.query, how) for p, q, how in got]
    [('x', 'x', 'plan fingerprint (join strategies aside)'), ('y', 'z', 'the same inputs, filters and joins, planned otherwise')]
    """
    by_b = {g.query: g for g in gb}
    out: list[tuple[Optional[QueryGroup], Optional[QueryGroup], str]] = [
        (g, by_b[g.query], FINGERPRINT) for g in ga if g.query in by_b]
    taken_a = {x.query for x, _, _ in out if x is not None}
    taken_b = set(taken_a)
    for how, part in _PASSES:
        for g in ga:
            key = keys_a.get(g.query, ("",) * 4)[part]
            if g.query in taken_a or not key or key == _EMPTY:
                continue
            free = [h for h in gb if h.query not in taken_b and keys_b.get(h.query, ("",) * 4)[part] == key]
            if free:
                h = min(free, key=lambda h: abs(h.count - g.count))
                out.append((g, h, how))
                taken_a.add(g.query)
                taken_b.add(h.query)
    out += [(g, None, "") for g in ga if g.query not in taken_a]
    out += [(None, g, "") for g in gb if g.query not in taken_b]
    return out


def _side(g: QueryGroup) -> GroupSide:
    return GroupSide(query=g.query, name=g.name, executions=g.count, execution_ids=tuple(g.execution_ids[:MAX_IDS]),
                     first_start_ms=g.first_start_ms, last_end_ms=g.last_end_ms, not_final=g.not_final,
                     not_adaptive=g.not_adaptive,                     evidence=tuple(sorted(g.evidence)), changed=sum(d.changed for d in g.decisions.values()),
                     changes=tuple(c.sentence for c in g.changes()[:MAX_CHANGE_SENTENCES]))


def _spreads(a: Optional[QueryGroup], b: Optional[QueryGroup]) -> list[DecisionSpread]:
    """Each decision either run shows, its outcomes in each (None: the run has no such decision)."""
    da: dict[tuple[str, str], Decision] = {(d.kind, d.key): d for d in (a.shown_decisions() if a else [])}
    db: dict[tuple[str, str], Decision] = {(d.kind, d.key): d for d in (b.shown_decisions() if b else [])}
    out = []
    for k in sorted(set(da) | set(db), key=lambda k: (KINDS.index(k[0]), k[1])):
        x, y = da.get(k), db.get(k)
        label = (x or y).label  # type: ignore[union-attr]
        out.append(DecisionSpread(k[0], k[1], label, tuple(x.distribution()) if x else None,
                                  tuple(y.distribution()) if y else None,
                                  (x.changed if x else None, y.changed if y else None)))
    return out


def _spread_text(d: DecisionSpread, spread: Optional[tuple[tuple[Any, int], ...]], side: Optional[GroupSide]) -> str:
    """A run's outcomes of one decision; where it has none, why where its executions say."""
    if spread is not None:
        return distribution_text(d.kind, spread)
    if side is not None and side.not_adaptive == side.executions:
        return "none: AQE did not run in any of its executions"
    if side is not None and side.not_adaptive + side.not_final == side.executions:
        return "none: no execution with AQE's final plan"
    return "no such decision"


def _sentence(gd: GroupDiff) -> str:
    """What differs between the runs' executions of one query, in one sentence."""
    if gd.a is None or gd.b is None:
        side, g = ("a", gd.a) if gd.b is None else ("b", gd.b)
        other = "b" if side == "a" else "a"
        return (f"only in run {side}: {g.executions:,} execution{'s' if g.executions != 1 else ''} of"  # type: ignore[union-attr]
                f" {g.name!r}; no query of run {other} is paired with it by plan, SQL text or inputs")  # type: ignore[union-attr]
    counts = (f"{gd.a.executions:,} executions in run a, {gd.b.executions:,} in run b"
              if gd.a.executions != gd.b.executions else f"{gd.a.executions:,} executions in each run")
    off = [x for x, g in (("a", gd.a), ("b", gd.b)) if g.not_adaptive == g.executions]
    if len(off) == 1:
        on = gd.b if off[0] == "a" else gd.a
        return (f"{counts}; AQE ran in none of run {off[0]}'s executions and in {on.executions - on.not_adaptive:,}"
                f" of run {'b' if off[0] == 'a' else 'a'}'s")
    differ = [d for d in gd.decisions if d.differs]
    if not differ:
        return counts + ("; AQE decided alike: each decision's outcomes in as many executions" if gd.decisions
                         else "; no decision of AQE in either run")
    d = differ[0]
    more = f" (and {len(differ) - 1} other decision{'s' if len(differ) > 2 else ''} differ)" if len(differ) > 1 else ""
    return f"{counts}; {d.label}: {_spread_text(d, d.a, gd.a)} in run a, {_spread_text(d, d.b, gd.b)} in run b{more}"


def diff_groups(a: Sequence[QueryView], b: Sequence[QueryView], prints: Prints) -> list[GroupDiff]:
    """The queries either run ran more than once, each run's executions of it side by side
    (nothing when neither run repeats a query: the per-query diff says it all)."""
    ga, gb = _groups(a, prints), _groups(b, prints)
    if not any(g.count > 1 for g in (*ga, *gb)):
        return []
    out = []
    for x, y, how in match_groups(ga, gb, _keys(a, prints), _keys(b, prints)):
        if max(x.count if x else 0, y.count if y else 0) < 2:
            continue
        gd = GroupDiff(_side(x) if x else None, _side(y) if y else None, how, _spreads(x, y))
        gd.sentence = _sentence(gd)
        out.append(gd)
    return out


def _ms(g: Optional[GroupSide]) -> str:
    from aqe_core.units import human_ms

    return "-" if g is None or g.span_ms is None else human_ms(g.span_ms)


def _ids(g: Optional[GroupSide], shown: int = 4) -> str:
    """``24 (1, 4, 7, 10, ...)``: how many executions, the first ids."""
    if g is None:
        return "0"
    more = ", ..." if g.executions > shown else ""
    return f"{g.executions:,} ({', '.join(g.execution_ids[:shown])}{more})"


def group_diff_lines(groups: Sequence[GroupDiff], changes: int = 2) -> list[str]:
    """The CLI's text: a block per query run more than once, run a's numbers beside run b's."""
    if not groups:
        return []
    both = sum(g.only is None for g in groups)
    out = [f"\nqueries run more than once (executions grouped by query): {both} in both runs,"
           f" {sum(g.only == 'a' for g in groups)} only in a, {sum(g.only == 'b' for g in groups)} only in b"]
    for g in groups:
        side = g.a or g.b
        assert side is not None
        where = f"only in run {g.only}" if g.only else f"in both runs, matched by {g.how}"
        out.append(f"\n{side.name[:100]!r}: {where}")
        out.append(f"  executions: {_ids(g.a)} -> {_ids(g.b)}; span: {_ms(g.a)} -> {_ms(g.b)}")
        if any(s.not_adaptive for s in (g.a, g.b) if s):
            out.append(f"  executions AQE did not run in: {g.a.not_adaptive if g.a else 0:,} ->"
                       f" {g.b.not_adaptive if g.b else 0:,}")
        if any(s.not_final for s in (g.a, g.b) if s):
            out.append(f"  executions without AQE's final plan (not counted): {g.a.not_final if g.a else 0:,} ->"
                       f" {g.b.not_final if g.b else 0:,}")
        for d in g.decisions:
            if g.only:
                out.append(f"  {d.label}: {_spread_text(d, d.a if g.only == 'a' else d.b, side)}")
            else:
                out += [f"  {d.label}", f"    a: {_spread_text(d, d.a, g.a)}", f"    b: {_spread_text(d, d.b, g.b)}"]
        for name, s in (("a", g.a), ("b", g.b)):
            if s is None:
                continue
            out += [f"  run {name}: {c}" for c in s.changes[:changes]]
            if s.changed > changes:
                out.append(f"  run {name}: ... {s.changed - min(changes, len(s.changes)):,} more changes (--json: the first"
                           f" {MAX_CHANGE_SENTENCES})")
        out.append(f"  {g.sentence}")
    return out


def group_diff_rows(groups: Sequence[GroupDiff]) -> list[dict[str, object]]:
    """The queries run more than once as table rows (the Compare runs page, the HTML report):
    each run's executions, span and decisions in words, and what differs."""
    rows: list[dict[str, object]] = []
    for g in groups:
        side = g.a or g.b
        assert side is not None
        decided = [(name, s, "; ".join(f"{d.label}: {_spread_text(d, d.a if name == 'a' else d.b, s)}"
                                       for d in g.decisions)) for name, s in (("a", g.a), ("b", g.b))]
        rows.append({"query": side.name[:100], "in": f"run {g.only} only" if g.only else "both runs",
                     "matched by": g.how, "executions a": g.a.executions if g.a else 0,
                     "executions b": g.b.executions if g.b else 0, "span a": _ms(g.a), "span b": _ms(g.b),
                     **{f"AQE's decisions, run {name}": text if s is not None else "-" for name, s, text in decided},
                     "what differs": g.sentence})
    return rows
