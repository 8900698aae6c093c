"""Share: a self-contained HTML report, and a link that reopens this view."""
import streamlit as st

from aqe_core.plain_text import md_text
from aqe_core.user_presets import all_presets
from aqe_core.share import ShareError, save_view_state
from ui import frame, state
from ui.share import copy_to_clipboard, report_html, share_link, view_state

src, view = frame.current()
st.title("Share")
if view is None:
    st.stop()
chosen = st.session_state.get(state.COMPARE_PRESETS, state.DEFAULT_COMPARE_PRESETS)
presets = [p for p in all_presets() if p.name in chosen]
st.download_button("Download report", data=lambda: report_html(src, view, presets),
                   file_name=f"aqe-lens-query-{view.query_id}.html",
                   mime="text/html", key="download_report", on_click="ignore")
if st.button("Copy link", key="copy_link"):
    try:
        rid = save_view_state(view_state(src, view, chosen))
        st.session_state[state.SHARE_ID] = rid
    except ShareError as exc:
        st.error(md_text(exc))
if st.session_state.get(state.SHARE_ID):
    link = share_link(st.context.url, st.session_state[state.SHARE_ID], st.get_option("server.baseUrlPath") or "")
    st.write("Anyone who can reach this app can open this view with this link (copied to your clipboard):")
    st.code(link, language=None)
    copy_to_clipboard(link)
