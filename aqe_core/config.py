"""AQE configuration model: every ``spark.sql.adaptive.*`` key, per Spark release.

Mirrors ``org.apache.spark.sql.internal.SQLConf`` entries (keys, types, defaults, fallbacks)
and Spark's string parsing (``ConfigHelpers`` / ``JavaUtils.byteStringAs``), because a
what-if is only honest if "64m" and "5.0" mean to us exactly what they mean to Spark.
Defaults per release are from /shared/spec/aqe_rules.md §9, recorded from each release's
SQLConf at run time.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping

from aqe_core.versions import NEWEST, SparkVersion, as_version

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

# --------------------------------------------------------------------------------------
# Spark's string parsing


class ConfValueError(ValueError):
    """A configuration string Spark itself would reject (same condition, clear message)."""


_BYTE_SUFFIXES = {
    "b": 0, "k": 1, "kb": 1, "m": 2, "mb": 2, "g": 3, "gb": 3, "t": 4, "tb": 4, "p": 5, "pb": 5,
}
_UNIT_POWER = {"BYTE": 0, "KiB": 1, "MiB": 2, "GiB": 3, "TiB": 4, "PiB": 5}
_BYTE_RE = re.compile(r"([0-9]+)([a-z]+)?\Z")
_FRACTION_RE = re.compile(r"([0-9]+\.[0-9]+)([a-z]+)?\Z")


def parse_byte_string(text: str, unit: str = "BYTE") -> int:
    """Parse a size the way Spark's ``bytesConf`` does: binary units, integers only.

    Mirrors ``ConfigHelpers.byteFromString`` (a leading ``-`` negates, so ``-1`` disables the
    broadcast threshold) over ``JavaUtils.byteStringAs``: lower-cased and trimmed, digits plus
    an optional suffix b/k/kb/m/mb/g/gb/t/tb/p/pb (all powers of 1024); a bare number is in
    ``unit``. Fractions and unknown suffixes are rejected, as Spark does.
    """
    s = str(text)
    sign = 1
    if s.startswith("-"):
        sign, s = -1, s[1:]
    lower = s.lower().strip()
    m = _BYTE_RE.match(lower)
    if m is None:
        if _FRACTION_RE.match(lower):
            raise ConfValueError(f"fractional values are not supported: {text!r} (Spark rejects it)")
        raise ConfValueError(
            f"not a size: {text!r}. Use bytes (b), kibibytes (k), mebibytes (m), gibibytes (g), "
            "tebibytes (t) or pebibytes (p), e.g. 50b, 100k or 64m"
        )
    number, suffix = int(m.group(1)), m.group(2)
    if suffix is not None and suffix not in _BYTE_SUFFIXES:
        raise ConfValueError(f"invalid size suffix {suffix!r} in {text!r}")
    from_power = _BYTE_SUFFIXES[suffix] if suffix is not None else _UNIT_POWER[unit]
    to_power = _UNIT_POWER[unit]
    if from_power >= to_power:
        value = number * 1024 ** (from_power - to_power)
        if value > LONG_MAX:
            raise ConfValueError(f"size {text!r} exceeds Long.MAX_VALUE")
    else:
        value = number // 1024 ** (to_power - from_power)
    return sign * value


def _parse_bool(key: str, text: str) -> bool:
    t = str(text).strip().lower()
    if t == "true":
        return True
    if t == "false":
        return False
    raise ConfValueError(f"{key} should be boolean, but was {text!r}")


def _parse_int(key: str, text: str) -> int:
    t = str(text).strip()
    try:
        value = int(t, 10)
    except ValueError:
        raise ConfValueError(f"{key} should be int, but was {text!r}") from None
    if not -(2**31) <= value <= INT_MAX:
        raise ConfValueError(f"{key} should be int, but was {text!r} (out of range)")
    return value


def _parse_double(key: str, text: str) -> float:
    t = str(text).strip()
    try:
        return float(t)
    except ValueError:
        raise ConfValueError(f"{key} should be double, but was {text!r}") from None


# --------------------------------------------------------------------------------------
# Key table


@dataclass(frozen=True)
class ConfKey:
    """One SQLConf entry as it exists in a range of releases.

    ``default`` is a Spark conf *string* (parsed like user input), ``None`` for an optional
    entry that is unset by default, or the name of another key when ``fallback`` is true.
    """

    key: str
    type: str  # "bool" | "int" | "double" | "bytes" | "string"
    default: str | None
    doc: str
    since: str = "3.0.0"
    until: str | None = None  # first release without the key (exclusive)
    internal: bool = False
    fallback: bool = False
    check: str | None = None  # validation rule name, see _CHECKS

    def exists_in(self, version: SparkVersion) -> bool:
        if version < as_version(self.since):
            return False
        return self.until is None or version < as_version(self.until)


A = "spark.sql.adaptive."
_KEYS: list[ConfKey] = [
    ConfKey(A + "enabled", "bool", "false", "Turn Adaptive Query Execution on: re-optimise the plan with runtime statistics.", until="3.2.0"),
    ConfKey(A + "enabled", "bool", "true", "Turn Adaptive Query Execution on: re-optimise the plan with runtime statistics.", since="3.2.0"),
    ConfKey(A + "forceApply", "bool", "false", "Apply AQE even to plans with no exchange or subquery.", internal=True),
    ConfKey(A + "logLevel", "string", "debug", "Log level for AQE's plan-change messages.", internal=True, until="4.1.0", check="log_level"),
    ConfKey(A + "logLevel", "string", "DEBUG", "Log level for AQE's plan-change messages.", internal=True, since="4.1.0", check="log_level"),
    ConfKey(A + "shuffle.targetPostShuffleInputSize", "bytes", "64MB", "Legacy name of the advisory partition size (fallback of advisoryPartitionSizeInBytes).", internal=True, until="3.2.0"),
    ConfKey(A + "shuffle.targetPostShuffleInputSize", "bytes", "64MB", "Legacy name of the advisory partition size (fallback of advisoryPartitionSizeInBytes).", internal=True, since="3.2.0", check="positive"),
    ConfKey(A + "advisoryPartitionSizeInBytes", "bytes", A + "shuffle.targetPostShuffleInputSize", "Advisory size of a shuffle partition after coalescing and of a skew split.", fallback=True, until="3.2.0"),
    ConfKey(A + "advisoryPartitionSizeInBytes", "bytes", A + "shuffle.targetPostShuffleInputSize", "Advisory size of a shuffle partition after coalescing and of a skew split.", fallback=True, since="3.2.0", check="positive"),
    ConfKey(A + "coalescePartitions.enabled", "bool", "true", "Coalesce contiguous small shuffle partitions towards the advisory size."),
    ConfKey(A + "coalescePartitions.minPartitionNum", "int", None, "Minimum number of partitions after coalescing (deprecated by parallelismFirst).", check="positive"),
    ConfKey(A + "coalescePartitions.minPartitionNum", "int", None, "Minimum number of partitions after coalescing (deprecated by parallelismFirst).", since="3.2.0", internal=True, check="positive"),
    ConfKey(A + "coalescePartitions.initialPartitionNum", "int", None, "Number of shuffle partitions before coalescing (defaults to spark.sql.shuffle.partitions).", check="positive"),
    ConfKey(A + "coalescePartitions.minPartitionSize", "bytes", "1MB", "Smallest coalesced partition size; guards against tiny partitions when parallelism comes first.", since="3.2.0", check="positive"),
    ConfKey(A + "coalescePartitions.parallelismFirst", "bool", "true", "Ignore the advisory size's lower bound and aim for default parallelism (minPartitionSize still applies).", since="3.2.0"),
    ConfKey(A + "coalescePartitions.maxReducerPartitionsPerTask", "int", str(INT_MAX), "Most reducer partitions a coalesced task may read.", since="4.3.0", check="positive"),
    ConfKey(A + "fetchShuffleBlocksInBatch", "bool", "true", "Fetch contiguous shuffle blocks of one map in one request.", internal=True),
    ConfKey(A + "localShuffleReader.enabled", "bool", "true", "Read shuffle data locally when a shuffle need not be redistributed (e.g. after a join became broadcast)."),
    ConfKey(A + "skewJoin.enabled", "bool", "true", "Split skewed partitions of sort-merge and shuffled-hash joins."),
    ConfKey(A + "skewJoin.skewedPartitionFactor", "int", "5", "A partition is skewed if larger than this factor times the median (and the byte threshold).", until="3.1.0", check="positive"),
    ConfKey(A + "skewJoin.skewedPartitionFactor", "int", "5", "A partition is skewed if larger than this factor times the median (and the byte threshold).", since="3.1.0", until="3.4.0", check="non_negative"),
    ConfKey(A + "skewJoin.skewedPartitionFactor", "double", "5.0", "A partition is skewed if larger than this factor times the median (and the byte threshold).", since="3.4.0", check="non_negative"),
    ConfKey(A + "skewJoin.skewedPartitionThresholdInBytes", "bytes", "256MB", "A partition is skewed only if larger than this size (and factor x median)."),
    ConfKey(A + "forceOptimizeSkewedJoin", "bool", "false", "Split skewed joins even when that adds a shuffle.", since="3.3.0"),
    ConfKey(A + "nonEmptyPartitionRatioForBroadcastJoin", "double", "0.2", "Demote broadcast for a side whose share of non-empty partitions is below this ratio.", internal=True, check="non_negative"),
    ConfKey(A + "autoBroadcastJoinThreshold", "bytes", None, "Broadcast threshold used on runtime statistics (falls back to spark.sql.autoBroadcastJoinThreshold).", since="3.2.0"),
    ConfKey(A + "maxShuffledHashJoinLocalMapThreshold", "bytes", "0b", "Prefer a shuffled hash join when every partition is at most this size.", since="3.2.0"),
    ConfKey(A + "optimizeSkewsInRebalancePartitions.enabled", "bool", "true", "Split skewed partitions of REBALANCE shuffles.", since="3.2.0"),
    ConfKey(A + "rebalancePartitionsSmallPartitionFactor", "double", "0.2", "A rebalance split smaller than this factor of the advisory size is merged into its neighbour.", since="3.3.0", check="open_fraction"),
    ConfKey(A + "customCostEvaluatorClass", "string", None, "Class of the cost evaluator AQE uses to choose between plans.", since="3.2.0"),
    ConfKey(A + "optimizer.excludedRules", "string", None, "Comma-separated AQE logical optimizer rules to disable.", since="3.1.0"),
    ConfKey(A + "applyFinalStageShuffleOptimizations", "bool", "true", "Apply AQE shuffle-read rules to the final stage.", since="3.4.2", internal=True),
    ConfKey(A + "convertSortMergeJoinToShuffledHashJoin.enabled", "bool", "true", "Convert sort-merge joins to shuffled hash joins on runtime sizes.", since="4.3.0"),
    ConfKey(A + "convertSortMergeJoinToShuffledHashJoin.lookThroughOperators.enabled", "bool", "false", "Look through Filter/Project/Aggregate/Window to find the join's shuffle stages.", since="4.3.0"),
    ConfKey(A + "convertSortMergeJoinToShuffledHashJoin.minWideningFactor", "double", "1.0", "Lower bound of the row-widening factor applied to shuffle sizes for the hash-build check.", since="4.3.0", check="positive"),
    ConfKey(A + "costEvaluator.countLocalSort.enabled", "bool", A + "convertSortMergeJoinToShuffledHashJoin.lookThroughOperators.enabled", "Count local sorts as a cost tiebreak between plans.", since="4.3.0", fallback=True),
    ConfKey(A + "streaming.stateless.enabled", "bool", "true", "Allow AQE in stateless streaming queries.", since="4.1.0", internal=True),
    ConfKey("spark.sql.shuffle.partitions", "int", "200", "Number of shuffle partitions Spark plans before AQE coalesces them.", check="positive"),
    ConfKey("spark.sql.autoBroadcastJoinThreshold", "bytes", "10MB", "Largest table size broadcast in a join (-1 disables).",),
    ConfKey("spark.sql.unionOutputPartitioning", "bool", "true", "A Union whose children share a hash (or single) partitioning reports it, so its shuffles are coalesced as one group.", since="4.1.0", internal=True),
    ConfKey("spark.sql.join.preferSortMergeJoin", "bool", "true", "Prefer sort-merge over shuffled hash joins at planning time.", internal=True),
]

# --------------------------------------------------------------------------------------
# Key handles: the only spelling of a ``spark.sql.*`` key outside the table above. Named after
# the ``SQLConf`` entry (``SQLConf.ADVISORY_PARTITION_SIZE_IN_BYTES``) so a reader can find it in
# Spark; a test checks every handle is a key of the table.

ADAPTIVE_EXECUTION_ENABLED = A + "enabled"
ADAPTIVE_EXECUTION_FORCE_APPLY = A + "forceApply"
ADVISORY_PARTITION_SIZE_IN_BYTES = A + "advisoryPartitionSizeInBytes"
COALESCE_PARTITIONS_ENABLED = A + "coalescePartitions.enabled"
COALESCE_PARTITIONS_MIN_PARTITION_NUM = A + "coalescePartitions.minPartitionNum"
COALESCE_PARTITIONS_INITIAL_PARTITION_NUM = A + "coalescePartitions.initialPartitionNum"
COALESCE_PARTITIONS_MIN_PARTITION_SIZE = A + "coalescePartitions.minPartitionSize"
COALESCE_PARTITIONS_PARALLELISM_FIRST = A + "coalescePartitions.parallelismFirst"
COALESCE_PARTITIONS_MAX_REDUCER_PARTITIONS_PER_TASK = A + "coalescePartitions.maxReducerPartitionsPerTask"
LOCAL_SHUFFLE_READER_ENABLED = A + "localShuffleReader.enabled"
SKEW_JOIN_ENABLED = A + "skewJoin.enabled"
SKEW_JOIN_SKEWED_PARTITION_FACTOR = A + "skewJoin.skewedPartitionFactor"
SKEW_JOIN_SKEWED_PARTITION_THRESHOLD = A + "skewJoin.skewedPartitionThresholdInBytes"
ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN = A + "forceOptimizeSkewedJoin"
NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN = A + "nonEmptyPartitionRatioForBroadcastJoin"
ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD = A + "autoBroadcastJoinThreshold"
ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD = A + "maxShuffledHashJoinLocalMapThreshold"
ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED = A + "optimizeSkewsInRebalancePartitions.enabled"
ADAPTIVE_REBALANCE_PARTITIONS_SMALL_PARTITION_FACTOR = A + "rebalancePartitionsSmallPartitionFactor"
ADAPTIVE_CUSTOM_COST_EVALUATOR_CLASS = A + "customCostEvaluatorClass"
ADAPTIVE_APPLY_FINAL_STAGE_SHUFFLE_OPTIMIZATIONS = A + "applyFinalStageShuffleOptimizations"
CONVERT_SMJ_TO_SHJ_ENABLED = A + "convertSortMergeJoinToShuffledHashJoin.enabled"
CONVERT_SMJ_TO_SHJ_MIN_WIDENING_FACTOR = A + "convertSortMergeJoinToShuffledHashJoin.minWideningFactor"
ADAPTIVE_EXECUTION_ENABLED_IN_STATELESS_STREAMING = A + "streaming.stateless.enabled"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
AUTO_BROADCASTJOIN_THRESHOLD = "spark.sql.autoBroadcastJoinThreshold"
PREFER_SORTMERGEJOIN = "spark.sql.join.preferSortMergeJoin"
UNION_OUTPUT_PARTITIONING = "spark.sql.unionOutputPartitioning"

#: every ``spark.sql.*`` property (what a log's or a run's SQL settings are filtered by)
SQL_PREFIX = "spark.sql."
#: every AQE property (``A`` above, under its public name)
ADAPTIVE_PREFIX = A
#: ``SQLExecution.EXECUTION_ID_KEY``: the local property tying jobs to a SQL execution
EXECUTION_ID_KEY = "spark.sql.execution.id"
#: local properties Spark sets per execution (``spark.sql.execution.*``), not user settings
EXECUTION_PROPERTY_PREFIX = "spark.sql.execution."
#: ``StaticSQLConf.UI_RETAINED_EXECUTIONS`` (the History Server drops executions beyond it)
UI_RETAINED_EXECUTIONS = "spark.sql.ui.retainedExecutions"

#: ``SQLConf.SHUFFLE_ORDER_INDEPENDENT_CHECKSUM_ENABLED`` (4.1+): a row-order-independent checksum
#: per map output, compared when a map task runs again
SHUFFLE_ORDER_INDEPENDENT_CHECKSUM_ENABLED = "spark.sql.shuffle.orderIndependentChecksum.enabled"
#: ``SQLConf.SHUFFLE_CHECKSUM_MISMATCH_FULL_RETRY_ENABLED`` (4.1+): on a checksum mismatch Spark
#: retries every task of the consumer stages (a full stage retry)
SHUFFLE_CHECKSUM_MISMATCH_FULL_RETRY_ENABLED = "spark.sql.shuffle.orderIndependentChecksum.enableFullRetryOnMismatch"
#: core ``EVENT_LOG_EXCLUDED_PATTERNS`` (4.1+): event names left out of the log (a line is dropped
#: when it starts with ``{"Event":"<pattern>``)
EVENT_LOG_EXCLUDED_PATTERNS = "spark.eventLog.excludedPatterns"
#: core ``ARCHIVES``: archives every executor unpacks into its working directory (``path#name``)
ARCHIVES = "spark.archives"
#: core settings that say how many cores an application had (SparkContext.defaultParallelism: the
#: first if set, else the cores of the registered executors, or N of a ``local[N]`` master)
DEFAULT_PARALLELISM = "spark.default.parallelism"
MASTER = "spark.master"
EXECUTOR_CORES = "spark.executor.cores"
EXECUTOR_INSTANCES = "spark.executor.instances"
DYNAMIC_ALLOCATION_ENABLED = "spark.dynamicAllocation.enabled"
DYNAMIC_ALLOCATION_MIN_EXECUTORS = "spark.dynamicAllocation.minExecutors"
DYNAMIC_ALLOCATION_MAX_EXECUTORS = "spark.dynamicAllocation.maxExecutors"
#: Databricks' cluster tag naming the runtime ("13.3.x-photon-scala2.12"; Databricks' docs)
DATABRICKS_SPARK_VERSION_TAG = "spark.databricks.clusterUsageTags.sparkVersion"
#: the session extensions a log's application loaded (Comet's, Auron's: aqe_core/model/engines.py)
SQL_EXTENSIONS = "spark.sql.extensions"

#: Spark's switch for SQL over files by path (`` parquet.`/dir` ``). Guarded runs and the SQL
#: guard's own analysis turn it off, so a path can never resolve to a file relation.
RUN_SQL_ON_FILES = "spark.sql.runSQLOnFiles"
#: ``SQLConf.VARIABLE_SUBSTITUTE_ENABLED``: Spark's parser replaces ``${env:NAME}``,
#: ``${system:prop}`` and ``${spark:key}`` in the text before parsing it (``VariableSubstitution``),
#: so a stranger's query could read the server's environment. Guarded sessions turn it off.
VARIABLE_SUBSTITUTE = "spark.sql.variable.substitute"

#: every registry key's name, any release (what :meth:`AQEConf.resolve` files as unknown, not other)
_KEY_NAMES = frozenset(k.key for k in _KEYS)

#: registry keys whose value names a JVM class that Spark loads: never taken from users.
CLASS_VALUED_KEYS = frozenset({A + "customCostEvaluatorClass"})

#: settings outside the AQE registry that users may still set on guarded runs: they change how
#: a query's values are computed, never what Spark loads or reads.
USER_SETTABLE_EXTRA_KEYS = ("spark.sql.ansi.enabled", "spark.sql.session.timeZone")


def user_settable_keys() -> frozenset[str]:
    """Keys a stranger may set on a guarded run: every registry key except the class-valued
    ones, plus :data:`USER_SETTABLE_EXTRA_KEYS` (see :mod:`aqe_core.live.conf_guard`)."""
    return frozenset(all_key_names()) - CLASS_VALUED_KEYS | frozenset(USER_SETTABLE_EXTRA_KEYS)


#: SparkContext settings a guarded ``run --spark-conf`` may also set (value kind: a size in MiB
#: by default, or a positive count): how much memory and how many cores, never what Spark loads
#: or runs (``spark.jars``, ``spark.*.extraJavaOptions``, ``spark.plugins``, ``spark.sql.extensions``).
CONTEXT_SETTABLE_KEYS = {
    "spark.driver.memory": "mib", "spark.executor.memory": "mib", "spark.executor.memoryOverhead": "mib",
    "spark.driver.maxResultSize": "bytes", "spark.driver.cores": "count", "spark.executor.cores": "count",
    "spark.executor.instances": "count", "spark.cores.max": "count", "spark.default.parallelism": "count",
}
#: longest value a guarded setting may have
MAX_USER_VALUE_CHARS = 200


def user_setting_refusal(key: Any, text: str, spark_version: "str | SparkVersion | None" = None, *,
                         context: bool = False) -> "str | None":
    """Why a stranger may not set ``key`` to ``text`` on a guarded run, or None when they may.

    The one allow-list of :mod:`aqe_core.live.conf_guard` (runs, Re-run, Verify, the CLI) and of
    user presets (refused when saved): :func:`user_settable_keys`, each value parsed as Spark
    would; ``context`` also admits :data:`CONTEXT_SETTABLE_KEYS` (a new SparkContext's size)."""
    if not isinstance(key, str):
        return f"setting name {key!r} is not text"
    if key in CLASS_VALUED_KEYS:
        return f"setting {key} names a Java class for Spark to load, so it cannot be set here"
    kind = CONTEXT_SETTABLE_KEYS.get(key) if context else None
    if key not in user_settable_keys() and kind is None:
        shown = key if len(key) <= 120 else key[:120] + "..."
        sizes = ", and memory sizes and core counts such as spark.driver.memory" if context else ""
        return (f"setting {shown!r} cannot be set here: only AQE settings and {SHUFFLE_PARTITIONS}, "
                f"{AUTO_BROADCASTJOIN_THRESHOLD} and a few others{sizes} can (other settings can load classes "
                "or read files)")
    if len(text) > MAX_USER_VALUE_CHARS or any(ord(c) < 32 for c in text):
        return f"setting {key}: the value is too long or holds control characters"
    try:
        if kind == "count":
            value = _parse_int(key, text)
        elif kind is not None:
            value = parse_byte_string(text, "MiB" if kind == "mib" else "BYTE")
        else:
            entry = keys_for(spark_version or NEWEST).get(key) or keys_for(NEWEST).get(key)
            if entry is not None:
                parse_value(entry, text)
            return None
    except ConfValueError as exc:
        return f"setting {exc}" if str(exc).startswith(key) else f"setting {key}: {exc}"
    return None if value > 0 else f"setting {key} must be positive, but was {text!r}"


_CHECKS = {
    "positive": (lambda v: v > 0, "must be positive"),
    "non_negative": (lambda v: v >= 0, "must not be negative"),
    "open_fraction": (lambda v: 0 < v < 1, "must be between 0 and 1 (both excluded)"),
    "log_level": (lambda v: v.strip().upper() in ("TRACE", "DEBUG", "INFO", "WARN", "ERROR"),
                  "must be one of TRACE, DEBUG, INFO, WARN, ERROR"),
}


def keys_for(spark_version: "str | SparkVersion") -> dict[str, ConfKey]:
    """The entries that exist in ``spark_version``, by key (a fresh dict the caller may keep)."""
    return dict(_keys_for(as_version(spark_version)))


@lru_cache(maxsize=64)
def _keys_for(v: SparkVersion) -> dict[str, ConfKey]:
    return {k.key: k for k in _KEYS if k.exists_in(v)}


def all_key_names() -> list[str]:
    """Every key known for any release, in table order."""
    seen: dict[str, None] = {}
    for k in _KEYS:
        seen.setdefault(k.key)
    return list(seen)


def parse_value(entry: ConfKey, text: str) -> Any:
    """Parse a conf string for ``entry`` exactly as Spark would, then apply Spark's check."""
    if entry.type == "bool":
        value: Any = _parse_bool(entry.key, text)
    elif entry.type == "int":
        value = _parse_int(entry.key, text)
    elif entry.type == "double":
        value = _parse_double(entry.key, text)
    elif entry.type == "bytes":
        try:
            value = parse_byte_string(text)
        except ConfValueError as exc:
            raise ConfValueError(f"{entry.key}: {exc}") from None
    else:
        value = str(text)
    if entry.check and value is not None:
        ok, why = _CHECKS[entry.check]
        if not ok(value):
            raise ConfValueError(f"{entry.key} {why}, but was {text!r}")
    return value


# --------------------------------------------------------------------------------------
# Effective configuration


@dataclass
class AQEConf:
    """The effective AQE settings of one query under one Spark release.

    ``explicit`` holds the strings the user (or log) set for known keys; ``unknown`` keeps
    ``spark.sql.adaptive.*`` keys the release does not define (reported, never dropped);
    ``other`` keeps any other key given, untouched.
    """

    spark_version: SparkVersion
    explicit: dict[str, str] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)
    other: dict[str, str] = field(default_factory=dict)
    _typed: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _keys: tuple[SparkVersion, dict[str, ConfKey]] | None = field(default=None, init=False, repr=False, compare=False)
    #: when a set: every key a rule asked for is added (:meth:`record_reads`)
    _reads: set[str] | None = field(default=None, init=False, repr=False, compare=False)

    def record_reads(self, into: set[str]) -> "AQEConf":
        """Add to ``into`` every key asked for from now on (``get``, ``raw`` with its fallbacks,
        ``is_set``). A replay is a function of the values it asked for, so a change of keys it
        never asked for cannot change its answer (:mod:`aqe_core.advise.session_replay`)."""
        self._reads = into
        return self

    @classmethod
    def resolve(
        cls,
        spark_version: "str | SparkVersion",
        layers: Iterable[Mapping[str, Any]] = (),
        *,
        validate: bool = True,
    ) -> "AQEConf":
        """Release defaults, then each layer in order (later wins), e.g. Spark properties,
        job properties, an execution's modifiedConfigs. Values are conf strings."""
        conf = cls(as_version(spark_version))
        known = keys_for(conf.spark_version)
        for layer in layers:
            for key, value in (layer or {}).items():
                text = _to_conf_string(value)
                if key in known:
                    if validate:
                        parse_value(known[key], text)
                    conf.explicit[key] = text
                elif key.startswith(A) or key in _KEY_NAMES:
                    conf.unknown[key] = text
                else:
                    conf.other[key] = text
        return conf

    @classmethod
    def from_strings(cls, conf: Mapping[str, Any] | None, spark_version: "str | SparkVersion") -> "AQEConf":
        return cls.resolve(spark_version, [conf or {}])

    @property
    def keys(self) -> dict[str, ConfKey]:
        keys = self._keys
        if keys is None or keys[0] is not self.spark_version:  # (rules ask thousands of times a replay)
            keys = self._keys = (self.spark_version, _keys_for(self.spark_version))
        return keys[1]

    def raw(self, key: str) -> str | None:
        """The conf string in force for ``key`` (following fallbacks), or None if unset."""
        if self._reads is not None:
            self._reads.add(key)
        entry = self.keys.get(key)
        if entry is None:
            raise KeyError(f"{key} does not exist in Spark {self.spark_version}")
        if key in self.explicit:
            return self.explicit[key]
        if entry.fallback:
            return self.raw(entry.default)  # type: ignore[arg-type]
        return entry.default

    def get(self, key: str) -> Any:
        """Typed value in force (None for an optional key left unset). Cached: rules ask often."""
        if self._reads is not None:
            self._reads.add(key)
        if key in self._typed:
            return self._typed[key]
        text = self.raw(key)
        value = None if text is None else parse_value(self.keys[key], text)
        self._typed[key] = value
        return value

    def get_or(self, key: str, default: Any) -> Any:
        """Typed value, or ``default`` when the key does not exist in this release or is unset."""
        if key not in self.keys:
            return default
        value = self.get(key)
        return default if value is None else value

    def is_set(self, key: str) -> bool:
        if self._reads is not None:
            self._reads.add(key)
        return key in self.explicit

    def with_overrides(self, overrides: Mapping[str, Any]) -> "AQEConf":
        """A copy with more settings applied (the what-if)."""
        base = {**self.other, **self.unknown, **self.explicit}
        out = AQEConf.resolve(self.spark_version, [base, overrides])
        out._reads = self._reads  # a derived conf's questions are this one's
        return out

    def for_version(self, spark_version: "str | SparkVersion") -> "AQEConf":
        """The same explicit settings interpreted by another release."""
        base = {**self.other, **self.unknown, **self.explicit}
        out = AQEConf.resolve(spark_version, [base], validate=False)
        out._reads = self._reads
        return out

    def to_strings(self, include_defaults: bool = True) -> dict[str, str | None]:
        """Every key of this release with the string in force (``None`` = unset)."""
        if self._reads is not None:
            self._reads.update(self.keys)
        if not include_defaults:
            return dict(self.explicit)
        return {k: self.raw(k) for k in self.keys}

    @property
    def unknown_keys(self) -> list[str]:
        return sorted(self.unknown)

    def describe(self, key: str) -> str:
        return self.keys[key].doc

    def warnings(self) -> list[str]:
        return [
            f"{k} is not a Spark {self.spark_version} setting; kept but ignored by the rules"
            for k in self.unknown_keys
        ]

    # Convenience accessors used by the rules -------------------------------------------
    @property
    def advisory_partition_size(self) -> int:
        return self.get(A + "advisoryPartitionSizeInBytes")

    @property
    def skew_factor(self) -> float | int:
        return self.get(A + "skewJoin.skewedPartitionFactor")

    @property
    def skew_threshold_bytes(self) -> int:
        return self.get(A + "skewJoin.skewedPartitionThresholdInBytes")


def _to_conf_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def as_conf(conf: "Mapping[str, Any] | AQEConf | None", spark_version: "str | SparkVersion") -> AQEConf:
    """What the rules accept as ``conf``: an :class:`AQEConf` (re-read for another release if
    needed) or a mapping of Spark conf strings (None = all defaults)."""
    v = as_version(spark_version)
    if isinstance(conf, AQEConf):
        return conf if conf.spark_version == v else conf.for_version(v)
    return AQEConf.from_strings(conf or {}, v)


def default_conf(spark_version: "str | SparkVersion") -> AQEConf:
    """All defaults of a release."""
    return AQEConf(as_version(spark_version))


def checked_layers(spark_version: "str | SparkVersion", layers: Iterable[Mapping[str, Any]]
                   ) -> tuple[list[dict[str, str]], list[str]]:
    """Conf layers read from a log or capture, without the values this release cannot parse
    (``"maybe"`` for a boolean, ``"12x"`` for a size, a non-finite number), and one note per
    value dropped: the key then takes its default, and the view says so instead of failing."""
    known = keys_for(spark_version)
    out: list[dict[str, str]] = []
    notes: list[str] = []
    for layer in layers:
        kept: dict[str, str] = {}
        for key, value in (layer or {}).items():
            text = _to_conf_string(value)
            entry = known.get(key)
            if entry is not None:
                try:
                    parsed = parse_value(entry, text)
                    if isinstance(parsed, float) and not math.isfinite(parsed):
                        raise ConfValueError(f"{key} should be a finite number")
                except (ConfValueError, ValueError, OverflowError) as exc:
                    shown = text if len(text) <= 40 else text[:40] + "..."
                    why = str(exc).split(", but was")[0]
                    why = why[len(key):].lstrip(": ") if why.startswith(key) else why
                    notes.append(f"{key} = {shown!r} is not a valid value ({why[:120]}); the default is used instead")
                    continue
            kept[str(key)] = text
        out.append(kept)
    return out, notes
