"""Stage attempts and per-partition task values, as the log tells them.

A retried stage has several attempts (``Stage Attempt ID``). After a fetch failure Spark re-runs
only the partitions whose output is missing, and a retry's task ``Index`` counts the tasks of
that attempt, not the partitions (seen on 4.1.4 and 4.2.1: attempt 1 of a 4-partition stage ran
partitions 1, 2, 3 as indices 0, 1, 2). So the reader keys per-partition values (task time,
bytes read) by ``Partition ID`` (3.3+), keeps the last successful task of each partition across
attempts, and counts a partition once however often it ran. Spark's SQL metrics are another
matter: its UI keeps only the latest attempt's tasks (``SQLAppStatusListener.onStageSubmitted``
resets them), and the builder does the same for those.

When a later attempt re-runs partitions an earlier attempt had finished, Spark retried the stage
in full: its earlier output could not be trusted (the executor holding it was lost, a map stage
with indeterminate output re-ran, or, from 4.1 with
``spark.sql.shuffle.orderIndependentChecksum.enableFullRetryOnMismatch`` on, the re-run map
output's checksum differed). The log has no field saying which (JsonProtocol of 4.1.4, 4.2.1
and 4.3.0 writes the same stage keys as 4.0): :func:`retry_sentence` says what is known.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from aqe_core import config
from aqe_core.model.eventlog import StageAttempt, StageInfo

if TYPE_CHECKING:
    from aqe_core.readers.eventlog.live_state import _SlotBudget

_REASON_CHARS = 200


def attempt_of(st: StageInfo, attempt: int) -> StageAttempt:
    for a in st.attempts:
        if a.attempt == attempt:
            return a
    a = StageAttempt(attempt)
    st.attempts.append(a)
    return a


def submitted(st: StageInfo, attempt: int, num_tasks: Optional[int]) -> None:
    """A ``StageSubmitted``: the stage's partition count stays that of its first attempt (a retry
    states only the tasks it runs)."""
    st.attempt = attempt
    a = attempt_of(st, attempt)
    if num_tasks is not None and num_tasks >= 0:
        a.num_tasks = num_tasks
        if attempt == 0 or not st.num_tasks:
            st.num_tasks = num_tasks


def completed(st: StageInfo, attempt: int, failed: bool, reason: Optional[str]) -> None:
    a = attempt_of(st, attempt)
    a.failed = failed
    if failed and isinstance(reason, str):
        a.reason = reason.strip().split("\n", 1)[0][:_REASON_CHARS]


def task_slot(attempt: int, index: int, partition: int) -> int:
    """The partition a task computed: its ``Partition ID``, else (logs before 3.3) its index in a
    first attempt; -1 when not known (a retry's index is not a partition)."""
    if partition >= 0:
        return partition
    return index if attempt == 0 else -1


def task_succeeded(st: StageInfo, budget: "_SlotBudget", attempt: int, slot: int, task_id: int, ms: int,
                   read: Optional[tuple[int, int, int]], keep_tasks: bool) -> None:
    """A successful task of partition ``slot``: the last one of each partition's latest attempt
    is kept."""
    n = st.num_tasks
    if not 0 <= slot < n:
        return
    if not -1 <= attempt <= 32767:
        return  # (no real stage gets near: Spark stops at spark.stage.maxConsecutiveAttempts, 4)
    # the arrays reach the highest partition seen, not the count the log states (-1 past their end)
    if st.task_attempts is None or slot >= len(st.task_attempts):
        st.task_attempts = budget.grow(st.task_attempts, slot, n, -1, "h")  # (an attempt number: 2 bytes, not 8)
    before = st.task_attempts[slot]
    if attempt < before:
        return  # (a zombie task of an older attempt finishing late: the newer attempt's output stands)
    if 0 <= before < attempt:
        attempt_of(st, attempt).reran_finished += 1
    st.task_attempts[slot] = attempt
    if not keep_tasks:
        return
    if ms >= 0:
        if st.task_ms is None or slot >= len(st.task_ms):
            st.task_ms = budget.grow(st.task_ms, slot, n, -1)
            st.task_ids = budget.grow(st.task_ids, slot, n, -1)
        st.task_ms[slot] = ms
        st.task_ids[slot] = task_id  # type: ignore[index]
    if read is not None:
        if st.shuffle_bytes_read is None or slot >= len(st.shuffle_bytes_read):
            st.shuffle_bytes_read = budget.grow(st.shuffle_bytes_read, slot, n, -1)
            st.shuffle_records_read = budget.grow(st.shuffle_records_read, slot, n, -1)
        st.shuffle_bytes_read[slot] = read[0] + read[1]
        st.shuffle_records_read[slot] = read[2]  # type: ignore[index]


def retry_sentence(st: StageInfo, conf_layers: list[dict[str, str]] | None = None) -> Optional[str]:
    """What the log says of a stage that ran more than once, or None when it ran once.

    >>> st = StageInfo(9, attempt=1, num_tasks=4, attempts=[
    ...     StageAttempt(0, 4, True, "org.apache.spark.shuffle.FetchFailedException"), StageAttempt(1, 4, reran_finished=1)])
    >>> print(retry_sentence(st))
    stage 9 ran 2 attempts (counted once): attempt 0 failed (org.apache.spark.shuffle.FetchFailedException); attempt 1 ran all 4 partitions again, 1 of them already finished: a full stage retry (Spark re-runs finished partitions when their output cannot be trusted: the executor that held it was lost, a map stage with indeterminate output re-ran, or a shuffle checksum mismatch, 4.1+; the log does not say which). Spark's SQL metrics count only attempt 1's tasks, as its UI does
    """
    if st.attempts and st.attempts[0].attempt > 0 and not st.retried:
        a = st.attempts[0]
        return (f"stage {st.stage_id} ran only as attempt {a.attempt} ({a.num_tasks} of {st.num_tasks} partitions): "
                "Spark computed again a shuffle's map output that was lost (its first run is an earlier stage's)")
    if not st.retried:
        return None
    parts = []
    for a in st.attempts:
        if a.attempt == 0 and not a.failed:
            continue
        if a.attempt > 0:
            if a.reran_finished:
                what = (f"attempt {a.attempt} ran {'all ' if a.num_tasks == st.num_tasks else ''}{a.num_tasks} "
                        f"partition{'s' if a.num_tasks != 1 else ''} again, {a.reran_finished} of them already finished: "
                        "a full stage retry (Spark re-runs finished partitions when their output cannot be trusted: "
                        "the executor that held it was lost, a map stage with indeterminate output re-ran, or a "
                        "shuffle checksum mismatch, 4.1+; the log does not say which)")
            else:
                what = (f"attempt {a.attempt} re-ran {a.num_tasks} of {st.num_tasks} partition"
                        f"{'s' if st.num_tasks != 1 else ''} (those whose output was missing)")
            parts.append(what)
        if a.failed:
            parts.append(f"attempt {a.attempt} failed" + (f" ({a.reason})" if a.reason else ""))
    last = st.attempts[-1].attempt
    out = (f"stage {st.stage_id} ran {len(st.attempts)} attempts (counted once): " + "; ".join(parts)
           + f". Spark's SQL metrics count only attempt {last}'s tasks, as its UI does")
    if st.full_retry and _checksum_retry_on(conf_layers or []):
        out += (f"; this query ran with {config.SHUFFLE_CHECKSUM_MISMATCH_FULL_RETRY_ENABLED}=true, so a "
                "checksum mismatch is one possible cause")
    return out


def _checksum_retry_on(layers: list[dict[str, str]]) -> bool:
    conf: dict[str, str] = {}
    for layer in layers:
        conf.update(layer)
    on = conf.get(config.SHUFFLE_ORDER_INDEPENDENT_CHECKSUM_ENABLED, "").strip().lower() == "true"
    return on and conf.get(config.SHUFFLE_CHECKSUM_MISMATCH_FULL_RETRY_ENABLED, "").strip().lower() == "true"


def stage_retries(stage_ids: list[int], stages_by_id, conf_layers: list[dict[str, str]]) -> list[str]:
    """One sentence per stage of an execution that ran more than once (or only as a retry)."""
    out = []
    for sid in stage_ids:
        st = stages_by_id.get(sid)
        text = retry_sentence(st, conf_layers) if st is not None else None
        if text:
            out.append(text)
    return out
