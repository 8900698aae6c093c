"""``inspect --queries``: the log read in listing mode, each execution summarised as it ends and
forgotten (issue 41), gives exactly the query groups the full reading gives, on real logs.

The full reading (every execution kept, then :func:`log_summaries`) is itself held to Spark's raw
events by tests/views/test_query_groups.py; and :func:`summary_of_execution` (no view) to
:func:`summary_of` over each execution's view on every recorded log here.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from aqe_core.readers.eventlog import load
from aqe_core.readers.eventlog.errors import Limits
from aqe_core.views.execution_summary import FinalSummaries, log_summaries, summary_of, summary_of_execution
from aqe_core.views.from_eventlog import view_from_execution
from aqe_core.views.query_groups import group_executions, groups_json
from aqe_core.views.query_listing import QueryListing

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "eventlogs"
SAMPLES = ROOT / "sample_logs" / "eventlogs"
REPEATED = next((FIXTURES / "repeated").glob("*.zstd"))
STREAMING = next((FIXTURES / "repeated" / "streaming").glob("*.zstd"))


def _logs() -> list[Path]:
    """Every recorded single-file log and rolling directory here (releases 3.0.1-4.3.0, plain
    and listener, batch and streaming, every codec)."""
    out = []
    for root in (FIXTURES, SAMPLES):
        for p in sorted(root.rglob("*")):
            if p.is_dir() and p.name.startswith("eventlog_v2_"):
                out.append(p)
            elif p.is_file() and "eventlog_v2_" not in str(p.parent) and p.suffix not in (".json", ".md", ".txt", ".py") \
                    and not p.name.startswith("."):
                out.append(p)
    return out


def _loaded(p: Path):
    try:
        return load(str(p))
    except Exception:  # noqa: BLE001 - a deliberately broken fixture: not a log to compare on
        return None


def _listed(p: Path, **kw) -> QueryListing:
    listing = QueryListing()
    log = load(str(p), hand_over=listing, keep_task_metrics=False, **kw)
    assert len(log.executions) == 0  # (every execution handed over, none kept)
    return listing


def test_every_recorded_log_summarised_without_views_and_listed_as_the_full_reading_groups_it():
    """Per log, read once: each execution's summary without a view is the view's summary, and the
    listing reader's groups are the full reading's (executions counted, ids, decisions, changes)."""
    logs = compared = 0
    for p in _logs():
        log = _loaded(p)
        if log is None:
            continue
        logs += 1
        for ex in log.executions_by_id():
            assert summary_of_execution(log, ex) == summary_of(view_from_execution(log, ex)), (p, ex.id)
            compared += 1
        listing = _listed(p)
        assert listing.executions == len(log.executions), p
        assert groups_json(listing.groups()) == groups_json(group_executions(log_summaries(log))), p
    assert logs >= 40 and compared >= 1000, (logs, compared)


@pytest.mark.parametrize("path", [REPEATED, STREAMING], ids=["repeated", "streaming"])
def test_listing_hands_over_at_once_and_still_groups_in_id_order(path):
    """With no ended execution held, executions leave the reader in the order they end; the
    groups still take them in id order (change points name the execution before)."""
    listing = _listed(path, limits=Limits(spill_after=0))
    assert groups_json(listing.groups()) == groups_json(group_executions(log_summaries(load(str(path)))))


@pytest.mark.parametrize("path", [REPEATED, STREAMING], ids=["repeated", "streaming"])
def test_summaries_taken_as_executions_are_finalised_are_the_ones_read_back(path):
    """``inspect``'s summaries taken as the reader finalises each execution (its plans just built)
    equal those of the executions read back after the load, and every execution has one."""
    final = FinalSummaries()
    log = load(str(path), limits=Limits(spill_after=0), on_final=final)
    assert log.executions.spilled and set(final) == set(log.executions)
    assert [final[eid] for eid in sorted(final)] == list(log_summaries(log))


def _scaled(tmp_path: Path, n: int) -> Path:
    spec = importlib.util.spec_from_file_location("scale_executions", ROOT / "tools" / "scale_executions.py")
    se = sys.modules.setdefault("scale_executions", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(se)  # type: ignore[union-attr]
    out = tmp_path / f"scaled_{n}"
    se.main([str(REPEATED), str(out), "--executions", str(n)])
    return out


def test_listing_memory_does_not_grow_with_the_executions(tmp_path):
    """Ten times the executions, not ten times the memory: what a listing keeps of an execution
    is a bit, an id and its place in its group's counters."""
    peaks = {}
    for n in (100, 1000):
        log = _scaled(tmp_path, n)
        tracemalloc.start()
        listing = _listed(log)
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert listing.executions == n
        assert sum(g.count for g in listing.groups()) == n
    assert peaks[1000] < 2 * peaks[100], peaks


def test_inspect_queries_cli_json_and_text():
    out = subprocess.run([sys.executable, "-m", "aqe_core", "inspect", "--queries", "--json", str(STREAMING)],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    doc = json.loads(out)
    full = groups_json(group_executions(log_summaries(load(str(STREAMING)))))
    assert doc["query_groups"] == full and doc["queries"] == len(full)
    assert doc["executions"] == sum(g["executions"] for g in full)
    text = subprocess.run([sys.executable, "-m", "aqe_core", "inspect", "--queries", str(STREAMING)],
                          capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert f"SQL executions of {len(full)} quer" in text.splitlines()[0]
    assert full[0]["name"] in text


def test_inspect_queries_refuses_a_stranger_cleanly(tmp_path):
    bad = tmp_path / "not-a-log"
    bad.write_bytes(b"\x00\x01garbage")
    got = subprocess.run([sys.executable, "-m", "aqe_core", "inspect", "--queries", str(bad)],
                         capture_output=True, text=True, cwd=ROOT)
    assert got.returncode == 2 and "Traceback" not in got.stderr and got.stderr.startswith("aqe_core inspect: error:")


def _listener_log() -> Path:
    return next(p for p in sorted((FIXTURES / "streaming" / "4.3.0" / "listener").rglob("*")) if p.is_file())


@pytest.mark.parametrize("path", [REPEATED, STREAMING, "listener"], ids=["repeated", "streaming", "listener"])
def test_one_execution_opened_alone_is_the_full_openings_view(path):
    """``explain LOG --execution N`` reads the log in listing mode and keeps that one execution:
    its document is the one the full opening gives, exact (listener) views included."""
    from aqe_core.opening import load_source
    from aqe_core.views.explain import explain_views

    path = _listener_log() if path == "listener" else path
    full = load_source(str(path))
    ids = [v.query_id for v in full.views]
    for eid in (ids[0], ids[len(ids) // 2], ids[-1]):
        alone = load_source(str(path), execution=eid)
        assert [v.query_id for v in alone.views] == [eid]
        assert json.dumps(explain_views(alone.views, eid), sort_keys=True, default=str) == \
            json.dumps(explain_views(full.views, eid), sort_keys=True, default=str), (path, eid)
    assert load_source(str(path), execution="999999").views == []
