"""The Plans page's view: initial and chosen plan version side by side, AQE's changes marked,
a click on a node opens its details; and the plan figures the HTML report embeds."""
from __future__ import annotations

from typing import Optional

import pandas as pd
import streamlit as st

from aqe_core.views.query import QueryView
from aqe_core.figures.plan_figure import AUTO_EXPAND, STAGE_KEY, VIEW_PX, drawn_operators, node_details, plan_figure, plan_search
from aqe_core.figures.plan_numbers import box_numbers
from aqe_core.plain_text import md_text
from aqe_core.views.plan_diff import diff_plans
from aqe_core.views.plan_stages import NodeTimes, node_at, plan_stage_times, stage_sentence
from aqe_core.views.plan_timeline import join_versions, node_trace, read_versions
from ui import state
from ui.figure_cache import cached_figure
from ui.trace import decision_trace

_CHART_CONFIG = {"scrollZoom": True, "displaylogo": False}
STAGE_HELP = ("From the log's task events (Spark's own metric): task duration is Finish Time - Launch Time of "
               "the successful attempt; the Spark UI's stage page lists the same task by its index and id.")


#: what the plan boxes stand for: chosen by the plan's size, or forced
BOX_MODES = {"Query stages": "stages", "Operators": "operators"}
#: both plans side by side when each fits its default view whole (half a wide page)
SIDE_BY_SIDE_PX = VIEW_PX


def _expansion(plan, mode: str, opened: set) -> object:
    """The ``expanded`` argument of :func:`plan_figure` for a box mode and the stages clicked open."""
    if mode == "operators":
        return "all"
    if mode == "auto" and drawn_operators(plan) <= AUTO_EXPAND:
        return "all"
    return tuple(sorted(opened))


def plan_figures_for(view: QueryView):
    """(title, figure) for the initial and final plans, and the rows of the AQE-change table:
    the report's plans, drawn as the Plans page opens them."""
    figs, rows = [], []
    diff = diff_plans(view.initial_plan, view.final_plan) if view.final_plan is not None else None
    if view.initial_plan is not None:
        figs.append(("Initial plan", plan_figure(view.initial_plan, changes=diff, change_side="before",
                                                 title="Initial plan", numbers=box_numbers())))
    if view.final_plan is not None:
        times = plan_stage_times(view, view.final_plan)
        figs.append(("Final plan", plan_figure(view.final_plan, changes=diff, title="Final plan",
                                               numbers=box_numbers(times))))
        rows = diff.table()
    return figs, rows


def _selected_key(event) -> Optional[str]:
    try:
        points = event.selection.points  # type: ignore[union-attr]
    except AttributeError:
        try:
            points = event["selection"]["points"]
        except (KeyError, TypeError):
            return None
    for p in points or []:
        cd = p.get("customdata")
        if isinstance(cd, list):
            cd = cd[0] if cd else None
        if isinstance(cd, str):
            return cd
    return None


_CHARTS = (("plan_initial", "initial"), ("plan_final", "final"))


def _take_click(context: tuple) -> None:
    """A box clicked since the last run, read from the charts' state before the page is laid
    out (so the details column opens in the same run). A collapsed stage opens (its operators
    drawn in place); an operator is remembered as ``(side, path, context)``: ``context``
    (source, query, plan version) ties it to the plans it was clicked in. A selection already
    seen is not a new click (the charts keep theirs across versions)."""
    seen = st.session_state.setdefault(state.PLAN_SELECTION_SEEN, {})
    for key, side in _CHARTS:
        sel = _selected_key(st.session_state.get(key))
        if sel != seen.get(key):
            seen[key] = sel
            if sel and sel.startswith(STAGE_KEY):
                _opened(context, side).add(sel[len(STAGE_KEY):])
            elif sel:
                st.session_state[state.PLAN_SELECTED] = (side, sel, context)


def _opened(context: tuple, side: str) -> set:
    """The stages clicked open in one plan of these plans (forgotten with another query)."""
    store = st.session_state.setdefault(state.PLAN_EXPANDED, {})
    if store.get("context") != context:
        store.clear()
        store["context"] = context
    return store.setdefault(side, set())


def collapse_all(context: tuple) -> None:
    for side in ("initial", "final"):
        _opened(context, side).clear()


def _chart(fig, key: str) -> None:
    st.plotly_chart(fig, key=key, on_select="rerun", selection_mode="points", theme=None, config=_CHART_CONFIG)


def plan_page(view: QueryView, version_index: int, search: str, source_path: str = "", mode: str = "auto") -> None:
    """Initial plan and plan version ``version_index``, AQE changes marked: side by side when
    both fit half the page at full size, else one above the other."""
    versions = view.plan_versions or [view.final_plan]
    index = max(0, min(version_index, len(versions) - 1))
    later = versions[index]
    earlier = view.initial_plan
    diff = cached_figure(view, ("diff", index), lambda: diff_plans(earlier, later) if later is not None else None)
    hits = plan_search(later, search) if (search and later is not None) else []
    context = (source_path, view.query_id, version_index)
    times = plan_stage_times(view, later)
    _take_click(context)
    picked = _picked(context)
    figs = []
    if earlier is not None:
        exp = _expansion(earlier, mode, _opened(context, "initial"))
        early_hits = plan_search(earlier, search) if search else []
        figs.append(("plan_initial", cached_figure(view, ("initial", index, search, exp), lambda: plan_figure(
            earlier, changes=diff, change_side="before", title="Initial plan", expanded=exp,
            highlight=early_hits or None, focus=early_hits[0] if early_hits else None, numbers=box_numbers()))))
    if later is not None:
        title = "Final plan" if later is versions[-1] else f"Plan version {index + 1} of {len(versions)}"
        exp = _expansion(later, mode, _opened(context, "final"))
        figs.append(("plan_final", cached_figure(view, ("later", index, search, exp), lambda: plan_figure(
            later, changes=diff, title=title, expanded=exp, highlight=hits or None,
            focus=hits[0] if hits else None, numbers=box_numbers(times)))))
    side_by_side = all(f.layout.meta["plan_width"] <= SIDE_BY_SIDE_PX for _k, f in figs)
    if side_by_side:
        cols = st.columns([5, 5, 3] if picked else [1, 1], border=True)
        plan_cols, details = cols[:2], cols[2:]
    else:
        cols = st.columns([3, 1] if picked else [1], border=True)
        plan_cols, details = [cols[0]] * 2, cols[1:]
    if earlier is None:
        with plan_cols[0]:
            st.info("The source has no initial plan for this query.")
        figs.insert(0, ("", None))
    for (key, fig), col in zip(figs, plan_cols):
        if fig is not None:
            with col:
                _chart(fig, key)
    if details:
        with details[0]:
            _node_details(view, earlier, later, picked, times, later is versions[-1])
    if search:
        st.caption(f"{len(hits)} node(s) match '{md_text(search)}'" + (" (view centred on the first)" if hits else ""))
    _decided_here(view, versions, index)
    if diff is not None and len(diff):
        st.subheader("What AQE changed")
        st.dataframe(pd.DataFrame([{"kind": c.kind, "node": c.node_name, "what": c.explanation} for c in diff]),
                     hide_index=True, width="stretch")


def _picked(context: tuple) -> Optional[tuple[str, str]]:
    """The clicked node, if it was clicked in these plans; a click in another query, source or
    plan version is forgotten (the panel never shows a node nobody clicked here)."""
    picked = st.session_state.get(state.PLAN_SELECTED)
    if not picked or len(picked) != 3 or tuple(picked[2]) != context:
        st.session_state.pop(state.PLAN_SELECTED, None)
        return None
    return picked[0], picked[1]


def _decided_here(view: QueryView, versions: list, index: int) -> None:
    """The adaptive reads and joins AQE decided in this plan version, each with its decision trace."""
    first = read_versions(versions)
    here = [s for s in view.shuffles if s.trace and first.get(s.stage_id) == index + 1]
    joins = [i for i, v in sorted(join_versions(view).items()) if v == index + 1]
    if not here and not joins:
        return
    st.subheader(f"Decided in plan version {index + 1}")
    for s in here:
        decision_trace(s.trace, title=md_text(s.label))
    for i in joins:
        # "Inner join on k = k: SortMergeJoin: why..." -> its join and strategy
        named = ": ".join(view.join_decisions[i].split(": ")[:2]) if i < len(view.join_decisions) else ""
        decision_trace(view.join_traces[i], title=md_text(f"Join: {named[:120]}" if named else "Join"))


def _metric_list(rows: list[dict], node, source_kind: str) -> None:
    """The node's metrics that have a value (a list, not a table: the panel is narrow and the
    values are long); how many have none, and why, instead of empty values."""
    exact = {m.get("name") for m in (node.metrics if node is not None else []) if m.get("source") == "capture"}
    shown = [m for m in rows if m["value"]]
    if shown:
        st.markdown("\n".join(f"- {md_text(m['name'])}: **{md_text(' '.join(str(m['value']).split()))}**"
                               + (" (exact: the capture's partition specs)" if m["name"] in exact else "")
                               for m in shown))
    if len(rows) > len(shown):
        n = len(rows) - len(shown)
        why = (": a capture records the names of a plan's metrics, not Spark's values" if source_kind == "capture"
               else ": Spark reported none")
        st.caption(f"{n} metric{'s' if n != 1 else ''} without a value{why} "
                   f"({md_text(', '.join(m['name'] for m in rows if not m['value']), 200)}).")


def _node_details(view: QueryView, earlier, later, picked: tuple[str, str], times: NodeTimes, final: bool) -> None:
    """The clicked node's name, description, stage and metrics, beside the plans; a read's
    stage names its slowest task (index and task id, as the stage page of Spark's UI lists them)."""
    which, path = picked
    plan = earlier if which == "initial" else later
    det = node_details(plan, path) if plan is not None else None
    if det:
        with st.container(border=True, key="node-details"):
            st.markdown(f"**{md_text(det['name'])}** ({which} plan, node {det['id'] if det['id'] is not None else '-'})")
            st.code(det["description"] or det["name"], language=None)
            node = node_at(plan, path) if which == "final" else None
            t = times.of(node) if node is not None and times else None
            if t is not None:
                st.markdown(md_text(stage_sentence(t, node)), help=STAGE_HELP)
            clicked = node_at(plan, path) if plan is not None else None
            _metric_list(det["metrics"], clicked, view.source_kind)
            traced = node_trace(view, plan, clicked, final and which != "initial") if clicked is not None else None
            if traced is not None:
                decision_trace(traced[1], title=traced[0])
