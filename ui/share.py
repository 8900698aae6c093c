"""The Share page's pieces: the self-contained HTML report and the view state a link reopens."""
from __future__ import annotations

import json
from typing import Optional
from urllib.parse import urlsplit

import streamlit as st
import streamlit.components.v1 as components

from aqe_core.views.query import QueryView
from aqe_core.advise.whatif import compare_presets
from aqe_core.figures.histograms import partition_figure
from aqe_core.report import build_report
from aqe_core.opening import LoadedSource
from aqe_core.advise.releases import compare_releases
from ui import state
from ui.plans import plan_figures_for
from ui.hot_keys import hot_key_report_entries
from ui.query_groups import groups_of
from ui.recommend import fixes_for


def report_html(src: LoadedSource, view: QueryView, presets: list) -> str:
    """The report of this query: plans, partition charts and the presets' comparison."""
    outcomes = compare_presets(view, presets)
    plans, changes = plan_figures_for(view)
    hists = [(s.label, partition_figure(s)) for s in view.shuffles if s.sizes_before or s.sizes_after]
    return build_report(view, source_label=src.label, plan_figures=plans, histogram_figures=hists,
                        comparison=outcomes, plan_changes=changes, releases=compare_releases(view),
                        fixes=fixes_for(view), hot_keys=hot_key_report_entries(src, view),
                        query_group=next((g for g in groups_of(src) if view.query_id in g.execution_ids), None))


def view_state(src: LoadedSource, view: QueryView, chosen: list) -> dict:
    """What a ``?report=`` link restores: the source, the query, the presets and the what-if."""
    return {"source": st.session_state.get(state.SOURCE_REF) or {"kind": "path", "path": src.path},
            "query_id": view.query_id, "presets": chosen,
            "overrides": st.session_state.get(state.WHATIF_OVERRIDES, {})}


def share_link(app_url: Optional[str], rid: str, base_path: str = "") -> str:
    """The address a ``?report=`` link has: this app's root as the browser reaches it (scheme,
    host, port and the server's base path; the link opens on the Overview).

    >>> share_link("http://lens.example:8502/share?q=3", "abc")
    'http://lens.example:8502/?report=abc'
    >>> share_link("https://spark.example/tools/lens/share", "abc", "tools/lens")
    'https://spark.example/tools/lens/?report=abc'
    """
    parts = urlsplit(app_url or "")
    root = "/" + base_path.strip("/") + "/" if base_path.strip("/") else "/"
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
    return f"{origin}{root}?report={rid}"


def copy_to_clipboard(text: str) -> None:
    """Put ``text`` on the user's clipboard from the browser (the code block above also has a
    copy button, for browsers that refuse a script's write)."""
    # the app's own document holds the focus (the click was there): write through it
    components.html("<script>(function(t){var n=(window.parent||window).navigator;"
                    "if(n.clipboard){n.clipboard.writeText(t).catch(function(){});}})"
                    f"({json.dumps(text)});</script>", height=0)
