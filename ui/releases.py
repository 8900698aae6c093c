"""The Compare page's "every Spark release" section: the query through each release's rules, what
differs between neighbouring releases and why, and the query's settings each release lacks or
rejects."""
from __future__ import annotations

import streamlit as st

from ui.tables import text_table

from aqe_core.plain_text import md_text
from aqe_core.views.query import QueryView
from aqe_core.advise.releases import compare_releases
from ui.figure_cache import cached_figure


def releases_section(view: QueryView) -> None:
    st.subheader("Every Spark release")
    comp = cached_figure(view, ("releases",), lambda: compare_releases(view))
    st.caption(md_text(f"The query's own settings under each release's rules; every other setting takes that"
                       f" release's default. {comp.note}."))
    with st.container(key="release-table"):
        st.dataframe(text_table([r.summary() for r in comp.rows]), hide_index=True, width="stretch")
    if not comp.diffs:
        st.write("Every release decides this query the same way.")
    for d in comp.diffs:
        with st.container(border=True):
            st.markdown(f"**{md_text(d.before)} -> {md_text(d.after)}**: " + md_text("; ".join(d.changes)))
            for m in d.rules_said:
                st.write(f"- the rules said: {md_text(m)}")
            for m in d.changed_between:
                st.caption(f"changed between them: {md_text(m)}")
    lint = [(r.release, f) for r in comp.rows for f in r.lint]
    if lint:
        with st.expander(f"Settings a release lacks or rejects ({len(lint)})"):
            for release, f in lint:
                st.write(f"- {md_text(release)}: {md_text(f.message)}")
