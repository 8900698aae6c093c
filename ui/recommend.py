"""A skewed read's fix on the Partitions page: the setting that splits it, with the lines to apply
it and what the replay predicts for the whole query (exact sources)."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from aqe_core.engine.recommend import Fix, recommend
from aqe_core.model.evidence import Evidence
from aqe_core.plain_text import md_text
from aqe_core.views.query import QueryView
from ui.figure_cache import cached_figure


def fixes_for(view: QueryView) -> list[Fix]:
    m = view.model
    if m is None or m.raw is None or m.evidence is not Evidence.EXACT:
        return []
    capture, index = m.raw
    q = next((x for x in capture.queries if x.index == index), None)
    return cached_figure(view, ("recommend",), lambda: recommend(capture, q)) if q is not None else []


def fix_box(fixes: list[Fix], stage_id: Optional[int]) -> None:
    for f in fixes:
        if f.stage_id != stage_id:
            continue
        with st.container(border=True, key=f"fix-{stage_id}"):
            st.markdown(f"**Fix: {md_text(f.finding)}** ({md_text(f.why)})")
            st.code("\n".join(f.conf_lines()), language=None)
            st.caption("Predicted by replaying the captured statistics: " + md_text("; ".join(f.effects)))
