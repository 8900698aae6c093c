"""Vendor runtimes and native engines that run Spark's plans: their operator names in AQE's
vocabulary, their metrics, and which decisions are Spark's rules and which are the engine's own.

Every engine here plugs into Spark the same way: a columnar rule (``SparkSessionExtensions``
``injectColumnar`` or a plugin) rewrites each query stage when AQE creates it. So an event log's
*initial* plan (``SparkListenerSQLExecutionStart``) carries Spark's names and the later versions
the engine's: ``BroadcastHashJoin`` there is ``PhotonBroadcastHashJoin`` here. That is a
conversion, not an AQE decision: views compare :func:`spark_name` s, never raw names.

What stays Spark's: AQE's planner (``AdaptiveSparkPlanExec``) and its reads (``AQEShuffleRead``,
or RAPIDS' ``GpuCustomShuffleReader`` built from the same partition specs), so a read's
coalesced/skewed counts and a join's runtime re-plan are Spark's rules and replay applies. What
is the engine's own (:attr:`Engine.own`): e.g. Databricks' auto-optimized shuffle (AOS) picking a
shuffle's partition count, or an engine running every sort-merge join as a hash join. Those are
shown as the engine's metric or the engine's rewrite, never exact, never replayed.

Each name cites where it comes from (``Cite``: ``repo path`` of a public source file, or a URL).
"""
from __future__ import annotations

from functools import lru_cache

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from aqe_core import config

__all__ = [
    "ENGINES", "Engine", "EngineMetric", "Operator", "OwnDecision", "Role", "by_key", "engine_of_names",
    "engine_of_properties", "is_engine_wrapper", "operator_of", "spark_name",
]


class Role:
    """What an operator is in AQE's vocabulary (``Operator.role``)."""

    EXCHANGE = "exchange"  # the shuffle exchange: carries the partitioning (Spark's ``Exchange``)
    EXCHANGE_PART = "exchange part"  # another node of an engine's exchange (its read side, its stage)
    SHUFFLE_READ = "shuffle read"  # AQE's adaptive read (Spark's ``AQEShuffleRead``)
    BROADCAST = "broadcast exchange"
    JOIN = "join"
    AGGREGATE = "aggregate"
    SCAN = "scan"
    TRANSITION = "columnar transition"  # row <-> columnar, inserted around every engine stage
    WRAPPER = "stage wrapper"  # an engine's whole-stage wrapper (Spark's ``WholeStageCodegen``)
    OTHER = "operator"


@dataclass(frozen=True)
class Operator:
    """One engine operator: its ``nodeName`` (a prefix when ``prefix``: scans append the relation),
    its role, the Spark ``nodeName`` it stands for ("" for wrappers and transitions), and where the
    name comes from."""

    name: str
    role: str
    spark: str
    cite: str
    prefix: bool = False
    note: str = ""


@dataclass(frozen=True)
class EngineMetric:
    """A metric an engine's operator carries about partitions, sizes, coalescing or skew.
    ``decided_by``: ``"spark"`` (Spark's rules decided the number) or ``"engine"``."""

    name: str
    on: str
    meaning: str
    decided_by: str
    cite: str


@dataclass(frozen=True)
class OwnDecision:
    """A decision the engine makes itself (not an AQE rule): shown as the engine's, not replayed."""

    key: str
    what: str
    conf: str
    cite: str


@dataclass(frozen=True)
class Engine:
    key: str
    label: str
    operators: tuple[Operator, ...] = field(repr=False)
    metrics: tuple[EngineMetric, ...] = field(repr=False)
    #: Spark properties that say the engine ran: (key, substring of its value)
    markers: tuple[tuple[str, str], ...]
    #: what stays Spark's (replay applies to it)
    spark_decides: str
    own: tuple[OwnDecision, ...] = field(default_factory=tuple)
    cite: str = ""

    def own_decision(self, key: str) -> Optional[OwnDecision]:
        return next((d for d in self.own if d.key == key), None)


# --------------------------------------------------------------------------------------------
# sources
# --------------------------------------------------------------------------------------------
#: a real Databricks Runtime 13.3 Photon event log (TPC-DS q88): its plan node names and metric names
PHOTON_LOG = "NVIDIA/spark-rapids-tools core/src/test/resources/spark-events-qualification/nds_q88_photon_db_13_3.zstd"
#: NVIDIA's Photon -> Spark operator table "generated from Databricks Runtime 13.3"
PHOTON_MAP = "NVIDIA/spark-rapids-tools core/src/main/resources/parser/photon/databricks-13_3.json"
PHOTON_DETECT = ("NVIDIA/spark-rapids-tools core/src/main/scala/com/nvidia/spark/rapids/tool/planparser/db/"
                 "DatabricksParseHelper.scala")
DBX_AQE = "https://docs.databricks.com/optimizations/aqe.html"
DBX_AOS_BLOG = ("https://community.databricks.com/t5/technical-blog/"
                "dbr-18-streaming-workload-simplification-with-improved-aqe-and/ba-p/147752")
GLUTEN = "apache/incubator-gluten"
#: Microsoft Fabric's native execution engine is Gluten with Velox
FABRIC_NEE = "https://learn.microsoft.com/fabric/data-engineering/native-execution-engine-overview"
GLUTEN_SHUFFLE = f"{GLUTEN} gluten-substrait/src/main/scala/org/apache/spark/sql/execution/ColumnarShuffleExchangeExec.scala"
GLUTEN_METRICS = f"{GLUTEN} backends-velox/src/main/scala/org/apache/gluten/backendsapi/velox/VeloxMetricsApi.scala"
GLUTEN_AQE_READ = (f"{GLUTEN} backends-velox/src/main/scala/org/apache/gluten/backendsapi/velox/"
                   "VeloxSparkPlanExecApi.scala (case r: AQEShuffleReadExec if r.supportsColumnar)")
GLUTEN_JOIN = f"{GLUTEN} gluten-substrait/src/main/scala/org/apache/gluten/execution/JoinExecTransformer.scala"
GLUTEN_REWRITE = f"{GLUTEN} gluten-substrait/src/main/scala/org/apache/gluten/extension/columnar/rewrite/RewriteJoin.scala"
GLUTEN_CONF = f"{GLUTEN} gluten-substrait/src/main/scala/org/apache/gluten/config/GlutenConfig.scala"
GLUTEN_WST = f"{GLUTEN} gluten-substrait/src/main/scala/org/apache/gluten/execution/WholeStageTransformer.scala"
GLUTEN_SCAN = f"{GLUTEN} gluten-substrait/src/main/scala/org/apache/gluten/execution/FileSourceScanExecTransformer.scala"
GLUTEN_CLASSES = f"{GLUTEN} backends-velox/src/main/scala (case class names, nodeName = class name minus a final 'Exec')"
COMET = "apache/datafusion-comet"
COMET_SHUFFLE = f"{COMET} spark/src/main/scala/org/apache/spark/sql/comet/execution/shuffle/CometShuffleExchangeExec.scala"
COMET_PLANS = f"{COMET} docs/source/user-guide/latest/understanding-comet-plans.md"
COMET_CLASSES = f"{COMET} spark/src/main/scala/org/apache/spark/sql/comet/operators.scala (nodeName = class name minus 'Exec')"
COMET_SCAN = f"{COMET} spark/src/main/scala/org/apache/spark/sql/comet/CometScanExec.scala"
COMET_TUNING = f"{COMET} docs/source/user-guide/latest/tuning.md"
RAPIDS = "NVIDIA/spark-rapids"
RAPIDS_READ = f"{RAPIDS} sql-plugin/src/main/scala/org/apache/spark/sql/rapids/execution/GpuCustomShuffleReaderExec.scala"
RAPIDS_METRICS = f"{RAPIDS} sql-plugin/src/main/scala/com/nvidia/spark/rapids/GpuMetrics.scala"
RAPIDS_SHUFFLE = f"{RAPIDS} sql-plugin/src/main/scala/org/apache/spark/sql/rapids/execution/GpuShuffleExchangeExecBase.scala"
RAPIDS_COALESCE = f"{RAPIDS} sql-plugin/src/main/scala/com/nvidia/spark/rapids/GpuShuffleCoalesceExec.scala"
RAPIDS_SMJ = f"{RAPIDS} sql-plugin/src/main/scala/com/nvidia/spark/rapids/GpuSortMergeJoinMeta.scala"
RAPIDS_CONF = f"{RAPIDS} sql-plugin/src/main/scala/com/nvidia/spark/rapids/RapidsConf.scala"
RAPIDS_SHJ = f"{RAPIDS} sql-plugin/src/main/scala/com/nvidia/spark/rapids/GpuShuffledHashJoinExec.scala"
RAPIDS_CLASSES = f"{RAPIDS} sql-plugin/src/main (case class names, nodeName = class name minus 'Exec')"
RAPIDS_SCAN = f"{RAPIDS} sql-plugin/src/main/scala/org/apache/spark/sql/rapids/GpuFileSourceScanExec.scala"
AURON = "apache/auron"
AURON_SHUFFLE = f"{AURON} spark-extension/src/main/scala/org/apache/spark/sql/execution/auron/plan/NativeShuffleExchangeBase.scala"
AURON_SHUFFLE_METRICS = (f"{AURON} spark-extension-shims-spark/src/main/scala/org/apache/spark/sql/execution/auron/plan/"
                         "NativeShuffleExchangeExec.scala")
AURON_CONVERT = f"{AURON} spark-extension/src/main/scala/org/apache/spark/sql/auron/AuronConverters.scala"
AURON_SMJ = (f"{AURON} spark-extension-shims-spark/src/main/scala/org/apache/spark/sql/execution/joins/auron/plan/"
             "NativeSortMergeJoinExecProvider.scala")
AURON_SHJ = (f"{AURON} spark-extension-shims-spark/src/main/scala/org/apache/spark/sql/execution/joins/auron/plan/"
             "NativeShuffledHashJoinExecProvider.scala")
AURON_AGG = f"{AURON} spark-extension/src/main/scala/org/apache/spark/sql/execution/auron/plan/NativeAggBase.scala"
AURON_SCAN = f"{AURON} spark-extension/src/main/scala/org/apache/spark/sql/execution/auron/plan/NativeParquetScanBase.scala"
AURON_MAP = "NVIDIA/spark-rapids-tools core/src/main/resources/parser/auron/auron-oss-op-map-6_0.json"
AURON_PLAN = "https://github.com/apache/auron/issues/2125 (AQEShuffleRead coalesced over NativeShuffleExchange)"
AURON_CONF = f"{AURON} spark-extension/src/main/java/org/apache/auron/spark/configuration/SparkAuronConfiguration.java"
AURON_DETECT = ("NVIDIA/spark-rapids-tools core/src/main/scala/com/nvidia/spark/rapids/tool/planparser/auron/"
                "AuronParseHelper.scala")
SPARK_READ = ("apache/spark sql/core/src/main/scala/org/apache/spark/sql/execution/adaptive/AQEShuffleReadExec.scala"
              " (metrics: number of partitions, partition data size, number of coalesced partitions, number of"
              " skewed partitions, number of skewed partition splits)")
SPARK_SHUFFLE = ("apache/spark sql/core/src/main/scala/org/apache/spark/sql/execution/exchange/ShuffleExchangeExec.scala"
                 " (metrics: data size, number of partitions)")

J, X, R = Role.JOIN, Role.EXCHANGE, Role.SHUFFLE_READ


def _ops(role: str, cite: str, pairs: Iterable[tuple[str, str]], prefix: bool = False) -> tuple[Operator, ...]:
    return tuple(Operator(n, role, s, cite, prefix) for n, s in pairs)


# --------------------------------------------------------------------------------------------
# Databricks Photon
# --------------------------------------------------------------------------------------------
PHOTON = Engine(
    key="photon", label="Databricks Photon", cite=PHOTON_MAP,
    operators=(
        # an exchange is three nodes in the log: Source (reads; the stage's consumer) > [AQE's
        # ShuffleQueryStage] > MapStage (the exchange AQE wraps, as ReusedExchange names it) > Sink
        # (writes; carries the partitioning, e.g. "PhotonShuffleExchangeSink SinglePartition")
        Operator("PhotonShuffleExchangeSink", X, "Exchange", f"{PHOTON_LOG}; {PHOTON_MAP}"),
        Operator("PhotonShuffleMapStage", Role.EXCHANGE_PART, "", f"{PHOTON_LOG}; {PHOTON_MAP}",
                 note="the exchange's stage: AQE's ShuffleQueryStage wraps it; its aos metrics are AOS's decisions"),
        Operator("PhotonShuffleExchangeSource", Role.EXCHANGE_PART, "", f"{PHOTON_LOG}; {PHOTON_MAP}",
                 note="the read side (NVIDIA's table: Exchange, StageBoundary, AQEShuffleRead, ShuffleQueryStage)"),
        Operator("PhotonUnionShuffleExchangeSink", X, "Exchange", PHOTON_MAP),
        Operator("PhotonUnionShuffleMapStage", Role.EXCHANGE_PART, "", PHOTON_MAP),
        Operator("PhotonBroadcastExchange", Role.BROADCAST, "BroadcastExchange", PHOTON_MAP),
        Operator("PhotonBroadcastHashJoin", J, "BroadcastHashJoin", f"{PHOTON_LOG}; {PHOTON_MAP}"),
        Operator("PhotonHashJoin", J, "BroadcastHashJoin", PHOTON_MAP),
        Operator("PhotonBroadcastNestedLoopJoin", J, "BroadcastNestedLoopJoin", f"{PHOTON_LOG}; {PHOTON_MAP}"),
        # Databricks' table maps Photon's shuffled hash join to Spark's SortMergeJoin: Photon runs a
        # sort-merge join as a hash join (no sort); PhotonShuffleHashJoin is Spark's ShuffledHashJoin
        Operator("PhotonShuffledHashJoin", J, "SortMergeJoin", PHOTON_MAP,
                 note="Photon's form of Spark's SortMergeJoin (NVIDIA's table)"),
        Operator("PhotonShuffleHashJoin", J, "ShuffledHashJoin", PHOTON_MAP),
        Operator("PhotonAgg", Role.AGGREGATE, "HashAggregate", f"{PHOTON_LOG}; {PHOTON_MAP}"),
        Operator("PhotonGroupingAgg", Role.AGGREGATE, "HashAggregate", PHOTON_MAP),
        Operator("PhotonGroupingAggWithRollup", Role.AGGREGATE, "HashAggregate", PHOTON_MAP),
        Operator("PhotonScan", Role.SCAN, "Scan", f"{PHOTON_LOG} ('PhotonScan parquet '); {PHOTON_MAP}", prefix=True),
        Operator("PhotonAdapter", Role.SCAN, "Scan", PHOTON_MAP, prefix=True),
        Operator("PhotonResultStage", Role.WRAPPER, "", f"{PHOTON_LOG}; {PHOTON_MAP} (WholeStageCodegen)"),
        Operator("PhotonColumnarToRow", Role.TRANSITION, "", "jeffbrennan/sparkparse sparkparse/connect.py"),
        Operator("PhotonRowToColumnar", Role.TRANSITION, "", PHOTON_MAP),
        *_ops(Role.OTHER, PHOTON_MAP, (
            ("PhotonProject", "Project"), ("PhotonFilter", "Filter"), ("PhotonSort", "Sort"),
            ("PhotonTopK", "TakeOrderedAndProject"), ("PhotonUnion", "Union"), ("PhotonExpand", "Expand"),
            ("PhotonWindow", "Window"), ("PhotonGenerate", "Generate"), ("PhotonLocalLimit", "LocalLimit"),
            ("PhotonGlobalLimit", "GlobalLimit"), ("PhotonSubqueryBroadcast", "SubqueryBroadcast"))),
    ),
    metrics=(
        EngineMetric("number of partitions", "PhotonShuffleExchangeSink", "the shuffle's partition count", "engine",
                     PHOTON_LOG),
        EngineMetric("aos old number of partitions", "PhotonShuffleMapStage",
                     "partitions before auto-optimized shuffle re-planned the shuffle", "engine", PHOTON_LOG),
        EngineMetric("aos new number of partitions", "PhotonShuffleMapStage",
                     "partitions after auto-optimized shuffle re-planned the shuffle", "engine", PHOTON_LOG),
        EngineMetric("aos intended number of partitions", "PhotonShuffleMapStage",
                     "the partition count auto-optimized shuffle aimed at", "engine", PHOTON_LOG),
        EngineMetric("aos rule action", "PhotonShuffleMapStage", "what auto-optimized shuffle did (a code)", "engine",
                     PHOTON_LOG),
        EngineMetric("num bytes written", "PhotonShuffleExchangeSink", "shuffle bytes written", "engine", PHOTON_LOG),
        EngineMetric("num bytes read", "PhotonShuffleExchangeSource", "shuffle bytes read", "engine", PHOTON_LOG),
        EngineMetric("partitions read", "PhotonScan", "table partitions the scan read (not shuffle partitions)",
                     "engine", PHOTON_LOG),
        EngineMetric("number of skewed partitions", "AQEShuffleRead", "skewed reducers Spark split", "spark",
                     "MitsuhiroItagaki/query_profiler_analysis query_profiler_analysis.py (profile label "
                     "'AQEShuffleRead - Number of skewed partitions' on Photon's shuffle nodes); " + SPARK_READ),
    ),
    #: the cluster tags NVIDIA's tools read to call a log Photon (PHOTON_DETECT)
    markers=(("spark.databricks.clusterUsageTags.sparkVersion", "-photon-"),
             ("spark.databricks.clusterUsageTags.effectiveSparkVersion", "-photon-"),
             ("spark.databricks.clusterUsageTags.runtimeEngine", "PHOTON")),
    spark_decides=("AQE's planner: query stages, runtime join re-plans, and any AQEShuffleRead above a stage "
                   "(Spark's coalescing and skew rules)"),
    own=(
        OwnDecision("aos", "auto-optimized shuffle (AOS) picks a shuffle's partition count (the exchange's aos "
                    "metrics)", f"{config.SHUFFLE_PARTITIONS}=auto", f"{DBX_AQE}; {DBX_AOS_BLOG}; {PHOTON_LOG}"),
        OwnDecision("smj_as_hash", "Photon runs a sort-merge join as a hash join (PhotonShuffledHashJoin, no sort)",
                    "", PHOTON_MAP),
        OwnDecision("executor_broadcast", "Databricks plans small join sides as SinglePartition shuffles read by "
                    "every task (EXECUTOR_BROADCAST)", "", PHOTON_LOG),
    ),
)

# --------------------------------------------------------------------------------------------
# Apache Gluten with Velox (Microsoft Fabric's native execution engine)
# --------------------------------------------------------------------------------------------
GLUTEN_VELOX = Engine(
    key="gluten", label="Apache Gluten (Velox)", cite=f"{GLUTEN}; {FABRIC_NEE}",
    operators=(
        Operator("ColumnarExchange", X, "Exchange", GLUTEN_SHUFFLE),
        Operator("CudfColumnarExchange", X, "Exchange",
                 f"{GLUTEN} gluten-substrait/src/main/scala/org/apache/spark/sql/execution/GPUColumnarShuffleExchangeExec.scala"),
        Operator("ColumnarBroadcastExchange", Role.BROADCAST, "BroadcastExchange", GLUTEN_CLASSES),
        *_ops(J, f"{GLUTEN_CLASSES}; {GLUTEN_JOIN} ('(skew=true)')", (
            ("BroadcastHashJoinExecTransformer", "BroadcastHashJoin"),
            ("ShuffledHashJoinExecTransformer", "ShuffledHashJoin"),
            ("SortMergeJoinExecTransformer", "SortMergeJoin"),
            ("VeloxBroadcastNestedLoopJoinExecTransformer", "BroadcastNestedLoopJoin"),
            ("BroadcastNestedLoopJoinExecTransformer", "BroadcastNestedLoopJoin"),
            ("CartesianProductExecTransformer", "CartesianProduct"))),
        *_ops(Role.AGGREGATE, GLUTEN_CLASSES, (
            ("RegularHashAggregateExecTransformer", "HashAggregate"),
            ("FlushableHashAggregateExecTransformer", "HashAggregate"))),
        Operator("FileSourceScanExecTransformer", Role.SCAN, "Scan", GLUTEN_SCAN, prefix=True),
        Operator("BatchScanExecTransformer", Role.SCAN, "BatchScan", GLUTEN_CLASSES, prefix=True),
        Operator("WholeStageCodegenTransformer", Role.WRAPPER, "", GLUTEN_WST, prefix=True),
        Operator("InputIteratorTransformer", Role.WRAPPER, "", GLUTEN_CLASSES),
        *_ops(Role.TRANSITION, GLUTEN_CLASSES, (
            ("VeloxColumnarToRow", ""), ("RowToVeloxColumnar", ""), ("VeloxResizeBatches", ""),
            ("ArrowColumnarToVeloxColumnar", ""), ("VeloxColumnarToCarrierRow", ""))),
        *_ops(Role.OTHER, GLUTEN_CLASSES, (
            ("ProjectExecTransformer", "Project"), ("FilterExecTransformer", "Filter"),
            ("SortExecTransformer", "Sort"), ("TakeOrderedAndProjectExecTransformer", "TakeOrderedAndProject"),
            ("UnionExecTransformer", "Union"), ("ColumnarUnion", "Union"), ("ExpandExecTransformer", "Expand"),
            ("WindowExecTransformer", "Window"), ("LimitExecTransformer", "GlobalLimit"),
            ("GenerateExecTransformer", "Generate"), ("ColumnarRange", "Range"))),
    ),
    metrics=(
        EngineMetric("number of partitions", "ColumnarExchange", "the shuffle's partition count", "spark",
                     GLUTEN_METRICS),
        EngineMetric("data size", "ColumnarExchange", "shuffle bytes", "spark", GLUTEN_METRICS),
        EngineMetric("number of coalesced partitions", "AQEShuffleRead", "Spark's coalescing, kept", "spark",
                     f"{GLUTEN_AQE_READ}; {SPARK_READ}"),
    ),
    #: spark.plugins=org.apache.gluten.GlutenPlugin (docs/get-started/Velox.md; the older
    #: io.glutenproject package name before the move to Apache)
    markers=(("spark.plugins", "GlutenPlugin"), ("spark.gluten.sql.columnar.backend.lib", "velox")),
    spark_decides="AQE's planner and Spark's AQEShuffleRead (kept columnar): coalescing, skew splits, join re-plans",
    own=(OwnDecision("smj_as_hash", "Gluten rewrites a sort-merge join as a shuffled hash join before offloading it",
                     "spark.gluten.sql.columnar.forceShuffledHashJoin (default true)", f"{GLUTEN_REWRITE}; {GLUTEN_CONF}"),),
)

# --------------------------------------------------------------------------------------------
# Apache DataFusion Comet
# --------------------------------------------------------------------------------------------
COMET_ENGINE = Engine(
    key="comet", label="Apache DataFusion Comet", cite=COMET,
    operators=(
        Operator("CometExchange", X, "Exchange", COMET_SHUFFLE),
        Operator("CometColumnarExchange", X, "Exchange", COMET_SHUFFLE),
        Operator("CometBroadcastExchange", Role.BROADCAST, "BroadcastExchange", COMET_PLANS),
        *_ops(J, COMET_CLASSES, (
            ("CometBroadcastHashJoin", "BroadcastHashJoin"), ("CometHashJoin", "ShuffledHashJoin"),
            ("CometSortMergeJoin", "SortMergeJoin"), ("CometBroadcastNestedLoopJoin", "BroadcastNestedLoopJoin"))),
        Operator("CometHashAggregate", Role.AGGREGATE, "HashAggregate", COMET_PLANS),
        Operator("CometScan", Role.SCAN, "Scan", COMET_SCAN, prefix=True),
        Operator("CometNativeScan", Role.SCAN, "Scan", COMET_PLANS, prefix=True),
        Operator("CometBatchScan", Role.SCAN, "BatchScan", COMET_CLASSES, prefix=True),
        *_ops(Role.TRANSITION, COMET_PLANS, (
            ("CometColumnarToRow", ""), ("CometNativeColumnarToRow", ""), ("CometSparkRowToColumnar", ""),
            ("CometSparkColumnarToColumnar", ""))),
        *_ops(Role.OTHER, COMET_CLASSES, (
            ("CometProject", "Project"), ("CometFilter", "Filter"), ("CometSort", "Sort"),
            ("CometTakeOrderedAndProject", "TakeOrderedAndProject"), ("CometUnion", "Union"),
            ("CometExpand", "Expand"), ("CometWindowExec", "Window"), ("CometCollectLimit", "CollectLimit"),
            ("CometLocalLimit", "LocalLimit"), ("CometGlobalLimit", "GlobalLimit"), ("CometCoalesce", "Coalesce"))),
    ),
    metrics=(
        EngineMetric("number of partitions", "CometExchange", "the shuffle's partition count", "spark", COMET_SHUFFLE),
        EngineMetric("data size", "CometExchange", "shuffle bytes", "spark", COMET_SHUFFLE),
        EngineMetric("number of coalesced partitions", "AQEShuffleRead", "Spark's coalescing, kept", "spark",
                     f"{COMET_PLANS} (AQEShuffleRead stays Spark's); {SPARK_READ}"),
    ),
    #: spark.plugins=org.apache.spark.CometPlugin (docs/source/user-guide/latest/installation.md)
    markers=(("spark.plugins", "CometPlugin"), (config.SQL_EXTENSIONS, "CometSparkSessionExtensions"),
             ("spark.comet.enabled", "true")),
    spark_decides="AQE's planner and Spark's AQEShuffleRead over Comet's exchanges: coalescing, skew, join re-plans",
    own=(OwnDecision("smj_as_hash", "Comet runs a sort-merge join as a hash join (CometHashJoin) when asked",
                     "spark.comet.exec.replaceSortMergeJoin", COMET_TUNING),),
)

# --------------------------------------------------------------------------------------------
# NVIDIA RAPIDS Accelerator for Apache Spark
# --------------------------------------------------------------------------------------------
RAPIDS_ENGINE = Engine(
    key="rapids", label="NVIDIA RAPIDS", cite=RAPIDS,
    operators=(
        Operator("GpuColumnarExchange", X, "Exchange", RAPIDS_SHUFFLE),
        Operator("GpuCustomShuffleReader", R, "AQEShuffleRead", RAPIDS_READ,
                 note="built from AQE's partition specs: Spark's decision, the GPU's read"),
        Operator("GpuShuffleCoalesce", Role.TRANSITION, "", RAPIDS_COALESCE,
                 note="concatenates shuffled batches on the host: batches, not partitions"),
        Operator("GpuCoalesceBatches", Role.TRANSITION, "", f"{RAPIDS} sql-plugin/src/main/scala/com/nvidia/spark/rapids/GpuCoalesceBatches.scala"),
        Operator("GpuBroadcastExchange", Role.BROADCAST, "BroadcastExchange", RAPIDS_CLASSES),
        *_ops(J, f"{RAPIDS_CLASSES}; {RAPIDS_SHJ} ('(skew=true)')", (
            ("GpuBroadcastHashJoin", "BroadcastHashJoin"), ("GpuShuffledHashJoin", "ShuffledHashJoin"),
            ("GpuShuffledSymmetricHashJoin", "ShuffledHashJoin"), ("GpuShuffledAsymmetricHashJoin", "ShuffledHashJoin"),
            ("GpuBroadcastNestedLoopJoin", "BroadcastNestedLoopJoin"), ("GpuCartesianProduct", "CartesianProduct"))),
        Operator("GpuHashAggregate", Role.AGGREGATE, "HashAggregate", RAPIDS_CLASSES),
        Operator("GpuScan", Role.SCAN, "Scan", f"{RAPIDS_SCAN} (nodeName 'GpuScan $relation $table')", prefix=True),
        Operator("GpuBatchScan", Role.SCAN, "BatchScan", RAPIDS_CLASSES, prefix=True),
        *_ops(Role.TRANSITION, RAPIDS_CLASSES, (("GpuColumnarToRow", ""), ("GpuRowToColumnar", ""))),
        *_ops(Role.OTHER, RAPIDS_CLASSES, (
            ("GpuProject", "Project"), ("GpuFilter", "Filter"), ("GpuSort", "Sort"), ("GpuTopN", "TakeOrderedAndProject"),
            ("GpuUnion", "Union"), ("GpuExpand", "Expand"), ("GpuWindow", "Window"), ("GpuCoalesce", "Coalesce"),
            ("GpuRange", "Range"), ("GpuGlobalLimit", "GlobalLimit"), ("GpuLocalLimit", "LocalLimit"))),
    ),
    metrics=(
        EngineMetric("partitions", "GpuCustomShuffleReader", "partitions the read has (Spark's specs)", "spark",
                     f"{RAPIDS_READ}; {RAPIDS_METRICS} (DESCRIPTION_NUM_PARTITIONS)"),
        EngineMetric("partition data size", "GpuCustomShuffleReader", "bytes per partition read", "spark",
                     f"{RAPIDS_READ}; {RAPIDS_METRICS} (DESCRIPTION_PARTITION_SIZE)"),
        EngineMetric("partitions", "GpuColumnarExchange", "the shuffle's partition count", "spark", RAPIDS_SHUFFLE),
        EngineMetric("input columnar batches", "GpuShuffleCoalesce", "batches concatenated (not partitions)", "engine",
                     f"{RAPIDS_COALESCE}; {RAPIDS_METRICS}"),
    ),
    #: spark.plugins=com.nvidia.spark.SQLPlugin (docs/configs.md)
    markers=(("spark.plugins", "com.nvidia.spark.SQLPlugin"), ("spark.rapids.sql.enabled", "true")),
    spark_decides=("AQE's planner; GpuCustomShuffleReader is AQE's read rebuilt from its partition specs "
                   "(coalesced / skewed / local, as Spark decided)"),
    own=(OwnDecision("smj_as_hash", "RAPIDS replaces a sort-merge join with a shuffled hash join (its sorts removed)",
                     "spark.rapids.sql.replaceSortMergeJoin.enabled (default true)", f"{RAPIDS_SMJ}; {RAPIDS_CONF}"),),
)

# --------------------------------------------------------------------------------------------
# Apache Auron (formerly Kwai Blaze)
# --------------------------------------------------------------------------------------------
AURON_ENGINE = Engine(
    key="auron", label="Apache Auron (Blaze)", cite=AURON,
    operators=(
        Operator("NativeShuffleExchange", X, "Exchange", f"{AURON_SHUFFLE}; {AURON_PLAN}"),
        Operator("NativeBroadcastExchange", Role.BROADCAST, "BroadcastExchange", AURON_MAP),
        # one native broadcast join for both: keyed (hash) or not (nested loop), by its description
        Operator("NativeBroadcastJoin", J, "BroadcastHashJoin", f"{AURON_CONVERT}; {AURON_MAP}",
                 note="a BroadcastNestedLoopJoin when it has no join keys"),
        Operator("NativeBroadcastNestedLoopJoin", J, "BroadcastNestedLoopJoin", AURON_MAP),
        Operator("NativeShuffledHashJoin", J, "ShuffledHashJoin", AURON_SHJ),
        Operator("NativeSortMergeJoin", J, "SortMergeJoin", f"{AURON_SMJ} ('(skew=true)')"),
        Operator("NativeHashAggregate", Role.AGGREGATE, "HashAggregate", AURON_AGG),
        Operator("NativeSortAggregate", Role.AGGREGATE, "SortAggregate", AURON_AGG),
        Operator("NativeParquetScan", Role.SCAN, "Scan parquet", AURON_SCAN, prefix=True),
        Operator("NativeOrcScan", Role.SCAN, "Scan orc", f"{AURON_MAP}; {AURON_PLAN}", prefix=True),
        Operator("ConvertToNative", Role.TRANSITION, "",
                 f"{AURON} spark-extension/src/main/scala/org/apache/spark/sql/execution/auron/plan/ConvertToNativeBase.scala"),
        *_ops(Role.OTHER, AURON_MAP, (
            ("NativeProject", "Project"), ("NativeFilter", "Filter"), ("NativeSort", "Sort"),
            ("NativeTakeOrdered", "TakeOrderedAndProject"), ("NativeUnion", "Union"), ("NativeExpand", "Expand"),
            ("NativeWindow", "Window"), ("NativeGenerate", "Generate"), ("NativeLocalLimit", "LocalLimit"),
            ("NativeGlobalLimit", "GlobalLimit"), ("NativeCollectLimit", "CollectLimit"))),
    ),
    metrics=(
        EngineMetric("number of partitions", "NativeShuffleExchange", "the shuffle's partition count", "spark",
                     AURON_SHUFFLE_METRICS),
        EngineMetric("data size", "NativeShuffleExchange", "shuffle bytes", "spark", AURON_SHUFFLE),
        EngineMetric("number of coalesced partitions", "AQEShuffleRead", "Spark's coalescing, kept", "spark",
                     f"{AURON_PLAN}; {SPARK_READ}"),
        EngineMetric("Native.partitions_read", "NativeParquetScan", "file partitions the scan read (not shuffle "
                     "partitions)", "engine",
                     f"{AURON} spark-extension/src/main/scala/org/apache/spark/sql/execution/auron/plan/NativeFileSourceScanBase.scala"),
    ),
    #: spark.sql.extensions=...AuronSparkSessionExtension, spark.auron.enable (README.md; AURON_DETECT);
    #: before the rename (commit dc8d7a9b "rename Blaze to Auron"): ...BlazeSparkSessionExtension, spark.blaze.enable
    markers=((config.SQL_EXTENSIONS, "AuronSparkSessionExtension"), (config.SQL_EXTENSIONS, "BlazeSparkSessionExtension"),
             ("spark.auron.enable", "true"), ("spark.blaze.enable", "true")),
    spark_decides="AQE's planner and Spark's AQEShuffleRead over NativeShuffleExchange: coalescing, skew, join re-plans",
    own=(OwnDecision("smj_as_hash", "Auron runs sort-merge joins as shuffled hash joins when asked",
                     "spark.auron.forceShuffledHashJoin", AURON_CONF),),
)

ENGINES: tuple[Engine, ...] = (PHOTON, GLUTEN_VELOX, COMET_ENGINE, RAPIDS_ENGINE, AURON_ENGINE)

#: the nodes of an engine's exchange that are its own stage (AQE's ShuffleQueryStage wraps them):
#: a stage boundary like Spark's Exchange
STAGE_PARTS: tuple[str, ...] = tuple(op.name for e in ENGINES for op in e.operators
                                     if op.role == Role.EXCHANGE_PART and op.name.endswith("MapStage"))

# --------------------------------------------------------------------------------------------
# look-ups
# --------------------------------------------------------------------------------------------
_EXACT: dict[str, tuple[Engine, Operator]] = {}
_PREFIX: list[tuple[str, Engine, Operator]] = []
for _e in ENGINES:
    for _op in _e.operators:
        _EXACT.setdefault(_op.name, (_e, _op))
        if _op.prefix:
            _PREFIX.append((_op.name, _e, _op))
_PREFIX.sort(key=lambda t: -len(t[0]))

_SKEW = "(skew=true)"


def by_key(key: str) -> Optional[Engine]:
    return next((e for e in ENGINES if e.key == key), None)


@lru_cache(maxsize=8192)  # (names and texts repeat: a plan is walked many times, a query run often)
def operator_of(name: str) -> Optional[tuple[Engine, Operator]]:
    """The engine and operator a node name is (``(skew=true)`` aside), or None for Spark's own.

    >>> e, op = operator_of("PhotonBroadcastHashJoin")
    >>> e.label, op.spark
    ('Databricks Photon', 'BroadcastHashJoin')
    >>> operator_of("PhotonScan parquet ")[1].role, operator_of("SortMergeJoin") is None
    ('scan', True)
    """
    base = name[: -len(_SKEW)] if name.endswith(_SKEW) else name
    hit = _EXACT.get(base)
    if hit is not None:
        return hit
    for prefix, e, op in _PREFIX:
        if base.startswith(prefix) and (len(base) == len(prefix) or not base[len(prefix)].isalnum()):
            return e, op
    return None


def spark_name(name: str, description: str = "") -> str:
    """Spark's ``nodeName`` for a node (its own name for Spark's operators; "" for an engine's
    wrappers and transitions); ``(skew=true)`` is kept.

    >>> spark_name("PhotonShuffledHashJoin"), spark_name("GpuShuffledHashJoin(skew=true)")
    ('SortMergeJoin', 'ShuffledHashJoin(skew=true)')
    >>> spark_name("NativeBroadcastJoin", "NativeBroadcastJoin [], [], Inner, BuildRight")
    'BroadcastNestedLoopJoin'
    >>> spark_name("FileSourceScanExecTransformer parquet default.t"), spark_name("Exchange")
    ('Scan parquet default.t', 'Exchange')
    """
    hit = operator_of(name)
    if hit is None:
        return name
    e, op = hit
    skew = _SKEW if name.endswith(_SKEW) else ""
    if op.name == "NativeBroadcastJoin" and description and not _has_keys(description, op.name):
        return "BroadcastNestedLoopJoin" + skew
    if op.prefix and op.spark and op.role == Role.SCAN:  # the format and table follow, as in Spark's "Scan parquet t"
        return op.spark + name[len(op.name):]
    return op.spark + skew if op.spark else ""


def _has_keys(description: str, name: str) -> bool:
    """A join's description starts with its keys (``[a#1], [b#2], Inner, ...``); none, or empty ones,
    is a nested-loop join."""
    rest = description[len(name):].strip() if description.startswith(name) else description.strip()
    return rest.startswith("[") and not rest.startswith("[], []")


def is_engine_wrapper(name: str) -> bool:
    """An engine node that only wraps the operator below it for AQE's vocabulary: a stage wrapper,
    a columnar transition, or the non-partitioning parts of an engine's exchange."""
    hit = operator_of(name)
    return hit is not None and hit[1].role in (Role.WRAPPER, Role.TRANSITION, Role.EXCHANGE_PART)


def engine_of_names(names: Iterable[str]) -> Optional[Engine]:
    """The engine whose operators a plan's node names show most (None: Spark's own names only)."""
    count: dict[str, int] = {}
    for n in names:
        hit = operator_of(n)
        if hit is not None:
            count[hit[0].key] = count.get(hit[0].key, 0) + 1
    if not count:
        return None
    return by_key(max(count, key=lambda k: count[k]))


def engine_of_properties(props: Mapping[str, str]) -> Optional[Engine]:
    """The engine a log's Spark properties name (``spark.plugins``, ``spark.sql.extensions``,
    Databricks' cluster tags), or None.

    >>> engine_of_properties({"spark.databricks.clusterUsageTags.sparkVersion": "13.3.x-photon-scala2.12"}).key
    'photon'
    >>> engine_of_properties({"spark.plugins": "org.apache.gluten.GlutenPlugin"}).key
    'gluten'
    """
    for e in ENGINES:
        for key, marker in e.markers:
            value = props.get(key)
            if isinstance(value, str) and marker.lower() in value.lower():
                return e
    return None
