#!/usr/bin/env python3
"""Write an event log of N SQL executions by repeating a real log's executions.

    python tools/scale_executions.py SRC DST --executions 100000

Structured Streaming jobs (AQE per micro-batch) and long-lived Thrift servers write logs of
10^5-10^6 small SQL executions. This multiplies a real recorded log (any form the reader opens:
a plain or compressed file, a rolling directory, an archive) into one of that shape: the source's
SQL executions are written again and again, each with its jobs, stages and tasks, until there are
exactly N. Nothing else changes but ids and times:

* execution ids (``executionId``, ``rootExecutionId``, the jobs' ``spark.sql.execution.id`` /
  ``spark.sql.execution.root.id`` properties and the ``execution-root-id-N`` job tag), job ids,
  stage ids (``Stage ID``, a job's ``Stage IDs``, a stage's parent ``Parent IDs``), task ids and
  accumulator ids (plan metrics' ``accumulatorId``, ``Accumulables`` ``ID``, the driver's
  ``accumUpdates``) are shifted per copy past the source's largest, so no two copies share one
  (the History Server keys its live stages, jobs and SQL metrics by them);
* times (``time``, ``Submission Time``, ``Completion Time``, ``Launch Time``, ``Finish Time``,
  ``Getting Result Time`` when set) move on by the source's SQL span plus one average gap between
  its executions per copy, so the copies follow one another as a long-running application's
  batches do; the application's end moves past the last copy.

Events of the application rather than of a query (executors and block managers added or removed,
environment, resource profiles, a streaming query's start) are written once, where the source has
them. Left as recorded: RDD ids, UUIDs (query ids, job tags' session and run ids), streaming
progress events' ISO timestamps.

The output is streamed: each copy is one ``bytes % values`` format of a template built once from
the source (memory is the source's size, whatever N is; ~0.5 GB/s on this project's machine).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

TOOLS = Path(__file__).resolve().parent

# kinds of number that move per copy
EXEC, JOB, STAGE, TASK, ACC, TIME, BATCH = range(7)
KIND_NAMES = ("execution", "job", "stage", "task", "accumulator", "time", "batch")

_SCALAR = re.compile(
    rb'"(executionId|rootExecutionId|Job ID|Stage ID|Task ID|accumulatorId|ID|time|Submission Time|'
    rb'Completion Time|Launch Time|Finish Time|Getting Result Time|batchId)":(-?\d+)'
)
_SCALAR_KIND = {
    b"executionId": EXEC, b"rootExecutionId": EXEC, b"Job ID": JOB, b"Stage ID": STAGE, b"Task ID": TASK,
    b"accumulatorId": ACC, b"ID": ACC, b"time": TIME, b"Submission Time": TIME, b"Completion Time": TIME,
    b"Launch Time": TIME, b"Finish Time": TIME, b"Getting Result Time": TIME, b"batchId": BATCH,
}
_EXEC_PROP = re.compile(rb'"spark\.sql\.execution\.(?:id|root\.id)":"(\d+)"|execution-root-id-(\d+)')
# a job's stages; a stage's parent stages (the RDD infos' "Parent IDs" are followed by "Storage Level")
_STAGE_LIST = re.compile(rb'"Stage IDs":\[([\d,]*)\]|"Parent IDs":\[([\d,]*)\],"Details"')
_ACC_UPDATES = re.compile(rb'"accumUpdates":\[((?:\[-?\d+,-?\d+\],?)*)\]')
_PAIR_ID = re.compile(rb"\[(-?\d+),")
_NUM = re.compile(rb"\d+")
_TIMESTAMP = re.compile(rb'("Timestamp":)(\d{11,})')

#: events written with every copy; anything else in the SQL part is the application's, written once
_PER_QUERY = (
    b"SparkListenerJobStart", b"SparkListenerJobEnd", b"SparkListenerStageSubmitted", b"SparkListenerStageCompleted",
    b"SparkListenerTaskStart", b"SparkListenerTaskEnd", b"SparkListenerTaskGettingResult",
    b"SparkListenerStageExecutorMetrics", b"SparkListenerSpeculativeTaskSubmitted", b"SparkListenerUnpersistRDD",
    b"org.apache.spark.sql.execution.ui.", b"StreamingQueryListener$QueryProgressEvent",
    b"StreamingQueryListener$QueryIdleEvent",
)
_ONCE_AT_END = (b"SparkListenerApplicationEnd", b"StreamingQueryListener$QueryTerminatedEvent")


def _event_name(line: bytes) -> bytes:
    m = re.match(rb'\{"Event":"([^"]+)"', line)
    return m.group(1) if m else b""


def source_lines(src: str) -> list[bytes]:
    """Every event line of ``src``, decoded (any form the reader opens)."""
    sys.path.insert(0, str(TOOLS))
    from generate_eventlogs import _events_of  # the fixture generator's decoder: the reader's own codecs

    return _events_of(Path(src))


def _slots(line: bytes) -> list[tuple[int, int, int, int]]:
    """(start, end, kind, value) of every number in ``line`` that moves per copy."""
    out = []
    for m in _SCALAR.finditer(line):
        kind, v = _SCALAR_KIND[m.group(1)], int(m.group(2))
        if kind == TIME and v < 10**11:  # 0 or -1: not set
            continue
        if v < 0:  # -1: no such id (a job outside SQL, an unknown stage)
            continue
        out.append((m.start(2), m.end(2), kind, v))
    for m in _EXEC_PROP.finditer(line):
        g = 1 if m.group(1) is not None else 2
        out.append((m.start(g), m.end(g), EXEC, int(m.group(g))))
    for m in _STAGE_LIST.finditer(line):
        g = 1 if m.group(1) is not None else 2
        base = m.start(g)
        for n in _NUM.finditer(m.group(g)):
            out.append((base + n.start(), base + n.end(), STAGE, int(n.group())))
    for m in _ACC_UPDATES.finditer(line):
        base = m.start(1)
        for n in _PAIR_ID.finditer(m.group(1)):
            if int(n.group(1)) >= 0:
                out.append((base + n.start(1), base + n.end(1), ACC, int(n.group(1))))
    out.sort()
    return out


class Template:
    """Lines as one ``bytes % tuple`` template and the numbers it is filled with."""

    def __init__(self, lines: list[bytes], slots: list[list[tuple[int, int, int, int]]]):
        parts, kinds, values = [], [], []
        for line, sl in zip(lines, slots):
            pos = 0
            for s, e, k, v in sl:
                parts.append(line[pos:s].replace(b"%", b"%%"))
                parts.append(b"%d")
                kinds.append(k)
                values.append(v)
                pos = e
            parts.append(line[pos:].replace(b"%", b"%%"))
        self.text = b"".join(parts)
        self.kinds = np.array(kinds, dtype=np.int64)
        self.values = np.array(values, dtype=np.int64)

    def render(self, shift: np.ndarray) -> bytes:
        return self.text % tuple((self.values + shift[self.kinds]).tolist())


def plan(lines: list[bytes]) -> dict:
    """Split the source into the head (before its first query), the per-query body, the events of
    the application inside it (written once) and the tail; each body line's owning execution."""
    first = next((i for i, ln in enumerate(lines) if any(p in _event_name(ln) for p in _PER_QUERY)), len(lines))
    head, body, tail = lines[:first], [], []
    once: dict[int, list[bytes]] = {}  # body position -> the application's events before it
    for ln in lines[first:]:
        name = _event_name(ln)
        if any(p in name for p in _ONCE_AT_END):
            tail.append(ln)
        elif any(p in name for p in _PER_QUERY):
            body.append(ln)
        else:
            once.setdefault(len(body), []).append(ln)
    slots = [_slots(ln) for ln in body]
    # owners: an execution's own events; a job by its properties; stages and tasks by their job
    job_exec: dict[int, int] = {}
    stage_exec: dict[int, int] = {}
    owner: list[int] = []
    for ln, sl in zip(body, slots):
        name = _event_name(ln)
        ex = -1
        if name.startswith(b"org.apache.spark.sql.execution.ui."):
            ex = next((v for s, e, k, v in sl if k == EXEC), -1)
        elif name == b"SparkListenerJobStart":
            m = re.search(rb'"spark\.sql\.execution\.id":"(\d+)"', ln)
            job = next((v for s, e, k, v in sl if k == JOB), -1)
            if m:
                ex = int(m.group(1))
                job_exec[job] = ex
                lst = re.search(rb'"Stage IDs":\[([\d,]*)\]', ln)
                for x in (lst.group(1).split(b",") if lst else []):
                    if x:
                        stage_exec[int(x)] = ex
        elif name == b"SparkListenerJobEnd":
            ex = job_exec.get(next((v for s, e, k, v in sl if k == JOB), -1), -1)
        else:
            st = next((v for s, e, k, v in sl if k == STAGE), None)
            ex = stage_exec.get(st, -1) if st is not None else -1
        owner.append(ex)
    starts = [o for ln, o in zip(body, owner) if b"SparkListenerSQLExecutionStart" in _event_name(ln)]
    maxima = np.zeros(7, dtype=np.int64)
    times = []
    for sl in slots:
        for s, e, k, v in sl:
            if k == TIME:
                times.append(v)
            else:
                maxima[k] = max(maxima[k], v)
    span = (max(times) - min(times)) if times else 0
    gap = max(1, span // max(1, len(starts)))
    return {"head": head, "body": body, "slots": slots, "once": once, "tail": tail, "owner": owner,
            "starts": starts, "maxima": maxima, "period": span + gap}


def write(src: str, dst: str, executions: int, progress: bool = True) -> dict:
    t0 = time.perf_counter()
    p = plan(source_lines(src))
    per_copy = len(p["starts"])
    if per_copy == 0:
        raise SystemExit(f"{src}: no SQL execution to repeat")
    full, rest = divmod(executions, per_copy)
    body, slots, owner = p["body"], p["slots"], p["owner"]
    whole = Template(body, slots)
    step = np.zeros(7, dtype=np.int64)
    step[:] = p["maxima"] + 1
    step[TIME] = p["period"]
    part, picked = None, None
    if rest:  # the last copy: its first ``rest`` executions and what lies between them
        keep = set(p["starts"][:rest])
        last = max(i for i, o in enumerate(owner) if o in keep)
        picked = [i for i in range(len(body)) if owner[i] in keep or (owner[i] == -1 and i <= last)]
        part = Template([body[i] for i in picked], [slots[i] for i in picked])
    once = p["once"]
    copies = full + (1 if rest else 0)
    written = 0
    with open(dst, "wb", buffering=1 << 20) as out:
        out.writelines(p["head"])
        for rep in range(copies):
            if rep == 0 and once:
                # the first copy line by line (its shift is zero), so the application's own events
                # (an executor added mid-run) stay where they were, once
                sel = set(picked) if rep == full else None
                for i, ln in enumerate(body):
                    out.writelines(once.get(i, ()))
                    if sel is None or i in sel:
                        out.write(ln)
                out.writelines(once.get(len(body), ()))
            else:
                out.write((part if rep == full else whole).render(step * rep))
            written += per_copy if rep < full else rest
            if progress and rep and rep % 500 == 0:
                print(f"[scale] {written:,} executions, {out.tell() / 1e6:,.0f} MB", file=sys.stderr)
        end_shift = int(step[TIME]) * max(0, copies - 1)
        for ln in p["tail"]:  # the application's end after the last copy
            out.write(_TIMESTAMP.sub(lambda m: m.group(1) + str(int(m.group(2)) + end_shift).encode(), ln))
        size = out.tell()
    took = time.perf_counter() - t0
    if progress:
        print(f"[scale] {dst}: {executions:,} executions ({per_copy} a copy of {src}), {size / 1e6:,.1f} MB "
              f"in {took:.1f} s ({size / 1e6 / took:,.0f} MB/s)", file=sys.stderr)
    return {"executions": executions, "per_copy": per_copy, "bytes": size, "seconds": took}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", help="a real event log (file, rolling directory, archive; any codec)")
    ap.add_argument("dst", help="the plain log to write")
    ap.add_argument("--executions", "-n", type=int, required=True, help="SQL executions in the output")
    args = ap.parse_args(argv)
    write(args.src, args.dst, args.executions)
    print(json.dumps({"dst": args.dst}))


if __name__ == "__main__":
    main()
