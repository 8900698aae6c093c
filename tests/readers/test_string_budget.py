"""The memory budget counts every byte a source holds (issue 37): logs a few MB on disk that hold
hundreds of MB of strings (``tests/string_bombs.py``: descriptions, error messages,
``modifiedConfigs``, job and environment properties, distinct event names, stage infos, plan
strings, plan descriptions, listener payloads), opened the way the app opens them, each in a fresh
process: the process's peak RSS grows less than the budget, and each is loaded (strings cut, with
a note) or refused in one line naming ``memory_budget_mb``. Three at once stay under it too."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from aqe_core.readers.budget import LoadMeter, MemoryBudget
from aqe_core.readers.eventlog import kept_text as K
from bench.bench_budget_bombs import run
from tests import string_bombs

BUDGET_MB = 256
BOMB_MB = 320  # more than the budget: a budget that missed a kind would be passed


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("bombs")
    return {k: string_bombs.write(k, where / k, BOMB_MB) for k in string_bombs.KINDS}


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "AQE_LENS_HOME": str(home), "AQE_LENS_CONFIG": str(home / "none.toml"),
            "AQE_LENS_MEMORY_BUDGET_MB": str(BUDGET_MB), "AQE_LENS_ROOTS": str(home.parent),
            "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def _one_line(load: dict) -> None:
    if not load["ok"]:
        assert "\n" not in load["line"] and "memory_budget_mb" in load["line"], load["line"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(string_bombs.KINDS))
def test_a_string_bomb_stays_inside_the_budget(bombs, kind, tmp_path):
    got = run([bombs[kind]], _env(tmp_path))
    load = got["loads"][0]
    assert got["peak_mb"] - got["before_mb"] < BUDGET_MB, (kind, got)
    assert load["charged_mb"] <= BUDGET_MB
    _one_line(load)


@pytest.mark.slow
def test_three_bombs_at_once_stay_inside_the_budget(bombs, tmp_path):
    paths = [bombs[k] for k in ("modified_configs", "plan_descriptions", "stage_infos")]
    got = run(paths, _env(tmp_path))
    assert got["peak_mb"] - got["before_mb"] < BUDGET_MB, got
    assert got["budget_used_mb"] <= BUDGET_MB
    for load in got["loads"]:
        _one_line(load)


def test_strings_are_cut_with_a_note_and_charged_at_their_size(tmp_path):
    """Loaded without a budget (the CLI's way, with a meter): every description is cut to the cap
    with a marker, the log says so, and the charge covers what the views hold."""
    from aqe_core.opening import load_source

    path = string_bombs.write("descriptions", tmp_path / "d", 16)
    meter = LoadMeter(MemoryBudget(1 << 40))
    src = load_source(str(path), meter=meter)
    descriptions = [v.description for v in src.views]
    assert descriptions and all(len(d) < K.DESCRIPTION_CHARS + 64 and "more characters not kept" in d
                                for d in descriptions)
    assert any("description cut to 16,384 characters" in n for n in src.notes), src.notes
    assert meter.text_bytes >= sum(len(d) for d in descriptions)


def test_made_up_event_names_are_counted_under_one_name(tmp_path):
    from aqe_core.readers.eventlog import load

    path = string_bombs.write("event_names", tmp_path / "e", 8)
    log = load(str(path))
    assert len(log.event_counts) <= K.EVENT_NAMES + 1
    assert log.event_counts.get(K.OTHER_EVENTS, 0) >= 1000


def test_the_cli_with_budget_refuses_in_one_line_and_reads_a_real_log(tmp_path, capsys):
    from aqe_core.cli import main
    from aqe_core.server_settings import SAMPLES_DIR

    bomb = string_bombs.write("modified_configs", tmp_path / "mc", 160)
    assert main(["explain", str(bomb), "--budget", "64"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "64 MB" in err and err.endswith("the limit is --budget"), err
    assert main(["explain", str(SAMPLES_DIR / "eventlogs" / "local-1795309160158.zstd"), "--budget", "64"]) == 0


def test_a_failed_loads_strings_are_freed_before_its_charge_is_given_back():
    """The traceback of a refused load holds its frames and their locals (the line being parsed):
    ``drop_frames`` lets them go, so the charge returned is memory that is free again."""
    import weakref

    from aqe_core.readers.budget import drop_frames

    class Line(str):
        pass

    gone: list[weakref.ref] = []

    def parse() -> None:
        line = Line("x" * 1000)
        gone.append(weakref.ref(line))
        try:
            raise ValueError("inner")
        except ValueError:
            raise KeyError("outer")

    try:
        parse()
    except KeyError as exc:
        assert gone[0]() is not None  # held by the traceback's frame
        drop_frames(exc)
        assert gone[0]() is None
