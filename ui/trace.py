"""A read's decision trace: each shuffle-read rule of the release, in Spark's order, with the
conditions it checked and where it stopped."""
from __future__ import annotations

import streamlit as st

from aqe_core.plain_text import md_text

_MARK = {"pass": "✓", "fail": "✗", "info": "i", "not reached": "·", "not applicable": "–"}


def decision_trace(trace: list, title: str = "Decision trace") -> None:
    stopped = [t for t in trace if t.first_failed is not None]
    title = f"{title}: " + "; ".join(f"{t.rule} {t.verdict.split(';')[0]}" for t in trace)
    with st.expander(title if len(title) <= 200 else title[:199] + "…", expanded=False):
        for t in trace:
            first = t.first_failed
            if all(c.result == "not applicable" for c in t.checks):
                st.markdown(f"**{md_text(t.rule)}**: {md_text(t.verdict)} (does not apply here)")
                continue
            st.markdown(f"**{md_text(t.rule)}**: {md_text(t.verdict)}"
                        + (f" (stopped at: {md_text(first.condition)})" if first else ""))
            lines, said = [], set()
            for c in t.checks:  # a reason that shows several conditions is quoted once
                detail = f" ({md_text(c.detail[:300])})" if c.detail and c.detail not in said else ""
                said.add(c.detail)
                used = c.inputs_text()[:300].replace("`", "'")
                inputs = f" — checked with `{used}`" if used else ""
                lines.append(f"- {_MARK.get(c.result, '?')} {md_text(c.condition)}: {md_text(c.result)}{detail}{inputs}")
            st.markdown("\n".join(lines))
        if not stopped:
            st.caption("No rule stopped early: every condition held or did not apply.")
