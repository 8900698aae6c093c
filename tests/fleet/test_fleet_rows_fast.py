"""The scan's rows come from views without the plans no row reads (issue 27): on every sample
log, every release's listener log and capture, they are the rows the full views give, byte for
byte (an exact query's presets are then compared with the view's own replay, not a new one)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from aqe_core.fleet.rows import scan_file

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "eventlogs"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOGS = sorted(p for p in SAMPLES.iterdir() if not p.name.startswith(".") and not p.name.endswith(".json"))
EXACT = (sorted((FIXTURES / "eventlogs" / "listener").glob("*/local-*"))
         # where the replay of what Spark did lists its reads in another order than the view's
         + sorted((FIXTURES / "captures").glob("*/skew_join_then_aggregate.json.gz"))
         + sorted((FIXTURES / "captures").glob("*/multi_way_join_same_key.json.gz")))


@pytest.mark.parametrize("log", LOGS + EXACT, ids=[p.name for p in LOGS] + [f"{p.parent.name}/{p.name}" for p in EXACT])
def test_the_scan_only_views_give_the_full_views_rows(log):
    fast = scan_file(str(log))
    full = scan_file(str(log), plans=True)
    assert json.dumps(fast, sort_keys=True) == json.dumps(full, sort_keys=True)
    assert fast[0] and all(r["error"] is None for r in fast[0])


def test_a_capture_whose_workloads_repeat_an_index_gives_the_full_views_rows(tmp_path):
    """Two queries with one index (a capture of several workloads): neither reads what Spark did
    from the other's replay."""
    from dataclasses import replace

    from aqe_core.readers.capture_file import load_capture, save_capture

    cap = load_capture(FIXTURES / "captures" / "4.3.0" / "skew_join_then_aggregate.json.gz")
    q = cap.queries[0]
    other = replace(load_capture(FIXTURES / "captures" / "4.3.0" / "aggregate_coalesce.json.gz").queries[0], index=q.index)
    path = save_capture(replace(cap, queries=[q, other]), tmp_path / "two.json.gz")
    fast = scan_file(str(path))
    assert len(fast[0]) == 2 and all(r["error"] is None for r in fast[0])
    assert json.dumps(fast, sort_keys=True) == json.dumps(scan_file(str(path), plans=True), sort_keys=True)


@pytest.mark.parametrize("log", [LOGS[0], Path(__file__)], ids=["a log", "not a log"])
def test_a_scan_leaves_the_collectors_thresholds_as_they_were(log):
    import gc

    before = gc.get_threshold()
    scan_file(str(log))
    assert gc.get_threshold() == before
