"""The scan's rows come from views without the plans no row reads (issue 27): on every sample
log they are the rows the full views give, byte for byte."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from aqe_core.fleet.rows import scan_file

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "eventlogs"
LOGS = sorted(p for p in SAMPLES.iterdir() if not p.name.startswith(".") and not p.name.endswith(".json"))


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_the_scan_only_views_give_the_full_views_rows(log):
    fast = scan_file(str(log))
    full = scan_file(str(log), plans=True)
    assert json.dumps(fast, sort_keys=True) == json.dumps(full, sort_keys=True)
    assert fast[0] and all(r["error"] is None for r in fast[0])
