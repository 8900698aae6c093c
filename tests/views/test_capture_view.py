"""Captures recorded from real Spark runs, as the app shows them: exact lines and sentences.

Expected split counts come from the specs Spark itself used (in the capture), not from our rules.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from aqe_core.readers.capture_file import load_capture
from aqe_core.advise.whatif import compare_presets
from aqe_core.user_presets import get_preset
from aqe_core.model.specs import PartialReducerPartitionSpec
from aqe_core.opening import load_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "captures"
CAPTURES = sorted(FIXTURES.glob("*/*.json*"))


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name.split('.')[0]}")
def test_capture_opens_with_exact_lines(path):
    src = load_source(str(path))
    assert src.kind == "capture" and src.views
    cap = load_capture(path)
    assert src.spark_version == cap.spark_version
    for view in src.views:
        assert view.final_plan is not None
        for s in view.shuffles:
            assert s.exact
            if s.sizes_before and not s.local:
                kinds = {ln.kind for ln in s.lines}
                assert "median" in kinds and "split_target" in kinds


@pytest.mark.parametrize("path", [p for p in CAPTURES if "skew_join" in p.name], ids=lambda p: f"{p.parent.name}/{p.name.split('.')[0]}")
def test_split_sentences_match_the_specs_spark_used(path):
    src = load_source(str(path))
    cap = load_capture(path)
    checked = 0
    for view, q in zip(src.views, cap.queries):
        for s in view.shuffles:
            read = next((r for r in q.reads if r.stage_id == s.stage_id), None)
            if read is None:
                continue
            for row in s.skew_rows:
                spark_parts = {(x.start_map_index, x.end_map_index) for x in read.specs
                               if isinstance(x, PartialReducerPartitionSpec) and x.reducer_index == row.partition}
                m = re.search(r"(?<!would )split into (\d+) parts", row.explanation)
                if spark_parts and view.spark_version >= "3.2":
                    assert m and int(m.group(1)) == len(spark_parts), row.explanation
                    checked += 1
                if not spark_parts and view.spark_version >= "3.2":
                    assert not m, row.explanation
    if path.parent.name == "3.5.9" and path.name.startswith(("skew_join_inner", "skew_join_both_sides")):
        assert checked >= 1, "the skewed join's split sentence was never compared with Spark's specs"


def test_presets_on_a_capture_are_exact_and_actual_is_what_spark_did():
    path = next(p for p in CAPTURES if p.parent.name == "3.5.9" and p.name.startswith("skew_join_inner"))
    src = load_source(str(path))
    view = src.views[0]
    cap = load_capture(path)
    outs = compare_presets(view, [get_preset("actual"), get_preset("skew-sensitive"), get_preset("spark-3.0.1-defaults")])
    assert all(o.exact for o in outs)
    actual = outs[0]
    spark_total = sum(len(r.specs) for r in cap.queries[0].reads)
    assert actual.partitions_after == spark_total
    assert {o.preset for o in outs} == {"actual", "skew-sensitive", "spark-3.0.1-defaults"}
    assert [o.spark_version for o in outs] == ["3.5.9", "3.5.9", "3.0.1"]


def test_whatif_on_a_capture_predicts_what_spark_did_under_that_setting():
    """The same workload was run by Spark with skew join on and off: switching it off in a
    what-if on the first run must give exactly what Spark did in the second."""
    from aqe_core.model.presets import Preset

    path = Path(__file__).resolve().parents[2] / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz"
    src = load_source(str(path))
    by_preset = {v.description.split("[")[-1].rstrip("]").split("/")[-1]: v for v in src.views}
    on, off = by_preset["default"], by_preset["skew_join_off"]
    whatif = compare_presets(on, [Preset("what-if", "", {"spark.sql.adaptive.skewJoin.enabled": "false"})])[0]
    actual_off = compare_presets(off, [get_preset("actual")])[0]
    assert whatif.exact and actual_off.exact
    assert whatif.splits == 0 and actual_off.splits == 0
    assert whatif.partitions_after == actual_off.partitions_after
    assert [s.sizes_after for s in whatif.shuffles] == [s.sizes_after for s in actual_off.shuffles]
