"""The MCP server's source store: one read per source however many calls ask at once, a changed
file read again, least recently used sources let go past the budget, refusals remembered."""
from __future__ import annotations

import shutil
import threading

import pytest

from aqe_core.mcp import sources
from aqe_core.mcp.sources import SourceStore
from aqe_core.opening import SourceError
from aqe_core.server_settings import SAMPLES_DIR

CAPTURES = SAMPLES_DIR / "captures"


@pytest.fixture
def reads(monkeypatch, tmp_path):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path))
    monkeypatch.setenv("AQE_LENS_CONFIG", str(tmp_path / "none.toml"))
    calls: list[str] = []
    real = sources.open_on_server

    def counted(path, **kw):
        calls.append(path)
        return real(path, **kw)

    monkeypatch.setattr(sources, "open_on_server", counted)
    return calls


def test_calls_at_once_share_one_read(reads):
    store = SourceStore()
    path = str(CAPTURES / "4.3.0-skew_join_inner.json.gz")
    got = []
    threads = [threading.Thread(target=lambda: got.append(store.open(path))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(reads) == 1 and len(got) == 6
    assert len({id(o.source) for o in got}) == 1 and sum(o.cached for o in got) == 5


def test_a_changed_file_is_read_again(reads, tmp_path):
    store = SourceStore()
    copy = tmp_path / "c.json.gz"
    shutil.copy(CAPTURES / "4.3.0-skew_join_inner.json.gz", copy)
    assert not store.open(str(copy)).cached and store.open(str(copy)).cached
    shutil.copy(CAPTURES / "4.3.0-aggregate_coalesce.json.gz", copy)
    again = store.open(str(copy))
    assert not again.cached and len(reads) == 2


def test_past_the_budget_the_least_recently_used_goes(reads):
    store = SourceStore(max_bytes=1)  # every source is bigger: only the newest stays
    a, b = str(CAPTURES / "4.3.0-skew_join_inner.json.gz"), str(CAPTURES / "4.3.0-aggregate_coalesce.json.gz")
    store.open(a)
    store.open(b)
    assert len(store) == 1 and store.open(b).cached and not store.open(a).cached


def test_refusals_are_remembered_and_paths_checked(reads, tmp_path):
    store = SourceStore()
    bad = tmp_path / "bad.json"
    bad.write_text("not a log")
    for _ in range(2):
        with pytest.raises(SourceError):
            store.open(str(bad))
    assert len(reads) == 1  # the second refusal came from memory
    for path in ("/etc/passwd", "", None, "x" * 5000, "a\x00b"):
        with pytest.raises(SourceError):
            store.open(path)


def test_a_read_source_is_ready_for_recommend_and_out_of_the_collectors_way(reads):
    """After the read: the application's replays for recommend's session lines are made, and
    the source's objects are frozen out of later garbage collections (a full collection over a
    big log inside a tool call cost more than the answer)."""
    import gc

    from aqe_core.advise import session_replay

    store = SourceStore()
    opened = store.open(str(CAPTURES / "4.3.0-skew_join_inner.json.gz"))
    capture = next(v.model.raw[0] for v in opened.source.views if v.model is not None and v.model.raw is not None)
    assert id(capture) in session_replay._SESSIONS
    assert gc.get_freeze_count() > 0
    gc.unfreeze()
