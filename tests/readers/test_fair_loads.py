"""Fair loads on a shared server (issue 37, requirement 4): sources opened as the app opens them
(:func:`open_on_server`, under temporary roots), bombs generated here. Two sessions' bombs do
not hold a third user's small source for more than a moment, one session's loads never run
together, waiting never eats a load's ``max_load_s``, and bombs that decode to nothing meet a
checkpoint often enough to be stopped on time."""
from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from aqe_core import opening
from aqe_core.opening import SourceError, SourceRefused, open_on_server
from aqe_core.readers.budget import LoadMeter
from aqe_core.server_settings import SAMPLES_DIR
from tests.zip_bombs import capture_then_empty_members, empty_members_gzip, empty_members_zip_bomb, folders_tgz, newlines_gzip, task_zip_bomb
from tests.server_dirs import server_root

SMALL = SAMPLES_DIR / "eventlogs" / "local-1795649029734.zstd"  # the tpcds-like sample: ~1 s alone
MAX_LOAD_S = re.compile(r"^refused: opening this source took more than [\d.]+ s; the limit is max_load_s in server\.toml$")


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    return server_root(tmp_path, monkeypatch, no_config=True, AQE_LENS_MAX_CONCURRENT_LOADS="2")


class Opens:
    """``open_on_server`` calls in threads: what each returned or raised, and when it ended."""

    def __init__(self) -> None:
        self.out: dict[str, object] = {}
        self.span: dict[str, tuple[float, float]] = {}
        self.threads: list[threading.Thread] = []

    def start(self, name: str, path: Path, owner: str) -> None:
        def run() -> None:
            began = time.monotonic()
            try:
                self.out[name] = open_on_server(str(path), owner=owner)
            except SourceError as exc:
                self.out[name] = exc
            self.span[name] = (began, time.monotonic())

        t = threading.Thread(target=run, name=name)
        self.threads.append(t)
        t.start()

    def join(self, timeout: float = 120) -> None:
        for t in self.threads:
            t.join(timeout)
            assert not t.is_alive(), f"{t.name} still loading"


def _record(owner: str):
    return [r for r in opening._SLOTS.recent if r.owner == owner][-1]


def _refused_on_time(out: object) -> None:
    assert isinstance(out, SourceRefused) and not out.transient, out
    assert MAX_LOAD_S.match(str(out)) and "\n" not in str(out), str(out)


@pytest.mark.slow
def test_a_small_source_is_not_queued_behind_two_sessions_bombs(root, monkeypatch):
    monkeypatch.setenv("AQE_LENS_MAX_LOAD_S", "6")
    bombs = {"bomb-a": task_zip_bomb(root / "a.zip", 1000), "bomb-b": empty_members_zip_bomb(root / "b.zip")}
    began = time.monotonic()
    assert open_on_server(str(SMALL), owner="small-alone").views
    alone = time.monotonic() - began

    opens = Opens()
    for owner, path in bombs.items():
        opens.start(owner, path, owner)
    time.sleep(2.5)  # both slots held by bombs that have read for a while, as in the attack
    assert opening._SLOTS.running == 2
    opens.start("small", SMALL, "small")
    opens.join()

    small = opens.out["small"]
    assert not isinstance(small, Exception) and small.views  # type: ignore[attr-defined]
    took = opens.span["small"][1] - opens.span["small"][0]
    assert _record("small").longest_wait < 5.0  # measured by the slots: the bombs gave way at once
    assert took < 3 * alone + 5, f"{took:.1f} s behind two bombs, {alone:.1f} s alone"
    for owner in bombs:
        _refused_on_time(opens.out[owner])
        rec = _record(owner)
        # each bomb waited while the small one read, and that wait did not count against its
        # max_load_s: it was refused after reading for 6 s, more than 6 s after it started
        assert rec.waited > 0 and rec.served > 5.5
        assert opens.span[owner][1] - opens.span[owner][0] > 6 + rec.waited - 0.5


@pytest.mark.slow
def test_one_session_never_reads_two_sources_at_once(root, monkeypatch):
    monkeypatch.setenv("AQE_LENS_MAX_LOAD_S", "2")
    bomb = empty_members_zip_bomb(root / "b.zip")
    lock, reading, peak = threading.Lock(), [0], [0]
    real = opening.load_source

    def counted(*args, **kw):
        with lock:
            reading[0] += 1
            peak[0] = max(peak[0], reading[0])
        try:
            return real(*args, **kw)
        finally:
            with lock:
                reading[0] -= 1

    monkeypatch.setattr(opening, "load_source", counted)
    opens = Opens()
    opens.start("bomb", bomb, "session")
    time.sleep(0.5)
    opens.start("small", SMALL, "session")  # a second source of the same session: waits for the first
    opens.join()
    assert peak[0] == 1  # a slot was free all along, yet the second waited
    _refused_on_time(opens.out["bomb"])
    assert opens.out["small"].views  # type: ignore[attr-defined]
    assert opens.span["small"][1] > opens.span["bomb"][1]
    assert _record("session").waited > 0  # (how long depends on when the bomb's thread got going)


@pytest.mark.parametrize("make", [
    empty_members_zip_bomb,  # read for 624 s past a 5 s max_load_s before issue 37
    empty_members_gzip,
    newlines_gzip,  # a million lines a MiB: ~1 s between checkpoints
    folders_tgz,  # listed for 24 s before any event was read
    capture_then_empty_members,  # a capture: no checkpoint at all before issue 37
], ids=lambda f: f.__name__)
def test_bombs_that_decode_to_nothing_meet_checkpoints_and_stop_on_time(root, monkeypatch, make: Callable):
    monkeypatch.setenv("AQE_LENS_MAX_LOAD_S", "1")
    path = make(root / make.__name__)
    stamps: list[float] = []
    check = LoadMeter.check_time

    def stamped(self):
        stamps.append(time.monotonic())
        return check(self)

    monkeypatch.setattr(LoadMeter, "check_time", stamped)
    began = time.monotonic()
    with pytest.raises(SourceRefused) as exc:
        open_on_server(str(path), owner="bomb")
    ended = time.monotonic()
    _refused_on_time(exc.value)
    assert ended - began < 3
    gaps = [b - a for a, b in zip([began, *stamps], [*stamps, ended])]
    assert max(gaps) < 0.75  # ~0.1 s here; generous for a busy machine
