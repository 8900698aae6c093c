"""The What-if page's pieces: the settings form (AQE keys and the two shuffle/broadcast keys of
the query's Spark release, starting from the query's own values), the per-line diff and the
charts of a read as run and under the what-if."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from aqe_core import config
from aqe_core.figures.histograms import side_by_side
from aqe_core.figures.partition_bars import evidence_phrase
from aqe_core.views.query import QueryView, ShuffleView
from aqe_core.config import ADAPTIVE_PREFIX, AUTO_BROADCASTJOIN_THRESHOLD, SHUFFLE_PARTITIONS

#: keys outside ``spark.sql.adaptive.*`` the form offers too
_ALSO = (SHUFFLE_PARTITIONS, AUTO_BROADCASTJOIN_THRESHOLD)
#: the settings that decide most AQE outcomes, shown first (the rest under "Advanced")
MAIN_KEYS = (
    config.ADVISORY_PARTITION_SIZE_IN_BYTES,
    config.SKEW_JOIN_SKEWED_PARTITION_FACTOR, config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD,
    config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE, config.COALESCE_PARTITIONS_PARALLELISM_FIRST,
    config.AUTO_BROADCASTJOIN_THRESHOLD, config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD,
    config.LOCAL_SHUFFLE_READER_ENABLED,
)


_ALL_KEYS = frozenset(config.all_key_names()) | {AUTO_BROADCASTJOIN_THRESHOLD, SHUFFLE_PARTITIONS}


def editable(key: str) -> bool:
    """A key the What-if form shows."""
    return key.startswith(ADAPTIVE_PREFIX) or key in _ALSO


def _short(key: str) -> str:
    """The field's name: the key without ``spark.sql.adaptive.`` where what is left is still
    unambiguous (``skewJoin.skewedPartitionFactor``), else without ``spark.sql.`` only
    (``adaptive.autoBroadcastJoinThreshold`` beside the static ``autoBroadcastJoinThreshold``,
    ``adaptive.enabled``)."""
    rest = key[len(ADAPTIVE_PREFIX):] if key.startswith(ADAPTIVE_PREFIX) else None
    if rest is not None and rest != "enabled" and config.SQL_PREFIX + rest not in _ALL_KEYS:
        return rest
    return key[len(config.SQL_PREFIX):] if key.startswith(config.SQL_PREFIX) else key


def settings_form(view: QueryView, overrides: dict) -> dict:
    """The settings, applied as they change (no submit): the main ones first, the rest under
    "Advanced"; each field's hover holds the full key and Spark's doc. Returns the values that
    differ from the query's own."""
    conf = view.conf
    keys = [k for k in sorted(conf.keys) if editable(k)]
    main = [k for k in MAIN_KEYS if k in conf.keys]
    new: dict = {}
    for key in main:
        _field(st, conf, key, overrides, new)
    with st.expander("Advanced", expanded=False):
        for key in keys:
            if key not in main:
                _field(st, conf, key, overrides, new)
    return new


def _field(where, conf, key: str, overrides: dict, new: dict) -> None:
    current = overrides.get(key, conf.raw(key))
    own = "" if conf.raw(key) is None else str(conf.raw(key))
    val = where.text_input(_short(key), value="" if current is None else str(current),
                           help=f"**{key}** — {conf.keys[key].doc}", key=f"wi-{key}")
    if val.strip() and val.strip() != own:
        new[key] = val.strip()


def line_changes(before, after) -> list[dict]:
    """One row per line of the what-if shuffle: its value as run and under the what-if."""
    old_lines = {ln.kind: ln.value for ln in before.lines}
    return [{"line": ln.kind, "as run": old_lines.get(ln.kind), "what-if": ln.value,
             "changed": "yes" if old_lines.get(ln.kind) != ln.value else ""} for ln in after.lines]


def reads_moved(view, answer, overrides: dict) -> tuple[list, list]:
    """The reads drawn on the page, as (moved, left alone) pairs of (as run, under the what-if):
    a read moves when one of its lines or its predicted partition count differs from the run.
    Without a change of setting none is drawn (the Partitions page draws every read as run):
    a query of 25 reads drew 50 charts on every visit."""
    moved, alone = [], []
    for before, after in zip(view.shuffles, answer.view.shuffles):
        if not (after.sizes_before or after.sizes_after):
            continue
        predicted = answer.predicted(after) if overrides else None
        lines = any(row["changed"] for row in line_changes(before, after))
        count = predicted is not None and len(predicted.sizes_after or []) != len(before.sizes_after or [])
        (moved if overrides and (lines or count) else alone).append((before, after))
    return moved, alone


def whatif_charts(before: ShuffleView, predicted: Optional[ShuffleView], *, log: bool = True) -> list:
    """The read's partitions as run and, under a what-if, as our rules predict them: one chart
    kind and one size axis for both, so the bars show what the setting changes."""
    n = len(before.sizes_after or [])
    as_run = f"as run: {n} partition{'s' if n != 1 else ''} after AQE ({evidence_phrase(before, 'after')})"
    if predicted is None:
        return side_by_side([before], [as_run], log=log)
    m = len(predicted.sizes_after or [])
    return side_by_side([before, predicted], [as_run, f"what-if: {m} partition{'s' if m != 1 else ''},"
                                                      " predicted by our rules"], log=log)
