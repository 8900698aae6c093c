"""Path on server reads what it checked (issue 24, finding 3 and part of 5): a folder swapped for
a symlink between the roots check and the open never lets a file outside the roots be read; a
FIFO, a device or a socket inside a root is refused at once instead of blocking a session; and
no message lists the names in a folder (report ids, uploads)."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from aqe_core.readers.eventlog.errors import EventLogError
from aqe_core.readers.eventlog.opened import OUTSIDE_ROOTS, Confined, Roots
from aqe_core.server_settings import SAMPLES_DIR
from aqe_core.share import save_view_state
from aqe_core.opening import SourceError, open_on_server

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eventlogs"
SECRET = "s3cr3t-TOKEN-4242"
APP = "app-1795000000000-0001"


def _log(version: str) -> str:
    return "".join(json.dumps(e) + "\n" for e in (
        {"Event": "SparkListenerLogStart", "Spark Version": version},
        {"Event": "SparkListenerApplicationStart", "App Name": "race", "App ID": APP, "Timestamp": 1, "User": "u"}))


def _rolling(where: Path, version: str) -> Path:
    d = where / f"eventlog_v2_{APP}"
    d.mkdir(parents=True)
    (d / f"events_1_{APP}").write_text(_log(version))
    (d / f"appstatus_{APP}").write_text("")
    return d


@pytest.fixture
def server(tmp_path, monkeypatch):
    home, root, outside = tmp_path / "home", tmp_path / "root", tmp_path / "outside"
    for d in (home, root, outside):
        d.mkdir()
    monkeypatch.setenv("AQE_LENS_HOME", str(home))
    monkeypatch.setenv("AQE_LENS_ROOTS", str(root))
    return home, root, outside


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _in_thread(fn, timeout: float = 30.0):
    """``fn()``'s result or exception, or ``"blocked"`` if it did not return in ``timeout``."""
    out: list = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            out.append(e)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    return out[0] if out else "blocked"


# -- the symlink swap race -----------------------------------------------------------------


def test_a_folder_swapped_for_a_symlink_while_opening_never_escapes(server):
    """Another process (anyone who may write to a shared spark-events folder) swaps a rolling
    log's folder for a symlink to a copy outside the roots and back, over and over, while
    the server opens the folder, or one of its parts, 1,200 times."""
    _, root, outside = server
    inside = _rolling(root / "shared", "3.5.0")
    target = _rolling(outside, SECRET)
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(inside), str(target)])
    fds = _open_fds()
    escapes, opened, refused = [], 0, 0
    try:
        for i in range(1200):
            path = inside if i % 2 else inside / f"events_1_{APP}"
            try:
                src = open_on_server(str(path))
            except SourceError:
                refused += 1
                continue
            opened += 1
            if SECRET in " ".join([src.label, str(src.spark_version)] + src.warnings + src.notes):
                escapes.append(i)
    finally:
        swapper.kill()
        swapper.wait()
    assert opened > 50 and refused > 50, (opened, refused)  # the swap did race the opens
    assert escapes == [], f"{len(escapes)} of 1200 opens read the log outside the roots"
    assert _open_fds() <= fds + 2  # every descriptor of every open closed again


#: the attacker's loop: the real folder and the symlink take turns under the checked name (the
#: pauses make the turns about as long as a check and an open: 5% of the opens escaped before)
SWAPPER = """
import os, sys, time
inside, target = sys.argv[1:]
aside = inside + ".aside"
while True:
    os.rename(inside, aside)
    os.symlink(target, inside)
    time.sleep(0.0002)
    os.unlink(inside)
    os.rename(aside, inside)
    time.sleep(0.0005)
"""


def test_a_symlink_met_after_the_check_is_refused(server):
    """The swap landing between the check and the open: the walk from the root meets a link
    where the checked path had a folder and refuses it, whatever the link points at."""
    _, root, outside = server
    inside = _rolling(root / "shared", "3.5.0")
    checked = Roots([str(root)]).resolve(str(inside / f"events_1_{APP}"))
    assert checked is not None
    shutil.rmtree(inside)
    os.symlink(_rolling(outside, SECRET), inside)
    for path in (checked, str(inside)):
        with pytest.raises(EventLogError) as e:
            Confined(Roots([str(root)])).open(path)
        assert str(e.value) == OUTSIDE_ROOTS
    os.unlink(inside)
    os.symlink(root / "shared" / "elsewhere", inside)  # a link inside the roots is still no folder
    (root / "shared" / "elsewhere").mkdir()
    with pytest.raises(EventLogError, match="outside the folders"):
        Confined(Roots([str(root)])).open(str(inside))


def test_a_symlink_inside_a_root_pointing_outside_is_refused(server):
    _, root, outside = server
    (outside / "log").write_text(_log(SECRET))
    (root / "link").symlink_to(outside / "log")
    (root / "dirlink").symlink_to(outside)
    for p in (root / "link", root / "dirlink", root / "dirlink" / "log"):
        with pytest.raises(SourceError) as e:
            open_on_server(str(p))
        assert str(e.value) == OUTSIDE_ROOTS


# -- regular files only ----------------------------------------------------------------------


def test_a_fifo_in_a_root_is_refused_at_once(server):
    _, root, _ = server
    fifo = root / "events.fifo"
    os.mkfifo(fifo)
    got = _in_thread(lambda: open_on_server(str(fifo)))
    assert isinstance(got, SourceError), got  # not "blocked": no session thread waits for a writer
    assert "named pipe (FIFO)" in str(got) and "only regular files" in str(got)


def test_a_fifo_as_a_part_of_a_rolling_log_is_not_read(server):
    _, root, _ = server
    d = _rolling(root, "3.5.0")
    os.mkfifo(d / f"events_2_{APP}")
    got = _in_thread(lambda: open_on_server(str(d)))
    assert not isinstance(got, (BaseException, str)), got
    assert got.spark_version == "3.5.0"


def test_a_socket_in_a_root_is_refused(server):
    _, root, _ = server
    path = root / "s"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        with pytest.raises(SourceError, match="is a socket: only regular files and folders are read"):
            open_on_server(str(path))


def test_a_device_in_a_root_is_refused(server, monkeypatch):
    _, root, _ = server
    monkeypatch.setenv("AQE_LENS_ROOTS", os.pathsep.join([str(root), "/dev"]))
    for dev in ("/dev/zero", "/dev/null"):
        got = _in_thread(lambda: open_on_server(dev))
        assert isinstance(got, SourceError) and "is a device" in str(got), (dev, got)


# -- no listings -----------------------------------------------------------------------------


def test_no_message_lists_the_names_in_a_folder(server):
    home, root, _ = server
    rids = [save_view_state({"source": {"kind": "path", "path": f"/x/{i}"}, "query_id": "1"}) for i in range(3)]
    names = ["a-log", "b-log", "c-log"]
    for n in names:
        (root / n).write_text(_log("3.5.0"))
    lonely = root / "lonely"
    lonely.mkdir()
    (lonely / f"{SECRET}.bin").write_bytes(b"\x00\x01 not a log")
    for folder, hidden in ((home / "reports", rids), (root, names), (lonely, [SECRET])):
        with pytest.raises(SourceError) as e:
            open_on_server(str(folder))
        assert not any(h in str(e.value) for h in hidden), str(e.value)


# -- every layout still opens through the descriptors ----------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir()
                                        if p.name.startswith("eventlog_v2_") or p.suffix in (".zip", ".gz", ".lz4")))
def test_rolling_logs_and_archives_open_through_the_server_path(name, monkeypatch, tmp_path):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path))
    monkeypatch.setenv("AQE_LENS_ROOTS", str(FIXTURES))
    fds = _open_fds()
    src = open_on_server(str(FIXTURES / name))
    assert src.views or src.spark_version, (name, src.warnings)
    assert _open_fds() <= fds + 1


def test_a_part_linked_inside_the_roots_is_still_read(server):
    """A link inside a folder is checked and walked like a path: to a file in the roots it reads."""
    _, root, _ = server
    src = SAMPLES_DIR / "eventlogs" / "eventlog_v2_local-1795308995034"
    d = root / src.name
    d.mkdir()
    kept = root / "kept"
    kept.mkdir()
    for f in src.iterdir():
        (kept / f.name).write_bytes(f.read_bytes())
        (d / f.name).symlink_to(kept / f.name)
    out = open_on_server(str(d))
    assert out.views and not any("link outside" in w for w in out.warnings)


# -- the Fleet page's scan tables ------------------------------------------------------------


def _scan(where: Path, fmt: str) -> Path:
    import pandas as pd

    ex = pd.DataFrame({"file": ["a"], "execution_id": [1], "findings": [""], "error": [None],
                       "preset_changes": ["{}"], "wasted_task_ms": [5]})
    fi = pd.DataFrame({"file": ["a"], "execution_id": [1], "finding": ["skew"]})
    for name, df in (("executions", ex), ("findings", fi)):
        (where / name).mkdir(parents=True)
        if fmt == "csv":
            df.to_csv(where / name / "part-0.csv", index=False)
        else:
            df.to_parquet(where / name / "part-0.parquet")
    return where


def test_a_fleet_scan_is_read_by_descriptor_and_a_fifo_in_it_refused(server):
    from aqe_core.fleet.result import load_scan

    _, root, outside = server
    assert load_scan(str(_scan(root / "scan", "parquet"))).executions["wasted_task_ms"].tolist() == [5]
    scan = _scan(root / "csv", "csv")
    assert load_scan(str(scan)).findings["finding"].tolist() == ["skew"]
    os.mkfifo(scan / "findings" / "part-1.csv")
    got = _in_thread(lambda: load_scan(str(scan)))
    assert isinstance(got, SourceError) and "named pipe (FIFO)" in str(got), got
    os.unlink(scan / "findings" / "part-1.csv")
    shutil.rmtree(scan / "findings")
    os.symlink(_scan(outside / "scan", "csv") / "findings", scan / "findings")
    with pytest.raises(SourceError, match="outside the folders"):
        load_scan(str(scan))


def test_an_open_that_hangs_is_given_up(monkeypatch):
    """A stalled file system: the open is abandoned after OPEN_TIMEOUT_S with a message, and
    what it opens later is closed; later opens still work."""
    from aqe_core.readers.eventlog import opened

    monkeypatch.setattr(opened, "OPEN_TIMEOUT_S", 0.2)
    release, fds = threading.Event(), _open_fds()

    def stalled() -> int:
        release.wait()
        return os.open(os.devnull, os.O_RDONLY)
    with pytest.raises(EventLogError, match="took more than 0.2 s; given up"):
        opened._timed(stalled, "x", os.close)
    release.set()
    assert opened._timed(lambda: 7, "y") == 7
    assert _open_fds() <= fds + 1


def test_path_on_server_box_refuses_a_fifo_with_one_line(server):
    from streamlit.testing.v1 import AppTest

    from aqe_core.plain_text import md_text

    _, root, _ = server
    os.mkfifo(root / "pipe")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60)
    at.run()
    at.sidebar.radio(key="source_mode").set_value("Path on server").run()
    at.sidebar.text_input(key="server_path").set_value(str(root / "pipe")).run()
    at.sidebar.button(key="open_path").click().run()
    assert not at.exception
    msg = md_text("pipe is a named pipe (FIFO): only regular files and folders are read")
    assert any(msg in e.value for e in at.sidebar.error), [e.value for e in at.sidebar.error]


def test_a_folders_only_file_is_read_without_its_name_in_any_message(server):
    home, root, _ = server
    holder = root / "holder"
    holder.mkdir()
    hidden = "0123456789abcdef.json"
    (holder / hidden).write_text(_log("3.5.0") + '{"Event": "SparkListenerJobSt')  # a cut last line
    src = open_on_server(str(holder))
    assert src.spark_version == "3.5.0"
    text = " ".join([src.label, src.path] + src.warnings + src.notes)
    assert "the last line is cut" in text and hidden not in text, text
