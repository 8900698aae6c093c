"""AQE Lens: Streamlit entry point (``streamlit run app.py``).

The frame: page config and navigation over the page scripts in ``pages/``. Each page draws the
sidebar source and query picker of :mod:`ui.frame` first (Streamlit runs a page script without
this file while a ``pages/`` folder exists, see :mod:`ui.frame`). All logic lives in ``aqe_core``.

This file is read twice. ``streamlit run app.py`` first imports it as a module (``__name__`` is
"app"): it finds ``app``, an ``st.App`` serving this same file behind
:class:`ui.host_guard.HostGuard` (requests for other host names refused, from the first one on).
Every page run then executes it as ``__main__`` and draws the frame.
"""
from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent

if __name__ != "__main__":  # imported by `streamlit run`: the web server, not a page run
    from starlette.middleware import Middleware

    from ui.host_guard import HostGuard

    app = st.App(HERE / "app.py", middleware=[Middleware(HostGuard)])
else:
    from ui import state

    # an emoji favicon is an inline data: URL; a ":material/...:" one is fetched from a font CDN by every viewer
    st.set_page_config(page_title="AQE Lens", layout="wide", page_icon="📊")

    _PAGES = [  # (file in pages/, title, icon, url path)
        ("overview.py", "Overview", ":material/home:", "overview"),
        ("plans.py", "Plans", ":material/account_tree:", "plans"),
        ("partitions.py", "Partitions", ":material/bar_chart:", "partitions"),
        ("whatif.py", "What-if", ":material/tune:", "whatif"),
        ("compare.py", "Compare presets", ":material/compare:", "compare"),
        ("runs.py", "Compare runs", ":material/difference:", "runs"),
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
