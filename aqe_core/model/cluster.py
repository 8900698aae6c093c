"""The cluster's own numbers, from the log: cores, executors, the default parallelism AQE's
coalescing aims at (``SparkContext.defaultParallelism``), and dynamic allocation.

Spark's defaultParallelism is ``spark.default.parallelism`` when set; else, on a cluster
(``CoarseGrainedSchedulerBackend``), ``max(total cores of the registered executors, 2)`` at the
moment coalescing asks; in local mode (``LocalSchedulerBackend``) the master's N. The cores of
the registered executors are in the executor-added / removed events (``Total Cores``). Where the
log holds none of these the parallelism is unknown, and nothing is built on a default.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from aqe_core import config

__all__ = ["Parallelism", "parallelism_of"]

_MAX = 2 ** 31 - 1  # an int in Spark; a log claiming more is not believed
_LOCAL = re.compile(r"^\s*local(?:\[(\d{1,10}|\*)(?:\s*,\s*\d{1,10})?\])?\s*$")


@dataclass(frozen=True)
class Parallelism:
    """``value``: the default parallelism (None: unknown); ``how``: how it is known, or why not."""

    value: Optional[int]
    how: str
    dynamic_allocation: Optional[bool] = None

    def to_dict(self) -> dict[str, Any]:
        return {"default_parallelism": self.value, "how": self.how, "dynamic_allocation": self.dynamic_allocation}


def _count(text: Any) -> Optional[int]:
    t = str(text).strip() if text is not None else ""
    return int(t) if t.isdigit() and len(t) <= 10 and 0 < int(t) <= _MAX else None


def _alive(executors: dict, at: Optional[int]) -> tuple[int, int]:
    """(executors, their cores) registered at ``at`` (ms; None: every executor the log added)."""
    n = cores = 0
    for eid, e in executors.items():
        if eid == "driver" and len(executors) > 1:
            continue  # (a cluster's driver is no executor; local mode's only "executor" is the driver)
        if at is None:
            ok = True
        else:
            ok = (e.added is None or e.added <= at) and (e.removed is None or e.removed > at)
        if ok:
            n, cores = n + 1, cores + e.cores
    return n, cores


def _dynamic(props: dict[str, str]) -> Optional[bool]:
    v = props.get(config.DYNAMIC_ALLOCATION_ENABLED)
    return None if v is None else v.strip().lower() == "true"


def parallelism_of(log: Any, start: Optional[int] = None, end: Optional[int] = None) -> Parallelism:
    """The default parallelism of ``log`` during ``[start, end]`` (an execution's times, ms), and
    how it is known. With dynamic allocation the executors change: a parallelism that is not the
    same through the execution is unknown (the log does not say when AQE asked), and said so."""
    props = log.spark_properties
    dyn = _dynamic(props)
    set_dp = _count(props.get(config.DEFAULT_PARALLELISM))
    if set_dp is not None:
        return Parallelism(set_dp, f"{set_dp}: {config.DEFAULT_PARALLELISM} = {set_dp}", dyn)
    app = log.application
    executors = getattr(app, "executors", {}) or {}
    master = props.get(config.MASTER, "")
    local = _LOCAL.match(master)
    if local is not None:
        n = local.group(1)
        if n is None:
            return Parallelism(1, f"1 core: master {master.strip()}", dyn)
        if n != "*":
            k = int(n)
            return Parallelism(k, f"{k} cores: master {master.strip()}", dyn) if 0 < k <= _MAX else \
                Parallelism(None, f"the master {master.strip()} names no usable core count", dyn)
        got = sum(e.cores for e in executors.values())
        if got:
            return Parallelism(got, f"{got} cores: master {master.strip()}, cores from the executor-added event", dyn)
        return Parallelism(None, f"unknown: master {master.strip()} and no executor-added event says how many cores",
                           dyn)
    if getattr(app, "executors_dropped", 0):
        return Parallelism(None, "unknown: the log adds more executors than AQE Lens keeps", dyn)
    if executors:
        times: list[Optional[int]] = [t for t in (start, end) if t is not None] or [None]
        seen = {_alive(executors, t) for t in times}
        if start is not None and end is not None:  # every change inside the execution counts
            seen |= {_alive(executors, t) for e in executors.values() for t in (e.added, e.removed)
                     if t is not None and start <= t <= end}
        if len(seen) == 1:
            n, cores = next(iter(seen))
            if cores:
                per = {e.cores for k, e in executors.items() if k != "driver"}
                each = next(iter(per)) if len(per) == 1 else None
                shape = f"{n} executor{'s' if n != 1 else ''}" + (
                    f" x {each} core{'s' if each != 1 else ''}" if each is not None else "")
                value = max(cores, 2)
                floor = " (Spark's floor of 2)" if value != cores else ""
                return Parallelism(value, f"{value} cores{floor}: {shape}, from executor-added events", dyn)
        else:
            lo, hi = min(c for _, c in seen), max(c for _, c in seen)
            return Parallelism(None, f"unknown: the executors changed during the query ({lo} to {hi} cores,"
                                     " dynamic allocation), and the log does not say when AQE coalesced", dyn)
    inst, per_exec = _count(props.get(config.EXECUTOR_INSTANCES)), _count(props.get(config.EXECUTOR_CORES))
    if inst is not None and per_exec is not None and not dyn:
        value = max(inst * per_exec, 2)
        return Parallelism(value, f"{value} cores: {config.EXECUTOR_INSTANCES} = {inst} x {config.EXECUTOR_CORES} ="
                                  f" {per_exec} (as configured: the log has no executor-added events)", dyn)
    return Parallelism(None, "unknown: the log has no executor-added events, no "
                             f"{config.DEFAULT_PARALLELISM} and no local master", dyn)
