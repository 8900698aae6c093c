"""A listing load's meter (issue 41): a log past the server's per-source limits lists its queries,
because what each execution charged is given back when the reader forgets it.

The log is a real Spark 4.3.0 log (the streaming recording: a stream-static join and a
foreachBatch aggregation per micro-batch) repeated by ``tools/scale_executions.py``.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from aqe_core.readers.budget import LISTED_EXEC_BYTES, NODE_BYTES, ListingMeter, LoadMeter, MemoryBudget
from aqe_core.readers.eventlog import load
from aqe_core.readers.eventlog.errors import BudgetExceeded
from aqe_core.units import MiB
from aqe_core.views.query_listing import QueryListing

ROOT = Path(__file__).resolve().parents[2]
STREAMING = next((ROOT / "tests" / "fixtures" / "eventlogs" / "streaming" / "4.3.0" / "plain").iterdir())
_spec = importlib.util.spec_from_file_location("scale_executions", ROOT / "tools" / "scale_executions.py")
se = sys.modules.setdefault("scale_executions", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(se)  # type: ignore[union-attr]

N = 400  # executions: past the reader's 64 held, so most leave while the log is read


@pytest.fixture(scope="module")
def long_log(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("listing") / "long_log"
    se.write(str(STREAMING), str(out), N, progress=False)
    return out


@pytest.fixture(scope="module")
def whole(long_log) -> LoadMeter:
    """The same log read whole under a meter with no limits: what it charges in all."""
    meter = LoadMeter(MemoryBudget(1 << 40))
    load(str(long_log), meter=meter)
    return meter


def test_a_listing_passes_limits_the_whole_log_is_past(long_log, whole):
    nodes_limit = whole.plan_nodes // 4  # (the reader holds the 64 ended last, and the live ones)
    with pytest.raises(BudgetExceeded) as refused:
        load(str(long_log), meter=LoadMeter(MemoryBudget(1 << 40), max_executions=N // 2, max_plan_nodes=nodes_limit))
    assert refused.value.setting in ("max_executions", "max_plan_nodes")
    listing = QueryListing()
    meter = ListingMeter(MemoryBudget(1 << 40), max_executions=N // 2, max_plan_nodes=nodes_limit)
    load(str(long_log), meter=meter, hand_over=listing)
    assert meter.executions == whole.executions == N
    assert listing.executions == N


def test_what_an_execution_charged_is_given_back_when_it_leaves(long_log, whole):
    budget = MemoryBudget(1 << 40)
    meter = ListingMeter(budget)
    load(str(long_log), meter=meter, hand_over=QueryListing())
    per_execution = whole.plan_nodes // N
    assert whole.plan_nodes > 100 * per_execution
    assert meter.plan_nodes < 2 * per_execution  # (what came before the first execution, if anything)
    # what stays: the application's own strings and LISTED_EXEC_BYTES an execution
    assert meter.used < whole.used // 10
    assert meter.used >= N * LISTED_EXEC_BYTES
    assert budget.used == meter.held + meter.reserved
    assert meter.held - meter.used <= 5 * MiB  # (given back in steps)
    assert whole.used > 100 * per_execution * NODE_BYTES


def test_the_budget_is_held_to_what_the_reader_holds_at_once(long_log, whole):
    """A budget the whole log needs four times over is enough for its listing."""
    budget = MemoryBudget(max(whole.used // 4, 32 * MiB))
    with pytest.raises(BudgetExceeded):
        load(str(long_log), meter=LoadMeter(budget))
    assert budget.used <= budget.limit
    budget.used = 0  # (the refused load's charge: released by its caller, open_on_server)
    meter = ListingMeter(budget)
    load(str(long_log), meter=meter, hand_over=QueryListing())
    assert meter.executions == N
