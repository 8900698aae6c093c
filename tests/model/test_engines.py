"""The registry of engines (aqe_core/model/engines.py): every name cites where it comes from, each
engine maps the parts of AQE's vocabulary, and a log's engine is told from what it shows."""
from __future__ import annotations

import re

import pytest

from aqe_core.model.engines import (
    ENGINES, Role, by_key, engine_of_names, engine_of_properties, is_engine_wrapper, operator_of, spark_name,
)

#: a citation: "owner/repo path..." of a public source file (a repository alone for an engine), or a URL
_CITE = re.compile(r"^(https://\S+|[\w.-]+/[\w.-]+ \S+)")
_REPO = re.compile(r"^(https://\S+|[\w.-]+/[\w.-]+)")


def _cites(text: str) -> list[str]:
    return [c.strip() for c in text.split(";") if c.strip()]


def test_every_name_cites_a_public_source():
    for e in ENGINES:
        assert e.cite and all(_REPO.match(c) for c in _cites(e.cite)), e.key
        for op in e.operators:
            assert op.cite and all(_CITE.match(c) for c in _cites(op.cite)), (e.key, op.name, op.cite)
        for m in e.metrics:
            assert m.cite and all(_CITE.match(c) for c in _cites(m.cite)), (e.key, m.name, m.cite)
            assert m.decided_by in ("spark", "engine"), m
        for d in e.own:
            assert d.cite and all(_CITE.match(c) for c in _cites(d.cite)), (e.key, d.key)


@pytest.mark.parametrize("engine", [e.key for e in ENGINES])
def test_each_engine_maps_aqe_vocabulary(engine):
    """Exchange, broadcast, the join strategies, aggregate, scan: each engine names them."""
    e = by_key(engine)
    spark = {op.spark for op in e.operators}
    roles = {op.role for op in e.operators}
    assert {Role.EXCHANGE, Role.BROADCAST, Role.JOIN, Role.AGGREGATE, Role.SCAN} <= roles, engine
    assert {"BroadcastHashJoin", "BroadcastNestedLoopJoin", "ShuffledHashJoin"} <= spark, engine
    # a sort-merge join: the engine's own operator, or its own rewrite to a hash join (RAPIDS)
    assert "SortMergeJoin" in spark or e.own_decision("smj_as_hash") is not None, engine
    assert any(m.name for m in e.metrics if "partition" in m.name), engine  # its partition-count metric
    assert e.spark_decides and e.markers


def test_names_map_to_spark_and_wrappers_fold():
    assert spark_name("PhotonBroadcastNestedLoopJoin") == "BroadcastNestedLoopJoin"
    assert spark_name("PhotonShuffleExchangeSink") == "Exchange"
    assert spark_name("GpuCustomShuffleReader") == "AQEShuffleRead"
    assert spark_name("ColumnarExchange") == spark_name("CometExchange") == spark_name("NativeShuffleExchange") == "Exchange"
    assert spark_name("SortMergeJoinExecTransformer(skew=true)") == "SortMergeJoin(skew=true)"
    assert spark_name("NativeBroadcastJoin", "NativeBroadcastJoin [a#1], [b#2], Inner, BuildRight") == "BroadcastHashJoin"
    assert spark_name("PhotonScan parquet ") == "Scan parquet "
    assert spark_name("SortMergeJoin") == "SortMergeJoin" and operator_of("Exchange") is None
    for wrapper in ("PhotonShuffleMapStage", "PhotonShuffleExchangeSource", "PhotonResultStage", "VeloxColumnarToRow",
                    "WholeStageCodegenTransformer (3)", "GpuShuffleCoalesce", "CometColumnarToRow"):
        assert is_engine_wrapper(wrapper), wrapper
    assert not is_engine_wrapper("PhotonShuffleExchangeSink") and not is_engine_wrapper("WholeStageCodegen (1)")


def test_a_log_names_its_engine():
    assert engine_of_names(["AdaptiveSparkPlan", "PhotonAgg", "PhotonShuffleExchangeSink"]).key == "photon"
    assert engine_of_names(["AdaptiveSparkPlan", "Exchange", "SortMergeJoin"]) is None
    props = {"photon": {"spark.databricks.clusterUsageTags.runtimeEngine": "PHOTON"},
             "gluten": {"spark.plugins": "org.apache.gluten.GlutenPlugin"},
             "comet": {"spark.plugins": "org.apache.spark.CometPlugin"},
             "rapids": {"spark.plugins": "com.nvidia.spark.SQLPlugin"},
             "auron": {"spark.sql.extensions": "org.apache.spark.sql.auron.AuronSparkSessionExtension"}}
    for key, p in props.items():
        assert engine_of_properties(p).key == key
    assert engine_of_properties({"spark.master": "yarn"}) is None


def test_the_engines_own_decisions_are_declared():
    """AOS is Photon's, the sort-merge join run as a hash join each engine's: never Spark's rules."""
    assert by_key("photon").own_decision("aos") is not None
    for key in ("photon", "gluten", "comet", "rapids", "auron"):
        assert by_key(key).own_decision("smj_as_hash") is not None, key
    aos = {m.name for m in by_key("photon").metrics if m.decided_by == "engine"}
    assert {"aos old number of partitions", "aos new number of partitions", "aos intended number of partitions"} <= aos
