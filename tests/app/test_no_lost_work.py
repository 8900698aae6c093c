"""No lost work: user presets and shared views survive concurrent writers and damaged files.

Real threads on a real data directory (``AQE_LENS_HOME`` in a tmp dir): every save lands, a
file that does not parse is moved aside (bytes intact) and reported, never written over.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from aqe_core import user_presets as P
from aqe_core.share import ShareError, load_view_state, save_view_state

SETTING = "spark.sql.adaptive.advisoryPartitionSizeInBytes"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))
    return tmp_path / "lens-home"


def _names() -> set[str]:
    return {p.name for p in P.load_user_presets().presets}


def _run_threads(target, n: int) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def body(i: int) -> None:
        try:
            start.wait()
            target(i)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_8_threads_x_200_saves_keep_all_1600_presets(home):
    def saves(t: int) -> None:
        for k in range(200):
            P.save_user_preset(f"t{t}-p{k}", {SETTING: f"{k + 1}m"}, description=f"thread {t}")

    assert _run_threads(saves, 8) == []
    loaded = P.load_user_presets()
    assert loaded.problem is None
    assert len(loaded.presets) == 1600
    assert _names() == {f"t{t}-p{k}" for t in range(8) for k in range(200)}
    assert next(p for p in loaded.presets if p.name == "t3-p41").settings == {SETTING: "42m"}
    # no temporary files left behind; only the store and its lock file
    assert sorted(p.name for p in home.iterdir()) == ["presets.json", "presets.json.lock"]


def test_interleaved_deletes_and_saves(home):
    for k in range(40):
        P.save_user_preset(f"old-{k}", {SETTING: "8m"})

    def work(t: int) -> None:
        for k in range(10):
            if t % 2:
                assert P.delete_user_preset(f"old-{(t // 2) * 10 + k}") is True
            else:
                P.save_user_preset(f"new-{t}-{k}", {SETTING: "16m"})

    assert _run_threads(work, 8) == []
    assert _names() == {f"new-{t}-{k}" for t in (0, 2, 4, 6) for k in range(10)}
    assert P.delete_user_preset("old-0") is False
    assert P.delete_user_preset("no-such") is False


def test_a_bad_byte_is_kept_aside_reported_and_not_overwritten(home):
    P.save_user_preset("mine", {SETTING: "64m"})
    P.save_user_preset("yours", {SETTING: "32m"})
    store = home / "presets.json"
    damaged = bytearray(store.read_bytes())
    damaged[len(damaged) // 2] = 0xFF  # one bad byte: not UTF-8, not JSON
    store.write_bytes(bytes(damaged))

    P.save_user_preset("after", {SETTING: "8m"})

    kept = list(home.glob("presets.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == bytes(damaged)  # old presets intact, aside
    loaded = P.load_user_presets()
    assert [p.name for p in loaded.presets] == ["after"]
    assert loaded.problem and kept[0].name in loaded.problem
    assert loaded.kept == (kept[0],)
    # still reported on later loads and saves, and still never overwritten
    P.save_user_preset("later", {SETTING: "8m"})
    assert kept[0].name in P.load_user_presets().problem
    assert kept[0].read_bytes() == bytes(damaged)
    assert _names() == {"after", "later"}


def test_a_load_that_finds_the_damage_reports_it_and_the_next_save_keeps_it(home):
    store = home / "presets.json"
    home.mkdir(parents=True)
    store.write_text('[{"name": "x", "settings": {"k": 1}}]')  # JSON, but not presets
    loaded = P.load_user_presets()
    assert loaded.presets == [] and loaded.problem and "presets.json.corrupt-" in loaded.problem
    assert P.delete_user_preset("x") is False
    P.save_user_preset("fresh", {SETTING: "8m"})
    assert _names() == {"fresh"}
    (kept,) = home.glob("presets.json.corrupt-*")
    assert json.loads(kept.read_text()) == [{"name": "x", "settings": {"k": 1}}]


def test_compare_page_warns_naming_the_kept_file(home):
    from streamlit.testing.v1 import AppTest

    home.mkdir(parents=True)
    (home / "presets.json").write_bytes(b"[{\"name\": \"x\"\xff")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception, at.exception
    (kept,) = home.glob("presets.json.corrupt-*")
    from aqe_core.plain_text import md_text

    assert any(md_text(kept.name) in w.value for w in at.warning), [w.value for w in at.warning]


def test_concurrent_shares_of_many_views_all_reopen(home):
    ids: dict[int, str] = {}

    def share(t: int) -> None:
        for k in range(25):
            state = {"source": {"kind": "sample", "key": "x"}, "query_id": str(k), "presets": [f"p{t}"]}
            rid = save_view_state(state)
            assert save_view_state(state) == rid  # same state, same id, no rewrite needed
            ids[t * 100 + k] = rid

    assert _run_threads(share, 8) == []
    for key, rid in ids.items():
        assert load_view_state(rid)["presets"] == [f"p{key // 100}"]
    reports = home / "reports"
    assert not [p for p in reports.iterdir() if not p.name.endswith((".json", ".json.lock"))]


def test_a_damaged_shared_view_is_kept_aside_reported_and_repaired_by_the_next_share(home):
    state = {"source": {"kind": "sample", "key": "x"}, "query_id": "6"}
    rid = save_view_state(state)
    path = home / "reports" / f"{rid}.json"
    path.write_text(path.read_text().replace('"6"', '"7"'))  # parses, but is not what the id names
    with pytest.raises(ShareError, match="damaged"):
        load_view_state(rid)
    assert list((home / "reports").glob(f"{rid}.json.corrupt-*"))
    assert save_view_state(state) == rid
    assert load_view_state(rid) == state
    with pytest.raises(ShareError, match="report id"):
        load_view_state("../../etc/passwd")
    with pytest.raises(ShareError, match="no saved view"):
        load_view_state("0123456789abcdef")
