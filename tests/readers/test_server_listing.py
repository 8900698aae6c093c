"""Issue 41 in the app: a log of more executions than the server's ``max_executions`` opens listed
by query in flat memory (``open_on_server``), and each execution's view is built on demand by
reading the log again, the same view the full opening gives. On real recorded logs (the PySpark
4.3.0 streaming and repeated-query logs of tests/fixtures/eventlogs), one scaled with
tools/scale_executions.py; the time limit on synthetic tiny executions."""
from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aqe_core import opening
from aqe_core.opening import SourceRefused, load_source, open_on_server, server_budget
from aqe_core.views.explain import explain_views
from aqe_core.views.listed_queries import KEEP
from aqe_core.views.query_groups import groups_json
from tests.budget_logs import many_executions
from tests.server_dirs import server_root

ROOT = Path(__file__).resolve().parents[2]
STREAMING = ROOT / "tests" / "fixtures" / "eventlogs" / "streaming" / "4.3.0" / "plain" / "local-1795904411977.zstd"
REPEATED = next((ROOT / "tests" / "fixtures" / "eventlogs" / "repeated").glob("*.zstd"))


@pytest.fixture
def server(tmp_path, monkeypatch):
    return server_root(tmp_path, monkeypatch, AQE_LENS_MAX_EXECUTIONS="5")


def _inspect_queries(path: Path) -> dict:
    got = subprocess.run([sys.executable, "-m", "aqe_core", "inspect", str(path), "--queries", "--json", "--quiet"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(got.stdout)


def _doc(views, eid: str) -> str:
    return json.dumps(explain_views(views, eid), sort_keys=True, default=str)


def test_a_log_past_max_executions_opens_listed_by_query_as_inspect_queries_lists_it(server):
    log = server / STREAMING.name
    shutil.copyfile(STREAMING, log)
    src = open_on_server(str(log))
    assert src.listing is not None and src.views == []
    want = _inspect_queries(log)
    assert src.listing.executions == want["executions"] == 72
    assert json.loads(json.dumps(groups_json(src.listing.groups))) == want["query_groups"]
    assert "listed by query: 72 SQL executions of 2 queries" in src.label
    # without listing: refused, with the CLI's way through such a log
    with pytest.raises(SourceRefused, match=r"more than 5 SQL executions; the limit is max_executions.*--queries"):
        open_on_server(str(log), listing=False)


@pytest.mark.parametrize("path", [STREAMING, REPEATED], ids=["streaming", "repeated"])
def test_an_execution_opens_on_demand_as_the_full_opening_gives_it(server, path):
    log = server / path.name
    shutil.copyfile(path, log)
    src = open_on_server(str(log))
    assert src.listing is not None
    full = load_source(str(path))
    ids = [v.query_id for v in full.views]
    for eid in (ids[0], ids[len(ids) // 2], ids[-1]):
        view = src.view(eid)
        assert view is not None and view.query_id == eid
        assert _doc([view], eid) == _doc(full.views, eid), eid
        assert src.listing.is_open(eid) and src.view(eid) is view  # kept: not read again
    assert src.view("999999") is None  # not in the listing: nothing read
    for eid in ids[1:1 + KEEP]:
        src.view(eid)
    assert not src.listing.is_open(ids[0])  # the least recently opened view went


def test_a_listing_and_its_views_are_charged_while_they_live_and_given_back(server):
    log = server / STREAMING.name
    shutil.copyfile(STREAMING, log)
    gc.collect()
    before = server_budget().used
    src = open_on_server(str(log))
    assert 0 < src.memory_bytes < 1 << 20  # groups and ids, not the 72 views
    listed = server_budget().used
    assert listed > before
    view = src.view(src.listing.groups[0].execution_ids[0])
    assert server_budget().used > listed  # the view opened is charged too ...
    del src, view
    gc.collect()
    assert server_budget().used <= before  # ... and both given back once gone


def _scaled(src: Path, dst: Path, n: int) -> Path:
    subprocess.run([sys.executable, str(ROOT / "tools" / "scale_executions.py"), str(src), str(dst),
                    "--executions", str(n)], check=True, capture_output=True, cwd=ROOT)
    return dst


def test_memory_stays_flat_as_the_log_grows(server, monkeypatch):
    """Four times the executions: the listing's charge grows by what it keeps of each (16 bytes),
    and the most it took at once not at all, though four times as much was read (the meter gives
    back each execution's share once the reader forgets it, tests/readers/test_listing_meter.py)."""
    meters = []
    made = opening.listing_meter
    monkeypatch.setattr(opening, "listing_meter", lambda slot=None: meters.append(made(slot)) or meters[-1])
    small = open_on_server(str(_scaled(REPEATED, server / "small.json", 200)))
    big = open_on_server(str(_scaled(REPEATED, server / "big.json", 800)))
    (m_small, m_big), MiB = meters, 1 << 20
    assert (m_small.executions, m_big.executions) == (200, 800)
    assert m_big.peak <= m_small.peak + MiB and m_big.peak <= 8 * MiB
    assert (small.listing.executions, big.listing.executions) == (200, 800)
    assert sum(g.count for g in big.listing.groups) == 800 and len(big.listing.groups) == len(small.listing.groups)
    assert big.memory_bytes - small.memory_bytes < 600 * 16 + (64 << 10)
    assert big.memory_bytes < 2 << 20


def test_the_time_limit_stops_a_listing_and_says_so(server, monkeypatch):
    monkeypatch.setenv("AQE_LENS_MAX_EXECUTIONS", "100")
    monkeypatch.setenv("AQE_LENS_MAX_LISTING_S", "1.5")
    log = many_executions(server / "many.gz", 100_000)
    gc.collect()
    before = server_budget().used
    with pytest.raises(SourceRefused, match=r"^refused: this log holds more than 100 SQL executions, so the app lists"
                                            r" its queries instead, and listing it stopped: opening this source took"
                                            r" more than 1\.5 s; the limit is max_listing_s in server\.toml; .*--queries"):
        open_on_server(str(log))
    gc.collect()
    assert server_budget().used <= before
