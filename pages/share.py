"""Share: a self-contained HTML report, and a link that reopens this view."""
import streamlit as st

import lens_ui
from aqe_core.plain_text import md_text
from aqe_core.compare import compare_presets
from aqe_core.histograms import histogram_figure
from aqe_core.presets import all_presets
from aqe_core.report import build_report
from aqe_core.share import ShareError, save_view_state

src, view = lens_ui.current()
st.title("Share")
if view is None:
    st.stop()
chosen = st.session_state.get("compare_presets", ["actual", "spark-3.0.1-defaults", "spark-4.x-defaults"])
presets = [p for p in all_presets() if p.name in chosen]


def _report() -> str:
    from lens_ui import plan_figures_for

    outcomes = compare_presets(view, presets)
    plans, changes = plan_figures_for(view)
    hists = [(s.label, histogram_figure(s)) for s in view.shuffles if s.sizes_before or s.sizes_after]
    return build_report(view, source_label=src.label, plan_figures=plans, histogram_figures=hists,
                        comparison=outcomes, plan_changes=changes)


st.download_button("Download report", data=_report, file_name=f"aqe-lens-query-{view.query_id}.html",
                   mime="text/html", key="download_report", on_click="ignore")
if st.button("Copy link", key="copy_link"):
    state = {"source": st.session_state.get("source_ref") or {"kind": "path", "path": src.path},
             "query_id": view.query_id, "presets": chosen,
             "overrides": st.session_state.get("whatif_overrides", {})}
    try:
        rid = save_view_state(state)
        st.session_state["share_id"] = rid
    except ShareError as exc:
        st.error(md_text(exc))
if st.session_state.get("share_id"):
    rid = st.session_state["share_id"]
    st.write("Anyone who can reach this app can open this view with:")
    st.code(f"?report={rid}", language=None)
    st.caption(md_text("Append it to the app's address, e.g. http://<host>:8501/?report=" + rid))
