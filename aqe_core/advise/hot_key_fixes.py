"""The fix for a hot key (issue 42): what would split its reducer, salting code for this query's
keys, broadcasting the other side when it fits, and filtering a NULL or default key.

Each fix says how it is known. Settings that would split the reducer come from the rules: for a
capture, :func:`aqe_core.advise.fix_findings.next_settings` (where the replayed skew trace stops,
the settings that get past it); elsewhere from the side's skew thresholds
(``size > max(skewedPartitionFactor x median, skewedPartitionThresholdInBytes)``). The broadcast
fix compares the other side's size Spark recorded with the release's broadcast threshold. Salting
and the NULL/default filters are code for the user to adapt: they change the query, not a setting.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core import config
from aqe_core.advise.fix_findings import bytes_above, bytes_below, factor_below, next_settings
from aqe_core.config import AQEConf
from aqe_core.engine.simulate import one_query, simulate
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.hot_keys import ReducerKeys, ShuffleKeys
from aqe_core.units import format_bytes
from aqe_core.versions import SparkVersion

__all__ = ["KeyFix", "capture_split_settings", "key_fixes", "split_fixes"]

#: values that usually stand for "unknown" when one of them is a hot key (a heuristic, said so)
DEFAULT_LOOKING = {0, -1, "", "0", "-1", "unknown", "UNKNOWN", "N/A", "n/a", "NA", "null", "NULL", "none", "None",
                   "1900-01-01", "1970-01-01", "9999-12-31"}
#: the share of a reducer's rows one key must hold to be called the cause
CAUSE_SHARE = 0.5
#: the largest other side AQE Lens suggests broadcasting (an assumption, said in the fix): above
#: Spark's threshold, since a side under it would have been broadcast already
BROADCAST_FITS = 100 << 20
#: the join types where a side may be broadcast (the other side streams): left, right
_BROADCASTABLE = {"Inner": ("left", "right"), "Cross": ("left", "right"), "LeftOuter": ("right",),
                  "LeftSemi": ("right",), "LeftAnti": ("right",), "ExistenceJoin": ("right",), "RightOuter": ("left",)}


@dataclass
class KeyFix:
    """One way to cure the reducer. ``code`` is for the user to run or adapt (never run by us)."""

    kind: str  # "split_settings" | "salting" | "broadcast" | "null_key" | "default_value" | "split_note"
    text: str
    settings: list[dict[str, str]] = field(default_factory=list)
    code: str = ""
    how_known: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "settings": self.settings, "code": self.code,
                "how_known": self.how_known}


def capture_split_settings(capture: Capture, q: QueryCapture, stage_id: Optional[int], conf: AQEConf,
                           v: SparkVersion) -> list[dict[str, str]]:
    """For a captured query: the settings that get the skew trace of the read of ``stage_id``
    past the condition where it stops (the replay's own, :func:`next_settings`)."""
    qr = simulate(one_query(capture, q)).queries[0]
    r = next((x for x in qr.reads if x.stage_id == stage_id), None)
    return next_settings(r, q, conf, v) if r is not None else []


def _threshold_settings(size: int, median: int, conf: AQEConf, v: SparkVersion) -> list[dict[str, str]]:
    """Settings under which ``size`` passes both skew conditions (the rules' thresholds)."""
    out: dict[str, str] = {}
    if not conf.get_or(config.SKEW_JOIN_ENABLED, True):
        out[config.SKEW_JOIN_ENABLED] = "true"
    if size <= conf.get_or(config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD, 256 << 20):
        out[config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD] = bytes_below(size)
    factor = conf.get_or(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR, 5)
    if median and size <= factor * median:
        f = factor_below(size / median, v)
        if f is not None:
            out[config.SKEW_JOIN_SKEWED_PARTITION_FACTOR] = f
    return [out] if out else []


def _literal(value: Any, type_name: str) -> str:
    if value is None:
        return "NULL"
    if type_name == "date":
        return f"DATE '{value}'"
    if type_name.startswith("timestamp"):
        return f"TIMESTAMP '{value}'"
    if type_name == "string":
        return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
    return str(value)


#: a key is salted when it holds at least this share of its reducer's rows (the top key always is)
SALT_SHARE = 0.1


def hot_condition(sk: ShuffleKeys, rk: ReducerKeys, n: int = 3) -> str:
    """A SQL condition true for the reducer's hot keys (NULL-safe): the top key and, of the next
    ``n - 1``, those holding at least :data:`SALT_SHARE` of the reducer's rows."""
    types = sk.key_types or ["?"] * len(sk.key_names)
    ors = []
    for k in [k for i, k in enumerate(rk.keys[:n]) if i == 0 or k.share >= SALT_SHARE]:
        ands = [f"{name} <=> {_literal(val, t)}" for name, val, t in zip(sk.key_names, k.values, types)]
        ors.append("(" + " AND ".join(ands) + ")" if len(ands) > 1 else ands[0])
    return " OR ".join(ors) or "false"


def _salting(sk: ShuffleKeys, rk: ReducerKeys, parts: int) -> str:
    cond = hot_condition(sk, rk)
    keys = ", ".join(f'F.expr("{k}")' for k in sk.key_names)
    if sk.input_kind == "aggregation input":
        return "\n".join([
            "# Code for you to adapt (AQE Lens did not run it): two-step aggregation with a salt on the hot keys.",
            "from pyspark.sql import functions as F",
            f"salted = df.withColumn('salt', F.when(F.expr(\"{cond}\"), (F.rand(42) * {parts}).cast('int'))"
            ".otherwise(F.lit(0)))",
            f"partial = salted.groupBy({keys}, 'salt').agg(...)   # the query's aggregates, per salt",
            f"result = partial.groupBy({keys}).agg(...)           # merge them (sum of sums, sum of counts...)",
        ])
    return "\n".join([
        "# Code for you to adapt (AQE Lens did not run it): salt the hot keys of the big side into",
        f"# {parts} parts and repeat the matching rows of the other side once per part.",
        "from pyspark.sql import functions as F",
        f"hot = F.expr(\"{cond}\")",
        f"big = big.withColumn('salt', F.when(hot, (F.rand(42) * {parts}).cast('int')).otherwise(F.lit(0)))",
        f"other = other.withColumn('salt', F.explode(F.when(hot, F.sequence(F.lit(0), F.lit({parts - 1})))"
        ".otherwise(F.array(F.lit(0)))))",
        "joined = big.join(other, on=[<the join keys>, 'salt'], how=<the join type>).drop('salt')",
    ])


def split_fixes(size: Optional[int], splits: Optional[int], median: Optional[int], *, conf: AQEConf, v: SparkVersion,
                is_join: bool, split_settings: Optional[list[dict[str, str]]] = None) -> list[KeyFix]:
    """What Spark did to the reducer, or the settings under which its skew join would split it
    (``split_settings``: a capture's replayed :func:`next_settings`; else the rules' thresholds)."""
    if is_join and splits:
        return [KeyFix("split_note", f"Spark split this reducer into {splits} parts by map ranges: each part"
                       " still joins every row of the other side's key; salting spreads the key itself",
                       how_known="exact (the read's partition specs)")]
    if not is_join or size is None:
        return []
    settings = split_settings if split_settings is not None else _threshold_settings(size, median or 0, conf, v)
    if not settings:
        return []
    return [KeyFix("split_settings", f"settings under which AQE's skew join splits this reducer ({format_bytes(size)})",
                   settings, how_known="the rules' own skew conditions" + (", replayed on the capture"
                                                                         if split_settings is not None else ""))]


def key_fixes(sk: ShuffleKeys, rk: ReducerKeys, *, conf: AQEConf, v: SparkVersion, median: Optional[int],
              join_type: Optional[str], side: Optional[str], other_side_bytes: Optional[int],
              split_settings: Optional[list[dict[str, str]]] = None) -> list[KeyFix]:
    """The fixes for reducer ``rk`` of ``sk`` (its top keys already counted)."""
    size = rk.bytes
    is_join = sk.input_kind == "join side"
    out = split_fixes(size, rk.splits, median, conf=conf, v=v, is_join=is_join, split_settings=split_settings)
    top = rk.keys[0] if rk.keys else None
    if top is not None and any(x is None for x in top.values):
        out.append(KeyFix("null_key", f"the top key is NULL ({top.share:.0%} of the reducer's rows): NULL keys never"
                          " match a join; filter them out before the shuffle and add them back unjoined"
                          + (" (an outer join keeps them with NULLs for the other side)" if is_join else ""),
                          code="\n".join([
                              "# Code for you to adapt (AQE Lens did not run it)",
                              "from pyspark.sql import functions as F",
                              f"nulls = big.where(F.expr(\"{' OR '.join(f'{k} IS NULL' for k in sk.key_names)}\"))",
                              f"rest = big.where(F.expr(\"{' AND '.join(f'{k} IS NOT NULL' for k in sk.key_names)}\"))",
                              "# join `rest` as before; union `nulls` with the other side's columns as NULL",
                          ]), how_known="exact key value"))
    elif top is not None and top.share >= CAUSE_SHARE and any(x in DEFAULT_LOOKING for x in top.values
                                                              if isinstance(x, (int, str))):
        out.append(KeyFix("default_value", f"the top key {top.values} holds {top.share:.0%} of the reducer's rows and"
                          " looks like a default value (\"unknown\"): if it means no value, filter it or make it NULL"
                          " before the shuffle", how_known="a heuristic on the value"))
    parts = max(2, rk.splits or (-(-size // max(1, conf.advisory_partition_size)) if size else 8))
    if top is not None:
        out.append(KeyFix("salting", f"salting the top key(s) into {parts} parts", code=_salting(sk, rk, min(parts, 64)),
                          how_known="code for you; parts = the reducer's bytes / the advisory size"))
    if is_join and other_side_bytes is not None and join_type and side:
        other = "right" if side == "left" else "left"
        threshold = conf.get_or(config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD, None) or \
            conf.get_or(config.AUTO_BROADCASTJOIN_THRESHOLD, 10 << 20)
        if other in _BROADCASTABLE.get(join_type, ()) and other_side_bytes <= max(BROADCAST_FITS, int(threshold)):
            out.append(KeyFix("broadcast", f"the {other} side is {format_bytes(other_side_bytes)} (Spark's statistics"
                              " of its shuffle): broadcast it and no reducer holds the hot key",
                              [{config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD: bytes_above(other_side_bytes)}],
                              code=f"# or a hint in the query: /*+ BROADCAST(<the {other} side>) */",
                              how_known="Spark's runtime statistics of the other side; sides up to"
                                        f" {format_bytes(max(BROADCAST_FITS, int(threshold)))} are called small enough"))
    return out
