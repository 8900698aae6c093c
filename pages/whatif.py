"""What-if: change any AQE setting and see the lines and decisions move, instantly."""
import pandas as pd
import streamlit as st

from aqe_core.views.compare import skew_sentence, whatif
from aqe_core.plain_text import md_text
from ui.tables import text_table
from ui import frame, state
from ui.whatif import line_changes, reads_moved, settings_form, whatif_charts

src, view = frame.current()
st.title("What-if")
if view is None:
    st.stop()
frame.approx_note(view)
form, results = st.columns([1, 2], gap="large")
with form:
    st.caption(f"Settings of Spark {view.spark_version}, starting from the query's own values; results follow"
               " each change (our rules only). Hover a field for its full key.")
    overrides = settings_form(view, dict(st.session_state.get(state.WHATIF_OVERRIDES, {})))
    st.session_state[state.WHATIF_OVERRIDES] = overrides
answer = whatif(view, overrides)  # lines and decisions from one engine call
with results:
    for e in answer.errors:
        st.error(md_text(e))
    if answer.outcomes:
        st.write("Changed: " + (", ".join(md_text(f"{k}={v}") for k, v in overrides.items()) or "nothing yet"))
        with st.container(key="whatif-decisions"):
            st.dataframe(text_table([o.summary_row() for o in answer.outcomes]), hide_index=True, width="stretch")
            st.caption(md_text(answer.note))
    moved, alone = reads_moved(view, answer, overrides)
    if not overrides:
        st.info("Change a setting: the reads it moves are drawn here, the partitions our rules predict"
                " beside the run. The Partitions page draws every read as run.")
    for before, after in moved:
        with st.container(border=True):
            st.markdown(f"**{md_text(after.label)}**")
            st.dataframe(pd.DataFrame(line_changes(before, after)), hide_index=True, width="stretch")
            st.write(md_text(skew_sentence(before, after)))
            for row in after.skew_rows[:5]:  # each skewed partition, split or why not, in the rules' words
                st.caption(md_text(str(row.explanation)))
            for k, fig in enumerate(whatif_charts(before, answer.predicted(after))):
                st.plotly_chart(fig, key=f"wi-h-{after.key}-{k}", theme=None)
    if alone:
        with st.expander(f"{len(alone)} read{'s' if len(alone) != 1 else ''} "
                         + ("as run" if not overrides else "these settings leave as they are")):
            # one table for them all: a table per read cost the browser a grid each (25 on a big query)
            st.dataframe(pd.DataFrame([{"read": after.label, **row} for before, after in alone
                                       for row in line_changes(before, after)]), hide_index=True, width="stretch")
            st.markdown("\n".join(f"- {md_text(after.label)}: {md_text(skew_sentence(before, after))}"
                                   for before, after in alone))
