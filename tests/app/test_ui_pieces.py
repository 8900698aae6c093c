"""The small pure pieces the thin pages call (issue 9): preset text, shared histogram range,
the What-if form's keys and line diff."""
from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from aqe_core import config
from ui.compare import parse_settings, shared_x_range
from ui.whatif import editable, line_changes


def test_parse_settings_strips_and_keeps_the_last_value():
    assert parse_settings(" a = 1\nb=2=3\n\n a =4") == {"a": "4", "b": "2=3"}
    with pytest.raises(ValueError, match=r"line 2 \('no equals sign'\) is not key=value"):
        parse_settings("a=1\nno equals sign")
    with pytest.raises(ValueError, match="line 1"):
        parse_settings(" = 5")


def test_shared_x_range_spans_every_preset_and_starts_at_one():
    outcomes = [NS(shuffles=[NS(sizes_after=[0, 5])]), NS(shuffles=[NS(sizes_after=[9])])]
    assert shared_x_range(outcomes) == (1, 9)
    assert shared_x_range([NS(shuffles=[])]) is None


def test_whatif_offers_aqe_keys_and_the_two_join_and_shuffle_keys():
    assert editable(config.ADVISORY_PARTITION_SIZE_IN_BYTES)
    assert editable(config.SHUFFLE_PARTITIONS) and editable(config.AUTO_BROADCASTJOIN_THRESHOLD)
    assert not editable(config.PREFER_SORTMERGEJOIN)


def test_line_changes_marks_moved_lines():
    before = NS(lines=[NS(kind="target", value=64), NS(kind="median", value=3)])
    after = NS(lines=[NS(kind="target", value=128), NS(kind="median", value=3)])
    assert line_changes(before, after) == [
        {"line": "target", "as run": 64, "what-if": 128, "changed": "yes"},
        {"line": "median", "as run": 3, "what-if": 3, "changed": ""},
    ]


def test_share_link_is_the_apps_own_root_address():
    import doctest

    import ui.share

    assert doctest.testmod(ui.share).failed == 0
    from ui.share import share_link

    assert share_link("http://127.0.0.1:8501/plans?q=4#x", "0123456789abcdef") == "http://127.0.0.1:8501/?report=0123456789abcdef"


def test_plan_numbers_worked_examples():
    import doctest

    import aqe_core.figures.plan_numbers as numbers

    assert doctest.testmod(numbers).failed == 0


def test_estimated_lines_are_drawn_dashed_and_say_so():
    from aqe_core.figures.histograms import histogram_figure
    from aqe_core.opening import default_sample, load_source

    view = next(v for v in load_source(default_sample().path).views if any(s.lines for s in v.shuffles))
    s = next(s for s in view.shuffles if s.lines)
    fig = histogram_figure(s)
    names = [t.name for t in fig.data if t.name and getattr(t, "mode", None) == "lines"]
    estimates = [n for n in names if not n.startswith("coalescing target")]
    assert estimates and all(n.endswith("(estimate)") for n in estimates)
    assert all(not n.endswith("(estimate)") for n in names if n.startswith("coalescing target"))  # Spark's total


def test_split_parts_of_one_reducer_share_a_colour_after_aqe():
    from aqe_core.figures.histograms import partition_bars_figure
    from aqe_core.opening import load_source

    src = load_source("sample_logs/captures/4.3.0-skew_join_inner.json.gz")
    s = next(s for s in src.views[0].shuffles if s.after_split and any(s.after_split))
    bar = partition_bars_figure(s, which="after").data[0]
    parts = [i for i, sp in enumerate(s.after_split) if sp]
    assert len({bar.marker.color[i] for i in parts}) == 1 and bar.marker.color[parts[0]] != "#868e96"
    assert all("part of skewed reducer" in bar.hovertext[i] for i in parts)
    assert "position in the adaptive read" in partition_bars_figure(s, which="after").layout.xaxis.title.text


def test_hot_reducers_are_labelled_by_id():
    from aqe_core.figures.histograms import partition_bars_figure
    from aqe_core.opening import load_source

    src = load_source("sample_logs/captures/4.3.0-skew_join_inner.json.gz")
    s = next(s for s in src.views[0].shuffles if s.skew_rows)
    texts = [a.text for a in partition_bars_figure(s, which="before").layout.annotations]
    assert f"reducer {s.skew_rows[0].partition}" in texts


def test_a_table_column_of_counts_and_words_is_text():
    """Arrow refuses a column mixing ints and words ("not in the log"): Streamlit logged a
    traceback for each such table on the What-if and Compare pages (issue 23)."""
    import pyarrow as pa

    from ui.tables import text_table

    df = text_table([{"n": 2, "splits": 1, "kind": "a"}, {"n": 3, "splits": "not in the log", "kind": None}])
    assert list(df["splits"]) == ["1", "not in the log"] and list(df["n"]) == [2, 3]
    pa.Table.from_pandas(df)  # what Streamlit does first
