"""Plan graphs: query-stage boxes, layered layout, AQE plan diff, plotly figure. Pure Python
(no Streamlit).

    from aqe_core.plan_graph import diff_plans, plan_figure
    d = diff_plans(ex.initial_plan, ex.final_plan)          # iterable of Change
    fig = plan_figure(ex.plan_with_values(ex.final_plan), changes=d, title="Final plan")
    st.plotly_chart(fig, on_select="rerun", selection_mode="points", key="plan", theme=None,
                    config={"scrollZoom": True})           # points[*]["customdata"] = box key
    fig.to_html(include_plotlyjs=True, full_html=False)      # the report

Path ids (``"0"``, ``"0.1.0"``) address nodes of the unfolded plan tree; they key the operator
boxes (``customdata``) and ``Change.path``; a collapsed query stage is ``"stage:<path>"``.

A facade since issue 9: the diff lives in :mod:`aqe_core.views.plan_diff` (matching in
:mod:`aqe_core.views.plan_match`), the boxes in :mod:`aqe_core.figures.plan_blocks`, their
layout in :mod:`aqe_core.figures.layered_layout`, paths and labels in
:mod:`aqe_core.figures.plan_paths`, the figure in :mod:`aqe_core.figures.plan_figure` (hover in
:mod:`aqe_core.figures.plan_hover`), the synthetic plans in :mod:`aqe_core.figures.synthetic`.
Issue 23 replaced the tidy tree (``layout_plan``, ``tidy_x``) and the zoom helpers (the figure
takes ``focus=``).
"""
# compat shim (issue 9): the documented facade
from aqe_core.views.plan_diff import (
    CHANGE_KINDS, COALESCED_AND_SKEWED, COALESCED_READ, EMPTY_PRUNED, JOIN_CHANGED, LOCAL_READ, NEW_NODE, REMOVED,
    SHUFFLE_READ, SKEW_JOIN, SKEWED_READ, SMJ_TO_BROADCAST, SMJ_TO_SHUFFLED_HASH, Change, PlanDiff, classify_node,
    diff_execution, diff_plans, diff_versions,
)
from aqe_core.figures.layered_layout import BoxLayout, layered_layout
from aqe_core.figures.plan_blocks import Box, BoxGraph, box_graph, split_blocks
from aqe_core.figures.plan_figure import (
    CHANGE_STYLES, KIND_COLORS, NODE_KINDS, format_bytes, format_metric, format_ms, node_details, node_kind,
    plan_figure, plan_search,
)
from aqe_core.figures.plan_paths import CrossLink, iter_paths, node_at, short_label

__all__ = [
    "box_graph", "split_blocks", "Box", "BoxGraph", "layered_layout", "BoxLayout",
    "CrossLink", "iter_paths", "node_at", "short_label",
    "diff_plans", "diff_versions", "diff_execution", "classify_node", "Change", "PlanDiff", "CHANGE_KINDS",
    "SMJ_TO_BROADCAST", "SMJ_TO_SHUFFLED_HASH", "JOIN_CHANGED", "SKEW_JOIN", "COALESCED_AND_SKEWED", "SKEWED_READ",
    "COALESCED_READ", "LOCAL_READ", "SHUFFLE_READ", "EMPTY_PRUNED", "NEW_NODE", "REMOVED",
    "plan_figure", "plan_search", "node_details", "node_kind",
    "format_metric", "format_bytes", "format_ms", "NODE_KINDS", "KIND_COLORS", "CHANGE_STYLES",
]
