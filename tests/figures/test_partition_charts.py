"""Partition charts on real recordings: a bar per partition up to 40, a histogram above; sizes in
bytes, counts on whole numbers; every bar visible; the what-if's own bars; hovers naming reducers
and split parts."""
from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from aqe_core.figures.byte_axis import byte_ticks
from aqe_core.figures.fix_figure import fix_figure
from aqe_core.figures.histograms import BAR_LIMIT, MIN_BAR, partition_figure, side_by_side
from aqe_core.opening import load_source
from aqe_core.advise.whatif import compare_presets
from aqe_core.model.presets import BUILTIN_PRESETS
from aqe_core.views.compare import preset_shuffle_views, whatif

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
SKEW = SAMPLES / "captures" / "4.3.0-skew_join_inner.json.gz"
AGG = SAMPLES / "captures" / "4.3.0-aggregate_coalesce.json.gz"
PLAIN = SAMPLES / "eventlogs" / "local-1795309052779.lz4"  # Spark 4.3.0, plain
BYTES = re.compile(r"^\d+(\.\d)? (B|KiB|MiB|GiB|TiB)$")
ADVISORY = "spark.sql.adaptive.advisoryPartitionSizeInBytes"


@pytest.fixture(scope="module")
def skew():
    return load_source(str(SKEW)).views[0]


@pytest.fixture(scope="module")
def agg():
    return load_source(str(AGG)).views[0]


def _bars(fig):
    """The drawn bar traces (not the legend swatches, whose only point is None)."""
    return [t for t in fig.data if t.type == "bar" and t.y is not None and any(y is not None for y in t.y)]


def _size_axis(fig):
    return fig.layout.yaxis if fig.layout.xaxis.type == "category" else fig.layout.xaxis


def _assert_byte_ticks(axis):
    assert axis.tickmode == "array" and axis.ticktext, axis
    assert all(BYTES.match(t) for t in axis.ticktext), axis.ticktext


def _assert_visible(fig, log: bool):
    """Every bar at least MIN_BAR of the size axis high, measured the way the axis draws it."""
    axis = fig.layout.yaxis
    lo, hi = axis.range
    for t in _bars(fig):
        for y in t.y:
            assert y > 0
            if axis.type == "log":
                import math
                assert (math.log10(y) - lo) / (hi - lo) >= MIN_BAR * 0.99
            else:
                assert (y - lo) / (hi - lo) >= MIN_BAR * 0.99


@pytest.mark.parametrize("log", [True, False])
def test_few_partitions_get_a_bar_each_with_bytes_and_every_bar_visible(skew, log):
    s = skew.shuffles[0]
    assert len(s.sizes_before) <= BAR_LIMIT
    for which in ("before", "after"):
        fig = partition_figure(s, which=which, log=log)
        (bar,) = _bars(fig)
        n = len(s.sizes_before if which == "before" else s.sizes_after)
        assert len(bar.y) == n and fig.layout.xaxis.type == "category"
        _assert_byte_ticks(fig.layout.yaxis)
        _assert_visible(fig, log)
        # lines are under the bars, their labels outside the plot (right of it)
        assert all(sh.layer == "below" for sh in fig.layout.shapes)
        labels = [a for a in fig.layout.annotations if a.xref == "paper" and a.x == 1]
        assert labels and any(a.text.startswith("median") for a in labels)


def test_largest_first_orders_the_bars_by_size(skew):
    s = skew.shuffles[0]
    fig = partition_figure(s, which="before", chart="by size")
    (bar,) = _bars(fig)
    assert bar.x[0] == str(max(range(len(s.sizes_before)), key=s.sizes_before.__getitem__))
    assert list(bar.y) == sorted(bar.y, reverse=True)


def test_many_partitions_get_a_histogram_with_whole_number_counts(skew):
    s = skew.shuffles[0]
    many = type(s)(key="k", label="many", sizes_after=[x for _ in range(3) for x in s.sizes_before])  # 120 > 40
    for log in (True, False):
        fig = partition_figure(many, which="after", log=log)
        assert fig.layout.xaxis.type != "category"
        _assert_byte_ticks(fig.layout.xaxis)
        y = fig.layout.yaxis
        assert y.dtick >= 1 and isinstance(y.dtick, int) and y.tickformat == "d" and y.range[0] == 0
        assert all(v >= MIN_BAR * max(b.y) * 0.99 for b in _bars(fig) for v in b.y)
        # only bins holding partitions are drawn; the hover keeps their true count
        assert all(re.search(r": [1-9]\d* partitions?$", h) for b in _bars(fig) for h in b.hovertext)


def test_a_log_axis_has_no_bare_minor_labels(agg):
    s = agg.shuffles[0]
    fig = partition_figure(s, which="after", log=True)  # 2 partitions as run
    axis = _size_axis(fig)
    assert axis.type == "log" and axis.minor.ticks == ""
    _assert_byte_ticks(axis)
    assert byte_ticks(1000, 5 * 1024 ** 2, log=True)[1][:3] == ["1 KiB", "4 KiB", "16 KiB"]


def test_one_partition_of_one_size_is_a_visible_bar_off_the_axis():
    from aqe_core.views.query import ShuffleView

    one = ShuffleView(key="k", label="one", sizes_after=[4096])
    fig = partition_figure(one, which="after", chart="histogram")
    (bar,) = _bars(fig)
    lo, hi = fig.layout.xaxis.range
    import math
    left = math.log10(bar.x[0] - bar.width[0] / 2)
    assert left > lo and bar.width[0] > 0.05 * 4096  # not under the y axis, not a hairline
    bars = partition_figure(ShuffleView(key="k", label="two", sizes_after=[0, 5000]), which="after", log=False)
    assert min(_bars(bars)[0].y) > 0  # an empty partition is still a (small) bar; its hover says 0 B
    assert "0 B (empty)" in _bars(bars)[0].hovertext[0]


def test_whatif_bars_move_with_the_setting(agg):
    """The 4.3.0 aggregate read 40 reducers as 2 partitions; at a 4 KiB advisory size our rules
    coalesce them into more: the what-if figure draws those, labelled as our rules' prediction."""
    got = whatif(agg, {ADVISORY: "4k"})
    as_run, after = agg.shuffles[0], got.view.shuffles[0]
    predicted = got.predicted(after)
    assert predicted is not None and predicted.predicted
    assert len(predicted.sizes_after) == got.outcomes[1].shuffles[0].partitions_after != len(as_run.sizes_after)
    figs = side_by_side([as_run, predicted], ["as run", "what-if"])
    old, new = (_bars(f)[0] for f in figs)
    assert len(old.y) == len(as_run.sizes_after) == 2 and len(new.y) == len(predicted.sizes_after)
    assert list(old.y) != list(new.y)
    assert figs[0].layout.yaxis.range == figs[1].layout.yaxis.range  # one size axis for both
    assert "predicted by our rules" in new.name and all("predicted by our rules" in h for h in new.hovertext)
    assert all("exact, captured" in h for h in old.hovertext)
    # each predicted partition names the reducers it reads, and together they cover every reducer
    spans = [tuple(map(int, m.groups())) for h in new.hovertext for m in [re.search(r"reducers (\d+)-(\d+) coalesced", h)] if m]
    assert spans and spans[0][0] == 0 and spans[-1][1] == len(as_run.sizes_before) - 1


def test_hover_names_reducers_and_the_parts_of_a_split(skew):
    s = next(x for x in skew.shuffles if x.after_split and any(x.after_split))
    hot = s.skew_rows[0].partition
    parts = [size for (a, _b), sp, size in zip(s.after_reducers, s.after_split, s.sizes_after) if sp and a == hot]
    assert len(parts) > 1
    before = _bars(partition_figure(s, which="before"))[0]
    text = before.hovertext[hot]
    assert text.startswith(f"reducer {hot}:") and f"split into {len(parts)} parts" in text
    after = _bars(partition_figure(s, which="after"))[0]
    split_hovers = [h for h, sp in zip(after.hovertext, s.after_split) if sp]
    assert all(f"part of skewed reducer {hot}" in h for h in split_hovers)
    assert f"(part 1 of {len(parts)})" in split_hovers[0]
    coalesced = next(h for h, (a, b) in zip(after.hovertext, s.after_reducers) if b - a > 1)
    assert re.search(r"reducers \d+-\d+ coalesced", coalesced)
    # the other side reads the hot reducer once per part
    other = next(x for x in skew.shuffles if x is not s)
    again = _bars(partition_figure(other, which="after"))[0].hovertext
    assert any(f"reducer {hot}, read {len(parts)} times" in h for h in again)


def test_plain_log_bars_are_sparks_metric_and_say_the_reducers_are_not_known():
    view = next(v for v in load_source(str(PLAIN)).views if v.description == "skewed join")
    s = view.shuffles[0]
    (bar,) = _bars(partition_figure(s))
    assert len(bar.y) == len(s.sizes_after) and "Spark's metric" in html.unescape(bar.name)
    assert all("not in a plain event log" in h for h in bar.hovertext)


def test_compare_presets_draw_each_presets_bars(skew):
    outcomes = compare_presets(skew, [p for p in BUILTIN_PRESETS if p.name in ("actual", "spark-4.x-defaults")])
    actual, other = (preset_shuffle_views(skew, o)[0] for o in outcomes)
    assert not actual.predicted and other.predicted
    assert len(actual.sizes_after) != len(other.sizes_after)
    figs = side_by_side([actual, other], ["a", "b"], compact=True)
    assert [len(_bars(f)[0].y) for f in figs] == [len(actual.sizes_after), len(other.sizes_after)]
    assert not figs[0].layout.showlegend and all("predicted by our rules" in h for h in _bars(figs[1])[0].hovertext)


def test_a_fix_figure_draws_bars_for_small_reads_and_histograms_for_large():
    small = fix_figure([20_000, 300_000, 0], [20_000, 100_000, 100_000, 100_000])
    assert [len(t.y) for t in small.data] == [3, 4] and small.layout.xaxis.type == "category"
    _assert_byte_ticks(small.layout.yaxis)
    assert all(y > 0 for t in small.data for y in t.y)
    large = fix_figure(list(range(1000, 101_000, 1000)), [400_000] * 5)
    _assert_byte_ticks(large.layout.xaxis)
    assert large.layout.yaxis.dtick >= 1 and large.layout.yaxis.tickformat == "d"


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("log", [True, False])
def test_a_histogram_bar_is_never_thinner_than_the_floor_at_the_width_it_is_laid_out_for(skew, log, compact):
    """Thousands of distinct sizes over six decades would want 40 bins; a compact chart (300 px)
    gets only as many as bars of MIN_BAR_PX fit the data's stretch of its axis."""
    import math

    from aqe_core.figures.chart_size import MIN_BAR_PX, plot_width

    s = skew.shuffles[0]
    spread = type(s)(key="k", label="spread " * 30, sizes_after=[int(10 ** (1 + 6 * i / 4999)) for i in range(5000)])
    fig = partition_figure(spread, which="after", log=log, compact=compact)
    lo, hi = fig.layout.xaxis.range  # a log axis's range is in decades
    px = plot_width(fig.layout.meta["width_px"], fig.layout.margin.l, fig.layout.margin.r)
    for b in _bars(fig):
        for x, w in zip(b.x, b.width):
            a, z = x - w / 2, x + w / 2
            drawn = (math.log10(z) - math.log10(a)) if log else (z - a)
            assert drawn / (hi - lo) * px >= MIN_BAR_PX * 0.999, (x, w)
    # the long title is wrapped inside the width, never cut
    assert "<br>" in fig.layout.title.text
