"""Files on a shared server: Path on server confined to the roots, archives confined to their
folder, decoding bounded for every codec and for captures, uploads capped and kept under a
quota, and no message that echoes a file's bytes or lists a folder outside the roots."""
from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
import zstandard
from streamlit.testing.v1 import AppTest

from aqe_core.plain_text import md_text
from aqe_core.model._checks import CaptureFormatError
from aqe_core.readers.capture_file import load_capture
from aqe_core.api import EventLogError, LimitExceeded, Limits, load_event_log as load
from aqe_core.server_settings import SAMPLES_DIR
from aqe_core.share import UploadRefused, store_upload, upload_path
from aqe_core.opening import OUTSIDE_ROOTS, SourceError, load_source, open_on_server, resolve_in_roots
from tests.readers.test_eventlog_codecs import lz4_java, lzf_stored, snappy_java

REPO = Path(__file__).resolve().parents[2]
EVENTLOGS = SAMPLES_DIR / "eventlogs"
PLAIN_LOG = EVENTLOGS / "local-1795309249168"  # Spark 3.0.1, plain JSON lines
ZSTD_LOG = EVENTLOGS / "local-1795309160158.zstd"
CAPTURE = SAMPLES_DIR / "captures" / "4.3.0-sql_group_by.json.gz"
SECRET = "s3cr3t-TOKEN-4242"


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A server whose data directory and one configured root live under tmp_path; ``outside``
    is a folder no root covers, holding a file with a secret in it."""
    home, root, outside = tmp_path / "home", tmp_path / "root", tmp_path / "outside"
    for d in (home, root, outside):
        d.mkdir()
    monkeypatch.setenv("AQE_LENS_HOME", str(home))
    monkeypatch.setenv("AQE_LENS_ROOTS", str(root))
    (outside / "passwd").write_text(f"root:x:0:0:{SECRET}:/root:/bin/sh\n")
    (outside / "log").write_bytes(PLAIN_LOG.read_bytes())
    return home, root, outside


def refused(path) -> str:
    with pytest.raises(SourceError) as e:
        open_on_server(str(path))
    return str(e.value)


# -- Path on server ----------------------------------------------------------------------


def test_roots_are_samples_data_dir_and_configured(server):
    home, root, _ = server
    (root / "log").write_bytes(PLAIN_LOG.read_bytes())
    assert open_on_server(str(root / "log")).views
    assert open_on_server(str(PLAIN_LOG)).views
    assert resolve_in_roots(str(home)) == home.resolve()


def test_outside_path_is_refused_without_saying_whether_it_exists(server):
    _, root, outside = server
    messages = {refused(outside / "passwd"), refused(outside / "nope"), refused(outside),
                refused(root / ".." / "outside" / "log"), refused("/etc/passwd"), refused("/"), refused("")}
    assert messages == {OUTSIDE_ROOTS}
    assert SECRET not in OUTSIDE_ROOTS and "passwd" not in OUTSIDE_ROOTS


def test_symlink_out_of_a_root_is_resolved_before_the_check(server):
    _, root, outside = server
    (root / "link").symlink_to(outside / "log")
    (root / "dirlink").symlink_to(outside)
    assert refused(root / "link") == OUTSIDE_ROOTS
    assert refused(root / "dirlink") == OUTSIDE_ROOTS  # no listing of what is behind it
    assert refused(root / "dirlink" / "log") == OUTSIDE_ROOTS


def test_symlinked_part_of_a_rolling_dir_pointing_out_is_skipped(server, tmp_path):
    _, root, outside = server
    src = EVENTLOGS / "eventlog_v2_local-1795308995034"
    rolling = root / src.name
    rolling.mkdir()
    for f in src.iterdir():
        (rolling / f.name).write_bytes(f.read_bytes())
    (outside / "stolen").write_text(json.dumps({"Event": "SparkListenerLogStart", "Spark Version": SECRET}) + "\n")
    (rolling / "events_2_local-1795308995034").symlink_to(outside / "stolen")
    out = open_on_server(str(rolling))
    text = " ".join(out.warnings + out.notes + [out.label])
    assert "link outside the folders" in text
    assert SECRET not in text and out.spark_version != SECRET
    # the CLI (no roots) reads the user's own files, links included
    assert load(str(rolling)).application.spark_version == SECRET


def test_report_link_with_a_path_outside_the_roots_opens_nothing(server):
    _, _, outside = server
    from aqe_core.share import save_view_state

    rid = save_view_state({"source": {"kind": "path", "path": str(outside / "log")}, "query_id": "1"})
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.query_params["report"] = rid
    at.run()
    assert not at.exception
    assert at.session_state["source_path"] != str(outside / "log")
    assert any(md_text(OUTSIDE_ROOTS) in e.value for e in at.sidebar.error)


def test_path_on_server_box_refuses_outside_paths(server):
    _, _, outside = server
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    at.sidebar.radio(key="source_mode").set_value("Path on server").run()
    at.sidebar.text_input(key="server_path").set_value(str(outside / "passwd")).run()
    at.sidebar.button(key="open_path").click().run()
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert any(md_text(OUTSIDE_ROOTS) in e for e in errors) and not any(SECRET in e for e in errors)


# -- no file bytes, no listings in messages ------------------------------------------------


def test_messages_never_quote_a_file(server):
    _, root, _ = server
    (root / "notes.txt").write_text(f"{SECRET}\n" * 20)
    (root / "data.json").write_text("\n".join(json.dumps({"user": SECRET, "n": i}) for i in range(20)) + "\n")
    (root / "mixed").write_bytes(PLAIN_LOG.read_bytes()[:20000].rsplit(b"\n", 1)[0] + b"\n"
                                 + f'{{"Event": {SECRET}\n{SECRET}\n'.encode())
    msgs = []
    for name in ("notes.txt", "data.json", "mixed"):
        try:
            src = open_on_server(str(root / name))
            msgs += src.warnings + src.notes + [src.label]
        except SourceError as e:
            msgs.append(str(e))
    assert msgs and not any(SECRET in m for m in msgs), msgs
    assert any("not an event log" in m for m in msgs)


def test_a_folder_holding_several_logs_is_never_listed(server):
    _, root, outside = server
    (outside / "log2").write_bytes(PLAIN_LOG.read_bytes())
    assert refused(outside) == OUTSIDE_ROOTS
    for n in ("a-log", "b-log"):
        (root / n).write_bytes(b"{}\n")
    msg = refused(root)  # not even inside a root: a shared folder's names (report ids) are not for messages
    assert "2 event logs" in msg and "a-log" not in msg and "b-log" not in msg


# -- archives ------------------------------------------------------------------------------


def test_zip_members_outside_their_folder_are_never_read(tmp_path):
    lines = PLAIN_LOG.read_bytes()
    z = tmp_path / "evil.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("../x", lines)
        zf.writestr("/etc/y", lines)
        zf.writestr("a/../../z", lines)
        link = zipfile.ZipInfo("link")
        link.external_attr = 0o120777 << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr("app-1", lines)
    log = load(str(z))
    assert log.parts == [f"{z}:app-1"] and log.complete
    assert any("ignored 4 member(s)" in w for w in log.warnings)
    assert not (tmp_path.parent / "x").exists()
    only_evil = tmp_path / "only-evil.zip"
    with zipfile.ZipFile(only_evil, "w") as zf:
        zf.writestr("../x", lines)
    with pytest.raises(EventLogError, match="holds no event log"):
        load(str(only_evil))


def test_tar_links_and_dotdot_members_are_ignored(tmp_path):
    lines = PLAIN_LOG.read_bytes()
    t = tmp_path / "evil.tar.gz"
    with tarfile.open(t, "w:gz") as tf:
        for name in ("../x", "/abs"):
            info = tarfile.TarInfo(name)
            info.size = len(lines)
            tf.addfile(info, io.BytesIO(lines))
        sym = tarfile.TarInfo("eventlog_v2_app/events_1_app")
        sym.type, sym.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(sym)
        info = tarfile.TarInfo("app-1")
        info.size = len(lines)
        tf.addfile(info, io.BytesIO(lines))
    log = load(str(t))
    assert log.parts == [f"{t}:app-1"] and log.complete
    assert any("ignored 3 member(s)" in w for w in log.warnings)


def test_zip_announcing_too_many_entries_is_refused_before_reading_them(tmp_path):
    z = tmp_path / "many.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for i in range(50):
            zf.writestr(f"f{i}", b"")
    with pytest.raises(EventLogError, match="over the limit of 10"):
        load(str(z), limits=Limits(max_files=10))


# -- bombs and time ------------------------------------------------------------------------


def _repeat_gzip_members(first: bytes, filler: bytes, copies: int) -> bytes:
    """A multi-member gzip: decodes to ``copies`` x ``filler`` from a few hundred KB."""
    member = gzip.compress(filler, compresslevel=9, mtime=0)
    return gzip.compress(first, mtime=0) + member * copies


class CountingIO(io.BytesIO):
    def __init__(self, data: bytes):
        super().__init__(data)
        self.consumed = 0

    def read(self, n=-1):
        out = super().read(n)
        self.consumed += len(out)
        return out


def test_gzip_bomb_capture_is_cut_at_the_cap(tmp_path):
    head = b'{"format": "aqe-lens-capture", "format_version": 1, "spark": {"version": "4.3.0"}, "queries": ['
    bomb = _repeat_gzip_members(head, b" " * (16 << 20), 192)  # 3 GiB of JSON whitespace
    assert len(bomb) < 4 << 20
    fh = CountingIO(bomb)
    tracemalloc.start()
    try:
        with pytest.raises(CaptureFormatError, match="decompresses to more than 64 MiB"):
            load_capture(fh)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fh.consumed < len(bomb) // 2  # stopped early, not after decoding everything
    assert peak < 100 << 20  # memory bounded by the cap, not by the 3 GiB the file decodes to
    p = tmp_path / "bomb.json.gz"
    p.write_bytes(bomb)
    with pytest.raises(SourceError, match="cannot read this capture: this capture decompresses to more than 64 MiB"):
        load_source(str(p))
    with pytest.raises(CaptureFormatError, match="more than 1 MiB"):
        load_capture(str(p), max_bytes=1 << 20)


def _bomb_lz4(filler: bytes, blocks: int) -> bytes:
    one = lz4_java(filler, block=1 << 25, end_mark=False)
    return one * blocks


@pytest.mark.parametrize("kind", ["gzip", "zstd", "lz4"])
def test_event_log_bombs_stop_at_the_server_limit(server, kind, monkeypatch):
    _, root, _ = server
    monkeypatch.setenv("AQE_LENS_MAX_DECOMPRESSED_MB", "32")
    blanks = b" " * (16 << 20)  # looks like (empty) JSON lines to the sniffer: decoded, not refused
    if kind == "gzip":
        data = _repeat_gzip_members(b"", blanks, 256)  # 4 GiB
    elif kind == "zstd":
        data = zstandard.ZstdCompressor(level=3).compress(blanks) * 128
    else:
        data = _bomb_lz4(blanks, 128)
    p = root / f"bomb.{kind}"
    p.write_bytes(data)
    with pytest.raises(SourceError) as e:
        open_on_server(str(p))
    assert "decompresses to more than 32 MiB" in str(e.value) and "max_decompressed_mb" in str(e.value)
    read = []
    with pytest.raises(LimitExceeded):
        load(str(p), limits=Limits(max_decompressed_bytes=32 << 20), progress=lambda done, total: read.append(done))
    if kind != "zstd":  # zstd frames of zeros are a few bytes each: the whole file is one read
        assert read[-1] < len(data) // 2


LOG_LINES = PLAIN_LOG.read_bytes()


def _encode(kind: str, data: bytes, tmp_path: Path) -> Path:
    p = tmp_path / f"log-{kind}"
    if kind == "none":
        p.write_bytes(data)
    elif kind == "gzip":
        p.write_bytes(gzip.compress(data, compresslevel=1))
    elif kind == "zstd":
        p.write_bytes(zstandard.ZstdCompressor(level=1).compress(data))
    elif kind == "lz4":
        p.write_bytes(lz4_java(data))
    elif kind == "snappy":
        p.write_bytes(snappy_java(data))
    elif kind == "lzf":
        p.write_bytes(lzf_stored(data))
    elif kind in ("zip", "tar", "tar.gz"):
        p = tmp_path / f"log.{kind}"
        if kind == "zip":
            half = data.index(b"\n", len(data) // 2) + 1
            with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
                zf.writestr("eventlog_v2_app-1/events_1_app-1", data[:half])
                zf.writestr("eventlog_v2_app-1/events_2_app-1", data[half:])
        else:
            with tarfile.open(p, "w:gz" if kind == "tar.gz" else "w") as tf:
                info = tarfile.TarInfo("app-1")
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return p


@pytest.mark.parametrize("kind", ["none", "gzip", "zstd", "lz4", "snappy", "lzf", "zip", "tar", "tar.gz"])
def test_every_codec_and_container_counts_toward_the_size_limit(tmp_path, kind):
    data = LOG_LINES * 3  # ~3.7 MB of real events
    p = _encode(kind, data, tmp_path)
    full = load(str(p))
    assert full.complete and full.bytes_decoded >= len(data) - 1
    cut = load(str(p), limits=Limits(max_decompressed_bytes=2 << 20))
    assert cut.bytes_decoded <= (2 << 20) + (1 << 20) + (16 << 10)  # stopped within a chunk of the cap
    assert any("decompresses to more than 2 MiB" in w and "stopped reading" in w for w in cut.warnings)
    assert cut.bytes_decoded < full.bytes_decoded


@pytest.mark.parametrize("kind", ["lzf", "tar.gz"])
def test_slow_decoding_hits_the_time_cap(tmp_path, kind, monkeypatch):
    """A cap of a microsecond: the first check (after the first decoded chunk) stops the read."""
    data = bytes(LOG_LINES) * 3
    p = _encode(kind, data, tmp_path)
    t0 = time.thread_time()
    with pytest.raises(LimitExceeded, match="took more than 1e-06 s of CPU time"):
        load(str(p), limits=Limits(max_seconds=1e-6))
    assert time.thread_time() - t0 < 5  # stopped at the first check, not after the whole log
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path))
    monkeypatch.setenv("AQE_LENS_MAX_DECOMPRESS_S", "0.000001")
    with pytest.raises(SourceError, match="max_decompress_s"):
        open_on_server(str(p))


# -- uploads ---------------------------------------------------------------------------------


def test_upload_size_cap(server, monkeypatch):
    monkeypatch.setenv("AQE_LENS_MAX_UPLOAD_MB", "1")
    with pytest.raises(UploadRefused, match="up to 1 MiB"):
        store_upload("big.zstd", b"x" * ((1 << 20) + 1))
    digest = store_upload("ok.zstd", b"x" * 1000)
    assert upload_path(digest).read_bytes() == b"x" * 1000


def test_upload_quota_removes_the_oldest_first(server):
    home, _, _ = server
    digests = []
    for i in range(3):
        digests.append(store_upload(f"log{i}", bytes([i]) * 400, quota_bytes=1000))
        p = upload_path(digests[-1])
        os.utime(p, (1_000_000 + i, 1_000_000 + i))  # distinct, ordered mtimes
    assert upload_path(digests[0]) is None  # 3 x 400 > 1000: the oldest went
    assert upload_path(digests[1]) is not None and upload_path(digests[2]) is not None
    # storing an upload again makes it the newest; the next one evicts the other
    store_upload("log1", bytes([1]) * 400, quota_bytes=1000)
    d3 = store_upload("log3", bytes([3]) * 400, quota_bytes=1000)
    assert upload_path(digests[1]) is not None and upload_path(digests[2]) is None and upload_path(d3) is not None
    kept = sum(f.stat().st_size for f in (home / "uploads").rglob("*") if f.is_file() and not f.name.startswith("."))
    assert kept <= 1000
    assert not [f for f in (home / "uploads").rglob("*.tmp")]


def test_upload_names_stay_in_their_folder(server):
    home, _, _ = server
    for name in ("../../evil", "..", ".", "/etc/passwd", "a\\..\\b", ""):
        p = upload_path(store_upload(name, name.encode() + b"!"))
        assert p is not None and p.parent.parent == home / "uploads" and not p.name.startswith(".")


def test_upload_over_the_cap_in_the_app_is_an_error_not_a_crash(server, monkeypatch):
    monkeypatch.setenv("AQE_LENS_MAX_UPLOAD_MB", "0.001")
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    at.sidebar.radio(key="source_mode").set_value("Upload").run()
    at.sidebar.file_uploader(key="upload").upload("big.log", b"{}\n" * 2000, "application/octet-stream").run()
    assert not at.exception
    assert any("upload limit" in e.value or "accepts uploads up to" in e.value for e in at.sidebar.error)


# -- bad conf values are notes ---------------------------------------------------------------


def test_bad_conf_values_in_a_log_give_notes(tmp_path):
    lines = LOG_LINES.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if b"SparkListenerEnvironmentUpdate" in ln) + 1
    env = json.dumps({"Event": "SparkListenerEnvironmentUpdate", "Spark Properties": {
        "spark.sql.adaptive.enabled": "maybe", "spark.sql.adaptive.advisoryPartitionSizeInBytes": "12x",
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "1e999"}}).encode() + b"\n"
    p = tmp_path / "badconf"
    p.write_bytes(b"".join(lines[:at]) + env + b"".join(lines[at:]))
    src = load_source(str(p))
    assert src.views
    warned = " ".join(src.views[0].warnings)
    for key in ("adaptive.enabled = 'maybe'", "advisoryPartitionSizeInBytes = '12x'", "skewedPartitionFactor = '1e999'"):
        assert key in warned
    assert "the default is used" in warned


def test_bad_conf_values_in_a_capture_give_notes(tmp_path):
    doc = json.loads(gzip.decompress(CAPTURE.read_bytes()))
    doc["queries"][0]["conf"]["spark.sql.adaptive.enabled"] = "maybe"
    doc["queries"][0]["conf"]["spark.sql.adaptive.advisoryPartitionSizeInBytes"] = "12x"
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    src = load_source(str(p))
    warned = " ".join(src.views[0].warnings)
    assert "adaptive.enabled = 'maybe'" in warned and "'12x'" in warned


def test_gzip_member_ending_on_a_chunk_boundary_does_not_hang():
    """zlib leaves input in unconsumed_tail when a member ends exactly at the output bound;
    the decoder must move on to the next member (it used to spin forever)."""
    from aqe_core.readers.eventlog import codecs

    member = gzip.compress(b"x" * codecs.CHUNK * 2, mtime=0)
    data = member * 3
    out = b"".join(codecs.decode("gzip", codecs.CountingReader(io.BytesIO(data))))
    assert out == b"x" * codecs.CHUNK * 6


def test_a_folder_whose_only_log_links_outside_is_refused(server):
    _, root, outside = server
    target = outside / "eventlog_v2_local-1"
    target.mkdir()
    (target / "events_1_local-1").write_text(json.dumps({"Event": "SparkListenerLogStart", "Spark Version": SECRET}) + "\n")
    holder = root / "holder"
    holder.mkdir()
    (holder / "eventlog_v2_local-1").symlink_to(target)
    msg = refused(holder)
    assert "outside the folders this server may open" in msg and SECRET not in msg
