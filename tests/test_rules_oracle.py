"""Compare AQE Lens' rule re-implementations with ground truth recorded from real Spark releases.

Every ``tests/fixtures/oracle/<spark version>.json`` was written by
``tools/record_rule_oracle.py``, which called the release's own JVM code
(``ShufflePartitionsUtil.coalescePartitions``, ``splitSizeListByTargetSize``,
``createSkewPartitionSpecs`` over a real ``MapOutputTracker``, and ``OptimizeSkewedJoin``'s
skew math) through py4j. Nothing here needs Spark: the fixtures
are plain JSON, and every expected value in them is what a Spark release returned (or the
exception it threw). See docs/recording-fixtures.md for how to re-record.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ORACLE_DIR = Path(__file__).parent / "fixtures" / "oracle"
INT_MAX = 2**31 - 1

#: How a Java exception recorded in a fixture maps to the Python exception our code raises.
JAVA_TO_PYTHON_EXCEPTION: dict[str, type[BaseException]] = {
    "AssertionError": AssertionError,
    "IllegalArgumentException": ValueError,
    "IllegalStateException": RuntimeError,
}


def _load_fixtures() -> list[dict[str, Any]]:
    out = []
    for path in sorted(ORACLE_DIR.glob("*.json")):
        data = json.loads(path.read_text())
        data["_path"] = path
        out.append(data)
    return out


FIXTURES = _load_fixtures()


def _params(fn: str) -> list:
    params = []
    for fx in FIXTURES:
        version = fx["spark_version"]
        for case in fx["cases"]:
            if case["fn"] == fn:
                params.append(pytest.param(version, case, id=f"{version}::{case['name']}"))
    return params


def _is_error(result: Any) -> bool:
    return isinstance(result, dict) and "error" in result


def _expected_exception(result: dict) -> type[BaseException]:
    return JAVA_TO_PYTHON_EXCEPTION.get(result["error"], Exception)


def _describe(version: str, case: dict) -> str:
    args = json.dumps(case["args"], separators=(",", ":"))
    if len(args) > 1500:
        args = args[:1500] + "..."
    return f"Spark {version} case {case['name']!r} args={args}"


# ------------------------------------------------------------------------------------------
# Fixture sanity (needs neither Spark nor our implementation)
# ------------------------------------------------------------------------------------------

def test_fixtures_exist():
    assert FIXTURES, f"no oracle fixtures in {ORACLE_DIR}"


@pytest.mark.parametrize("fx", FIXTURES, ids=[fx["spark_version"] for fx in FIXTURES])
def test_fixture_well_formed(fx):
    assert fx["_path"].name == f"{fx['spark_version']}.json"
    assert fx["recorded_by"] == "tools/record_rule_oracle.py"
    assert fx["_path"].stat().st_size < 2_500_000, "keep fixture files small"
    names = [c["name"] for c in fx["cases"]]
    assert len(names) == len(set(names)), "case names must be unique within a fixture"
    for case in fx["cases"]:
        assert case["fn"] in {"coalesce_partitions", "split_size_list_by_target_size",
                              "analyze_side", "create_skew_partition_specs"}, case["name"]
        assert "result" in case, case["name"]


# ------------------------------------------------------------------------------------------
# ShufflePartitionsUtil.coalescePartitions
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,case", _params("coalesce_partitions"))
def test_coalesce_partitions_matches_spark(version, case):
    from aqe_core.rules.shuffle_partitions_util import coalesce_partitions
    from aqe_core.model.specs import spec_from_dict, spec_to_dict

    a = case["args"]
    specs_in = a["input_partition_specs"]
    if specs_in is not None:
        specs_in = [None if sp is None else [spec_from_dict(d) for d in sp] for sp in specs_in]

    def run():
        return coalesce_partitions(
            a["bytes_by_partition_id"],
            specs_in,
            advisory_target_size=a["advisory_target_size"],
            min_num_partitions=a["min_num_partitions"],
            min_partition_size=a["min_partition_size"],
            spark_version=version,
            max_reducer_partitions_per_task=a.get("max_reducer_partitions_per_task", INT_MAX),
        )

    expected = case["result"]
    if _is_error(expected):
        with pytest.raises(_expected_exception(expected)):
            result = run()
            pytest.fail(f"{_describe(version, case)}: Spark threw {expected}, we returned "
                        f"{result!r}")
        return
    if isinstance(expected, dict) and "shared" in expected:
        # 3.0/3.1: Spark returns ONE spec list used by every shuffle.
        expected = [expected["shared"] for _ in a["bytes_by_partition_id"]]
    actual = run()
    actual_json = [[spec_to_dict(s) for s in side] for side in actual]
    assert actual_json == expected, _describe(version, case)


# ------------------------------------------------------------------------------------------
# ShufflePartitionsUtil.splitSizeListByTargetSize
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,case", _params("split_size_list_by_target_size"))
def test_split_size_list_matches_spark(version, case):
    from aqe_core.rules.shuffle_partitions_util import split_size_list_by_target_size

    a = case["args"]
    kwargs = {}
    if "small_partition_factor" in a:
        kwargs["small_partition_factor"] = a["small_partition_factor"]
    expected = case["result"]
    if _is_error(expected):
        with pytest.raises(_expected_exception(expected)):
            split_size_list_by_target_size(a["sizes"], a["target_size"], spark_version=version,
                                           **kwargs)
        return
    actual = split_size_list_by_target_size(a["sizes"], a["target_size"],
                                            spark_version=version, **kwargs)
    assert list(actual) == expected, _describe(version, case)


# ------------------------------------------------------------------------------------------
# OptimizeSkewedJoin: median, threshold, target size, skewed partitions of one side
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,case", _params("analyze_side"))
def test_skew_side_analysis_matches_spark(version, case):
    from aqe_core.rules.optimize_skewed_join import analyze_side

    a = case["args"]
    expected = case["result"]
    if _is_error(expected):  # Spark threw before producing anything (e.g. no partitions)
        with pytest.raises(_expected_exception(expected)):
            analyze_side(a["partition_sizes"], dict(a["conf"]), spark_version=version)
        return
    if _is_error(expected.get("target_size")):
        with pytest.raises(_expected_exception(expected["target_size"])):
            analyze_side(a["partition_sizes"], dict(a["conf"]), spark_version=version)
        return
    side = analyze_side(a["partition_sizes"], dict(a["conf"]), spark_version=version)
    actual = {
        "median": side.median,
        "skew_threshold": side.skew_threshold,
        "skewed_indices": list(side.skewed_indices),
        "target_size": side.target_size,
    }
    assert actual == {k: expected[k] for k in actual}, _describe(version, case)


# ------------------------------------------------------------------------------------------
# createSkewPartitionSpecs (per-map sizes as the release's MapStatus reported them)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,case", _params("create_skew_partition_specs"))
def test_create_skew_partition_specs_matches_spark(version, case):
    from aqe_core.rules.shuffle_partitions_util import create_skew_partition_specs
    from aqe_core.model.specs import spec_to_dict

    a = case["args"]
    kwargs = {}
    if "small_partition_factor" in a:
        kwargs["small_partition_factor"] = a["small_partition_factor"]

    def run():
        return create_skew_partition_specs(a["reducer_index"], a["map_sizes"], a["target_size"],
                                           spark_version=version, **kwargs)

    expected = case["result"]
    if _is_error(expected):
        with pytest.raises(_expected_exception(expected)):
            run()
        return
    actual = run()
    actual_json = None if actual is None else [spec_to_dict(s) for s in actual]
    assert actual_json == expected, _describe(version, case)
