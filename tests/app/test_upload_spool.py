"""Uploads on disk, inside the upload quota (issue 37, requirement 3), in process: the spool
folder, the quota that counts spooled and kept uploads together (a spooled file that became the
kept upload counted once), the manager's id discipline and clean-up, and the file object
``st.file_uploader`` returns, which reads the spooled file and never holds its bytes.
The server's HTTP side is in test_upload_endpoint.py."""
from __future__ import annotations

import copy
import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from aqe_core import share
from aqe_core.share import UploadRefused, keep_spooled_upload, reserve_upload_space, spool_folder, store_upload, upload_path
from ui.upload_spool import (
    MAX_UNUSED_IDS, MAX_URLS_PER_REQUEST, Spooled, SpooledRec, SpooledUploadedFile, SpoolingUploadedFileManager,
    UploadDenied, keep_upload,
)

MiB = 1 << 20


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _spool(session: str, file_id: str, data: bytes) -> Spooled:
    folder = spool_folder() / session
    folder.mkdir(mode=0o700, exist_ok=True)
    (folder / file_id).write_bytes(data)
    return Spooled(file_id, "log.json", "application/json", folder / file_id, len(data), hashlib.sha256(data).hexdigest())


def _received(mgr: SpoolingUploadedFileManager, session: str, data: bytes) -> Spooled:
    """An upload as the endpoint records it: an id handed out, claimed, written, finished."""
    [info] = mgr.get_upload_urls(session, ["log.json"])
    mgr.begin(session, info.file_id)
    spooled = _spool(session, info.file_id, data)
    mgr.finish(session, spooled)
    return spooled


SESSION = "0b2f6a1e-8c1d-4d59-9a35-1f0e7c1b2a3d"
OTHER = "7c4e2b9a-1d3f-4a6b-8e5c-2f9d0a1b3c4e"


def test_the_spool_folder_is_private_and_per_process(home):
    mine = spool_folder()
    assert mine.parent == home / share.SPOOL_DIR and mine.name.startswith(f"{os.getpid()}-")
    for d in (mine.parent, mine):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert spool_folder() == mine  # once per process


def test_a_dead_servers_spool_goes_a_live_ones_stays(home):
    spool_folder()
    base = home / share.SPOOL_DIR
    dead = base / "999999-dead"
    (dead / SESSION).mkdir(parents=True)
    (dead / ".alive").touch()
    (dead / SESSION / "x").write_bytes(b"left by a killed server")
    (base / "1-live").mkdir()  # another server process on this data directory, alive
    live = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a+b'); "
                             "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
                             str(base / "1-live" / ".alive")], stdout=subprocess.PIPE, text=True)
    try:
        assert live.stdout.readline().strip() == "locked"
        removed = share.remove_dead_spools(base)
        assert removed == [dead] and not dead.exists() and (base / "1-live").is_dir() and spool_folder().is_dir()
    finally:
        live.kill()
        live.wait()


def test_a_spooled_upload_becomes_the_kept_one_without_a_copy(home):
    data = b'{"Event":"SparkListenerLogStart"}\n' * 1000
    spooled = _spool(SESSION, "f1", data)
    digest = keep_spooled_upload("my log.json", spooled.path, spooled.digest)
    kept = upload_path(digest)
    assert kept.read_bytes() == data and kept.name == "my_log.json"
    assert os.path.samefile(kept, spooled.path)  # one file, two names
    assert keep_spooled_upload("again.json", spooled.path, spooled.digest) == digest  # kept once
    spooled.path.unlink()  # the session ended: the kept upload stays for shared links
    assert upload_path(digest).read_bytes() == data


def test_spooled_and_kept_uploads_share_the_quota(home):
    old = store_upload("old.log", b"o" * (4 * MiB), quota_bytes=10 * MiB)
    os.utime(upload_path(old), (1_000_000, 1_000_000))
    a = _spool(SESSION, "a", b"a" * (3 * MiB))
    keep_spooled_upload("a.log", a.path, a.digest, quota_bytes=10 * MiB)  # counted once: 7 MiB in all
    reserve_upload_space(3 * MiB, quota_bytes=10 * MiB)  # 10: fits, nothing removed
    assert upload_path(old) is not None
    reserve_upload_space(4 * MiB, quota_bytes=10 * MiB)  # the oldest kept upload makes room
    assert upload_path(old) is None
    _spool(SESSION, "b", b"b" * (6 * MiB))
    with pytest.raises(UploadRefused, match="upload_quota_mb") as refused:  # a's kept copy is a's spool: not freed
        reserve_upload_space(2 * MiB, quota_bytes=10 * MiB)
    assert "\n" not in str(refused.value)
    with pytest.raises(UploadRefused, match="more than the server keeps"):
        reserve_upload_space(11 * MiB, quota_bytes=10 * MiB)
    with pytest.raises(UploadRefused, match="upload_quota_mb"):  # an in-memory store counts spooled files too
        store_upload("c.log", b"c" * (2 * MiB), quota_bytes=10 * MiB)
    assert not list((home / "uploads").glob(".incoming*"))


def test_the_uploaded_file_reads_the_spool_and_holds_no_bytes(home):
    data = b"line one\nline two\n" * 50_000
    rec = SpooledRec.of(_spool(SESSION, "f", data))
    up = SpooledUploadedFile(rec, None)
    assert up.size == len(data) and up.name == "log.json" and up.file_id == "f"
    assert super(SpooledUploadedFile, up).getvalue() == b""  # the BytesIO underneath holds nothing
    assert up.read(9) == b"line one\n" and up.readline() == b"line two\n" and up.tell() == 18
    up.seek(0)
    assert hashlib.file_digest(up, "sha256").hexdigest() == rec.spool.digest
    assert next(iter(copy.deepcopy(up))) == b"line one\n"  # Streamlit deep-copies widget values
    assert copy.deepcopy(up).spool_path == up.spool_path
    with pytest.raises(OSError):
        up.write(b"x")
    up.close()
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    plain = SpooledUploadedFile(UploadedFileRec("g", "m.json", "t", b"abc"), None)
    assert type(plain) is UploadedFile and plain.getvalue() == b"abc"  # not spooled: Streamlit's own


def test_keep_upload_takes_either_kind(home):
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    spooled = SpooledUploadedFile(SpooledRec.of(_spool(SESSION, "f", b"spooled\n")), None)
    in_memory = UploadedFile(UploadedFileRec("g", "m.json", "t", b"in memory\n"), None)
    assert upload_path(keep_upload(spooled)).read_bytes() == b"spooled\n"
    assert upload_path(keep_upload(in_memory)).read_bytes() == b"in memory\n"
    spooled.spool_path.unlink()
    other = SpooledUploadedFile(SpooledRec.of(Spooled("h", "n", "t", spooled.spool_path, 3, "ab" * 32)), None)
    with pytest.raises(UploadRefused, match="upload it again"):  # gone meanwhile: one line, no traceback
        keep_upload(other)


def test_only_ids_handed_out_to_the_session_are_taken(home):
    mgr = SpoolingUploadedFileManager("/_stcore/upload_file")
    with pytest.raises(UploadDenied) as made_up:
        mgr.begin(SESSION, "11111111-2222-4333-8444-555555555555")
    assert made_up.value.status == 404
    [info] = mgr.get_upload_urls(SESSION, ["a"])
    assert info.upload_url == f"/_stcore/upload_file/{SESSION}/{info.file_id}"
    with pytest.raises(UploadDenied):
        mgr.begin(OTHER, info.file_id)  # another session's id
    mgr.begin(SESSION, info.file_id)
    with pytest.raises(UploadDenied) as twice:
        mgr.begin(SESSION, info.file_id)  # being received
    assert twice.value.status == 409
    mgr.abort(SESSION, info.file_id)  # a PUT that failed: the id may be used again
    mgr.begin(SESSION, info.file_id)
    assert len(mgr.get_upload_urls(SESSION, ["x"] * 1000)) == MAX_URLS_PER_REQUEST
    for _ in range(10):
        mgr.get_upload_urls(SESSION, ["x"] * MAX_URLS_PER_REQUEST)
    assert len(mgr._ids[SESSION]) == MAX_UNUSED_IDS + 1  # unused ids are bounded; the one received stays


def test_files_go_with_the_widget_the_source_and_the_session(home):
    mgr = SpoolingUploadedFileManager("/_stcore/upload_file")
    a, b, c = (_received(mgr, SESSION, bytes([i]) * 100) for i in range(3))
    [rec] = mgr.get_files(SESSION, [a.file_id])
    assert isinstance(rec, SpooledRec) and rec.data == b"" and rec.spool == a
    mgr.remove_file(SESSION, a.file_id)  # deleted in the widget
    assert not a.path.exists() and mgr.get_files(SESSION, [a.file_id]) == []
    mgr.keep_only(SESSION, c.file_id)  # c replaced the source
    assert not b.path.exists() and c.path.exists()
    other = _received(mgr, OTHER, b"other session")
    mgr.remove_session_files(SESSION)  # Streamlit shut the session down
    assert not (spool_folder() / SESSION).exists() and other.path.exists()
    assert mgr.sweep(lambda s: False) == [OTHER]  # expired while disconnected: Streamlit says nothing
    assert not (spool_folder() / OTHER).exists()
    late = _spool(SESSION, "late", b"x")  # a folder no session of this manager owns
    mgr.sweep(lambda s: False)
    assert not late.path.exists()


def test_a_put_finished_after_its_session_ended_is_not_kept(home):
    mgr = SpoolingUploadedFileManager("/_stcore/upload_file")
    [info] = mgr.get_upload_urls(SESSION, ["a"])
    mgr.begin(SESSION, info.file_id)
    mgr.remove_session_files(SESSION)
    spooled = _spool(SESSION, info.file_id, b"late")
    mgr.finish(SESSION, spooled)
    assert not spooled.path.exists() and mgr.held(SESSION) == []


def test_a_refusal_is_told_once_to_its_own_session(home):
    mgr = SpoolingUploadedFileManager("/_stcore/upload_file")
    mgr.note_refusal(SESSION, "made up")  # no id handed out: not this server's session
    assert mgr.take_refusal(SESSION) is None
    mgr.get_upload_urls(SESSION, ["a"])
    mgr.note_refusal(SESSION, "over the quota")
    assert mgr.take_refusal(OTHER) is None
    assert mgr.take_refusal(SESSION) == "over the quota" and mgr.take_refusal(SESSION) is None
