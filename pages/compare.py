"""Compare presets: what AQE would do under two to four configurations, side by side."""
import streamlit as st

from aqe_core.advise.whatif import compare_presets
from aqe_core.plain_text import md_text
from aqe_core.model.presets import BUILTIN_PRESETS
from aqe_core.user_presets import load_user_presets
from ui.tables import text_table
from ui import frame, state
from ui.compare import preset_charts, save_preset_form
from ui.releases import releases_section
from ui.rerun import rerun_for_real

src, view = frame.current()
st.title("Compare presets")
if view is None:
    st.stop()
user = load_user_presets()
if user.problem:
    st.warning(md_text(user.problem))
presets = BUILTIN_PRESETS + user.presets
names = [p.name for p in presets]
default = [n for n in st.session_state.get(state.COMPARE_PRESETS, state.DEFAULT_COMPARE_PRESETS) if n in names]
chosen = st.multiselect("Presets (2 to 4)", names, default=default[:4], max_selections=4, key="compare_pick",
                        help=md_text("; ".join(f"{p.name}: {p.description}" for p in presets)))
st.session_state[state.COMPARE_PRESETS] = chosen
if len(chosen) < 2:
    st.info("Pick at least two presets.")
    st.stop()
outcomes = compare_presets(view, [p for p in presets if p.name in chosen])
with st.container(key="comparison-table"):
    st.dataframe(text_table([o.summary_row() for o in outcomes]), hide_index=True, width="stretch")
for o in outcomes:
    st.caption(md_text(f"{o.preset}: {o.note}"))
charts = preset_charts(view, outcomes)
cols = st.columns(len(outcomes), border=True)
for col, o, figs in zip(cols, outcomes, charts):
    with col:
        st.markdown(f"**{md_text(o.preset)}** (Spark {md_text(o.spark_version)})")
        st.metric("Partitions after AQE", o.partitions_after)
        for s, fig in zip(o.shuffles[:4], figs):
            st.plotly_chart(fig, key=f"cmp-{o.preset}-{s.key}", theme=None)
if view.source_kind == "capture" and src.kind == "capture":  # a listener log has no query text to re-run
    rerun_for_real(src, view, [p for p in presets if p.name in chosen], outcomes)
with st.expander("Save a preset of your own"):
    save_preset_form(view)
releases_section(view)
