"""Flat memory (issue 14): ended executions of a big log go to a spill file while it is read
(``Limits.spill_after``) and come back when a later event needs them. Spilling must change
nothing: every sample and fixture log, and logs whose events were moved so that jobs, tasks and
metric updates arrive after their execution ended, read the same spilled as held in memory."""
from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import pytest
import zstandard

from aqe_core.api import Limits, load_event_log as load
from aqe_core.readers.eventlog.spill_file import SpillFile, SpillMap
from aqe_core.readers.eventlog import builder
from aqe_core.views.eventlog_summary import log_json

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs" / "eventlogs"
FIXTURES = REPO / "tests" / "fixtures" / "eventlogs"
LOGS = sorted([p for p in SAMPLES.iterdir() if p.name != "MANIFEST.json"]
              + [p for p in FIXTURES.iterdir() if p.is_file() and p.name != "MANIFEST.json"]
              + [p for p in FIXTURES.iterdir() if p.is_dir() and p.name.startswith("eventlog_v2")]
              + sorted(p for p in (FIXTURES / "listener").rglob("local-*")))
IN_MEMORY = Limits(spill_after=None)
SPILL_ALL = Limits(spill_after=0)


def _doc(log) -> str:
    return json.dumps(log_json(log, plans=True, tasks=True), sort_keys=True, default=str)


@pytest.fixture
def revivals(monkeypatch):
    """How many times an execution came back from the spill file."""
    count = [0]
    orig = builder._Builder._revive

    def counted(self, eid):
        count[0] += 1
        return orig(self, eid)

    monkeypatch.setattr(builder._Builder, "_revive", counted)
    return count


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_a_spilled_log_reads_as_one_held_in_memory(path):
    held = load(str(path), keep_task_metrics=True, limits=IN_MEMORY)
    spilled = load(str(path), keep_task_metrics=True, limits=SPILL_ALL)
    assert _doc(spilled) == _doc(held)
    if len(held.executions) > 1:
        assert spilled.executions.spilled == len(spilled.executions) and not held.executions.spilled


def _plain_lines(name: str) -> list[bytes]:
    raw = (SAMPLES / name).read_bytes()
    if name.endswith(".zstd"):
        raw = zstandard.ZstdDecompressor().stream_reader(raw).read()
    return raw.splitlines(keepends=True)


def _late(lines: list[bytes], seed: int) -> list[bytes]:
    """A third of the task ends and driver metric updates held back until the next SQL execution
    end: they arrive after their execution ended (as a straggler's or a speculative task's do)."""
    rnd = random.Random(seed)
    out: list[bytes] = []
    held: list[bytes] = []
    for line in lines:
        if (line.startswith(b'{"Event":"SparkListenerTaskEnd"') or b"DriverAccumUpdates" in line[:100]) and \
                rnd.random() < 0.3:
            held.append(line)
            continue
        out.append(line)
        if b"SQLExecutionEnd" in line[:100]:
            out.extend(held)
            held.clear()
    return out + held


def _env_late(lines: list[bytes], after: int) -> list[bytes]:
    """The Spark properties arrive after ``after`` executions ended (and were spilled and
    finalised without them): the end of the log must finalise those again."""
    out = [x for x in lines if not x.startswith(b'{"Event":"SparkListenerEnvironmentUpdate"')]
    env = [x for x in lines if x.startswith(b'{"Event":"SparkListenerEnvironmentUpdate"')]
    ends = [i for i, x in enumerate(out) if b"SQLExecutionEnd" in x[:100]]
    at = ends[min(after, len(ends) - 1)] + 1
    return out[:at] + env + out[at:]


def _shuffled(lines: list[bytes], seed: int) -> list[bytes]:
    """Blocks of lines swapped with their neighbours (the application's start kept first)."""
    rnd = random.Random(seed)
    blocks = [lines[i:i + 40] for i in range(4, len(lines), 40)]
    for i in range(len(blocks) - 1):
        if rnd.random() < 0.3:
            blocks[i], blocks[i + 1] = blocks[i + 1], blocks[i]
    return lines[:4] + [x for b in blocks for x in b]


@pytest.mark.parametrize("name", ["local-1795309249168", "local-1795309160158.zstd"])
@pytest.mark.parametrize("move", ["late_1", "late_2", "shuffled_1", "shuffled_2", "envlate_3"])
def test_events_after_the_end_bring_a_spilled_execution_back(tmp_path, revivals, name, move):
    lines = _plain_lines(name)
    kind, arg = move.rsplit("_", 1)
    moved = {"late": _late, "shuffled": _shuffled, "envlate": _env_late}[kind](lines, int(arg))
    path = tmp_path / "app"
    path.write_bytes(b"".join(moved))
    held = load(str(path), keep_task_metrics=True, limits=IN_MEMORY)
    assert revivals[0] == 0
    spilled = load(str(path), keep_task_metrics=True, limits=SPILL_ALL)
    assert _doc(spilled) == _doc(held)
    if kind == "late":
        assert revivals[0] > 0


def test_small_logs_stay_in_memory_by_default():
    log = load(str(SAMPLES / "local-1795309249168"))
    assert log.executions.spilled == 0 and log.executions.file is None


def test_a_spilled_log_pickles_with_its_values():
    log = load(str(SAMPLES / "local-1795309249168"), limits=SPILL_ALL)
    back = pickle.loads(pickle.dumps(log))
    assert isinstance(back.executions, dict) and isinstance(back.stages, dict)
    assert _doc(back) == _doc(log)


def test_spill_map():
    m: SpillMap[int, list[int]] = SpillMap(file=SpillFile(), keep=2)
    for k in range(5):
        m[k] = [k] * 3
        m.spill(k)
    assert list(m) == [0, 1, 2, 3, 4] and len(m) == 5 and m.spilled == 5
    assert m[3] == [3, 3, 3] and m[3] is m[3]  # kept while among the last read
    m.take(3).append(9)
    assert m[3] == [3, 3, 3, 9] and not m.is_spilled(3)
    del m[1]
    assert 1 not in m and list(m) == [0, 2, 3, 4]
    m[2] = ["new"]
    assert m[2] == ["new"] and m.spilled == 2
    assert m.pop(4) == [4, 4, 4] and list(m) == [0, 2, 3]


def _damaged(lines: list[bytes], seed: int) -> list[bytes]:
    """A tenth of the lines dropped and one in twenty sent twice (lost and replayed events)."""
    rnd = random.Random(seed)
    out: list[bytes] = []
    for line in lines:
        r = rnd.random()
        if r < 0.1:
            continue
        out.append(line)
        if r > 0.95:
            out.insert(rnd.randrange(len(out)), line)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_damaged_logs_read_the_same_spilled(tmp_path, seed):
    path = tmp_path / "app"
    path.write_bytes(b"".join(_damaged(_plain_lines("local-1795309160158.zstd"), seed)))
    held = load(str(path), keep_task_metrics=True, limits=IN_MEMORY)
    assert _doc(load(str(path), keep_task_metrics=True, limits=SPILL_ALL)) == _doc(held)


def test_values_spilled_together_come_back_one_by_one():
    f = SpillFile()
    f.BUFFER = 64  # (some in the file, some still in the write buffer)
    m: SpillMap[int, list[int]] = SpillMap({k: [k] for k in range(6)}, f, keep=1)
    m.spill_together([0, 1, 2])
    m.spill_together([3])
    m.spill(4)
    assert m.spilled == 5 and [m[k] for k in range(6)] == [[k] for k in range(6)]
    m.take(1).append(1)
    assert m[1] == [1, 1] and m[0] == [0] and m[2] == [2]


@pytest.mark.parametrize("fail_at", [1, 2, 3, 5, 8, 13, 21])
@pytest.mark.parametrize("path", [SAMPLES / "local-1795309160158.zstd",
                                  sorted((FIXTURES / "listener").rglob("local-*"))[0]], ids=["sample", "listener"])
def test_a_full_disk_keeps_the_rest_in_memory(monkeypatch, fail_at, path):
    """The spill file fails on its n-th write (ENOSPC) at any step of a spill: nothing is lost,
    the rest is held in memory, and a note says so."""
    import errno

    held = load(str(path), keep_task_metrics=True, limits=IN_MEMORY)
    writes = [0]
    put = SpillFile.put

    def failing(self, value):
        writes[0] += 1
        if writes[0] >= fail_at:
            raise OSError(errno.ENOSPC, "No space left on device")
        return put(self, value)

    monkeypatch.setattr(SpillFile, "put", failing)
    log = load(str(path), keep_task_metrics=True, limits=SPILL_ALL)
    assert [n for n in log.notes if n not in held.notes] == [
        "the reader's temporary file could not be written (No space left on device): the rest of the log"
        " was held in memory"]
    log.notes = held.notes
    assert _doc(log) == _doc(held)


@pytest.mark.parametrize("path", [SAMPLES / "local-1795309160158.zstd",
                                  sorted((FIXTURES / "listener").rglob("local-*"))[-1]], ids=["sample", "listener"])
def test_the_views_of_a_spilled_log_are_the_same(path, monkeypatch):
    """What the app, the report and ``explain`` show is built from the same executions."""
    from aqe_core.readers.eventlog import spilling
    from aqe_core.opening import load_source
    from aqe_core.views.explain import explain_views
    from aqe_core.views.triage import triage

    held = load_source(str(path), limits=IN_MEMORY)
    files = []
    make = spilling.spill_file
    monkeypatch.setattr(spilling, "spill_file", lambda: files.append(make()) or files[-1])
    spilled = load_source(str(path), limits=SPILL_ALL)
    assert len(files) == 1 and files[0].size > 0
    assert json.dumps(explain_views(spilled.views), default=str) == json.dumps(explain_views(held.views), default=str)
    assert repr(triage(spilled.views)) == repr(triage(held.views))
