"""Partitions: a bar per partition (or a histogram of many) with AQE's own lines, per shuffle."""
import pandas as pd
import streamlit as st

from ui import frame
from ui.figure_cache import cached_figure
from ui.hot_keys import hot_keys_box
from ui.recommend import fix_box, fixes_for, other_fixes
from ui.trace import decision_trace
from ui.plans import STAGE_HELP
from aqe_core.views.plan_stages import stage_sentence
from aqe_core.plain_text import md_text
from aqe_core.views.query import single_partition_sentence
from aqe_core.figures.histograms import BAR_LIMIT, CHARTS, partition_figure

src, view = frame.current()
st.title("Partitions")
if view is None:
    st.stop()
frame.approx_note(view)
shuffles = [s for s in view.shuffles if s.sizes_before or s.sizes_after]
if not shuffles:
    st.info("This query has no adaptive shuffle read with partition sizes."
            + (f" {md_text(single_partition_sentence(view.single_partition_exchanges))}."
               if view.single_partition_exchanges else ""))
    st.stop()
c1, c2, c3 = st.columns(3)
log_scale = c1.toggle("Log scale", value=True, key="hist_log")
chart = c3.segmented_control("Chart", list(CHARTS), default="auto", key="hist_chart",
                             help=f"auto: a bar per partition up to {BAR_LIMIT} partitions, else a histogram;"
                                  " in order: reducer order before AQE, read order after; by size: largest first")
which = c2.segmented_control("Sizes", ["auto", "both", "before", "after"], default="auto", key="hist_which",
                             help="before AQE (reducer sizes, exact sources only), after AQE (as read), or both")
fixes = fixes_for(view)
fixed: set = set()
for s in shuffles:
    with st.container(border=True, key=f"shuffle-{s.key}"):
        st.markdown(f"**{md_text(s.label)}**")
        if not s.adaptive_read and s.reasons:  # why AQE left this shuffle alone, in the log's numbers
            st.caption(md_text(s.reasons[0].message))
        if s.approx_reason and not s.exact:
            st.caption(f"Approximate: {md_text(s.approx_reason)}")
        if s.task_time is not None:
            st.caption(md_text(stage_sentence(s.task_time, None)), help=STAGE_HELP)
        fig = cached_figure(s, ("partitions", which or "auto", chart or "auto", log_scale),
                            lambda: partition_figure(s, which=which or "auto", log=log_scale, chart=chart or "auto"))
        st.plotly_chart(fig, key=f"h-{s.key}", theme=None)
        if s.trace:
            decision_trace(s.trace)
        fix_box(view, fixes, s.stage_id, fixed)
        hot_keys_box(src, view, s)
        with st.expander("Lines, skewed partitions and reasons"):
            st.dataframe(pd.DataFrame([{"line": ln.kind, "bytes": ln.value, "meaning": ln.label,
                                        "settings": ", ".join(ln.config_keys)} for ln in s.lines]),
                         hide_index=True, width="stretch")
            if s.skew_rows:
                st.dataframe(pd.DataFrame([r.to_dict() for r in s.skew_rows]), hide_index=True, width="stretch")
            for r in s.reasons:
                st.write(md_text(r.message))
other_fixes(view, fixes, {s.stage_id for s in shuffles})
