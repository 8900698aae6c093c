"""Share: a self-contained HTML report, and a link that reopens this view."""
import streamlit as st

from ui import frame, state
from ui.plans import plan_figures_for
from aqe_core.plain_text import md_text
from aqe_core.compare import compare_presets
from aqe_core.histograms import histogram_figure
from aqe_core.presets import all_presets
from aqe_core.report import build_report
from aqe_core.share import ShareError, save_view_state

src, view = frame.current()
st.title("Share")
if view is None:
    st.stop()
chosen = st.session_state.get(state.COMPARE_PRESETS, state.DEFAULT_COMPARE_PRESETS)
presets = [p for p in all_presets() if p.name in chosen]


def _report() -> str:
    outcomes = compare_presets(view, presets)
    plans, changes = plan_figures_for(view)
    hists = [(s.label, histogram_figure(s)) for s in view.shuffles if s.sizes_before or s.sizes_after]
    return build_report(view, source_label=src.label, plan_figures=plans, histogram_figures=hists,
                        comparison=outcomes, plan_changes=changes)


st.download_button("Download report", data=_report, file_name=f"aqe-lens-query-{view.query_id}.html",
                   mime="text/html", key="download_report", on_click="ignore")
if st.button("Copy link", key="copy_link"):
    shared = {"source": st.session_state.get(state.SOURCE_REF) or {"kind": "path", "path": src.path},
             "query_id": view.query_id, "presets": chosen,
             "overrides": st.session_state.get(state.WHATIF_OVERRIDES, {})}
    try:
        rid = save_view_state(shared)
        st.session_state[state.SHARE_ID] = rid
    except ShareError as exc:
        st.error(md_text(exc))
if st.session_state.get(state.SHARE_ID):
    rid = st.session_state[state.SHARE_ID]
    st.write("Anyone who can reach this app can open this view with:")
    st.code(f"?report={rid}", language=None)
    st.caption(md_text("Append it to the app's address, e.g. http://<host>:8501/?report=" + rid))
