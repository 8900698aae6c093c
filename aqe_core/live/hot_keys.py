"""Which key is skewed: the top keys of a capture's skewed reducers, counted on Spark (issue 42).

    from aqe_core.live.hot_keys import hot_keys
    from aqe_core.model.hot_keys import HotKeyTarget
    found = hot_keys(capture, capture.queries[0], [HotKeyTarget(shuffle_id=1, reducers={5: 2})])

Spark puts a row of a hash-partitioned shuffle in reducer ``pmod(hash(k1, k2, ...), n)``:
``HashPartitioning.partitionIdExpression`` is ``Pmod(new Murmur3Hash(expressions),
Literal(numPartitions))`` (apache/spark ``sql/catalyst/.../plans/physical/partitioning.scala``)
and ``ShuffleExchangeExec.prepareShuffleDependency`` evaluates it per row
(``UnsafeProjection.create(h.partitionIdExpression :: Nil, outputAttributes)``; 4.x writes the hash
as ``collation_aware_hash``, the same Murmur3 with seed 42 for non-collated values). PySpark's
``F.hash`` is the same ``Murmur3Hash`` (``functions.hash`` -> the ``hash`` function of
``FunctionRegistry``, ``expression[Murmur3Hash]("hash")``), which the SQL we give for clusters uses.

What is exact and why: we do not re-derive the keys. The capture's query is planned again in a
fresh session (its temporary views re-created first, everything through the SQL guard unless
trusted), the recorded exchange is found in the re-planned initial plan
(:mod:`aqe_core.live.hot_key_plans`), and the counting query evaluates *that exchange's own*
partition-id expression and key expressions (their order and types: a cast Spark added is in
them) over *that exchange's input* (the logical operator the exchange's child was planned from,
not the whole table). So the reducer of every counted row is the reducer Spark sent it to, as
long as the input data is the data the capture's run read (temporary views over ``range`` are;
tables may have changed since: the checks below tell).

Bounded: a time limit (the counting jobs run under their own job group, cancelled at the
deadline) and a sample where the input is large: over ``max_rows`` rows (Spark's recorded row
count of the shuffle) or ``max_input_bytes`` (the optimizer's size estimate of the input) a
Bernoulli sample of that fraction (seed 42) is counted and the counts divided by the fraction,
reported as estimates with the fraction.

Checked against what Spark recorded, per shuffle (:class:`~aqe_core.model.hot_keys.Check`): the
partition count equals the recorded one; the rows counted equal the shuffle's recorded row count
(join sides and repartitions, unsampled: the ``rowCount`` of the stage's runtime statistics); the reducer Spark's
``bytesByPartitionId`` makes heaviest is the heaviest by counted rows; every reducer asked about
has more rows than the median reducer. A failed check leaves the keys marked unverified.
"""
from __future__ import annotations

import threading
import uuid
from typing import Any, Optional

from aqe_core.live.hot_key_plans import (
    PlanMatchError,
    jvm_exchanges,
    match_exchange,
    recorded_exchange_text,
    reducer_and_keys,
    side_input,
)
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.hot_keys import Check, HotKey, HotKeyTarget, ReducerKeys, ShuffleKeys

__all__ = ["HotKeysStopped", "count_bounded", "hot_keys", "DEFAULT_MAX_ROWS", "DEFAULT_TIME_LIMIT_S"]

DEFAULT_TIME_LIMIT_S = 300.0
DEFAULT_MAX_ROWS = 20_000_000
DEFAULT_MAX_INPUT_BYTES = 4 << 30
SAMPLE_SEED = 42


class HotKeysStopped(RuntimeError):
    """The counting jobs were stopped at the time limit."""


def hot_keys(capture: Capture, q: QueryCapture, targets: list[HotKeyTarget], *, spark: Any = None,
             trusted: Optional[bool] = None, top: int = 5, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
             max_rows: int = DEFAULT_MAX_ROWS, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> list[ShuffleKeys]:
    """The top ``top`` keys of every target reducer, one :class:`ShuffleKeys` per target.

    ``spark``: a session to derive a fresh one from (default: the shared runtime's). Untrusted
    (the default unless the server is trusted), the setup views and the query pass the SQL guard
    (:func:`aqe_core.live.sql_guard.check_setup` / ``check_sql``) before anything runs; refusals
    raise :class:`~aqe_core.live.sql_guard.UnsafeSQL`. A shuffle whose keys cannot be computed
    carries ``error`` saying why; the time limit raises :class:`HotKeysStopped`."""
    sql = capture.sql_of(q)
    if not sql:
        return [_failed(t, "the capture kept no SQL text for this query (a program's DataFrame): it cannot be"
                           " re-planned here; run the SQL AQE Lens gives for your cluster") for t in targets]
    session = _session(capture, q, sql, spark, trusted)
    df = session.sql(sql)
    exchanges = jvm_exchanges(df)
    out = []
    for t in targets:
        try:
            text, rank = recorded_exchange_text(q, t.shuffle_id)
            side = side_input(session, match_exchange(exchanges, text, rank))
        except PlanMatchError as e:
            out.append(_failed(t, str(e)))
            continue
        out.append(_count(session, q, t, side, top=top, time_limit_s=time_limit_s, max_rows=max_rows,
                          max_input_bytes=max_input_bytes))
    return out


def _failed(t: HotKeyTarget, why: str) -> ShuffleKeys:
    return ShuffleKeys(t.shuffle_id, t.stage_id, t.label, [], 0, "", "", error=why,
                       reducers=[ReducerKeys(r, 0, None, s) for r, s in sorted(t.reducers.items())])


def _session(capture: Capture, q: QueryCapture, sql: str, spark: Any, trusted: Optional[bool]) -> Any:
    """A fresh session with the query's settings (those a session may change) and the capture's
    views, guarded unless trusted (as :meth:`aqe_core.live.runner.Runner.rerun`)."""
    from aqe_core.live.sql_guard import check_setup, check_sql, check_text, guard_session, trusted_by_default

    trusted = trusted_by_default() if trusted is None else trusted
    if not trusted:
        sql = check_text(sql)
    if spark is None:
        from aqe_core.live.runtime import get_runtime

        spark = get_runtime().spark
    session = spark.newSession()
    for k, v in q.conf.items():
        if session.conf.isModifiable(str(k)):
            session.conf.set(str(k), str(v))
    if not trusted:
        guard_session(session)
    for stmt in capture.setup_statements():
        session.sql(check_setup(stmt, session) if not trusted else
                    stmt.replace("CREATE TEMPORARY VIEW", "CREATE OR REPLACE TEMPORARY VIEW", 1))
    if not trusted:
        check_sql(sql, session)
    return session


def _fraction(q: QueryCapture, t: HotKeyTarget, side: Any, max_rows: int, max_input_bytes: int) -> tuple[float, str]:
    stage = _stage(q, t.shuffle_id)
    rows = stage.row_count if stage is not None and side.input_kind != "aggregation input" else None
    if rows and rows > max_rows:
        return max_rows / rows, f"{rows:,} rows (Spark's row count of the shuffle) over the limit of {max_rows:,}"
    if side.size_in_bytes and side.size_in_bytes > max_input_bytes:
        return (max_input_bytes / side.size_in_bytes,
                f"the optimizer's size estimate of the input, {side.size_in_bytes:,} B, over {max_input_bytes:,} B")
    return 1.0, ""


def _stage(q: QueryCapture, shuffle_id: int) -> Any:
    return next((s for s in q.stages if s.shuffle_id == shuffle_id and s.kind == "shuffle"), None)


def _count(session: Any, q: QueryCapture, t: HotKeyTarget, side: Any, *, top: int, time_limit_s: float,
           max_rows: int, max_input_bytes: int) -> ShuffleKeys:
    part = side.partitioning
    sk = ShuffleKeys(t.shuffle_id, t.stage_id, t.label, side.key_names, int(part.numPartitions()), side.text,
                     side.input_kind)
    fraction, why = _fraction(q, t, side, max_rows, max_input_bytes)
    frame = reducer_and_keys(session, side)
    sk.key_types = [f.dataType.simpleString() for f in frame.schema.fields[1:]]
    if fraction < 1.0:
        frame = frame.sample(False, fraction, SAMPLE_SEED)
        sk.sample_fraction = fraction
        sk.notes.append(f"counted on a {fraction:.2%} Bernoulli sample (seed {SAMPLE_SEED}): {why}; rows are the"
                        " sample's counts divided by the fraction (estimates)")
    if side.input_kind == "aggregation input":
        sk.notes.append("rows are the aggregation's input rows (before the partial aggregation); the shuffle itself"
                        " carries about one row per key and map task")
    per_reducer, top_rows = count_bounded(session, frame, sorted(t.reducers), top, time_limit_s)
    scale = 1.0 / fraction
    rows_by = {r: int(round(n * scale)) for r, (n, _) in per_reducer.items()}
    sk.total_rows = sum(rows_by.values())
    sh = q.shuffle(t.shuffle_id)
    sizes = sh.bytes_by_partition_id if sh is not None else None
    for r, splits in sorted(t.reducers.items()):
        rk = ReducerKeys(r, rows_by.get(r, 0), sizes[r] if sizes and r < len(sizes) else None, splits,
                         distinct_keys=per_reducer.get(r, (0, 0))[1])
        for values, n in top_rows.get(r, []):
            rows = int(round(n * scale))
            share = rows / rk.rows if rk.rows else 0.0
            rk.keys.append(HotKey(values, rows, share, int(round(share * rk.bytes)) if rk.bytes is not None else None))
        sk.reducers.append(rk)
    if sizes is not None:
        sk.avg_row_bytes_how = ("estimate: the key's share of the reducer's rows times the reducer's bytes Spark"
                                " recorded (assumes the reducer's rows are of one size)")
    sk.checks = _checks(q, t, sk, rows_by, sizes)
    return sk


def count_bounded(session: Any, frame: Any, reducers: list[int], top: int,
                 time_limit_s: float) -> tuple[dict[int, tuple[int, int]], dict[int, list[tuple[list[Any], int]]]]:
    """Two Spark jobs under one job group cancelled at the deadline: rows and distinct keys per
    reducer (all of them, for the checks), and the top keys of the asked reducers."""
    from pyspark.sql import Window, functions as F

    sc = session.sparkContext
    group = f"aqe-lens:hot-keys:{uuid.uuid4().hex[:12]}"
    stopped = threading.Event()

    def cancel() -> None:
        stopped.set()
        try:
            sc._jsc.sc().cancelJobGroupAndFutureJobs(group)
        except Exception:  # noqa: BLE001 - Spark < 4 has only cancelJobGroup
            sc.cancelJobGroup(group)

    keys = [c for c in frame.columns if c != "__reducer"]
    timer = threading.Timer(time_limit_s, cancel)
    timer.daemon = True
    sc.setJobGroup(group, "AQE Lens: hot keys", True)
    timer.start()
    grouped = None
    try:
        # Spark < 4 cannot cancel a group's future jobs: each action also checks the deadline
        _deadline(stopped, time_limit_s)
        grouped = frame.groupBy("__reducer", *keys).count().persist()
        per = {int(r["__reducer"]): (int(r["rows"]), int(r["keys"])) for r in
               grouped.groupBy("__reducer").agg(F.sum("count").alias("rows"), F.count(F.lit(1)).alias("keys")).collect()}
        _deadline(stopped, time_limit_s)
        w = Window.partitionBy("__reducer").orderBy(F.desc("count"), *[F.asc_nulls_first(k) for k in keys])
        ranked = (grouped.where(F.col("__reducer").isin(reducers)).withColumn("__rank", F.row_number().over(w))
                  .where(F.col("__rank") <= top).collect())
        _deadline(stopped, time_limit_s)
    except HotKeysStopped:
        raise
    except Exception:
        if stopped.is_set():
            raise HotKeysStopped(f"the hot-key count was stopped at its time limit of {time_limit_s:g} s") from None
        raise
    finally:
        timer.cancel()
        if grouped is not None:
            grouped.unpersist()
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            sc.setLocalProperty(key, None)
    tops: dict[int, list[tuple[list[Any], int]]] = {}
    for r in sorted(ranked, key=lambda r: (r["__reducer"], r["__rank"])):
        tops.setdefault(int(r["__reducer"]), []).append(([_plain(r[k]) for k in keys], int(r["count"])))
    return per, tops


def _deadline(stopped: threading.Event, time_limit_s: float) -> None:
    if stopped.is_set():
        raise HotKeysStopped(f"the hot-key count was stopped at its time limit of {time_limit_s:g} s")


def _plain(v: Any) -> Any:
    """A key value as JSON holds it (dates and decimals as their text)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    return str(v)


def _checks(q: QueryCapture, t: HotKeyTarget, sk: ShuffleKeys, rows_by: dict[int, int],
            sizes: Optional[list[int]]) -> list[Check]:
    out = []
    sh = q.shuffle(t.shuffle_id)
    if sh is not None:
        out.append(Check("partitions", sh.num_reducers == sk.num_partitions,
                         f"re-planned exchange has {sk.num_partitions} partitions, Spark recorded {sh.num_reducers}"))
    stage = _stage(q, t.shuffle_id)
    if stage is not None and stage.row_count is not None and sk.input_kind != "aggregation input" and sk.sample_fraction >= 1:
        out.append(Check("rows", stage.row_count == sk.total_rows,
                         f"{sk.total_rows:,} rows counted, Spark's shuffle wrote {stage.row_count:,}"))
    if sizes:
        by_bytes = max(range(len(sizes)), key=lambda i: sizes[i])
        by_rows = max(range(len(sizes)), key=lambda i: rows_by.get(i, 0))
        out.append(Check("heaviest", by_bytes == by_rows or rows_by.get(by_rows, 0) == rows_by.get(by_bytes, 0),
                         f"heaviest reducer by Spark's bytes: {by_bytes}; by counted rows: {by_rows}"))
        ordered = sorted(rows_by.get(i, 0) for i in range(len(sizes)))
        median = ordered[len(ordered) // 2]
        low = [r for r in t.reducers if rows_by.get(r, 0) <= median]
        out.append(Check("above_median", not low,
                         "every reducer asked about has more rows than the median reducer"
                         f" ({median:,})" if not low else f"reducer(s) {low} have no more rows than the median ({median:,})"))
    return out
