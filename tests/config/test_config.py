"""Configuration model: Spark's parsing rules and per-release defaults.

Expected values are Spark's documented semantics (JavaUtils.byteStringAs: binary units) and the
defaults reported by each release's SQLConf (shared/spec/aqe_rules.md §9).
"""
import pytest

from aqe_core.config import AQEConf, ConfValueError, default_conf, keys_for, parse_byte_string
from aqe_core.versions import SparkVersion, UnsupportedSparkVersion


@pytest.mark.parametrize("text,expected", [
    ("64MB", 64 * 1024**2), ("1m", 1024**2), ("256b", 256), ("10", 10), ("1k", 1024), ("1KB", 1024),
    ("2g", 2 * 1024**3), (" 3m ", 3 * 1024**2), ("1t", 1024**4), ("1p", 1024**5), ("-1", -1), ("0b", 0),
])
def test_byte_strings_are_binary_units(text, expected):
    assert parse_byte_string(text) == expected


@pytest.mark.parametrize("bad", ["1.5m", "abc", "10q", "", "m", "1 0m", "3 m"])
def test_bad_byte_strings_are_rejected_clearly(bad):
    with pytest.raises(ConfValueError) as err:
        parse_byte_string(bad)
    assert bad.strip() in str(err.value) or "size" in str(err.value)


def test_defaults_per_release():
    assert default_conf("3.0.1").get("spark.sql.adaptive.enabled") is False
    assert default_conf("3.2.4").get("spark.sql.adaptive.enabled") is True
    assert default_conf("3.3.4").skew_factor == 5 and isinstance(default_conf("3.3.4").skew_factor, int)
    assert default_conf("3.4.4").skew_factor == 5.0 and isinstance(default_conf("3.4.4").skew_factor, float)
    assert default_conf("4.3.0").advisory_partition_size == 64 * 1024**2
    assert default_conf("4.3.0").get("spark.sql.adaptive.coalescePartitions.maxReducerPartitionsPerTask") == 2**31 - 1
    assert "spark.sql.adaptive.coalescePartitions.minPartitionSize" not in keys_for("3.1.3")
    assert "spark.sql.adaptive.forceOptimizeSkewedJoin" in keys_for("3.3.0")
    assert "spark.sql.adaptive.applyFinalStageShuffleOptimizations" not in keys_for("3.4.1")
    assert "spark.sql.adaptive.applyFinalStageShuffleOptimizations" in keys_for("3.4.2")
    assert default_conf("4.3.0").get("spark.sql.autoBroadcastJoinThreshold") == 10 * 1024**2


def test_every_key_has_a_description():
    for v in ["3.0.1", "3.1.3", "3.2.4", "3.5.9", "4.3.0"]:
        for k in keys_for(v).values():
            assert k.doc and "\n" not in k.doc


def test_legacy_advisory_fallback_and_override_order():
    legacy = "spark.sql.adaptive.shuffle.targetPostShuffleInputSize"
    new = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
    assert AQEConf.resolve("3.5.0", [{legacy: "32m"}]).advisory_partition_size == 32 * 1024**2
    assert AQEConf.resolve("3.5.0", [{legacy: "32m", new: "16m"}]).advisory_partition_size == 16 * 1024**2
    assert AQEConf.resolve("3.5.0", [{new: "16m"}, {new: "8m"}]).advisory_partition_size == 8 * 1024**2


def test_skew_factor_type_follows_release():
    key = "spark.sql.adaptive.skewJoin.skewedPartitionFactor"
    with pytest.raises(ConfValueError, match="should be int"):
        AQEConf.resolve("3.3.4", [{key: "5.5"}])
    assert AQEConf.resolve("3.4.0", [{key: "5.5"}]).skew_factor == 5.5


def test_unknown_keys_are_kept_and_reported():
    c = AQEConf.resolve("3.0.1", [{"spark.sql.adaptive.coalescePartitions.minPartitionSize": "1m",
                                    "spark.sql.adaptive.madeUp": "x", "spark.executor.memory": "4g"}])
    assert c.unknown_keys == ["spark.sql.adaptive.coalescePartitions.minPartitionSize", "spark.sql.adaptive.madeUp"]
    assert c.other == {"spark.executor.memory": "4g"}
    assert any("madeUp" in w for w in c.warnings())
    # interpreted by a release that knows the key, it takes effect
    assert c.for_version("3.2.0").get("spark.sql.adaptive.coalescePartitions.minPartitionSize") == 1024**2


def test_bad_values_get_clear_errors():
    with pytest.raises(ConfValueError, match="boolean"):
        AQEConf.resolve("4.3.0", [{"spark.sql.adaptive.enabled": "yes"}])
    with pytest.raises(ConfValueError, match="positive"):
        AQEConf.resolve("4.3.0", [{"spark.sql.shuffle.partitions": "0"}])
    with pytest.raises(ConfValueError, match="fractional"):
        AQEConf.resolve("4.3.0", [{"spark.sql.adaptive.advisoryPartitionSizeInBytes": "1.5m"}])


def test_versions():
    assert SparkVersion.parse("3.10.0") > SparkVersion.parse("3.9.9")
    assert SparkVersion.parse("4.3.0-SNAPSHOT") == "4.3.0"
    assert SparkVersion.parse("3.5.1").profile == "3.5-4.0"
    assert SparkVersion.parse("4.1.4").profile == "4.1"
    assert SparkVersion.parse("4.2.1").profile == "4.2"
    assert SparkVersion.parse("3.4.1").profile == "3.4.0-3.4.1"
    assert SparkVersion.parse("3.4.4").profile == "3.4.2-3.4.x"
    assert SparkVersion.parse("3.0.1").profile == "3.0"
    assert SparkVersion.parse("4.3.2").profile == "4.3"
    with pytest.raises(UnsupportedSparkVersion):
        SparkVersion.parse("2.4.8")
