"""One memory budget per server, per-source limits, a cache bounded by size and failed sources
remembered (issue 24, findings 1 and 2): hostile logs opened on the real server stay within its
budget, measured as the server process's peak RSS."""
from __future__ import annotations

import gc
import os
import re
import time
from pathlib import Path

import pytest

from tests.budget_logs import inflated_tasks, many_executions, blank_log
from tests.lens_browser import browser, browser_marks, running_app, wait_ready, goto_page  # noqa: F401 - fixtures
from aqe_core.readers.budget import LoadMeter, MemoryBudget
from aqe_core.readers.eventlog.errors import BudgetExceeded
from aqe_core.server_settings import SAMPLES_DIR, ServerSettings, settings_from
from aqe_core.share import save_view_state
from aqe_core.opening import LoadedSource, SourceError, open_on_server, server_budget
from aqe_core.source_cache import SourceCache, content_fingerprint
from tests.server_dirs import server_root

MiB = 1 << 20
ZSTD_LOG = SAMPLES_DIR / "eventlogs" / "local-1795649029734.zstd"  # 33 executions, 14k plan nodes


@pytest.fixture
def server(tmp_path, monkeypatch):
    return server_root(tmp_path, monkeypatch)


# -- settings, meter, cache (in process) ------------------------------------------------------


def test_budgets_are_server_settings_with_safe_defaults():
    s = ServerSettings()
    assert (s.memory_budget_mb, s.max_concurrent_loads, s.max_executions, s.max_plan_nodes, s.max_task_slots,
            s.max_load_s) == (2048, 2, 10_000, 500_000, 32_000_000, 120)
    env = {"AQE_LENS_MEMORY_BUDGET_MB": "96", "AQE_LENS_MAX_EXECUTIONS": "50", "AQE_LENS_MAX_LOAD_S": "2.5"}
    s = settings_from({"max_plan_nodes": 1000, "max_concurrent_loads": 4}, env)
    assert (s.memory_budget_bytes, s.max_executions, s.max_load_s, s.max_plan_nodes, s.max_concurrent_loads) == (
        96 * MiB, 50, 2.5, 1000, 4)
    for bad in ({"max_executions": 0}, {"max_executions": 2.5}, {"max_task_slots": "many"}, {"memory_budget_mb": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            settings_from(bad)


@pytest.mark.parametrize("env, make, setting", [
    ({"AQE_LENS_MAX_EXECUTIONS": "100"}, lambda p: many_executions(p, 1000), "max_executions"),
    ({"AQE_LENS_MAX_PLAN_NODES": "1000"}, lambda p: p.write_bytes(ZSTD_LOG.read_bytes()), "max_plan_nodes"),
    ({"AQE_LENS_MAX_TASK_SLOTS": "1000000"}, lambda p: inflated_tasks(p, 1 << 27), "max_task_slots"),
    ({"AQE_LENS_MAX_LOAD_S": "0.01"}, lambda p: many_executions(p, 20_000), "max_load_s"),
    ({"AQE_LENS_MEMORY_BUDGET_MB": "4"}, lambda p: inflated_tasks(p, 1 << 20), "memory_budget_mb"),
])
def test_each_limit_refuses_the_whole_source_naming_its_setting(server, monkeypatch, env, make, setting):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    p = server / "log.gz"
    make(p)
    gc.collect()
    before = server_budget().used  # (sources other tests opened in this process may still live)
    with pytest.raises(SourceError, match=rf"^refused: .*; the limit is {setting} in server\.toml(; .*)?$") as got:
        # (the app lists a log past max_executions instead: tests/readers/test_server_listing.py; the MCP
        # server, whose answers need every view, is refused)
        open_on_server(str(p), listing=setting != "max_executions")
    # too many executions for the app: the message names the flat-memory way through the log (issue 41)
    assert ("inspect LOG --queries" in str(got.value)) == (setting == "max_executions")
    gc.collect()
    # a refused load gives back all it took (and may have made the cache let sources go first)
    assert server_budget().used <= before


def test_a_loaded_source_holds_its_estimate_while_it_lives(server):
    gc.collect()
    before = server_budget().used
    src = open_on_server(str(ZSTD_LOG))
    assert 14_000 * 1024 < src.memory_bytes < 64 * MiB  # about 1.5 KiB a plan node: 14k nodes
    assert server_budget().used >= before + src.memory_bytes
    del src
    gc.collect()
    assert server_budget().used == before


def _src(n_bytes: int, name: str) -> LoadedSource:
    return LoadedSource("eventlog", name, name, None, memory_bytes=n_bytes)


def test_the_cache_evicts_by_size_not_by_count():
    cache = SourceCache(100 * MiB)
    small = [_src(1 * MiB, f"s{i}") for i in range(40)]
    for s in small:
        cache.put(s.path, s)
    assert all(cache.get(s.path) is s for s in small)  # 40 small sources: no count limit
    big = _src(70 * MiB, "big")
    cache.put("big", big)
    assert cache.get("big") is big and cache.bytes <= 100 * MiB
    assert cache.get("s0") is None and cache.get("s39") is not None  # least recently used first
    cache.put("huge", _src(101 * MiB, "huge"))  # over the whole cache: not kept
    assert cache.get("huge") is None and cache.get("big") is big


def test_a_load_short_of_memory_lets_cached_sources_go_first():
    budget, cache = MemoryBudget(10 * MiB), SourceCache(10 * MiB)
    budget.add_reclaimer(cache.reclaim)
    for name in ("a", "b"):
        meter = LoadMeter(budget)
        meter.slots(MiB // 2)  # 4 MiB of task values
        src = _src(0, name)
        src.memory_bytes = meter.hold_until_freed(src)
        cache.put(name, src)
        del src
    assert budget.used == 8 * MiB
    LoadMeter(budget).slots(3 * MiB // 4)  # 6 MiB: "a", the least recently used, goes and is freed
    assert cache.get("a") is None and cache.get("b") is not None and budget.used == 10 * MiB
    with pytest.raises(BudgetExceeded, match="held by other sources") as e:
        LoadMeter(budget).slots(5 * MiB // 8)  # 5 MiB: "b" goes too, but the 6 MiB load above holds its part
    assert e.value.transient and e.value.setting == "memory_budget_mb"


def test_the_fingerprint_reads_only_the_ends_and_sees_a_change(tmp_path):
    p = tmp_path / "log"
    p.write_bytes(b"a" * (5 * MiB))
    first = content_fingerprint(str(p))
    assert content_fingerprint(str(p)) == first
    with open(p, "r+b") as f:
        f.seek(5 * MiB - 1)
        f.write(b"b")
    assert content_fingerprint(str(p)) != first
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert content_fingerprint(str(fifo)).startswith("other:")  # not read, and no wait for a writer


def test_the_budget_does_not_keep_a_dropped_cache_alive():
    import weakref

    budget, cache = MemoryBudget(10 * MiB), SourceCache(10 * MiB)
    budget.add_reclaimer(cache.reclaim)
    gone = weakref.ref(cache)
    del cache
    gc.collect()
    assert gone() is None
    budget.take(MiB, 0)  # a reclaimer that is gone is skipped


# -- the real server ------------------------------------------------------------------------

BUDGET_MB = 96
#: what the server may hold beyond its budget: Streamlit's per-session state, page renders, the
#: reader's transient buffers (a decoded chunk, a batch of lines)
OVERHEAD_MB = 150
#: the server's max_listing_s here: the million executions, past max_executions, are listed by query
#: (issue 41) until listing them takes this long (~3 min of CPU for all of them)
LISTING_S = 20


def _status_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(key)


def _rchar(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("rchar")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("root")
    many_executions(root / "million.gz", 10 ** 6)
    inflated_tasks(root / "tasks.gz", 1 << 27)  # 2 x 134M per-task values asked for: 2 GB
    for i in range(8):  # 3 stages of 2M tasks each: 96 MB each, refused at the third stage
        inflated_tasks(root / f"bomb{i}.gz", 2_000_000, stages=3, tag=i)
    blank_log(root / "blank.json", 9)
    return root


@pytest.fixture(scope="module")
def app(logs, tmp_path_factory):
    env = {"AQE_LENS_ROOTS": str(logs), "AQE_LENS_MEMORY_BUDGET_MB": str(BUDGET_MB),
           "AQE_LENS_MAX_TASK_SLOTS": "8000000", "AQE_LENS_MAX_CONCURRENT_LOADS": "8",
           "AQE_LENS_MAX_LISTING_S": str(LISTING_S)}
    d = tmp_path_factory.mktemp("budget-app")
    with running_app(d / "home", d / "streamlit.log", env) as lens:
        yield lens


@pytest.fixture(scope="module")
def baseline(app, browser) -> float:
    """The server's RSS with a session open on the default sample (MB)."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(app.url)
    wait_ready(page)
    ctx.close()
    return _status_mb(app.pid, "VmRSS")


def _path_box(page, path: Path) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Path on server").click()
    wait_ready(page)
    sidebar.get_by_label("Path to an event log, log directory or capture").fill(str(path))
    page.keyboard.press("Enter")
    wait_ready(page)


def _error_text(page, pattern: str, pid: int, bound_mb: float, timeout_s: float = 90) -> str:
    """The sidebar's error matching ``pattern``, failing as soon as the server's RSS passes
    ``bound_mb`` (before the budgets, a hostile log took gigabytes for minutes)."""
    box = page.get_by_test_id("stSidebar").locator('[data-testid="stAlertContentError"]')
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        rss = _status_mb(pid, "VmRSS")
        assert rss <= bound_mb, f"server RSS {rss:.0f} MB is over {bound_mb:.0f} MB"
        texts = box.all_inner_texts()
        hit = next((t for t in texts if re.search(pattern, t)), None)
        if hit is not None:
            return hit
        time.sleep(0.3)
    raise AssertionError(f"no message matching {pattern!r} within {timeout_s} s (shown: {box.all_inner_texts()})")


def _browser_test(fn):
    for mark in browser_marks:
        fn = mark(fn)
    return fn


@pytest.mark.parametrize("name, setting", [("million.gz", "max_listing_s"), ("tasks.gz", "max_task_slots")])
@_browser_test
def test_a_million_executions_and_inflated_tasks_are_refused_within_the_budget(app, browser, baseline, logs,
                                                                            name, setting):
    bound = baseline + BUDGET_MB + OVERHEAD_MB
    ctx = browser.new_context()
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    page.goto(app.url)
    wait_ready(page)
    _path_box(page, logs / name)
    page.get_by_test_id("stSidebar").locator("[data-testid=stButton] button").first.click()
    text = _error_text(page, rf"refused: .*the limit is {setting} in server\.toml", app.pid, bound)
    assert "Traceback" not in text
    if name == "million.gz":  # past max_executions: listed by query, until the time limit stopped that
        assert f"so the app lists its queries instead, and listing it stopped: opening this source took more than" \
               f" {LISTING_S} s" in text
    wait_ready(page)
    assert _status_mb(app.pid, "VmHWM") <= bound
    ctx.close()


@_browser_test
def test_eight_concurrent_bomb_loads_keep_the_server_under_its_budget(app, browser, baseline, logs, monkeypatch):
    """Eight shared links, each to another bomb (96 MB of task values asked for, 64 MB taken
    before its per-source limit stops it), opened at once: the budget holds for all together."""
    bound = baseline + BUDGET_MB + OVERHEAD_MB
    monkeypatch.setenv("AQE_LENS_HOME", str(app.home))
    links = [save_view_state({"source": {"kind": "path", "path": str(logs / f"bomb{i}.gz")}}) for i in range(8)]
    pages = []
    for rid in links:  # all at once: each page's first run starts its load on the server
        ctx = browser.new_context()
        page = ctx.new_page()
        page.set_default_timeout(90_000)
        page.goto(f"{app.url}/?report={rid}", wait_until="commit")
        pages.append((ctx, page))
    for ctx, page in pages:
        text = _error_text(page, r"refused: .*the limit is (max_task_slots|memory_budget_mb) in server\.toml",
                           app.pid, bound)
        assert "Traceback" not in text
    print(f"baseline {baseline:.0f} MB, peak {_status_mb(app.pid, 'VmHWM'):.0f} MB")
    assert _status_mb(app.pid, "VmHWM") <= bound
    for ctx, _ in pages:
        ctx.close()


@_browser_test
def test_a_failed_source_is_not_read_again_on_the_next_interaction(app, browser, baseline, logs):
    """9 MB without one event: the first open reads it all and fails; moving to other pages
    shows the same message without reading the file again."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    page.goto(app.url)
    wait_ready(page)
    _path_box(page, logs / "blank.json")
    before = _rchar(app.pid)
    page.get_by_test_id("stSidebar").locator("[data-testid=stButton] button").first.click()
    wait_ready(page)
    first = _error_text(page, "no events found", app.pid, baseline + BUDGET_MB + OVERHEAD_MB)
    read_first = _rchar(app.pid) - before
    assert read_first >= 9 * MiB
    for title in ("Plans", "Partitions", "Overview"):
        before = _rchar(app.pid)
        goto_page(page, title)
        again = _error_text(page, "no events found", app.pid, baseline + BUDGET_MB + OVERHEAD_MB)
        assert again == first
        # the fingerprint reads 128 KiB and the page a little (2-3 MB on a loaded machine); a
        # second read of the file would be all of it again
        assert _rchar(app.pid) - before < read_first / 2
    ctx.close()



def test_a_cache_that_keeps_the_newest_keeps_it_whatever_its_size():
    """The MCP server's choice (no session holds its sources): the newest stays even when it is
    bigger than the whole cache, and the older ones go; the budget's reclaimer can still take it."""
    cache = SourceCache(10 * MiB, keep_newest=True)
    small = _src(4 * MiB, "small")
    cache.put("small", small)
    huge = _src(30 * MiB, "huge")
    cache.put("huge", huge)
    assert cache.get("huge") is huge and cache.get("small") is None and len(cache) == 1
    assert cache.reclaim(1) == 30 * MiB and len(cache) == 0
