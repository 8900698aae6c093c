"""A capture from a stranger: every malformed field gives CaptureFormatError naming the field,
never a TypeError deep in the simulator, and never the file's content."""
from __future__ import annotations

import copy
import gzip
import json

import pytest

from aqe_core.model._checks import CaptureFormatError
from aqe_core.readers.capture_file import loads
from aqe_core.server_settings import SAMPLES_DIR
from aqe_core.opening import SourceError, load_source

DOC = json.loads(gzip.decompress((SAMPLES_DIR / "captures" / "4.3.0-skew_join_inner.json.gz").read_bytes()))
SECRET = "s3cr3t-9911"


def _set(doc, path, value):
    d = doc
    for k in path[:-1]:
        d = d[k]
    if value is KeyError:
        del d[path[-1]]
    else:
        d[path[-1]] = value


CASES = [
    (("queries",), {"a": 1}, "queries should be a list"),
    (("queries", 0), SECRET, "queries[0] should be an object"),
    (("queries", 0, "default_parallelism"), 10 ** 40, "default_parallelism is out of range"),
    (("queries", 0, "default_parallelism"), True, "default_parallelism should be an integer"),
    (("queries", 0, "duration_ms"), float("nan"), "duration_ms should be a finite number"),
    (("queries", 0, "duration_ms"), 10 ** 400, "duration_ms should be a finite number"),
    (("queries", 0, "shuffles", 0, "num_reducers"), -5, "num_reducers is out of range"),
    (("queries", 0, "shuffles", 0, "num_reducers"), KeyError, "num_reducers should be an integer"),
    (("queries", 0, "shuffles", 0, "bytes_by_partition_id", 0), -7, "bytes_by_partition_id[0] is out of range"),
    (("queries", 0, "shuffles", 0, "bytes_by_partition_id", 0), SECRET, "bytes_by_partition_id[0] should be an integer"),
    (("queries", 0, "shuffles", 0, "bytes_by_partition_id"), [1, 2], "does not have num_reducers entries"),
    (("queries", 0, "shuffles", 0, "map_sizes", "sizes_by_reducer", 0), [1], "not num_maps"),
    (("queries", 0, "reads", 0, "specs", 0, "type"), SECRET, "is not a known shuffle partition spec"),
    (("queries", 0, "reads", 0, "specs", 0, "start_reducer_index"), None, "start_reducer_index should be an integer"),
    (("queries", 0, "reads", 0, "specs", 0, "data_size"), -1, "data_size is out of range"),
    (("queries", 0, "final_plan", "children"), SECRET, "final_plan.children should be a list"),
    (("queries", 0, "final_plan", "children", 0), [], "final_plan.children[0] should be an object"),
    (("queries", 0, "final_plan", "name"), 5, "final_plan.name should be a string"),
    (("queries", 0, "plan_updates", 0, "event"), SECRET, "event should be"),
    (("queries", 0, "stages", 0, "kind"), SECRET, "kind should be shuffle, broadcast or other"),
    (("spark", "version"), SECRET, "spark.version is not a Spark version"),
    (("spark",), [], "spark should be an object"),
    (("format_version",), SECRET, "format_version"),
]


@pytest.mark.parametrize("path,value,message", CASES, ids=[".".join(map(str, c[0])) + f"={c[1]!r}"[:40] for c in CASES])
def test_malformed_fields_are_named_not_crashed_on(path, value, message, tmp_path):
    doc = copy.deepcopy(DOC)
    _set(doc, path, value)
    with pytest.raises(CaptureFormatError) as e:
        loads(json.dumps(doc))
    assert message in str(e.value) and SECRET not in str(e.value)
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(SourceError) as e2:
        load_source(str(p))
    assert "cannot read this capture" in str(e2.value) and SECRET not in str(e2.value)


def test_unknown_info_values_are_dropped_not_trusted():
    doc = copy.deepcopy(DOC)
    node = doc["queries"][0]["final_plan"]
    node["info"] = {"join_type": 5, "req": [1, 2], "is_final": "yes", "custom": {"deep": [1]}, "origin": "X"}
    q = loads(json.dumps(doc)).queries[0]
    assert q.final_plan.info[0] == {"origin": "X"}


def test_not_utf8_not_json_and_deep_nesting():
    with pytest.raises(CaptureFormatError, match="not UTF-8"):
        loads(b"\xff\xfe" + SECRET.encode())
    with pytest.raises(CaptureFormatError, match="not JSON") as e:
        loads(SECRET)
    assert SECRET not in str(e.value)
    with pytest.raises(CaptureFormatError, match="nested too deeply"):
        loads("[" * 100_000)
    with pytest.raises(CaptureFormatError, match="cut short"):
        loads(gzip.compress(json.dumps(DOC).encode())[:-20])
