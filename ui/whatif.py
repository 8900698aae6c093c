"""The What-if page's pieces: the settings form (AQE keys and the two shuffle/broadcast keys of
the query's Spark release, starting from the query's own values) and the per-line diff."""
from __future__ import annotations

import streamlit as st

from aqe_core.views.query import QueryView
from aqe_core.config import ADAPTIVE_PREFIX, AUTO_BROADCASTJOIN_THRESHOLD, SHUFFLE_PARTITIONS

#: keys outside ``spark.sql.adaptive.*`` the form offers too
_ALSO = (SHUFFLE_PARTITIONS, AUTO_BROADCASTJOIN_THRESHOLD)


def editable(key: str) -> bool:
    """A key the What-if form shows."""
    return key.startswith(ADAPTIVE_PREFIX) or key in _ALSO


def settings_form(view: QueryView, overrides: dict) -> tuple[bool, dict]:
    """Draw the form; (submitted, the values that differ from the query's own)."""
    conf = view.conf
    with st.form("whatif"):
        cols = st.columns(2)
        new: dict = {}
        for i, (key, entry) in enumerate(sorted(conf.keys.items())):
            if not editable(key):
                continue
            current = overrides.get(key, conf.raw(key))
            val = cols[i % 2].text_input(key.replace(ADAPTIVE_PREFIX, "…"), value="" if current is None else str(current),
                                         help=f"{key}: {entry.doc}", key=f"wi-{key}")
            if val.strip() != ("" if conf.raw(key) is None else str(conf.raw(key))):
                if val.strip():
                    new[key] = val.strip()
        submitted = st.form_submit_button("Simulate")
    return submitted, new


def line_changes(before, after) -> list[dict]:
    """One row per line of the what-if shuffle: its value as run and under the what-if."""
    old_lines = {ln.kind: ln.value for ln in before.lines}
    return [{"line": ln.kind, "as run": old_lines.get(ln.kind), "what-if": ln.value,
             "changed": "yes" if old_lines.get(ln.kind) != ln.value else ""} for ln in after.lines]
