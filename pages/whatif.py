"""What-if: change any AQE setting and see the lines and decisions move, instantly."""
import pandas as pd
import streamlit as st

from ui import frame, state
from aqe_core.config import ADAPTIVE_PREFIX, AUTO_BROADCASTJOIN_THRESHOLD, SHUFFLE_PARTITIONS
from aqe_core.plain_text import md_text
from aqe_core.compare import compare_presets, whatif_view
from aqe_core.presets import Preset, get_preset
from aqe_core.histograms import histogram_figure

src, view = frame.current()
st.title("What-if")
if view is None:
    st.stop()
frame.approx_note(view)
conf = view.conf
overrides: dict = dict(st.session_state.get(state.WHATIF_OVERRIDES, {}))
st.caption(f"Settings of Spark {view.spark_version}, starting from the query's own values. Changes re-run our rules only.")
with st.form("whatif"):
    cols = st.columns(2)
    new: dict = {}
    for i, (key, entry) in enumerate(sorted(conf.keys.items())):
        if not key.startswith(ADAPTIVE_PREFIX) and key not in (SHUFFLE_PARTITIONS, AUTO_BROADCASTJOIN_THRESHOLD):
            continue
        current = overrides.get(key, conf.raw(key))
        val = cols[i % 2].text_input(key.replace(ADAPTIVE_PREFIX, "…"), value="" if current is None else str(current),
                                     help=f"{key}: {entry.doc}", key=f"wi-{key}")
        if val.strip() != ("" if conf.raw(key) is None else str(conf.raw(key))):
            if val.strip():
                new[key] = val.strip()
    submitted = st.form_submit_button("Simulate")
if submitted:
    st.session_state[state.WHATIF_OVERRIDES] = new
    overrides = new
new_view, errors = whatif_view(view, overrides)
for e in errors:
    st.error(md_text(e))
if overrides and not errors:
    st.write("Changed: " + ", ".join(md_text(f"{k}={v}") for k, v in overrides.items()))
    outcomes = compare_presets(view, [get_preset("actual"), Preset("what-if", "your settings", dict(overrides))])
    with st.container(key="whatif-decisions"):
        st.dataframe(pd.DataFrame([o.summary_row() for o in outcomes]), hide_index=True, width="stretch")
        st.caption(md_text(outcomes[1].note))
for before, after in zip(view.shuffles, new_view.shuffles):
    if not (after.sizes_before or after.sizes_after):
        continue
    with st.container(border=True):
        st.markdown(f"**{md_text(after.label)}**")
        diff = []
        old_lines = {ln.kind: ln.value for ln in before.lines}
        for ln in after.lines:
            diff.append({"line": ln.kind, "as run": old_lines.get(ln.kind), "what-if": ln.value,
                         "changed": "yes" if old_lines.get(ln.kind) != ln.value else ""})
        st.dataframe(pd.DataFrame(diff), hide_index=True, width="stretch")
        st.write(f"Skewed partitions: {len(before.skew_rows)} as run, {len(after.skew_rows)} under the what-if")
        st.plotly_chart(histogram_figure(after), key=f"wi-h-{after.key}", theme=None)
