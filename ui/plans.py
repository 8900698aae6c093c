"""The Plans page's view: initial and chosen plan version side by side, AQE's changes marked,
a click on a node opens its details; and the plan figures the HTML report embeds."""
from __future__ import annotations

from typing import Optional


import pandas as pd
import streamlit as st

from aqe_core.views.query import QueryView
from aqe_core.figures.plan_figure import AUTO_EXPAND, VIEW_PX, drawn_operators
from aqe_core.figures.plan_search import plan_search
from aqe_core.figures.plan_map import plan_map_data
from aqe_core.figures.plan_numbers import box_numbers
from aqe_core.plain_text import md_text
from aqe_core.views.plan_diff import diff_plans
from aqe_core.views.plan_stages import NodeTimes, plan_stage_times, stage_sentence
from aqe_core.views.plan_text import plan_text_lines
from aqe_core.views.plan_timeline import join_versions, node_trace, plan_timeline, read_versions
from ui import state
from ui.figure_cache import cached_figure
from ui.plan_map import plan_map
from ui.trace import decision_trace

STAGE_HELP = ("From the log's task events (Spark's own metric): task duration is Finish Time - Launch Time of "
               "the successful attempt; the Spark UI's stage page lists the same task by its index and id.")


#: what the plan boxes stand for: chosen by the plan's size, or forced
BOX_MODES = {"Query stages": "stages", "Operators": "operators"}
#: both plans side by side when each fits its default view whole (half a wide page)
SIDE_BY_SIDE_PX = VIEW_PX


def expansion(plan, mode: str, opened: set) -> object:
    """The ``expanded`` argument of :func:`plan_figure` for a box mode and the stages clicked open."""
    if mode == "operators":
        return "all"
    if mode == "auto" and drawn_operators(plan) <= AUTO_EXPAND:
        return "all"
    return tuple(sorted(opened))


def plan_figures_for(view: QueryView):
    """(title, plan map data) for the initial and final plans, and the rows of the AQE-change
    table: the report's plans, drawn as the Plans page opens them."""
    figs, rows = [], []
    diff = diff_plans(view.initial_plan, view.final_plan) if view.final_plan is not None else None
    if view.initial_plan is not None:
        figs.append(("Initial plan", plan_map_data(view.initial_plan, changes=diff, change_side="before",
                                                   title="Initial plan", numbers=box_numbers(),
                                                   text=plan_text_rows(view.initial_plan, view.spark_version))))
    if view.final_plan is not None:
        times = plan_stage_times(view, view.final_plan)
        figs.append(("Final plan", plan_map_data(view.final_plan, changes=diff, title="Final plan",
                                                 numbers=box_numbers(times), facts=_stage_facts(times),
                                                 stage_ms=times.stage_ms if times else None,
                                                 text=plan_text_rows(view.final_plan, view.spark_version))))
        rows = diff.table()
    return figs, rows


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


def plan_page(view: QueryView, version_index: int, search: str, source_path: str = "", mode: str = "auto") -> None:
    """Initial plan and plan version ``version_index`` as maps, AQE changes marked: side by side
    when both fit half the page at full size, else one above the other. A click on a node opens
    its details beside it in the browser (no re-run, the plans keep their size); opening a query
    stage's operators re-draws that plan."""
    versions = view.plan_versions or [view.final_plan]
    index = max(0, min(version_index, len(versions) - 1))
    later = versions[index]
    earlier = view.initial_plan
    diff = cached_figure(view, ("diff", index), lambda: diff_plans(earlier, later) if later is not None else None)
    hits = plan_search(later, search) if (search and later is not None) else []
    context = (source_path, view.query_id, version_index)
    times = plan_stage_times(view, later)
    maps = []
    if earlier is not None:
        exp = expansion(earlier, mode, _opened(context, "initial"))
        early_hits = plan_search(earlier, search) if search else []
        maps.append(("initial", cached_figure(view, ("map-initial", index, search, exp), lambda: plan_map_data(
            earlier, changes=diff, change_side="before", title="Initial plan", expanded=exp, highlight=early_hits or None,
            numbers=box_numbers(), text=plan_text_rows(earlier, view.spark_version), source_kind=view.source_kind))))
    if later is not None:
        title = "Final plan" if later is versions[-1] else f"Plan version {index + 1} of {len(versions)}"
        exp = expansion(later, mode, _opened(context, "final"))
        maps.append(("final", cached_figure(view, ("map-later", index, search, exp), lambda: plan_map_data(
            later, changes=diff, title=title, expanded=exp, highlight=hits or None, numbers=box_numbers(times),
            facts=_stage_facts(times, view, later, later is versions[-1]), text=plan_text_rows(later, view.spark_version),
            source_kind=view.source_kind, stage_ms=times.stage_ms if times else None))))
    side_by_side = len(maps) == 2 and all(m["layouts"][0]["width"] <= SIDE_BY_SIDE_PX for _s, m in maps)
    cols = st.columns(2, border=True) if side_by_side else [st.container(border=True) for _ in maps]
    if earlier is None:
        st.info("The source has no initial plan for this query.")
    for (side, data), col in zip(maps, cols):
        with col:
            plan_map(data, f"plan-map-{side}", on_expand=_opened(context, side).add)
    if search:
        st.caption(f"{len(hits)} node(s) match '{md_text(search)}'" + (" (ringed; the view moves to the first)" if hits else ""))
    _decided_here(view, versions, index)
    if diff is not None and len(diff):
        st.subheader("What AQE changed")
        st.dataframe(pd.DataFrame([{"kind": c.kind, "node": c.node_name, "what": c.explanation} for c in diff]),
                     hide_index=True, width="stretch")


def plan_text_rows(plan, release) -> list[dict]:
    """The plan text beside a map: each line as Spark prints it, with its node's path (Spark 3.0
    printed no Final / Current Plan headers)."""
    sections = not str(release).startswith("3.0")
    return [{"text": ln.text, "path": ln.path} for ln in plan_text_lines(plan, sections=sections)]


def plan_versions_table(view: QueryView) -> pd.DataFrame:
    """What each re-plan followed and changed, once per query (0.5 s on a 12-version 300-node plan)."""
    versions = view.plan_versions or [view.initial_plan]
    return cached_figure(view, ("plan-timeline",), lambda: pd.DataFrame(
        [x.to_dict() for x in plan_timeline(view.initial_plan, versions)]))


def _stage_facts(times: NodeTimes, view: Optional[QueryView] = None, plan=None, final: bool = False):
    """A node's details beyond its metrics: its stage, from the log's task events (Spark's own
    metric), and for a read or join AQE decided on, its decision trace as text."""
    def facts(node) -> list[str]:
        t = times.of(node) if times else None
        out = [stage_sentence(t, node) + " (task events: Spark's own metric)"] if t is not None else []
        traced = node_trace(view, plan, node, final) if view is not None and plan is not None else None
        if traced is not None:
            out.append(traced[0])
            for rt in traced[1]:
                out.append(f"{rt.rule}: {rt.verdict}")
                out += [f"  {c.result}: {c.condition}" + (f" ({c.detail})" if c.detail else "") for c in rt.checks]
        return out
    return facts


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


