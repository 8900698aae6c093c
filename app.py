"""AQE Lens: Streamlit entry point (``streamlit run app.py``).

The frame: page config and navigation over the page scripts in ``pages/``. Each page draws the
sidebar source and query picker of :mod:`ui.frame` first (Streamlit runs a page script without
this file while a ``pages/`` folder exists, see :mod:`ui.frame`). All logic lives in ``aqe_core``.
"""
from pathlib import Path

import streamlit as st

from ui import state

HERE = Path(__file__).resolve().parent

# an emoji favicon is an inline data: URL; a ":material/...:" one is fetched from a font CDN by every viewer
st.set_page_config(page_title="AQE Lens", layout="wide", page_icon="📊")

PAGES = [
    st.Page(str(HERE / "pages" / "overview.py"), title="Overview", icon=":material/home:", url_path="overview", default=True),
    st.Page(str(HERE / "pages" / "plans.py"), title="Plans", icon=":material/account_tree:", url_path="plans"),
    st.Page(str(HERE / "pages" / "partitions.py"), title="Partitions", icon=":material/bar_chart:", url_path="partitions"),
    st.Page(str(HERE / "pages" / "whatif.py"), title="What-if", icon=":material/tune:", url_path="whatif"),
    st.Page(str(HERE / "pages" / "compare.py"), title="Compare presets", icon=":material/compare:", url_path="compare"),
    st.Page(str(HERE / "pages" / "run.py"), title="Run", icon=":material/play_arrow:", url_path="run"),
    st.Page(str(HERE / "pages" / "share.py"), title="Share", icon=":material/share:", url_path="share"),
]
st.session_state[state.NAVIGATION] = True  # pages check this (see ui.frame.ensure_navigation)
st.navigation(PAGES).run()
