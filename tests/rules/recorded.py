"""What real Spark did, replayed once, for the rules' test files.

``tests/fixtures/captures/<release>/<workload>.json.gz`` were recorded by
``tools/record_fixtures.py`` on each release (docs/capture-format.md): every adaptive read's
partition specs and every join's strategy are Spark's. A rule's test file asks here for the
reads or joins its rule decided (or should have) and checks them against those specs, so the
expected values are always Spark's, never numbers typed from our code. The replay of every
capture takes a few seconds; it is done once per test process.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Iterator

from aqe_core.engine.results import JoinResult, QueryResult, ReadResult
from aqe_core.engine.simulate import simulate
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, CoalescedPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
    ShufflePartitionSpec,
)
from aqe_core.readers.capture_file import load_capture
from aqe_core.readers.eventlog.loader import load

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
PATHS = sorted(CAPTURES.glob("*/*.json.gz"))
RELEASES = sorted({p.parent.name for p in PATHS})


def releases_with(*workloads: str) -> list[str]:
    """The releases on which every one of ``workloads`` was recorded."""
    return [r for r in RELEASES if all((CAPTURES / r / f"{w}.json.gz").exists() for w in workloads)]


#: every event log recorded from real Spark (samples, fixtures, the listener's, the retry cases)
LOGS = sorted([p for d in ("sample_logs/eventlogs", "tests/fixtures/eventlogs") for p in (ROOT / d).iterdir()
               if p.name not in ("MANIFEST.json", "listener", "retry_cases", "streaming")]
              + [p for p in (ROOT / "tests/fixtures/eventlogs/listener").glob("*/*") if p.name != "captures.json.gz"]
              + list((ROOT / "tests/fixtures/eventlogs/retry_cases").glob("*/*.zstd"))
              + list((ROOT / "tests/fixtures/eventlogs/streaming").glob("*/*/*.zstd")))
#: the recorded captures and the bundled sample captures
EVENT_LOG_CAPTURES = PATHS + sorted((ROOT / "sample_logs/captures").glob("*.json.gz"))


@dataclass(frozen=True)
class Replayed:
    """One recorded query and our replay of it with the release's rules and its own settings."""

    release: str
    workload: str
    capture: Capture
    query: QueryCapture
    result: QueryResult

    @property
    def where(self) -> str:
        return f"{self.release}/{self.workload}/{self.query.preset or self.query.label}"


@cache
def recorded_executions() -> list[tuple[str, str, Any]]:
    """(log name, Spark release, execution) for every execution of :data:`LOGS` with an initial plan."""
    out = []
    for path in LOGS:
        log = load(str(path))
        for ex in log.executions.values():
            if ex.initial_plan is not None:
                out.append((path.name, log.application.spark_version, ex))
    return out


@cache
def replayed() -> tuple[Replayed, ...]:
    out = []
    for path in PATHS:
        cap = load_capture(path)
        rep = simulate(cap)
        for q, qr in zip(cap.queries, rep.queries):
            out.append(Replayed(path.parent.name, path.name.split(".")[0], cap, q, qr))
    return tuple(out)


def reads(release: str | None = None, workload: str | None = None) -> Iterator[tuple[Replayed, ReadResult]]:
    for rq in replayed():
        if (release is None or rq.release == release) and (workload is None or rq.workload == workload):
            for r in rq.result.reads:
                yield rq, r


def joins(release: str | None = None, workload: str | None = None) -> Iterator[tuple[Replayed, JoinResult]]:
    for rq in replayed():
        if (release is None or rq.release == release) and (workload is None or rq.workload == workload):
            for j in rq.result.joins:
                yield rq, j


def read_locally(specs: list[ShufflePartitionSpec] | None) -> bool:
    """Spark read the stage's map outputs where they are (``OptimizeShuffleWithLocalRead``)."""
    return bool(specs) and isinstance(specs[0], (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec))


def split(specs: list[ShufflePartitionSpec] | None) -> bool:
    """Spark split some reducer partition by map ranges (a skew rule)."""
    return any(isinstance(s, PartialReducerPartitionSpec) for s in specs or [])


def merged(specs: list[ShufflePartitionSpec] | None) -> bool:
    """Spark read some range of more than one reducer as one task (coalescing)."""
    return any(isinstance(s, CoalescedPartitionSpec) and s.end_reducer_index - s.start_reducer_index > 1
               for s in specs or [])


def one_partition_too_big(version: str) -> tuple[str, str]:
    """The join rules' shared case: (strategy of the recorded default query, strategy once one build-side partition is above
    maxShuffledHashJoinLocalMapThreshold)."""
    cap = load_capture(CAPTURES / version / "shuffled_hash_join.json.gz")
    q = next(q for q in cap.queries if q.preset == "default")
    rep = simulate(Capture(cap.spark_version, [q]))
    q2 = copy.deepcopy(q)
    for st in q2.stages:
        sh = q2.shuffle(st.shuffle_id) if st.shuffle_id is not None else None
        if sh is not None and sh.bytes_by_partition_id:
            sh.bytes_by_partition_id = [9 * 1024 * 1024] + list(sh.bytes_by_partition_id[1:])
    return rep.queries[0].joins[0].simulated, simulate(Capture(cap.spark_version, [q2])).queries[0].joins[0].simulated
