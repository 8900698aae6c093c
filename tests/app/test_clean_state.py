"""Clean state (issue 24, requirement 5): ids matched exactly, nothing written for an unknown
id, temp files of interrupted saves removed at start-up.

Real files in a real data directory (``AQE_LENS_HOME`` in a tmp dir); the interrupted save is
a real process killed in the middle of :func:`aqe_core.storage.atomic_write_bytes`.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqe_core import storage
from aqe_core.share import ShareError, load_view_state, save_view_state, upload_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))
    return tmp_path / "lens-home"


# ------------------------------------------------------------------------------------------
# ?report= ids


@pytest.mark.parametrize("rid", ["deadbeefdeadbee0\n", "deadbeefdeadbee0\r\n", "\ndeadbeefdeadbee0",
                                 "deadbeefdeadbee0 ", "DEADBEEFDEADBEE0", "deadbeefdeadbee0\x00"])
def test_a_report_id_with_anything_around_it_is_not_an_id(home, rid):
    saved = save_view_state({"source": {"kind": "sample", "key": "x"}, "query_id": "1"})
    for bad in (rid, rid.replace("deadbeefdeadbee0", saved)):
        with pytest.raises(ShareError, match="not a report id"):
            load_view_state(bad)
    assert not list((home / "reports").glob("*\n*"))


def test_an_unknown_report_id_leaves_no_file(home):
    save_view_state({"source": {"kind": "sample", "key": "x"}, "query_id": "1"})
    before = sorted(p.name for p in (home / "reports").iterdir())
    for k in range(50):
        with pytest.raises(ShareError, match="no saved view"):
            load_view_state(f"{k:016x}")
    assert sorted(p.name for p in (home / "reports").iterdir()) == before


def test_an_upload_digest_with_a_trailing_newline_is_not_a_digest(home):
    from aqe_core.share import store_upload

    digest = store_upload("log.json", b"{}\n")
    assert upload_path(digest) is not None
    assert upload_path(digest + "\n") is None


def test_a_preset_name_with_a_trailing_newline_is_refused(home):
    from aqe_core.user_presets import save_user_preset

    with pytest.raises(ValueError, match="preset names"):
        save_user_preset("mine\n", {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "64m"})


def test_sql_guard_names_are_matched_whole():
    from aqe_core.live.sql_guard import _PLAIN

    assert _PLAIN.match("t1_x")
    assert not _PLAIN.match("t1\n"), "a name with a trailing newline passes the plain-name check"


# ------------------------------------------------------------------------------------------
# temp files of interrupted saves

_WRITER = """
import os, sys, time
from pathlib import Path

def stuck(src, dst):  # the data is written, the rename not done: killed here
    print("writing", flush=True)
    time.sleep(120)

os.replace = stuck
target = Path(sys.argv[1])
if sys.argv[2] == "capture":
    from aqe_core.readers.capture_file import load_capture, save_capture
    save_capture(load_capture(sys.argv[3]), target)
else:
    from aqe_core import storage
    storage.atomic_write_bytes(target, b"x" * 100_000)
"""
CAPTURE = sorted((ROOT / "sample_logs" / "captures").glob("*.json.gz"))[0]


def _start_writer(target: Path, what: str = "bytes") -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target), what, str(CAPTURE)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    return proc


def _temps(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob(".*.tmp"))


def test_a_save_killed_midway_leaves_a_temp_file_that_start_up_removes(home):
    target = home / "reports" / "0123456789abcdef.json"
    proc = _start_writer(target)
    try:
        (tmp,) = _temps(home)
        # the save is alive (in another process): never removed, however old it looks
        os.utime(tmp, (time.time() - 3600, time.time() - 3600))
        assert storage.remove_interrupted_saves(home) == []
        assert tmp.exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert _temps(home) == [tmp] and not target.exists()  # what the kill leaves
    assert storage.remove_interrupted_saves(home, older_than_s=0) == [tmp]
    assert _temps(home) == [] and not target.exists()


def test_a_young_unlocked_temp_file_is_kept_an_old_one_removed(home):
    folder = home / "uploads" / ("ab" * 32)
    folder.mkdir(parents=True)
    young, old = folder / ".log.json.a1b2c3.tmp", folder / ".log.json.d4e5f6.tmp"
    young.write_bytes(b"1")
    old.write_bytes(b"2")
    os.utime(old, (time.time() - 600, time.time() - 600))
    kept = [folder / "upload.tmp", folder / ".hidden", home / "presets.json"]  # not temp files of a save
    for p in kept:
        p.write_bytes(b"keep")
        os.utime(p, (time.time() - 600, time.time() - 600))
    link = home / ".link.tmp"
    link.symlink_to(kept[0])
    os.utime(link, (time.time() - 600, time.time() - 600), follow_symlinks=False)
    assert storage.remove_interrupted_saves(home) == [old]
    assert young.exists() and link.is_symlink() and all(p.read_bytes() == b"keep" for p in kept)


def test_server_start_up_removes_temp_files_of_interrupted_saves(home):
    """Through the app (AppTest runs the real page scripts): the first page of a server on a
    data directory cleans it; a save in progress in another process is left alone."""
    from streamlit.testing.v1 import AppTest

    stale = [home / "reports" / ".0123456789abcdef.json.x1y2z3.tmp", home / ".presets.json.q1w2e3.tmp",
             home / "runs" / ".20260101-000000-abcdef.json.gz.r1t2y3.tmp"]
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"half a save")
        os.utime(p, (time.time() - 600, time.time() - 600))
    proc = _start_writer(home / "uploads" / ("cd" * 32) / "live.json")
    try:
        (live,) = [p for p in _temps(home) if p not in stale]
        os.utime(live, (time.time() - 600, time.time() - 600))
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        assert _temps(home) == [live]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def test_a_capture_save_killed_midway_leaves_what_start_up_removes(home):
    """``save_capture`` wrote a fixed ``<name>.tmp`` that nothing removed; it now saves through
    the locked temp files of :mod:`aqe_core.storage`."""
    from aqe_core.readers.capture_file import load_capture, save_capture

    runs = home / "runs"
    proc = _start_writer(runs / "20260101-000000-abcdef.json.gz", "capture")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert list(runs.iterdir())  # the kill left a temp file
    storage.remove_interrupted_saves(home, older_than_s=0)
    assert list(runs.iterdir()) == []
    cap = load_capture(str(CAPTURE))
    out = save_capture(cap, runs / "copy.json.gz")
    assert load_capture(str(out)).to_dict() == cap.to_dict()
    assert sorted(p.name for p in runs.iterdir()) == ["copy.json.gz"]
    assert save_capture(cap, runs / "again.json.gz").read_bytes() == out.read_bytes()  # same bytes


@pytest.mark.parametrize("rid", ["deadbeefdeadbee0\n", "0123456789abcdef"])
def test_report_links_in_the_app_leave_nothing_behind(home, rid):
    """``?report=deadbeefdeadbee0%0A`` (a trailing newline) is not an id; an unknown id is
    reported; neither leaves a file in the data directory."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["report"] = rid
    at.run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.sidebar.error]
    assert any(("not a report id" if "\n" in rid else "no saved view") in e for e in errors), errors
    assert not [p for p in home.rglob("*") if p.is_file()]
