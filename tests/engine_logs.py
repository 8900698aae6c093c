"""Engine event logs written from REAL recorded vanilla Spark logs, for issue 38's engine tests.

    python -m tests.engine_logs              # write the small fixtures into tests/fixtures/engine_logs/

No Photon, Gluten, Comet, RAPIDS or Auron can run here, so their logs are the real vanilla logs
of the same queries, rewritten the way each engine's columnar rule rewrites a plan when AQE
creates a stage: the execution's *initial* plan (``SparkListenerSQLExecutionStart``) stays as
Spark logged it, every later plan version (``SparkListenerSQLAdaptiveExecutionUpdate``) is in the
engine's names. Every name written comes from :mod:`aqe_core.model.engines`, which cites its
public source (repo + path, or URL) for each; the generator asserts it is there. Everything else
(task events, metric values, stages, jobs, the queries' shapes and AQE's decisions) is the
vanilla log's, so a test can hold the engine log's decisions against the vanilla one's.

What each engine changes (beyond renaming operators to the engine's names):

* ``photon`` (Databricks Runtime 13.3 as in NVIDIA/spark-rapids-tools'
  ``nds_q88_photon_db_13_3.zstd``): an exchange becomes ``PhotonShuffleExchangeSource`` (above
  AQE's read and stage) > ``ShuffleQueryStage`` > ``PhotonShuffleMapStage`` (with the five ``aos
  ...`` metrics, never updated, as in that log where AOS did not act) > ``PhotonShuffleExchangeSink
  <partitioning>``; Spark's exchange metrics split between the sink (write side; "number of
  partitions" typed ``maximum`` as there, "shuffle bytes written" is "num bytes written") and the
  source (read side); a reused one is ``ReusedExchange [..], PhotonShuffleMapStage``; whole-stage
  wrappers and transitions go (one ``PhotonResultStage`` under the result stage), a filter over a
  scan is fused into ``PhotonScan`` (that log has no filter where the initial plan has one); a
  sort-merge join is a ``PhotonShuffledHashJoin`` (Databricks' own table maps it to
  SortMergeJoin). The log opens with ``DBCEventLoggingListenerMetadata`` ("Spark Version":
  "3.4.1") and no ``SparkListenerLogStart``, and carries the cluster tags of a Photon runtime.
* ``gluten`` (Velox, as Microsoft Fabric's native engine): ``ColumnarExchange``, ``*Transformer``
  operators, ``WholeStageCodegenTransformer`` / ``InputIteratorTransformer``; a sort-merge join
  is rewritten as ``ShuffledHashJoinExecTransformer`` (``spark.gluten.sql.columnar.
  forceShuffledHashJoin``, default true: the engine's own rewrite); AQE's reads stay Spark's.
* ``comet``: ``CometExchange``, ``Comet*`` operators, ``CometColumnarToRow``; reads stay Spark's.
* ``rapids``: ``GpuColumnarExchange`` ("number of partitions" is "partitions"), AQE's read is
  ``GpuCustomShuffleReader`` under a ``GpuShuffleCoalesce`` with its own metrics ("partitions",
  "partition data size") and no driver updates (its source posts none: the read's counts are not
  in such a log), a sort-merge join is ``GpuShuffledHashJoin`` with its sorts removed
  (``spark.rapids.sql.replaceSortMergeJoin.enabled``, default true).
* ``auron``: ``NativeShuffleExchange`` under Spark's ``AQEShuffleRead`` (apache/auron#2125), one
  ``NativeBroadcastJoin`` for hash and nested-loop broadcast joins, ``Native*`` operators.
"""
from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Callable, Iterator, Optional

import zstandard

from aqe_core.model.engines import by_key, operator_of

ROOT = Path(__file__).resolve().parents[1]
#: sample_logs/eventlogs/MANIFEST.json "spark430_tpcds_like" (tools/record_big_plans.py): 300+ node plans
TPCDS_LIKE = ROOT / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"
#: sample_logs/eventlogs/MANIFEST.json "spark359_zstd": a runtime broadcast join, a skewed join, coalescing
SMALL = ROOT / "sample_logs" / "eventlogs" / "local-1795309160158.zstd"
OUT = ROOT / "tests" / "fixtures" / "engine_logs"
ENGINE_KEYS = ("photon", "gluten", "comet", "rapids", "auron")

_SQL = "org.apache.spark.sql.execution.ui."
_START, _UPDATE, _DRIVER = _SQL + "SparkListenerSQLExecutionStart", _SQL + "SparkListenerSQLAdaptiveExecutionUpdate", \
    _SQL + "SparkListenerDriverAccumUpdates"

#: Spark nodeName -> the engine's, per engine (each checked against the registry, which cites it)
RENAMES: dict[str, dict[str, str]] = {
    "photon": {"BroadcastHashJoin": "PhotonBroadcastHashJoin", "BroadcastNestedLoopJoin": "PhotonBroadcastNestedLoopJoin",
               "SortMergeJoin": "PhotonShuffledHashJoin", "ShuffledHashJoin": "PhotonShuffleHashJoin",
               "Project": "PhotonProject", "Filter": "PhotonFilter", "Sort": "PhotonSort", "Union": "PhotonUnion",
               "TakeOrderedAndProject": "PhotonTopK", "BroadcastExchange": "PhotonBroadcastExchange",
               "Expand": "PhotonExpand", "Window": "PhotonWindow"},
    "gluten": {"BroadcastHashJoin": "BroadcastHashJoinExecTransformer",
               "BroadcastNestedLoopJoin": "VeloxBroadcastNestedLoopJoinExecTransformer",
               "SortMergeJoin": "ShuffledHashJoinExecTransformer", "ShuffledHashJoin": "ShuffledHashJoinExecTransformer",
               "HashAggregate": "RegularHashAggregateExecTransformer", "Project": "ProjectExecTransformer",
               "Filter": "FilterExecTransformer", "Sort": "SortExecTransformer", "Union": "ColumnarUnion",
               "TakeOrderedAndProject": "TakeOrderedAndProjectExecTransformer", "Exchange": "ColumnarExchange",
               "BroadcastExchange": "ColumnarBroadcastExchange", "InputAdapter": "InputIteratorTransformer"},
    "comet": {"BroadcastHashJoin": "CometBroadcastHashJoin", "BroadcastNestedLoopJoin": "CometBroadcastNestedLoopJoin",
              "SortMergeJoin": "CometSortMergeJoin", "ShuffledHashJoin": "CometHashJoin",
              "HashAggregate": "CometHashAggregate", "Project": "CometProject", "Filter": "CometFilter",
              "Sort": "CometSort", "Union": "CometUnion", "TakeOrderedAndProject": "CometTakeOrderedAndProject",
              "Exchange": "CometExchange", "BroadcastExchange": "CometBroadcastExchange",
              "ColumnarToRow": "CometColumnarToRow"},
    "rapids": {"BroadcastHashJoin": "GpuBroadcastHashJoin", "BroadcastNestedLoopJoin": "GpuBroadcastNestedLoopJoin",
               "SortMergeJoin": "GpuShuffledHashJoin", "ShuffledHashJoin": "GpuShuffledHashJoin",
               "HashAggregate": "GpuHashAggregate", "Project": "GpuProject", "Filter": "GpuFilter", "Sort": "GpuSort",
               "Union": "GpuUnion", "TakeOrderedAndProject": "GpuTopN", "Exchange": "GpuColumnarExchange",
               "BroadcastExchange": "GpuBroadcastExchange", "AQEShuffleRead": "GpuCustomShuffleReader",
               "ColumnarToRow": "GpuColumnarToRow"},
    "auron": {"BroadcastHashJoin": "NativeBroadcastJoin", "BroadcastNestedLoopJoin": "NativeBroadcastJoin",
              "SortMergeJoin": "NativeSortMergeJoin", "ShuffledHashJoin": "NativeShuffledHashJoin",
              "HashAggregate": "NativeHashAggregate", "Project": "NativeProject", "Filter": "NativeFilter",
              "Sort": "NativeSort", "Union": "NativeUnion", "TakeOrderedAndProject": "NativeTakeOrdered",
              "Exchange": "NativeShuffleExchange", "BroadcastExchange": "NativeBroadcastExchange"},
}
#: scans: Spark's "Scan parquet <table>" -> the engine's prefix (registry: prefix operators)
SCANS = {"photon": "PhotonScan parquet", "gluten": "FileSourceScanExecTransformer parquet", "comet": "CometScan parquet",
         "rapids": "GpuScan parquet", "auron": "NativeParquetScan"}
#: Spark wrappers each engine's stages do without (its own wrapper or none)
DROPPED = {"photon": ("WholeStageCodegen", "InputAdapter", "ColumnarToRow"), "gluten": ("ColumnarToRow",),
           "comet": ("WholeStageCodegen", "InputAdapter"), "rapids": ("WholeStageCodegen", "InputAdapter"),
           "auron": ("ColumnarToRow",)}
#: the log's Spark properties that say the engine ran (registry: Engine.markers)
PROPERTIES = {
    "photon": {"spark.databricks.clusterUsageTags.sparkVersion": "13.3.x-photon-scala2.12",
               "spark.databricks.clusterUsageTags.runtimeEngine": "PHOTON"},
    "gluten": {"spark.plugins": "org.apache.gluten.GlutenPlugin", "spark.gluten.sql.columnar.backend.lib": "velox"},
    "comet": {"spark.plugins": "org.apache.spark.CometPlugin"},
    "rapids": {"spark.plugins": "com.nvidia.spark.SQLPlugin"},
    "auron": {"spark.sql.extensions": "org.apache.spark.sql.auron.AuronSparkSessionExtension", "spark.auron.enable": "true"},
}
#: Photon: Spark's exchange metrics on the sink (write side) and the source (read side), by the
#: names NVIDIA's q88 log shows on each (None: kept as Spark names it)
PHOTON_SINK = {"shuffle bytes written": "num bytes written", "shuffle records written": "number of output rows",
               "shuffle write time": "total time spent producing shuffle files", "data size": "num uncompressed bytes written",
               "number of partitions": None}
PHOTON_SOURCE = {"records read": "number of output rows", "local bytes read": None, "remote bytes read": None,
                 "fetch wait time": None, "local blocks read": None, "remote blocks read": None,
                 "remote bytes read to disk": None}
_STAGES = ("ShuffleQueryStage", "BroadcastQueryStage", "TableCacheQueryStage", "ResultQueryStage")
AOS = ("aos old number of partitions", "aos new number of partitions", "aos intended number of partitions",
       "aos rule action", "aos shuffle group id")


def _check_registry() -> None:
    """Every engine name the generator writes is in the registry (which cites where it is from)."""
    for key, renames in RENAMES.items():
        for name in [*renames.values(), SCANS[key]]:
            hit = operator_of(name)
            assert hit is not None and hit[0].key == key, (key, name)
    for name in ("PhotonShuffleExchangeSource", "PhotonShuffleMapStage", "PhotonShuffleExchangeSink", "PhotonResultStage",
                 "PhotonAgg", "PhotonGroupingAgg", "WholeStageCodegenTransformer (1)", "VeloxColumnarToRow",
                 "GpuShuffleCoalesce"):
        assert operator_of(name) is not None, name
    photon = by_key("photon")
    assert photon is not None and {m.name for m in photon.metrics} >= set(AOS[:4]) | {"num bytes written"}


# --------------------------------------------------------------------------------------------
# plans
# --------------------------------------------------------------------------------------------
class _Plan:
    """Rewrites one plan tree (SparkPlanInfo JSON) into an engine's names."""

    def __init__(self, key: str, next_acc: Callable[[], int]) -> None:
        self.key, self.next_acc = key, next_acc
        #: an exchange's own accumulators -> its map stage's aos accumulators: one SparkPlan, one set
        #: of accumulators, wherever it is drawn (the reader tells a reuse by them)
        self.aos: dict[tuple, list[int]] = {}

    def update(self, info: dict) -> dict:
        """A plan version: the engine converts each query stage when AQE creates it, so only the
        stages are in its names until the final plan (NVIDIA's q88 log: an update's remainder is
        Spark's ``BroadcastNestedLoopJoin``/``Exchange`` over ``ShuffleQueryStage >
        PhotonShuffleMapStage``)."""
        if "isFinalPlan=true" in info.get("simpleString", ""):
            return self.convert(info)
        if info["nodeName"] in _STAGES:
            return self.convert(info)
        return {**info, "children": [self.update(k) for k in info.get("children") or []]}

    def node(self, name: str, desc: str, children: list, metrics: Optional[list] = None) -> dict:
        return {"nodeName": name, "simpleString": desc, "children": children, "metadata": {}, "metrics": metrics or []}

    def convert(self, n: dict) -> dict:
        name = n["nodeName"]
        kids = n.get("children") or []
        if self.key == "photon" and name == "ResultQueryStage" and kids:
            return {**n, "children": [self.node("PhotonResultStage", "PhotonResultStage", [self.convert(kids[0])])]}
        if any(name.startswith(w) for w in DROPPED[self.key]) and len(kids) == 1:
            return self.convert(kids[0])
        if self.key == "photon" and name == "Filter" and len(kids) == 1 and kids[0]["nodeName"].startswith("Scan "):
            return self.convert(kids[0])  # fused into PhotonScan (its DataFilters)
        if self.key == "rapids" and name.startswith("SortMergeJoin"):
            kids = [k["children"][0] if k["nodeName"] == "Sort" and k.get("children") else k for k in kids]
        if self.key == "photon" and name == "Exchange":
            return self._photon_source(self._photon_exchange(n))
        if self.key == "photon" and name == "ShuffleQueryStage" and kids and kids[0]["nodeName"] in ("Exchange", "ReusedExchange"):
            inner = self._photon_exchange(kids[0]) if kids[0]["nodeName"] == "Exchange" else self._photon_reused(kids[0])
            out = {**n, "children": [inner]}
            return out
        out = {**n, "children": [self.convert(k) for k in kids]}
        out = self._rename(out)
        if self.key == "photon" and out["nodeName"] != "AQEShuffleRead":  # (the source goes above AQE's read)
            out["children"] = [self._photon_source(c) if self._reads_photon_stage(c) else c for c in out["children"]]
        if self.key == "rapids" and out["nodeName"] == "GpuCustomShuffleReader":
            return self.node("GpuShuffleCoalesce", "GpuShuffleCoalesce", [out])
        return out

    def _rename(self, n: dict) -> dict:
        name = n["nodeName"]
        base, skew = (name[: -len("(skew=true)")], "(skew=true)") if name.endswith("(skew=true)") else (name, "")
        new = RENAMES[self.key].get(base)
        if base.startswith("Scan ") and base.split(" ")[1] == "parquet":
            table = base.split(" ", 2)[2] if base.count(" ") >= 2 else ""
            new_name = f"{SCANS[self.key]} {table}" if self.key != "photon" else "PhotonScan parquet "
            desc = n.get("simpleString", "")
            desc = new_name.rstrip() + desc[desc.find(" ", 9) if desc.startswith("FileScan ") else len(base):]
            return {**n, "nodeName": new_name, "simpleString": desc}
        if base == "HashAggregate" and self.key == "photon":
            new = "PhotonAgg" if "keys=[]" in n.get("simpleString", "") else "PhotonGroupingAgg"
        if self.key == "gluten" and name.startswith("WholeStageCodegen"):
            return {**n, "nodeName": name.replace("WholeStageCodegen", "WholeStageCodegenTransformer")}
        if new is None:
            return n
        desc = n.get("simpleString", "")
        desc = new + desc[len(base):] if desc.startswith(base) else desc
        metrics = n.get("metrics") or []
        if self.key == "rapids" and base in ("AQEShuffleRead", "Exchange"):
            metrics = [{**m, "name": "partitions"} if m["name"] == "number of partitions" else m for m in metrics
                       if m["name"] not in ("number of coalesced partitions", "number of skewed partitions",
                                            "number of skewed partition splits", "number of empty partitions")]
        return {**n, "nodeName": new + skew, "simpleString": desc, "metrics": metrics}

    # -- Photon's exchange of three nodes ------------------------------------------------------
    def _split(self, metrics: list, names: dict[str, Optional[str]], mtype: Optional[str] = None) -> list:
        out = []
        for m in metrics:
            if m["name"] in names:
                new = names[m["name"]] or m["name"]
                typ = "maximum" if m["name"] == "number of partitions" else m["metricType"]
                out.append({**m, "name": new, "metricType": mtype or typ})
        return out

    def _photon_exchange(self, ex: dict) -> dict:
        """``Exchange <p>`` -> ``PhotonShuffleMapStage > PhotonShuffleExchangeSink <p>`` (the source
        is put above AQE's read and stage by the parent)."""
        part, origin = _partitioning(ex.get("simpleString", ""))
        sink = self.node("PhotonShuffleExchangeSink", f"PhotonShuffleExchangeSink {part}".rstrip(),
                         [self.convert(k) for k in ex.get("children") or []],
                         self._split(ex.get("metrics") or [], PHOTON_SINK))
        ids = self.aos.setdefault(tuple(m["accumulatorId"] for m in ex.get("metrics") or []),
                                  [self.next_acc() for _ in AOS])
        aos = [{"name": a, "accumulatorId": i, "metricType": "sum"} for a, i in zip(AOS, ids)]
        stage = self.node("PhotonShuffleMapStage", f"PhotonShuffleMapStage {origin}", [sink], aos)
        stage["_source_metrics"] = self._split(ex.get("metrics") or [], PHOTON_SOURCE)
        return stage

    def _photon_reused(self, reused: dict) -> dict:
        kids = reused.get("children") or []
        desc = reused.get("simpleString", "").split(", Exchange ")[0] + ", PhotonShuffleMapStage"
        inner = [self._photon_exchange(kids[0])] if kids and kids[0]["nodeName"] == "Exchange" else []
        return {**reused, "simpleString": desc, "children": inner}

    def _reads_photon_stage(self, c: dict) -> bool:
        while c["nodeName"] == "AQEShuffleRead" and c.get("children"):
            c = c["children"][0]
        if c["nodeName"] != "ShuffleQueryStage" or not c.get("children"):
            return False
        inner = c["children"][0]
        return inner["nodeName"] == "PhotonShuffleMapStage" or (
            inner["nodeName"] == "ReusedExchange" and inner["simpleString"].endswith("PhotonShuffleMapStage"))

    def _photon_source(self, c: dict) -> dict:
        stage = c
        while stage.get("children") and stage["nodeName"] != "PhotonShuffleMapStage":
            stage = stage["children"][0]
        metrics = stage.pop("_source_metrics", []) if stage["nodeName"] == "PhotonShuffleMapStage" else []
        return self.node("PhotonShuffleExchangeSource", "PhotonShuffleExchangeSource", [c], metrics)


def _partitioning(desc: str) -> tuple[str, str]:
    """(partitioning, shuffle origin) of Spark's ``Exchange <partitioning>, <origin>, [plan_id=..]``.

    >>> _partitioning("Exchange hashpartitioning(k#1, 40), ENSURE_REQUIREMENTS, [plan_id=7]")
    ('hashpartitioning(k#1, 40)', 'ENSURE_REQUIREMENTS')
    >>> _partitioning("Exchange SinglePartition, EXECUTOR_BROADCAST, [plan_id=7]")
    ('SinglePartition', 'EXECUTOR_BROADCAST')
    """
    rest = desc[len("Exchange "):] if desc.startswith("Exchange ") else desc
    depth, end = 0, len(rest)
    for i, ch in enumerate(rest):
        depth += (ch == "(") - (ch == ")")
        if (ch == ")" and depth == 0) or (ch == "," and depth == 0):
            end = i + 1 if ch == ")" else i
            break
    tail = rest[end:].split(", ")
    return rest[:end], (tail[1] if len(tail) > 1 and tail[1] and not tail[1].startswith("[") else "ENSURE_REQUIREMENTS")


def _strip(n: dict) -> None:
    stack = [n]
    while stack:
        x = stack.pop()
        x.pop("_source_metrics", None)
        stack.extend(x.get("children") or [])


def _accs(info: dict) -> Iterator[tuple[str, str, int]]:
    stack = [info]
    while stack:
        x = stack.pop()
        for m in x.get("metrics") or []:
            yield x["nodeName"], m["name"], m["accumulatorId"]
        stack.extend(x.get("children") or [])


# --------------------------------------------------------------------------------------------
# logs
# --------------------------------------------------------------------------------------------
def read_events(path: Path) -> list[dict]:
    raw = path.read_bytes()
    if raw[:4] == b"\x28\xb5\x2f\xfd":
        raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def rewrite(events: list[dict], key: str) -> list[dict]:
    """The vanilla log's events in ``key``'s form (see the module docstring)."""
    _check_registry()
    top = max((a for e in events if e["Event"] in (_START, _UPDATE) for _n, _m, a in _accs(e["sparkPlanInfo"])),
              default=0)
    counter = iter(range(top + 1_000_000, top + 10_000_000))
    plan = _Plan(key, lambda: next(counter))
    silent: set[int] = set()  # RAPIDS: its read posts no driver metrics
    out: list[dict] = []
    for e in events:
        ev = e["Event"]
        if ev == "SparkListenerLogStart" and key == "photon":
            out.append({"Event": "DBCEventLoggingListenerMetadata", "Spark Version": "3.4.1",
                        "Timestamp": e.get("Timestamp", 0), "Rollover Number": 0, "SparkContext Id": 1})
            continue
        if ev == _UPDATE:
            e = copy.deepcopy(e)
            info = plan.update(e["sparkPlanInfo"])
            _strip(info)
            e["sparkPlanInfo"] = info
            if key == "rapids":
                silent.update(a for n, _m, a in _accs(info) if n == "GpuCustomShuffleReader")
        elif ev == "SparkListenerEnvironmentUpdate":
            e = copy.deepcopy(e)
            e["Spark Properties"].update(PROPERTIES[key])
        elif ev == _DRIVER and silent:
            e = {**e, "accumUpdates": [u for u in e["accumUpdates"] if u[0] not in silent]}
        out.append(e)
    if key == "rapids":  # (a driver update posted before the plan that names the read: drop it too)
        out = [{**e, "accumUpdates": [u for u in e["accumUpdates"] if u[0] not in silent]} if e["Event"] == _DRIVER else e
               for e in out]
    return out


def write(events: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(json.dumps(e, separators=(",", ":")) for e in events) + "\n").encode()
    path.write_bytes(zstandard.ZstdCompressor(level=10).compress(data))
    return path


def engine_log(src: Path, key: str, dst: Path) -> Path:
    return write(rewrite(read_events(src), key), dst)


def main() -> None:
    for key in ENGINE_KEYS:
        p = engine_log(SMALL, key, OUT / f"{key}-{SMALL.name}")
        print(p.relative_to(ROOT), p.stat().st_size)


if __name__ == "__main__":
    main()
