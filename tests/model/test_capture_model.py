"""Capture file format and the py4j-string parsers, without Spark."""
from __future__ import annotations

import gzip
import json

import pytest

from aqe_core.live.recorder import DECOMPRESS_TABLE
from aqe_core.live.jvm import decompress_size, parse_specs
from aqe_core.model.scala_text import split_top_level
from aqe_core.model.capture import FORMAT_VERSION, Capture, CapturedPlan, MapSizes, QueryCapture, ReadCapture, ShuffleCapture, StageCapture
from aqe_core.model._checks import CaptureFormatError
from aqe_core.readers.capture_file import load_capture, save_capture
from aqe_core.model.plan import PlanNode
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec,
    CoalescedPartitionSpec,
    PartialMapperPartitionSpec,
    PartialReducerPartitionSpec,
)


@pytest.mark.parametrize("text,expected", [
    ("Vector(CoalescedPartitionSpec(0,7,Some(3550)), CoalescedPartitionSpec(7,9,None))",
     [CoalescedPartitionSpec(0, 7, 3550), CoalescedPartitionSpec(7, 9, None)]),
    ("ArrayBuffer(CoalescedPartitionSpec(0,1), PartialReducerPartitionSpec(1,0,2), PartialReducerPartitionSpec(1,2,8))",
     [CoalescedPartitionSpec(0, 1), PartialReducerPartitionSpec(1, 0, 2), PartialReducerPartitionSpec(1, 2, 8)]),
    ("List(PartialReducerPartitionSpec(3,0,4,45552), CoalescedPartitionSpec(4,5,Some(0)))",
     [PartialReducerPartitionSpec(3, 0, 4, 45552), CoalescedPartitionSpec(4, 5, 0)]),
    ("List(PartialMapperPartitionSpec(0,0,20), PartialMapperPartitionSpec(1,0,20))",
     [PartialMapperPartitionSpec(0, 0, 20), PartialMapperPartitionSpec(1, 0, 20)]),
    ("ArraySeq(CoalescedMapperPartitionSpec(0,4,40), CoalescedMapperPartitionSpec(4,8,40))",
     [CoalescedMapperPartitionSpec(0, 4, 40), CoalescedMapperPartitionSpec(4, 8, 40)]),
    ("List()", []),
])
def test_parse_specs_every_release_format(text, expected):
    assert parse_specs(text) == expected


def test_split_top_level():
    assert split_top_level("List(ClusteredDistribution(List(k#1L, k#2L),false,None), UnspecifiedDistribution)") == [
        "ClusteredDistribution(List(k#1L, k#2L),false,None)", "UnspecifiedDistribution"]
    assert split_top_level("List()") == []
    assert split_top_level("Vector(k#1L)") == ["k#1L"]


def test_decompress_size_matches_spark_formula():
    assert DECOMPRESS_TABLE[0] == 0 and DECOMPRESS_TABLE[1] == 1
    assert decompress_size(255) == int(1.1 ** 255)
    assert decompress_size(-1) == decompress_size(255)  # a Java byte is signed


def _capture() -> Capture:
    plan = CapturedPlan(PlanNode(None, "AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true", [], [
        PlanNode(None, "AQEShuffleRead", "AQEShuffleRead coalesced", [], [
            PlanNode(None, "ShuffleQueryStage", "ShuffleQueryStage 0", [], [])])]),
        [{"is_final": True}, {"read": True}, {"stage_id": 0, "shuffle_id": 3}])
    q = QueryCapture(0, "q", {"spark.sql.shuffle.partitions": "4"}, 2, True, final_plan=plan,
                     stages=[StageCapture(0, "shuffle", 2, shuffle_id=3, origin="ENSURE_REQUIREMENTS", num_partitions=4)],
                     shuffles={3: ShuffleCapture(3, 4, 2, [10, 0, 5, 7], MapSizes(2, [[4, 6], [0, 0], [5, 0], [3, 4]],
                                                                                   None, ["CompressedMapStatus"], True))},
                     reads=[ReadCapture(1, 0, 3, "coalesced", [CoalescedPartitionSpec(0, 4, 22)])])
    return Capture("4.3.0", [q], master="local[2]", run={"kind": "sql"})


def test_round_trip_plain_and_gzip(tmp_path):
    cap = _capture()
    for name in ("c.json", "c.json.gz"):
        p = save_capture(cap, tmp_path / name)
        back = load_capture(p)
        assert back.to_dict() == cap.to_dict()
        assert back.queries[0].final_plan.info[2]["shuffle_id"] == 3
        assert back.queries[0].shuffles[3].map_sizes.for_reducer(3) == [3, 4]
    assert (tmp_path / "c.json.gz").read_bytes()[:2] == b"\x1f\x8b"
    # stable bytes for the same capture
    assert save_capture(cap, tmp_path / "d.json.gz").read_bytes() == (tmp_path / "c.json.gz").read_bytes()


def test_partial_map_sizes_lookup():
    ms = MapSizes(3, [[1, 2, 3], [4, 5, 6]], reducers=[7, 2])
    assert ms.for_reducer(2) == [4, 5, 6] and ms.for_reducer(7) == [1, 2, 3] and ms.for_reducer(0) is None
    assert not ms.complete


def test_rejects_foreign_and_future_files(tmp_path):
    with pytest.raises(CaptureFormatError):
        load_capture(b'{"hello": 1}')
    doc = _capture().to_dict()
    doc["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(CaptureFormatError, match="newer"):
        load_capture(json.dumps(doc).encode())
    with pytest.raises(CaptureFormatError):
        load_capture(gzip.compress(b"not json"))


def test_plan_nodes_load_as_plain_plan_nodes():
    d = _capture().to_dict()["queries"][0]["final_plan"]
    root = PlanNode.from_dict(d)  # what the app does: the extra "info" key is ignored
    assert [n.name for n in root.walk()] == ["AdaptiveSparkPlan", "AQEShuffleRead", "ShuffleQueryStage"]
