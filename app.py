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

_PAGES = [  # (file in pages/, title, icon, url path)
    ("overview.py", "Overview", ":material/home:", "overview"),
    ("plans.py", "Plans", ":material/account_tree:", "plans"),
    ("partitions.py", "Partitions", ":material/bar_chart:", "partitions"),
    ("whatif.py", "What-if", ":material/tune:", "whatif"),
    ("compare.py", "Compare presets", ":material/compare:", "compare"),
    ("run.py", "Run", ":material/play_arrow:", "run"),
    ("fleet.py", "Fleet", ":material/dataset:", "fleet"),
    ("share.py", "Share", ":material/share:", "share"),
]
PAGES = {f: st.Page(str(HERE / "pages" / f), title=t, icon=i, url_path=u, default=f == "overview.py")
         for f, t, i, u in _PAGES}
st.session_state[state.NAVIGATION] = True  # pages check this (see ui.frame.ensure_navigation)
nav = st.navigation(list(PAGES.values()))
_target = PAGES.get(st.session_state.pop(state.NAV_TARGET, None) or "")
if _target is not None:  # a page opened by URL before navigation was set up: open it now
    st.switch_page(_target)
nav.run()
