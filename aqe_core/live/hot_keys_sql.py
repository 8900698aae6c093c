"""Which key is skewed for a job AQE Lens cannot re-run: the SQL written from an event log's plan,
run here on the user's tables of the same names (issue 42, ``hot-keys LOG --spark``).

An event log (or a listener log of a program's DataFrame) keeps no query to plan again, only the
plan's text: the exchange's ``hashpartitioning(keys, n)`` and the scan and filters that feed it.
:func:`aqe_core.views.hot_keys.cluster_code` writes those as SQL that runs (names quoted, literals
typed); this module runs it where the user has the tables, through the SQL guard unless trusted,
under a time limit, sampled past ``max_rows`` of Spark's recorded shuffle records, with the
counting of :func:`aqe_core.live.hot_keys.count_bounded` (``pmod(hash(keys), n)``: Spark's SQL
``hash`` is HashPartitioning's Murmur3, seed 42).

What it cannot know: whether the tables still hold the rows the logged run read. The checks say:
the rows counted against the log's "shuffle records written" of the exchange (join sides,
unsampled), and the reducers named against the median reducer. Where the log does not name the
reducer Spark split (a plain log's adaptive read), the heaviest counted reducers are named, and
said to be chosen so.
"""
from __future__ import annotations

from typing import Any, Optional

from aqe_core.live.hot_keys import DEFAULT_MAX_ROWS, DEFAULT_TIME_LIMIT_S, SAMPLE_SEED, count_bounded
from aqe_core.model.hot_keys import Check, HotKey, ReducerKeys, ShuffleKeys, SideSQL

__all__ = ["count_side_sql"]


def _frame_sql(s: SideSQL) -> str:
    keys = ", ".join(s.key_sql)
    cols = ", ".join(f"{k} AS __k{i}" for i, k in enumerate(s.key_sql))
    return f"SELECT pmod(hash({keys}), {s.num_partitions}) AS __reducer, {cols} FROM ({s.side_sql}) AS side"


def _session(spark: Any, sql: str, trusted: Optional[bool]) -> tuple[Any, str]:
    from aqe_core.live.sql_guard import check_sql, guard_session, trusted_by_default

    trusted = trusted_by_default() if trusted is None else trusted
    if spark is None:
        from aqe_core.live.runtime import get_runtime

        spark = get_runtime().spark
    session = spark.newSession()
    if not trusted:
        guard_session(session)
        sql = check_sql(sql, session)
    return session, sql


def count_side_sql(s: SideSQL, *, spark: Any = None, trusted: Optional[bool] = None, top: int = 5,
                   time_limit_s: float = DEFAULT_TIME_LIMIT_S, max_rows: int = DEFAULT_MAX_ROWS) -> ShuffleKeys:
    """The top ``top`` keys of ``s``'s reducers (or of its heaviest, where the log names none),
    counted on the tables this Spark has under the names the plan gives. The guard's refusals
    raise :class:`~aqe_core.live.sql_guard.UnsafeSQL`, the time limit
    :class:`~aqe_core.live.hot_keys.HotKeysStopped`."""
    session, sql = _session(spark, _frame_sql(s), trusted)
    frame = session.sql(sql)
    sk = ShuffleKeys(None, s.stage_id, s.label, list(s.key_names), s.num_partitions,
                     f"hashpartitioning({', '.join(s.key_names)}, {s.num_partitions})", s.input_kind)
    sk.key_types = [f.dataType.simpleString() for f in frame.schema.fields[1:]]
    sk.notes.append("counted here on the tables named in the log's plan, as they are now, with the SQL written from"
                    " the plan's text; the checks tell whether they still hold the rows the logged run read")
    if s.note:
        sk.notes.append(s.note)
    fraction = max_rows / s.records_written if s.records_written and s.records_written > max_rows else 1.0
    if fraction < 1.0:
        frame = frame.sample(False, fraction, SAMPLE_SEED)
        sk.sample_fraction = fraction
        sk.notes.append(f"counted on a {fraction:.2%} Bernoulli sample (seed {SAMPLE_SEED}): the log's"
                        f" {s.records_written:,} shuffle records are over the limit of {max_rows:,}; rows are"
                        " estimates")
    if s.input_kind == "aggregation input":
        sk.notes.append("rows are the aggregation's input rows (before the partial aggregation)")
    asked = sorted(s.reducers) or list(range(s.num_partitions))
    per, tops = count_bounded(session, frame, asked, top, time_limit_s)
    rows_by = {r: int(round(n / fraction)) for r, (n, _) in per.items()}
    sk.total_rows = sum(rows_by.values())
    named: dict[int, Optional[int]] = dict(s.reducers)
    if not named:
        named = {r: None for r in sorted(rows_by, key=lambda r: -rows_by[r])[:max(1, s.heaviest)]}
        sk.notes.append(f"the log does not name the reducer(s) Spark split: the {len(named)} heaviest by counted rows"
                        " are named here")
    for r, splits in sorted(named.items()):
        size = s.sizes[r] if s.sizes is not None and r < len(s.sizes) else None
        rk = ReducerKeys(r, rows_by.get(r, 0), size, splits, distinct_keys=per.get(r, (0, 0))[1])
        for values, n in tops.get(r, []):
            rows = int(round(n / fraction))
            share = rows / rk.rows if rk.rows else 0.0
            rk.keys.append(HotKey(values, rows, share, int(round(share * size)) if size is not None else None))
        sk.reducers.append(rk)
    sk.checks = _checks(s, sk, rows_by, list(named))
    return sk


def _checks(s: SideSQL, sk: ShuffleKeys, rows_by: dict[int, int], named: list[int]) -> list[Check]:
    out = []
    if s.records_written is not None and s.input_kind != "aggregation input" and sk.sample_fraction >= 1:
        out.append(Check("rows", s.records_written == sk.total_rows,
                         f"{sk.total_rows:,} rows counted, the log's shuffle records written: {s.records_written:,}"))
    ordered = sorted(rows_by.get(i, 0) for i in range(s.num_partitions))
    median = ordered[len(ordered) // 2]
    if s.sizes:
        by_bytes = max(range(len(s.sizes)), key=lambda i: s.sizes[i] if s.sizes else 0)
        by_rows = max(range(len(s.sizes)), key=lambda i: rows_by.get(i, 0))
        out.append(Check("heaviest", rows_by.get(by_rows, 0) == rows_by.get(by_bytes, 0),
                         f"heaviest reducer by the log's bytes: {by_bytes}; by counted rows: {by_rows}"))
    low = [r for r in named if rows_by.get(r, 0) <= median]
    out.append(Check("above_median", not low,
                     f"every reducer named has more rows than the median reducer ({median:,})" if not low
                     else f"reducer(s) {low} have no more rows than the median ({median:,})"))
    return out
