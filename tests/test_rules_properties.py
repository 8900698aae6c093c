"""Invariants of the partition rules, checked on random inputs (hypothesis).

These assert structure (coverage, order, sizes adding up), not numbers from our own code.
"""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from aqe_core.rules.shuffle_partitions_util import (
    CoalescedPartitionSpec,
    PartialReducerPartitionSpec,
    coalesce_partitions,
    create_skew_partition_specs,
    split_size_list_by_target_size,
)
from aqe_core.rules.optimize_skewed_join import analyze_side, median_size

VERSIONS = ["3.0.1", "3.1.3", "3.2.4", "3.5.9", "4.3.0"]
sizes_st = st.lists(st.one_of(st.just(0), st.integers(0, 100), st.integers(0, 10**6), st.integers(0, 10**9)), min_size=1, max_size=80)


@st.composite
def shuffles(draw):
    n = draw(st.integers(1, 60))
    k = draw(st.integers(1, 3))
    part = st.one_of(st.just(0), st.integers(0, 200), st.integers(0, 5000))
    return [draw(st.lists(part, min_size=n, max_size=n)) for _ in range(k)]


@settings(max_examples=300, deadline=None)
@given(shuffles(), st.integers(1, 10_000), st.integers(1, 50), st.integers(0, 3000), st.sampled_from(VERSIONS), st.integers(1, 8))
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
@given(sizes_st, st.integers(1, 10**6), st.sampled_from(VERSIONS))
def test_split_starts_are_increasing_and_start_at_zero(sizes, target, version):
    starts = split_size_list_by_target_size(sizes, target, spark_version=version)
    assert starts[0] == 0
    assert all(a < b for a, b in zip(starts, starts[1:]))
    assert starts[-1] < len(sizes)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=2, max_size=60), st.integers(1, 10**6), st.sampled_from(VERSIONS))
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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**10), min_size=1, max_size=100), st.sampled_from(VERSIONS))
def test_skewed_partitions_exceed_median_and_threshold(sizes, version):
    a = analyze_side(sizes, {}, spark_version=version)
    med = median_size(sizes)
    assert a.median == med >= 1
    for i, s in enumerate(sizes):
        skewed = i in a.skewed_indices
        assert skewed == (s > a.effective_threshold) or version < "3.2"
        if skewed:
            assert s > 5 * med and s > 256 * 1024 * 1024
    assert a.target_size >= 64 * 1024 * 1024


def test_coalesced_spec_kind():
    assert CoalescedPartitionSpec(0, 0, 0).is_coalesced
    assert CoalescedPartitionSpec(3, 5).is_coalesced
    assert not CoalescedPartitionSpec(3, 4).is_coalesced
