"""Event logs that are small on disk and hold gigabytes of strings once read (issue 37): what the
memory budget must count. Each is zstd- or gzip-compressed text of real event shapes (after a real
3.0.1 log's header), with one kind of string blown up: descriptions, error messages,
``modifiedConfigs``, job properties, environment properties, distinct event names, stage infos,
plan node strings, plan descriptions of executions that never end, listener payloads.

``write(kind, path, mb)`` writes about ``mb`` MiB of that kind of string (decoded)."""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Callable, Iterator

from aqe_core import config
from tests.budget_logs import HEADER, SQL

MiB = 1 << 20
#: one string's size: under the reader's line limit (16 MiB at a 1 GiB budget), big enough to matter
PIECE = 2 * MiB


def _plan(simple: str = "LocalTableScan") -> dict:
    return {"nodeName": "LocalTableScan", "simpleString": simple, "children": [], "metadata": {}, "metrics": []}


def _start(eid: int, *, description: str = "q", configs: dict | None = None, plan_text: str = "",
           plan: dict | None = None) -> dict:
    d = {"Event": f"{SQL.decode()}SparkListenerSQLExecutionStart", "executionId": eid, "description": description,
         "details": "", "physicalPlanDescription": plan_text, "sparkPlanInfo": plan or _plan(), "time": eid}
    if configs is not None:
        d["modifiedConfigs"] = configs
    return d


def _end(eid: int, error: str | None = None) -> dict:
    d = {"Event": f"{SQL.decode()}SparkListenerSQLExecutionEnd", "executionId": eid, "time": eid + 1}
    if error is not None:
        d["errorMessage"] = error
    return d


def _pieces(mb: int, size: int = PIECE) -> Iterator[int]:
    """Indexes of the strings that add up to ``mb`` MiB."""
    return iter(range(max(1, (mb * MiB) // size)))


def _text(i: int, size: int = PIECE) -> str:
    """A distinct string of ``size`` characters (distinct so nothing can share them) that packs
    about 60 times, under the reader's 1,000-times bomb ratio: 64 random hex digits a 4 KiB."""
    head = f"{i:08d}:"
    block = 4096
    body = "".join(os.urandom(32).hex() + "x" * (block - 64) for _ in range(size // block + 1))
    return (head + body)[:size]


def descriptions(mb: int) -> Iterator[dict]:
    for i in _pieces(mb):
        yield _start(i, description=_text(i))
        yield _end(i)


def error_messages(mb: int) -> Iterator[dict]:
    for i in _pieces(mb):
        yield _start(i)
        yield _end(i, error=_text(i))


def modified_configs(mb: int) -> Iterator[dict]:
    for i in _pieces(mb):  # 2 MiB per execution: many keys, each with a 16 KiB value
        yield _start(i, configs={f"spark.sql.k{i}.{j}": _text(j, 16 * 1024) for j in range(PIECE // (16 * 1024))})
        yield _end(i)


def job_properties(mb: int) -> Iterator[dict]:
    prop = config.EXECUTION_ID_KEY
    yield _start(0)
    for i in _pieces(mb):
        props = {prop: "0", **{f"spark.sql.p{i}.{j}": _text(j, 16 * 1024) for j in range(PIECE // (16 * 1024))}}
        yield {"Event": "SparkListenerJobStart", "Job ID": i, "Submission Time": 1, "Stage Infos": [],
               "Stage IDs": [], "Properties": props}
        yield {"Event": "SparkListenerJobEnd", "Job ID": i, "Completion Time": 2, "Job Result": {"Result": "JobSucceeded"}}
    yield _end(0)


def environment(mb: int) -> Iterator[dict]:
    for i in _pieces(mb):
        yield {"Event": "SparkListenerEnvironmentUpdate", "JVM Information": {}, "System Properties": {},
               "Classpath Entries": {},
               "Spark Properties": {f"spark.k{i}.{j}": _text(j, 16 * 1024) for j in range(PIECE // (16 * 1024))}}


def event_names(mb: int) -> Iterator[dict]:
    size = 4096
    for i in _pieces(mb, size):
        yield {"Event": _text(i, size)}


def stage_infos(mb: int) -> Iterator[dict]:
    """Jobs whose stage infos name many stages with long names (and declare one task each)."""
    prop = config.EXECUTION_ID_KEY
    yield _start(0)
    per_job = 512
    size = 4096
    for job, lo in enumerate(range(0, (mb * MiB) // size, per_job)):
        ids = list(range(lo, lo + per_job))
        yield {"Event": "SparkListenerJobStart", "Job ID": job, "Submission Time": 1,
               "Stage Infos": [{"Stage ID": s, "Stage Attempt ID": 0, "Stage Name": _text(s, size), "Number of Tasks": 1}
                               for s in ids],
               "Stage IDs": ids, "Properties": {prop: "0"}}
    yield _end(0)


def plan_strings(mb: int) -> Iterator[dict]:
    for i in _pieces(mb):
        yield _start(i, plan=_plan(_text(i)))
        yield _end(i)


def plan_descriptions(mb: int) -> Iterator[dict]:
    """Executions that start with a big ``physicalPlanDescription`` and never end."""
    for i in _pieces(mb):
        yield _start(i, plan_text=_text(i))


def listener_payloads(mb: int) -> Iterator[dict]:
    for i in _pieces(mb):
        yield _start(i)
        yield {"Event": "io.aqelens.listener.AqeLensQueryEvent", "executionId": i,
               "payload": json.dumps({"junk": _text(i)})}
        yield _end(i)


KINDS: dict[str, Callable[[int], Iterator[dict]]] = {
    "descriptions": descriptions, "error_messages": error_messages, "modified_configs": modified_configs,
    "job_properties": job_properties, "environment": environment, "event_names": event_names,
    "stage_infos": stage_infos, "plan_strings": plan_strings, "plan_descriptions": plan_descriptions,
    "listener_payloads": listener_payloads,
}


def write(kind: str, path: Path, mb: int, codec: str = "zstd") -> Path:
    """``path`` (its name gets the codec's suffix): the log, compressed; returns the path written."""
    import zstandard

    out = path.with_name(path.name + (".zstd" if codec == "zstd" else ".gz"))
    raw = zstandard.ZstdCompressor(level=3).stream_writer(open(out, "wb")) if codec == "zstd" else gzip.open(out, "wb", 6)
    with raw as f:
        f.write(HEADER)
        for event in KINDS[kind](mb):
            f.write(json.dumps(event, separators=(",", ":")).encode() + b"\n")
    return out
