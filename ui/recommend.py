"""A read's (or join's) fix on the Partitions page: the smallest setting change that reaches the
goal, with the lines to apply it, the predicted histograms next to today's, what else it
changes in the query and in the application, alternatives and per-query hints (exact sources)."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from aqe_core.advise.fix_estimate import NO_CORES
from aqe_core.advise.fixes import fixes_for_view
from aqe_core.advise.recommend import Fix
from aqe_core.figures.fix_figure import fix_figure
from aqe_core.plain_text import md_text
from aqe_core.views.query import QueryView
from ui.figure_cache import cached_figure
from ui.verify import verify_box


def fixes_for(view: QueryView) -> list[Fix]:
    return cached_figure(view, ("recommend",), lambda: fixes_for_view(view))


def fix_box(view: QueryView, fixes: list[Fix], stage_id: Optional[int], drawn: set) -> None:
    """The fixes about this stage's read, under the first of its reads drawn (both sides of a
    join are read in one stage: its fixes are shown once); ``drawn`` collects the stages."""
    if stage_id in drawn:
        return
    drawn.add(stage_id)
    for i, f in enumerate(fixes):
        if f.stage_id == stage_id:
            _one(view, f, f"{stage_id}-{i}")


def other_fixes(view: QueryView, fixes: list[Fix], shown: set) -> None:
    """Fixes about no shown read (a join whose side is not a stage, a read without sizes)."""
    rest = [(i, f) for i, f in enumerate(fixes) if f.stage_id not in shown]
    if view.source_kind == "eventlog" and view.default_parallelism is None:
        st.caption("No fix for small partitions: " + md_text(NO_CORES))
    if rest:
        st.subheader("Other fixes")
    for i, f in rest:
        _one(view, f, f"other-{i}")


def _one(view: QueryView, f: Fix, key: str) -> None:
    with st.container(border=True, key=f"fix-{key}"):
        st.markdown(f"**Fix: {md_text(f.finding)}** — {md_text(f.why)}")
        st.code("\n".join(f.conf_lines()), language=None)
        st.caption(("Predicted by replaying the captured statistics under the change (exact): " if f.exact else
                    "Estimated (see the assumption below): ") + md_text("; ".join(f.effects) or "no other read or join changes"))
        fig = cached_figure(f, ("fix",), lambda: fix_figure(f.today, f.after))
        if fig is not None:
            st.plotly_chart(fig, key=f"fixfig-{key}", theme=None)
        for a in f.assumes:
            st.caption("Assumes: " + md_text(a))
        if f.application:
            with st.expander(md_text(f.application[0].capitalize())):
                st.markdown("\n".join(f"- {md_text(x)}" for x in f.application[1:]) or "Nothing else changes.")
        if f.alternatives or f.hints:
            with st.expander("Alternatives"):
                for a in f.alternatives:
                    st.code("\n".join(f'spark.conf.set("{k}", "{v}")' for k, v in a.settings.items()), language=None)
                    st.caption(md_text("; ".join([*a.effects, *(f"assumes: {x}" for x in a.assumes)])
                                       or "no other read or join changes"))
                for h in f.hints:
                    st.markdown(f"- Hint: {md_text(h)}")
        verify_box(view, f, key)
