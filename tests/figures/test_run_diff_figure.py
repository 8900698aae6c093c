"""The overlay of both runs' partition sizes (issue 28): one line per run on one byte axis."""
from __future__ import annotations

from aqe_core.figures.run_diff import partition_overlay
from aqe_core.model.run_diff import ShuffleDiff


def test_both_runs_share_one_axis_before_aqe_where_both_have_sizes():
    sd = ShuffleDiff("shuffle 0", "k", "k", sizes_after=([10, 20], [10, 20, 30]))
    fig = partition_overlay(sd, ([5, 5, 80], [5, 5, 900]))
    assert [t.name for t in fig.data] == ["run a", "run b"]
    assert list(fig.data[1].y) == [5, 5, 900] and fig.layout.xaxis.title.text == "reducer (before AQE)"
    fig = partition_overlay(sd)  # no sizes before AQE (plain logs): the sizes each run read
    assert [list(t.y) for t in fig.data] == [[10, 20], [10, 20, 30]]
    assert fig.layout.xaxis.title.text == "partition read (after AQE)"


def test_a_run_without_the_shuffle_draws_one_line():
    fig = partition_overlay(ShuffleDiff("s", "k", None, sizes_after=([1, 2], None)), log=True)
    assert [t.name for t in fig.data] == ["run a"]


def test_the_sizes_before_aqe_the_diff_holds_are_drawn_by_default():
    sd = ShuffleDiff("s", "k", "k", sizes_after=([1], [2]), sizes_before=([1, 1], [1, 7]))
    assert [list(t.y) for t in partition_overlay(sd).data] == [[1, 1], [1, 7]]
