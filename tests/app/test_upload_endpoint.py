"""Uploads against the real ``streamlit run app.py`` (issue 37, requirement 3): the attack of the
issue (twelve 190 MB PUTs to made-up file ids) refused with nothing written or held; a real
upload through the app's own protocol spooled to a private file, kept without a copy, counted in
the upload quota with the kept uploads, and removed when the widget deletes it, when another
upload replaces it and when its session ends. Every refusal is one line with a 4xx status."""
from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import time
import uuid
from pathlib import Path

import pytest

from tests.lens_browser import running_app
from tests.lens_session import BOUNDARY, XSRF, LensSession, multipart, request

pytestmark = pytest.mark.slow
MiB = 1 << 20
MAX_MB, QUOTA_MB = 4, 10
OLD_KEPT = b"k" * (4 * MiB)


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    env = {"AQE_LENS_MAX_UPLOAD_MB": str(MAX_MB), "AQE_LENS_UPLOAD_QUOTA_MB": str(QUOTA_MB),
           "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "1"}  # a closed session ends a second later
    with running_app(home, tmp_path_factory.mktemp("st") / "streamlit.log", env=env) as app:
        yield app


def _spooled(lens) -> list[Path]:
    return sorted(p for p in (lens.home / "upload-spool").rglob("*") if p.is_file() and p.name != ".alive")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _cut_short(port: int, path: str, body: bytes) -> None:
    """A PUT whose connection closes after a tenth of its body."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        head = (f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Xsrftoken: {XSRF['X-Xsrftoken']}\r\n"
                f"Cookie: {XSRF['Cookie']}\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        sock.sendall(head.encode() + body[: len(body) // 10])
        time.sleep(0.3)


def _one_line(status: int, text: str, code: int, *words: str) -> None:
    assert status == code, (status, text)
    assert text.endswith("\n") and text.count("\n") == 1 and "Traceback" not in text, text
    for w in words:
        assert w in text, (w, text)


def test_made_up_file_ids_are_refused_nothing_written_nothing_held(lens):
    before = _rss_mb(lens.pid)
    with LensSession(lens.port) as s:
        real = s.upload_urls()[0].session_id
        for i in range(12):  # the attack: 12 x 190 MB PUT straight to the upload URL
            session = real if i % 2 else str(uuid.uuid4())
            status, text = request(lens.port, "PUT", f"/_stcore/upload_file/{session}/{uuid.uuid4()}",
                                   length=190 * MiB, chunks=(b"x" * MiB for _ in range(190)))
            if session == real:
                _one_line(status, text, 404, "unknown upload id")
            else:
                _one_line(status, text, 400, "no such session")
        assert _spooled(lens) == []
    assert _rss_mb(lens.pid) - before < 30, (before, _rss_mb(lens.pid))


def test_an_upload_is_spooled_to_a_private_file_and_kept_without_a_copy(lens):
    data = os.urandom(3 * MiB)
    with LensSession(lens.port) as s:
        s.run()
        s.set_choice("source_mode", "Upload")
        s.run()
        up = s.upload_urls()[0]
        assert s.put(up, data, "my job.log") == (204, "")
        [path] = _spooled(lens)
        assert path.read_bytes() == data and path.name == up.file_id and path.parent.name == up.session_id
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert all(stat.S_IMODE(d.stat().st_mode) == 0o700 for d in (path.parent, path.parent.parent,
                                                                    path.parent.parent.parent))
        _one_line(*s.put(up, b"again"), 409, "used already")
        s.choose_file("upload", up)
        texts = s.run()
        assert "**In use:** my job\\.log" in texts, texts
        kept = lens.home / "uploads" / hashlib.sha256(data).hexdigest() / "my_job.log"
        assert os.path.samefile(kept, path)  # the spooled file is the kept upload: no second copy
        assert request(lens.port, "DELETE", up.url, headers=XSRF) == (204, "")  # removed in the widget
        assert _spooled(lens) == [] and kept.read_bytes() == data  # kept for shared links


def test_a_new_upload_replaces_the_old_and_a_session_takes_its_files_along(lens):
    with LensSession(lens.port) as s:
        s.run()
        s.set_choice("source_mode", "Upload")
        s.run()
        first, second = s.upload_urls(), s.upload_urls()
        assert s.put(first[0], b'{"Event":"a"}\n', "a.json") == (204, "")
        s.choose_file("upload", first[0])
        s.run()
        assert s.put(second[0], b'{"Event":"b"}\n', "b.json") == (204, "")
        s.choose_file("upload", second[0])
        assert "**In use:** b\\.json" in s.run()
        [left] = _spooled(lens)
        assert left.name == second[0].file_id  # the replaced upload's file went
    deadline = time.time() + 10  # closed: Streamlit keeps the session 1 s for a reconnect, then it ends
    while _spooled(lens) and time.time() < deadline:
        time.sleep(0.2)
    assert _spooled(lens) == [] and not (left.parent).exists()


def test_the_limit_is_the_servers_setting_and_checked_as_the_body_streams(lens):
    with LensSession(lens.port) as s:
        up = s.upload_urls()[0]
        _one_line(*request(lens.port, "PUT", up.url, length=(MAX_MB + 1) * MiB,
                           chunks=(b"x" * MiB for _ in range(MAX_MB + 1))), 413, "max_upload_mb")
        big = multipart(b"x" * (MAX_MB * MiB + 1))
        _one_line(*request(lens.port, "PUT", up.url, big[: 64 * 1024], length=len(big), chunks=(big[64 * 1024:],)),
                  413, "max_upload_mb")
        # no Content-Length (chunked): stopped once the body passes the limit
        chunked = (b"%x\r\n%s\r\n" % (len(c), c) for c in (big[i:i + MiB] for i in range(0, len(big), MiB)))
        headers = {**XSRF, "Content-Type": f"multipart/form-data; boundary={BOUNDARY}", "Transfer-Encoding": "chunked"}
        _one_line(*request(lens.port, "PUT", up.url, headers=headers, chunks=chunked), 413, "max_upload_mb")
        assert _spooled(lens) == []
        assert s.put(up, b"x" * (MAX_MB * MiB)) == (204, "")  # exactly the limit: taken, on the same id
        assert request(lens.port, "DELETE", up.url, headers=XSRF) == (204, "")


def test_bad_requests_get_one_line_and_leave_nothing(lens):
    with LensSession(lens.port) as s:
        up = s.upload_urls()[0]
        _one_line(*request(lens.port, "PUT", up.url, multipart(b"x"),
                           headers={"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}), 403, "XSRF")
        _one_line(*request(lens.port, "PUT", up.url, b"x", headers={**XSRF, "Content-Type": "text/plain"}),
                  400, "multipart")
        two = "".join(f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{n}\"; filename=\"{n}\"\r\n\r\n{n}\r\n"
                      for n in "ab").encode() + f"--{BOUNDARY}--\r\n".encode()
        _one_line(*request(lens.port, "PUT", up.url, two), 400, "one file")
        _one_line(*request(lens.port, "PUT", up.url, b"--nope\r\n\r\n\x00\xff" * 100), 400, "one file")
        _cut_short(lens.port, up.url, multipart(b"x" * MiB))  # the browser tab closed mid-upload
        deadline = time.time() + 5
        while _spooled(lens) and time.time() < deadline:
            time.sleep(0.1)
        assert _spooled(lens) == []
        assert s.put(up, b"fine") == (204, "")  # the id survived the failed attempts
        assert request(lens.port, "DELETE", up.url, headers=XSRF) == (204, "")


def test_spooled_uploads_count_in_the_quota_with_the_kept_ones(lens):
    for d in (lens.home / "uploads").glob("?" * 64):  # what the tests above kept
        shutil.rmtree(d)
    old = lens.home / "uploads" / hashlib.sha256(OLD_KEPT).hexdigest()
    old.mkdir()  # an upload kept from before (a shared link's), 4 MiB, the oldest; the quota is 10 MiB
    (old / "old.log").write_bytes(OLD_KEPT)
    os.utime(old / "old.log", (1_000_000, 1_000_000))
    part = int(3.9 * MiB)
    with LensSession(lens.port) as s:
        s.run()
        s.set_choice("source_mode", "Upload")
        s.run()
        a, b, c, d = s.upload_urls(4)
        assert s.put(a, b"a" * part) == (204, "")  # 4 + 3.9
        assert old.is_dir()
        assert s.put(b, b"b" * part) == (204, "")  # 4 + 7.8: the old kept upload made room
        assert not old.exists()
        _one_line(*s.put(c, b"c" * (3 * MiB)), 413, "upload_quota_mb")  # 7.8 + 3 > 10: both are open
        # the browser's widget only shows the status: the page runs again and says why
        assert any(t.startswith("Upload refused: the server's space for uploads") for t in s.finished_run())
        assert len(_spooled(lens)) == 2
        assert request(lens.port, "DELETE", a.url, headers=XSRF) == (204, "")
        assert s.put(d, b"d" * (3 * MiB)) == (204, "")  # room again
        for up in (b, d):
            request(lens.port, "DELETE", up.url, headers=XSRF)
    assert _spooled(lens) == []
