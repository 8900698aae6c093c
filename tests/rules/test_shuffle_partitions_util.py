"""``ShufflePartitionsUtil`` (aqe_core/rules/shuffle_partitions_util.py): ``coalescePartitions``,
``splitSizeListByTargetSize`` and ``createSkewPartitionSpecs``, three ways.

1. **Oracle**: every case recorded from each release's own JVM code
   (``tests/fixtures/oracle/<version>.json``, see tests/rules/oracle.py).
2. **Suite port**: Spark's ``ShufflePartitionsUtilSuite``, below.
3. **Properties**: invariants on random inputs (hypothesis): structure (coverage, order, sizes
   adding up), not numbers from our own code.

The suite port follows Spark's ``ShufflePartitionsUtilSuite`` (sql/core/src/test/.../execution/).

Each of the suite's tests is one pytest function below, with the suite's inputs and its
expected result per behaviour profile (``versions.PROFILES``: "3.0", "3.1", ... "4.3") or per
range of them ("3.2+"). Every test runs against every release with a recorded oracle
(``tests/fixtures/oracle/<version>.json``), so every profile that has a recording.

The expectations are the suite text's (the suite generation that matches the release), except
where the released jar behaves differently: then the release's, with a comment naming the
difference. Every expectation here is also checked against the result recorded from the
release itself (``tests/fixtures/oracle/<version>.json``, written by
``tools/record_rule_oracle.py``), so a transcription error shows up as a failure of that check
rather than as a bogus expectation for our implementation.

Conventions:

* ``Shared(...)``: 3.0/3.1 ``coalescePartitions`` returns ONE spec list for all shuffles; our
  API returns that list once per input shuffle.
* ``[]``: Spark returned an empty result ("do not coalesce").
* ``RAISES``: Spark throws ``java.lang.AssertionError``; our code raises ``AssertionError``.
* Keys such as ``"3.2+"`` cover every profile from that release on.

"SPARK-36228: Skip splitting a skewed partition when some map outputs are removed" registers
map statuses in a live ``MapOutputTracker``; here its per-map sizes are given directly, as the
release's ``MapStatus`` reported them (``None`` for a removed map output).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from aqe_core.model.specs import (
    CoalescedPartitionSpec,
    PartialMapperPartitionSpec,
    PartialReducerPartitionSpec,
    spec_from_dict,
    spec_to_dict,
)
from aqe_core.rules.shuffle_partitions_util import (
    coalesce_partitions,
    create_skew_partition_specs,
    split_size_list_by_target_size,
)
from aqe_core.versions import SparkVersion
from tests.rules.oracle import INT_MAX, ORACLE_DIR, describe, expected_exception, is_error, params

#: Every recorded release (so at least one per profile that has a recording).
VERSIONS = sorted((p.stem for p in ORACLE_DIR.glob("*.json")), key=SparkVersion.parse)


# ------------------------------------------------------------------------------------------
# Oracle: ShufflePartitionsUtil.coalescePartitions
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,case", params("coalesce_partitions"))
def test_coalesce_partitions_matches_spark(version, case):
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
    if is_error(expected):
        with pytest.raises(expected_exception(expected)):
            result = run()
            pytest.fail(f"{describe(version, case)}: Spark threw {expected}, we returned "
                        f"{result!r}")
        return
    if isinstance(expected, dict) and "shared" in expected:
        # 3.0/3.1: Spark returns ONE spec list used by every shuffle.
        expected = [expected["shared"] for _ in a["bytes_by_partition_id"]]
    actual = run()
    actual_json = [[spec_to_dict(s) for s in side] for side in actual]
    assert actual_json == expected, describe(version, case)


# ------------------------------------------------------------------------------------------
# Oracle: ShufflePartitionsUtil.splitSizeListByTargetSize
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,case", params("split_size_list_by_target_size"))
def test_split_size_list_matches_spark(version, case):
    a = case["args"]
    kwargs = {}
    if "small_partition_factor" in a:
        kwargs["small_partition_factor"] = a["small_partition_factor"]
    expected = case["result"]
    if is_error(expected):
        with pytest.raises(expected_exception(expected)):
            split_size_list_by_target_size(a["sizes"], a["target_size"], spark_version=version,
                                           **kwargs)
        return
    actual = split_size_list_by_target_size(a["sizes"], a["target_size"],
                                            spark_version=version, **kwargs)
    assert list(actual) == expected, describe(version, case)


# ------------------------------------------------------------------------------------------
# Oracle: createSkewPartitionSpecs (per-map sizes as the release's MapStatus reported them)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,case", params("create_skew_partition_specs"))
def test_create_skew_partition_specs_matches_spark(version, case):
    a = case["args"]
    kwargs = {}
    if "small_partition_factor" in a:
        kwargs["small_partition_factor"] = a["small_partition_factor"]

    def run():
        return create_skew_partition_specs(a["reducer_index"], a["map_sizes"], a["target_size"],
                                           spark_version=version, **kwargs)

    expected = case["result"]
    if is_error(expected):
        with pytest.raises(expected_exception(expected)):
            run()
        return
    actual = run()
    actual_json = None if actual is None else [spec_to_dict(s) for s in actual]
    assert actual_json == expected, describe(version, case)


# ==========================================================================================
# Suite port: ShufflePartitionsUtilSuite
# ==========================================================================================

def C(start: int, end: int, size: int | None = None) -> CoalescedPartitionSpec:
    return CoalescedPartitionSpec(start, end, size)


def P(reducer: int, start_map: int, end_map: int, size: int | None = None):
    return PartialReducerPartitionSpec(reducer, start_map, end_map, size)


def plain(indices, sizes) -> list[CoalescedPartitionSpec]:
    """``createPartitionSpecsBeforeCoalesce``: one ``C(i, i + 1, sizes[i])`` per index."""
    return [C(i, i + 1, sizes[i]) for i in indices]


def skew(reducer: int, count: int, size: int = 100) -> list[PartialReducerPartitionSpec]:
    """``Seq.tabulate(count)(i => PartialReducerPartitionSpec(reducer, i, i + 1, size))``."""
    return [P(reducer, i, i + 1, size) for i in range(count)]


@dataclass(frozen=True)
class Shared:
    """3.0/3.1 result: one spec list shared by every shuffle."""

    specs: tuple

    def __init__(self, *specs):
        object.__setattr__(self, "specs", tuple(specs))


class _Raises:
    def __repr__(self) -> str:
        return "RAISES(AssertionError)"


RAISES = _Raises()


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------

def profile(version: str) -> str:
    return SparkVersion.parse(version).profile


def pick(expected: dict[str, Any], version: str) -> Any:
    """The expectation for ``version``: its exact profile key, else the newest ``"X.Y+"`` key
    at or below it."""
    prof = profile(version)
    if prof in expected:
        return expected[prof]
    v = SparkVersion.parse(version)
    best = None
    for key in expected:
        if key.endswith("+") and v >= SparkVersion.parse(key[:-1]):
            if best is None or SparkVersion.parse(key[:-1]) > SparkVersion.parse(best[:-1]):
                best = key
    if best is None:
        raise KeyError(f"no expectation for {version} (profile {prof}) in {list(expected)}")
    return expected[best]


_FIXTURE_CACHE: dict[str, dict[str, dict]] = {}


def recorded(version: str, name: str) -> dict | None:
    """The case recorded from the release, or None if there is no fixture for it."""
    if version not in _FIXTURE_CACHE:
        path = ORACLE_DIR / f"{version}.json"
        cases = json.loads(path.read_text())["cases"] if path.exists() else []
        _FIXTURE_CACHE[version] = {c["name"]: c for c in cases}
    return _FIXTURE_CACHE[version].get(name)


def _expected_json(exp: Any, num_shuffles: int) -> Any:
    if exp is RAISES:
        return "AssertionError"
    if isinstance(exp, Shared):
        return {"shared": [spec_to_dict(s) for s in exp.specs]}
    return [[spec_to_dict(s) for s in side] for side in exp]


def _recorded_json(result: Any) -> Any:
    if isinstance(result, dict) and "error" in result:
        return result["error"]
    return result


def check_coalesce(version: str, name: str, stats: list, *, target: int,
                   specs: list | None = None, min_num: int = 1, min_size: int = 0,
                   expected: dict[str, Any]) -> None:
    """One ``checkEstimation``/``coalescePartitions`` call of the suite."""
    exp = pick(expected, version)
    case_id = f"suite:{name}"

    # 1. The expectation written here must be what the release itself returned.
    rec = recorded(version, case_id)
    if rec is not None:
        spec_json = None if specs is None else [
            None if sp is None else [spec_to_dict(s) for s in sp] for sp in specs]
        assert rec["args"]["bytes_by_partition_id"] == stats, f"{case_id}: inputs differ"
        assert rec["args"]["input_partition_specs"] == spec_json, f"{case_id}: specs differ"
        assert _recorded_json(rec["result"]) == _expected_json(exp, len(stats)), (
            f"{case_id}: the expectation in this port disagrees with what Spark {version} "
            f"returned ({rec['result']})")

    # 2. Our implementation must produce it.
    def run():
        return coalesce_partitions(stats, specs, advisory_target_size=target,
                                   min_num_partitions=min_num, min_partition_size=min_size,
                                   spark_version=version)

    if exp is RAISES:
        with pytest.raises(AssertionError):
            got = run()
            pytest.fail(f"{case_id}: Spark {version} asserts, we returned {got!r}")
        return
    want = [list(exp.specs) for _ in stats] if isinstance(exp, Shared) else exp
    got = run()
    assert [list(side) for side in got] == want, f"{case_id} on Spark {version}"


def check_split(version: str, name: str, sizes: list[int], target: int, expected: list[int],
                factor: float | None = None) -> None:
    case_id = f"suite:{name}"
    rec = recorded(version, case_id)
    if rec is not None:
        assert rec["args"]["sizes"] == sizes, f"{case_id}: inputs differ"
        assert rec["result"] == expected, (
            f"{case_id}: expectation disagrees with Spark {version} ({rec['result']})")
    kwargs = {} if factor is None else {"small_partition_factor": factor}
    got = split_size_list_by_target_size(sizes, target, spark_version=version, **kwargs)
    assert list(got) == expected, f"{case_id} on Spark {version}"


def needs_skew_specs(version: str) -> None:
    if SparkVersion.parse(version) < SparkVersion.parse("3.2.0"):
        pytest.skip("coalescing with input partition specs (skew sections) starts in 3.2")


# ------------------------------------------------------------------------------------------
# test("1 shuffle")
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_1_shuffle(version):
    t = 100
    # Some bytes per partition are 0 and total size is less than the target size:
    # 1 coalesced partition is expected.
    check_coalesce(version, "1 shuffle#0", [[10, 0, 20, 0, 0]], target=t, expected={
        "3.0": Shared(C(0, 5)), "3.1": Shared(C(0, 5)),
        "3.2+": [[C(0, 5, 30)]]})
    # 2 coalesced partitions are expected.
    check_coalesce(version, "1 shuffle#1", [[10, 0, 90, 20, 0]], target=t, expected={
        "3.0": Shared(C(0, 3), C(3, 5)), "3.1": Shared(C(0, 3), C(3, 5)),
        "3.2+": [[C(0, 3, 100), C(3, 5, 20)]]})
    # There are a few large shuffle partitions.
    check_coalesce(version, "1 shuffle#2", [[110, 10, 100, 110, 0]], target=t, expected={
        # 3.0.1 differs from the 3.1-era suite: 3.0.x does not skip the empty tail [4, 5).
        "3.0": Shared(C(0, 1), C(1, 2), C(2, 3), C(3, 4), C(4, 5)),
        "3.1": Shared(C(0, 1), C(1, 2), C(2, 3), C(3, 4)),
        "3.2+": [[C(0, 1, 110), C(1, 2, 10), C(2, 3, 100), C(3, 4, 110)]]})
    # All shuffle partitions are larger than the targeted size: 3.2+ returns Nil (no coalescing).
    check_coalesce(version, "1 shuffle#3", [[100, 110, 100, 110, 110]], target=t, expected={
        "3.0": Shared(C(0, 1), C(1, 2), C(2, 3), C(3, 4), C(4, 5)),
        "3.1": Shared(C(0, 1), C(1, 2), C(2, 3), C(3, 4), C(4, 5)),
        "3.2+": []})
    # The last shuffle partition is in a single coalesced partition.
    check_coalesce(version, "1 shuffle#4", [[30, 30, 0, 40, 110]], target=t, expected={
        "3.0": Shared(C(0, 4), C(4, 5)), "3.1": Shared(C(0, 4), C(4, 5)),
        "3.2+": [[C(0, 4, 100), C(4, 5, 110)]]})


# ------------------------------------------------------------------------------------------
# test("2 shuffles")
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_2_shuffles(version):
    t = 100
    # Different numbers of shuffle partitions: 3.0/3.1 assert, 3.2+ return an empty result.
    check_coalesce(version, "2 shuffles#0", [[0] * 5, [0] * 6], target=t, expected={
        "3.0": RAISES, "3.1": RAISES, "3.2+": []})
    # Some bytes per partition are 0: 1 coalesced partition is expected.
    check_coalesce(version, "2 shuffles#1", [[0, 10, 0, 20, 0], [30, 0, 20, 0, 20]], target=t,
                   expected={"3.0": Shared(C(0, 5)), "3.1": Shared(C(0, 5)),
                             "3.2+": [[C(0, 5, 30)], [C(0, 5, 70)]]})
    # 2 coalesced partitions are expected (the suite's comment; it lists 3 specs).
    check_coalesce(version, "2 shuffles#2", [[0, 10, 0, 20, 0], [30, 0, 70, 0, 30]], target=t,
                   expected={
                       "3.0": Shared(C(0, 2), C(2, 4), C(4, 5)),
                       "3.1": Shared(C(0, 2), C(2, 4), C(4, 5)),
                       "3.2+": [[C(0, 2, 10), C(2, 4, 20), C(4, 5, 0)],
                                [C(0, 2, 30), C(2, 4, 70), C(4, 5, 30)]]})
    # 4 coalesced partitions are expected.
    check_coalesce(version, "2 shuffles#3", [[0, 99, 0, 20, 0], [30, 0, 70, 0, 30]], target=t,
                   expected={
                       "3.0": Shared(C(0, 1), C(1, 2), C(2, 4), C(4, 5)),
                       "3.1": Shared(C(0, 1), C(1, 2), C(2, 4), C(4, 5)),
                       "3.2+": [[C(0, 1, 0), C(1, 2, 99), C(2, 4, 20), C(4, 5, 0)],
                                [C(0, 1, 30), C(1, 2, 0), C(2, 4, 70), C(4, 5, 30)]]})
    # 2 coalesced partitions are needed (the suite's comment; it lists 4 specs).
    check_coalesce(version, "2 shuffles#4", [[0, 100, 0, 30, 0], [30, 0, 70, 0, 30]], target=t,
                   expected={
                       "3.0": Shared(C(0, 1), C(1, 2), C(2, 4), C(4, 5)),
                       "3.1": Shared(C(0, 1), C(1, 2), C(2, 4), C(4, 5)),
                       "3.2+": [[C(0, 1, 0), C(1, 2, 100), C(2, 4, 30), C(4, 5, 0)],
                                [C(0, 1, 30), C(1, 2, 0), C(2, 4, 70), C(4, 5, 30)]]})
    singles = Shared(C(0, 1), C(1, 2), C(2, 3), C(3, 4), C(4, 5))
    # There are a few large shuffle partitions: 3.2+ returns Nil if it cannot coalesce.
    check_coalesce(version, "2 shuffles#5", [[0, 100, 40, 30, 0], [30, 0, 60, 0, 110]], target=t,
                   expected={"3.0": singles, "3.1": singles, "3.2+": []})
    # All pairs of shuffle partitions are larger than the targeted size.
    check_coalesce(version, "2 shuffles#6", [[100, 100, 40, 30, 0], [30, 0, 60, 70, 110]],
                   target=t, expected={"3.0": singles, "3.1": singles, "3.2+": []})


# ------------------------------------------------------------------------------------------
# test("enforce minimal number of coalesced partitions")
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_enforce_minimal_number_of_coalesced_partitions(version):
    name, t, m = "enforce minimal number of coalesced partitions", 100, 2
    # Not enforced because the size of data is 0; at least one partition spec is created.
    check_coalesce(version, f"{name}#0", [[0] * 5, [0] * 5], target=t, min_num=m, expected={
        "3.0": Shared(C(0, 5)), "3.1": Shared(C(0, 5)),
        "3.2+": [[C(0, 5, 0)], [C(0, 5, 0)]]})
    # Not enforced because there are too many 0-size partitions.
    check_coalesce(version, f"{name}#1", [[200, 0, 0], [100, 0, 0]], target=t, min_num=m,
                   expected={
                       # 3.0.1 differs from the 3.1-era suite: it emits the empty range [1, 3).
                       "3.0": Shared(C(0, 1), C(1, 3)),
                       "3.1": Shared(C(0, 1)),
                       "3.2+": [[C(0, 1, 200)], [C(0, 1, 100)]]})
    # The minimal number of coalesced partitions is enforced.
    check_coalesce(version, f"{name}#2", [[10, 5, 5, 0, 20], [5, 10, 0, 10, 5]], target=t,
                   min_num=m, expected={
                       "3.0": Shared(C(0, 3), C(3, 5)), "3.1": Shared(C(0, 3), C(3, 5)),
                       "3.2+": [[C(0, 3, 20), C(3, 5, 20)], [C(0, 3, 15), C(3, 5, 15)]]})
    # The number of coalesced partitions is determined by the algorithm.
    check_coalesce(version, f"{name}#3", [[10, 50, 20, 80, 20], [40, 10, 0, 10, 30]], target=t,
                   min_num=m, expected={
                       "3.0": Shared(C(0, 1), C(1, 3), C(3, 4), C(4, 5)),
                       "3.1": Shared(C(0, 1), C(1, 3), C(3, 4), C(4, 5)),
                       "3.2+": [[C(0, 1, 10), C(1, 3, 70), C(3, 4, 80), C(4, 5, 20)],
                                [C(0, 1, 40), C(1, 3, 10), C(3, 4, 10), C(4, 5, 30)]]})


# ------------------------------------------------------------------------------------------
# test("do not create partition spec for 0-size partitions")  (3.1-era suite on)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_do_not_create_partition_spec_for_0_size_partitions(version):
    name, t = "do not create partition spec for 0-size partitions", 100
    # 1 shuffle: all bytes per partition are 0, 1 empty partition spec created.
    check_coalesce(version, f"{name}#0", [[0] * 5], target=t, expected={
        "3.0": Shared(C(0, 5)), "3.1": Shared(C(0, 5)), "3.2+": [[C(0, 5, 0)]]})
    # 2 shuffles: all bytes per partition are 0, 1 empty partition spec created.
    check_coalesce(version, f"{name}#1", [[0] * 5, [0] * 5], target=t, expected={
        "3.0": Shared(C(0, 5)), "3.1": Shared(C(0, 5)),
        "3.2+": [[C(0, 5, 0)], [C(0, 5, 0)]]})
    # No partition spec created for the 0-size partitions.
    check_coalesce(version, f"{name}#2", [[200, 0, 0, 0, 0], [100, 0, 300, 0, 0]], target=t,
                   min_num=2, expected={
                       # 3.0.1 (the test is not in its suite) does create them: it never skips
                       # zero-byte ranges.
                       "3.0": Shared(C(0, 1), C(1, 2), C(2, 3), C(3, 5)),
                       "3.1": Shared(C(0, 1), C(2, 3)),
                       "3.2+": [[C(0, 1, 200), C(2, 3, 0)], [C(0, 1, 100), C(2, 3, 300)]]})


# ------------------------------------------------------------------------------------------
# test("minPartitionSize")  (a 3.2 development-era suite only)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_min_partition_size(version):
    if SparkVersion.parse(version) < SparkVersion.parse("3.2.0"):
        pytest.skip("minPartitionSize is a parameter from 3.2 on")
    # The development-era suite expected C(0, 2, 1500), C(2, 3, 2000), C(3, 5, 1200). Every
    # released jar (3.2.0 on) instead packs the too-small ranges into their smaller neighbour
    # and returns one spec.
    check_coalesce(version, "minPartitionSize#0", [[1000, 500, 2000, 200, 1000]], target=5000,
                   min_num=20, min_size=2000, expected={"3.2+": [[C(0, 5, 4700)]]})


# ------------------------------------------------------------------------------------------
# test("coalesce after skew splitting")
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_coalesce_after_skew_splitting(version):
    needs_skew_specs(version)
    name, t = "coalesce after skew splitting", 100

    # Skew sections in the middle.
    b1, b2 = [10, 5, 300, 10, 8, 10, 10, 20], [10, 10, 10, 8, 10, 200, 7, 20]
    specs1 = (plain(range(0, 2), b1) + skew(2, 3) + plain(range(3, 5), b1)
              + [C(5, 6, 10)] * 2 + plain(range(6, 8), b1))
    specs2 = (plain(range(0, 2), b2) + [C(2, 3, 10)] * 3 + plain(range(3, 5), b2)
              + skew(5, 2) + plain(range(6, 8), b2))
    expected1 = [C(0, 2, 15)] + skew(2, 3) + [C(3, 5, 18)] + [C(5, 6, 10)] * 2 + [C(6, 8, 30)]
    expected2 = [C(0, 2, 20)] + [C(2, 3, 10)] * 3 + [C(3, 5, 18)] + skew(5, 2) + [C(6, 8, 27)]
    check_coalesce(version, f"{name}#0", [b1, b2], specs=[specs1, specs2], target=t,
                   expected={"3.2+": [expected1, expected2]})

    # Skew sections at both ends.
    b1, b2 = [300, 5, 10, 10, 8, 10, 10, 20], [10, 10, 10, 8, 10, 20, 7, 200]
    specs1 = skew(0, 3) + plain(range(1, 7), b1) + [C(7, 8, 20)] * 2
    specs2 = [C(0, 1, 10)] * 3 + plain(range(1, 7), b2) + skew(7, 2)
    expected1 = skew(0, 3) + [C(1, 5, 33), C(5, 7, 20)] + [C(7, 8, 20)] * 2
    expected2 = [C(0, 1, 10)] * 3 + [C(1, 5, 38), C(5, 7, 27)] + skew(7, 2)
    check_coalesce(version, f"{name}#1", [b1, b2], specs=[specs1, specs2], target=t,
                   expected={"3.2+": [expected1, expected2]})

    # Back-to-back skew sections.
    b1, b2 = [300, 50, 10, 10, 8, 10, 400, 200], [10, 500, 10, 8, 10, 20, 7, 20]
    specs1 = (skew(0, 3) + [C(1, 2, 50)] * 5 + plain(range(2, 6), b1) + skew(6, 4)
              + skew(7, 2))
    specs2 = ([C(0, 1, 10)] * 3 + skew(1, 5) + plain(range(2, 6), b2) + [C(6, 7, 7)] * 4
              + [C(7, 8, 20)] * 2)
    expected1 = skew(0, 3) + [C(1, 2, 50)] * 5 + [C(2, 6, 38)] + skew(6, 4) + skew(7, 2)
    expected2 = ([C(0, 1, 10)] * 3 + skew(1, 5) + [C(2, 6, 48)] + [C(6, 7, 7)] * 4
                 + [C(7, 8, 20)] * 2)
    check_coalesce(version, f"{name}#2", [b1, b2], specs=[specs1, specs2], target=t,
                   expected={"3.2+": [expected1, expected2]})

    # Singled out partitions in between skew sections and at the end.
    b1, b2 = [300, 16, 30, 10, 8, 10, 10, 20], [10, 10, 500, 8, 10, 7, 200, 20]
    specs1 = (skew(0, 3) + [C(1, 2, 16)] + [C(2, 3, 30)] * 5 + plain(range(3, 6), b1)
              + [C(6, 7, 10)] * 2 + [C(7, 8, 20)])
    specs2 = ([C(0, 1, 10)] * 3 + [C(1, 2, 10)] + skew(2, 5) + plain(range(3, 6), b2)
              + skew(6, 2) + [C(7, 8, 20)])
    expected1 = (skew(0, 3) + [C(1, 2, 16)] + [C(2, 3, 30)] * 5 + [C(3, 6, 28)]
                 + [C(6, 7, 10)] * 2 + [C(7, 8, 20)])
    expected2 = ([C(0, 1, 10)] * 3 + [C(1, 2, 10)] + skew(2, 5) + [C(3, 6, 25)] + skew(6, 2)
                 + [C(7, 8, 20)])
    check_coalesce(version, f"{name}#3", [b1, b2], specs=[specs1, specs2], target=t,
                   expected={"3.2+": [expected1, expected2]})

    # No actual coalescing happened: empty result.
    b1, b2 = [5, 300, 40, 8, 20, 10, 3], [4, 10, 58, 10, 67, 200, 5]
    specs1 = [C(0, 1, 5)] + skew(1, 3) + plain(range(2, 5), b1) + [C(5, 6)] * 2 + [C(6, 7)]
    specs2 = [C(0, 1)] + [C(1, 2)] * 3 + plain(range(2, 5), b2) + skew(5, 2) + [C(6, 7)]
    check_coalesce(version, f"{name}#4", [b1, b2], specs=[specs1, specs2], target=t,
                   expected={"3.2+": []})


# ------------------------------------------------------------------------------------------
# test("coalesce after skew splitting - counter cases")
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_coalesce_after_skew_splitting_counter_cases(version):
    needs_skew_specs(version)
    name, t = "coalesce after skew splitting - counter cases", 100
    ten = [10, 10, 10, 10, 10]
    plain5 = [C(i, i + 1) for i in range(5)]

    # Not all shuffles have partition specs: empty result.
    check_coalesce(version, f"{name}#0", [ten, ten], specs=[plain5, None], target=t,
                   expected={"3.2+": []})
    # Not all shuffles have map output statistics: empty result.
    check_coalesce(version, f"{name}#1", [ten, None], specs=[plain5, plain5], target=t,
                   expected={"3.2+": []})

    # The next four are AssertionErrors in the suite. From 3.5.0 on the released jars log a
    # warning and return an empty result instead ("unexpected partition specs").
    invalid = {"3.2+": RAISES, "3.5+": []}
    # A CoalescedPartitionSpec with end - start > 1.
    bad = [C(0, 1), C(1, 5)]
    check_coalesce(version, f"{name}#2", [ten, ten], specs=[bad, bad], target=t, expected=invalid)
    # A PartialMapperPartitionSpec.
    bad = [C(0, 1), PartialMapperPartitionSpec(1, 0, 1)]
    check_coalesce(version, f"{name}#3", [ten, ten], specs=[bad, bad], target=t, expected=invalid)
    # Partition specs of different shuffles have different lengths.
    specs1 = [C(i, i + 1) for i in range(4)] + [P(4, i, i + 1, 10) for i in range(2)]
    check_coalesce(version, f"{name}#4", [ten, ten], specs=[specs1, plain5], target=t,
                   expected=invalid)
    # Start indices of partition specs are not identical among all shuffles.
    specs2 = ([C(i, i + 1) for i in range(2)] + [P(2, i, i + 1, 10) for i in range(2)]
              + [C(i + 3, i + 4) for i in range(2)])
    check_coalesce(version, f"{name}#5", [ten, ten], specs=[specs1, specs2], target=t,
                   expected=invalid)

    # Indices out of order: an AssertionError in every release.
    bad = [C(i + 1, i + 2) for i in range(4)]  # in the beginning
    check_coalesce(version, f"{name}#6", [ten, ten], specs=[bad, bad], target=t,
                   expected={"3.2+": RAISES})
    bad = [C(0, 1), C(1, 2), C(0, 1)] + [C(2, 3)] * 3  # before a skew section
    check_coalesce(version, f"{name}#7", [ten, ten], specs=[bad, bad], target=t,
                   expected={"3.2+": RAISES})
    bad = [C(0, 1)] * 2 + [C(2, 3), C(3, 4)] + [C(4, 5)]  # after a skew section
    check_coalesce(version, f"{name}#8", [ten, ten], specs=[bad, bad], target=t,
                   expected={"3.2+": RAISES})


# ------------------------------------------------------------------------------------------
# test("SPARK-35923: Coalesce empty partition with mixed CoalescedPartitionSpec and
#       PartialReducerPartitionSpec")
# ------------------------------------------------------------------------------------------

SPARK_35923 = ("SPARK-35923: Coalesce empty partition with mixed CoalescedPartitionSpec and"
               "PartialReducerPartitionSpec")  # sic: the suite's name has no space there


@pytest.mark.parametrize("version", VERSIONS)
def test_spark_35923_coalesce_empty_partitions_between_skew_sections(version):
    needs_skew_specs(version)
    b1 = [0, 200, 0, 10, 0, 0, 400, 0, 0]
    b2 = [0, 30, 10, 300, 0, 0, 5, 0, 0]
    specs1 = ([C(0, 1, 0)] + skew(1, 2) + [C(2, 3, 0)] + [C(3, 4, 10)] * 3
              + [C(4 + i, 5 + i, 0) for i in range(2)] + skew(6, 4)
              + [C(7 + i, 8 + i, 0) for i in range(2)])
    specs2 = ([C(0, 1, 0)] + [C(1, 2, 30)] * 2 + [C(2, 3, 10)] + skew(3, 3)
              + [C(4 + i, 5 + i, 0) for i in range(2)] + [C(6, 7, 5)] * 4
              + [C(7 + i, 8 + i, 0) for i in range(2)])
    # Reducers 0, 4, 5, 7 and 8 are empty on both sides: no spec reads them at all.
    # Reducer 2 keeps its spec on both sides because the second shuffle is not empty there.
    expected1 = skew(1, 2) + [C(2, 3, 0)] + [C(3, 4, 10)] * 3 + skew(6, 4)
    expected2 = [C(1, 2, 30)] * 2 + [C(2, 3, 10)] + skew(3, 3) + [C(6, 7, 5)] * 4
    check_coalesce(version, f"{SPARK_35923}#0", [b1, b2], specs=[specs1, specs2], target=100,
                   expected={"3.2+": [expected1, expected2]})


# ------------------------------------------------------------------------------------------
# test("splitSizeListByTargetSize")
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_split_size_list_by_target_size(version):
    name, t = "splitSizeListByTargetSize", 100
    # Merge the small partitions at the beginning/end.
    check_split(version, f"{name}#0", [15, 90, 15, 15, 15, 90, 15], t, [0, 2, 5])
    # Merge the small partitions in the middle.
    check_split(version, f"{name}#1", [30, 15, 90, 10, 90, 15, 30], t, [0, 2, 4, 5])
    # Merge small partitions if the partition itself is smaller than
    # targetSize * SMALL_PARTITION_FACTOR.
    check_split(version, f"{name}#2", [15, 1000, 15, 1000], t, [0, 3])
    # Merge small partitions if the combined size is smaller than
    # targetSize * MERGED_PARTITION_FACTOR.
    check_split(version, f"{name}#3", [35, 75, 90, 20, 35, 25, 35], t, [0, 2, 3])

    if SparkVersion.parse(version) < SparkVersion.parse("3.3.0"):
        return  # smallPartitionFactor became a parameter in 3.3
    # smallPartitionFactor = 0.5: merge the last two partitions if their size is not bigger
    # than smallPartitionFactor * target.
    check_split(version, f"{name}#4", [50, 50, 40, 5], t, [0], factor=0.5)
    check_split(version, f"{name}#5", [40, 5, 50, 45], t, [0], factor=0.5)
    # Do not merge.
    check_split(version, f"{name}#6", [50, 50, 10, 40, 5], t, [0, 2], factor=0.5)
    check_split(version, f"{name}#7", [10, 40, 5, 50, 50], t, [0, 3], factor=0.5)


# ------------------------------------------------------------------------------------------
# test("SPARK-36228: Skip splitting a skewed partition when some map outputs are removed")
# ------------------------------------------------------------------------------------------

SPARK_36228 = "SPARK-36228: Skip splitting a skewed partition when some map outputs are removed"


@pytest.mark.parametrize("version", VERSIONS)
def test_spark_36228_skip_splitting_when_map_outputs_are_removed(version):
    # Two map tasks wrote 10 and 20 bytes for reducer 0. MapStatus stores sizes compressed
    # (1.1^k steps), so Spark reads them back as 10 and 21.
    map_sizes = [10, 21]
    with_size = SparkVersion.parse(version) >= SparkVersion.parse("3.1.0")  # 3.0: no dataSize
    # Returns 2 partition specs because there are 2 mappers.
    expected = [P(0, 0, 1, 10 if with_size else None), P(0, 1, 2, 21 if with_size else None)]
    cases = [(f"{SPARK_36228}#0", map_sizes, expected)]
    if SparkVersion.parse(version) >= SparkVersion.parse("3.2.0"):
        # As if map output 0 is removed: no split at all (before 3.2 Spark did not check).
        cases.append((f"{SPARK_36228}#1", [None, 21], None))
    for name, sizes, want in cases:
        case_id = f"suite:{name}"
        rec = recorded(version, case_id)
        if rec is not None:
            assert rec["args"]["map_sizes"] == sizes, f"{case_id}: inputs differ"
            want_json = None if want is None else [spec_to_dict(s) for s in want]
            assert rec["result"] == want_json, (
                f"{case_id}: expectation disagrees with Spark {version} ({rec['result']})")
        got = create_skew_partition_specs(0, sizes, 2, spark_version=version)
        assert got == want, f"{case_id} on Spark {version}"


def test_spec_round_trip():
    """The JSON spec form used by the fixtures converts both ways."""
    for spec in (C(0, 5, 30), C(0, 0), P(3, 1, 2, 7), PartialMapperPartitionSpec(1, 0, 1)):
        assert spec_from_dict(spec_to_dict(spec)) == spec


# ------------------------------------------------------------------------------------------
# Properties (hypothesis)
# ------------------------------------------------------------------------------------------

#: The releases the properties run on.
PROPERTY_VERSIONS = ["3.0.1", "3.1.3", "3.2.4", "3.5.9", "4.3.0"]
sizes_st = st.lists(st.one_of(st.just(0), st.integers(0, 100), st.integers(0, 10**6), st.integers(0, 10**9)), min_size=1, max_size=80)


@st.composite
def shuffles(draw):
    n = draw(st.integers(1, 60))
    k = draw(st.integers(1, 3))
    part = st.one_of(st.just(0), st.integers(0, 200), st.integers(0, 5000))
    return [draw(st.lists(part, min_size=n, max_size=n)) for _ in range(k)]


@settings(max_examples=300, deadline=None)
@given(shuffles(), st.integers(1, 10_000), st.integers(1, 50), st.integers(0, 3000), st.sampled_from(PROPERTY_VERSIONS), st.integers(1, 8))
def test_coalesced_specs_cover_reducers_in_order(stats, advisory, min_num, min_size, version, max_red):
    n = len(stats[0])
    out = coalesce_partitions(stats, advisory_target_size=advisory, min_num_partitions=min_num,
                              min_partition_size=min_size, spark_version=version,
                              max_reducer_partitions_per_task=max_red if version == "4.3.0" else 2**31 - 1)
    if not out:  # "no coalescing": only when nothing would shrink (3.2+)
        assert version >= "3.2"
        return
    assert len(out) == len(stats)
    ranges = [(s.start_reducer_index, s.end_reducer_index) for s in out[0]]
    for specs in out:  # every shuffle is read with the same ranges
        assert [(s.start_reducer_index, s.end_reducer_index) for s in specs] == ranges
    # ranges are increasing, non-overlapping, inside [0, n), and non-empty
    prev_end = 0
    for s, e in ranges:
        assert prev_end <= s < e <= n
        if version.startswith("3.0"):
            assert s == prev_end  # 3.0 never skips a range
        prev_end = e
    if version.startswith("3.0"):
        assert prev_end == n
    # a reducer left out holds no data in any shuffle (Spark skips empty ranges only)
    covered = {r for s, e in ranges for r in range(s, e)}
    for r in range(n):
        if r not in covered:
            assert all(b[r] == 0 for b in stats)
    # data sizes add up per shuffle (3.2+ attaches them)
    if version >= "3.2":
        for b, specs in zip(stats, out):
            assert all(sp.data_size == sum(b[sp.start_reducer_index:sp.end_reducer_index]) for sp in specs)
            assert sum(sp.data_size for sp in specs) == sum(b)
        if version == "4.3.0":
            assert all(e - s <= max_red for s, e in ranges)
        assert len(ranges) < n


@settings(max_examples=300, deadline=None)
@given(sizes_st, st.integers(1, 10**6), st.sampled_from(PROPERTY_VERSIONS))
def test_split_starts_are_increasing_and_start_at_zero(sizes, target, version):
    starts = split_size_list_by_target_size(sizes, target, spark_version=version)
    assert starts[0] == 0
    assert all(a < b for a, b in zip(starts, starts[1:]))
    assert starts[-1] < len(sizes)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=2, max_size=60), st.integers(1, 10**6), st.sampled_from(PROPERTY_VERSIONS))
def test_skew_splits_partition_the_maps(map_sizes, target, version):
    specs = create_skew_partition_specs(7, map_sizes, target, spark_version=version)
    if specs is None:
        return
    assert len(specs) >= 2
    assert specs[0].start_map_index == 0 and specs[-1].end_map_index == len(map_sizes)
    for a, b in zip(specs, specs[1:]):
        assert a.end_map_index == b.start_map_index
    assert all(isinstance(s, PartialReducerPartitionSpec) and s.reducer_index == 7 for s in specs)
    if version >= "3.1":
        assert sum(s.data_size for s in specs) == sum(map_sizes)


def test_coalesced_spec_kind():
    assert CoalescedPartitionSpec(0, 0, 0).is_coalesced
    assert CoalescedPartitionSpec(3, 5).is_coalesced
    assert not CoalescedPartitionSpec(3, 4).is_coalesced
