"""The Share page's pieces: the self-contained HTML report and the view state a link reopens."""
from __future__ import annotations

import streamlit as st

from aqe_core.views.query import QueryView
from aqe_core.views.compare import compare_presets
from aqe_core.figures.histograms import histogram_figure
from aqe_core.report import build_report
from aqe_core.sources import LoadedSource
from ui import state
from ui.plans import plan_figures_for


def report_html(src: LoadedSource, view: QueryView, presets: list) -> str:
    """The report of this query: plans, histograms and the presets' comparison."""
    outcomes = compare_presets(view, presets)
    plans, changes = plan_figures_for(view)
    hists = [(s.label, histogram_figure(s)) for s in view.shuffles if s.sizes_before or s.sizes_after]
    return build_report(view, source_label=src.label, plan_figures=plans, histogram_figures=hists,
                        comparison=outcomes, plan_changes=changes)


def view_state(src: LoadedSource, view: QueryView, chosen: list) -> dict:
    """What a ``?report=`` link restores: the source, the query, the presets and the what-if."""
    return {"source": st.session_state.get(state.SOURCE_REF) or {"kind": "path", "path": src.path},
            "query_id": view.query_id, "presets": chosen,
            "overrides": st.session_state.get(state.WHATIF_OVERRIDES, {})}
