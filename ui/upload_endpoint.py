"""The upload endpoint, in front of Streamlit's: a file goes to disk as it arrives.

Streamlit's handler for ``PUT /_stcore/upload_file/<session>/<file id>`` reads the whole body
into memory and keeps it for the session's life, under any file id a client makes up.
:class:`UploadEndpoint` (an ASGI middleware :class:`ui.host_guard.HostGuard` wraps around the
app, so it sits behind the host check) answers those PUTs and DELETEs itself:

* the XSRF token, the session and the file id are checked first: an id this server did not
  hand out to that session through the page's file-URLs request gets ``404`` and nothing is
  read or written;
* ``Content-Length`` over ``max_upload_mb`` gets ``413`` before the body is read; then room in
  ``upload_quota_mb`` (kept and spooled uploads together) is reserved, or ``413`` with the reason;
* the multipart body is parsed as it streams in; the file's bytes go, a MiB at a time, to a
  ``0600`` file in the session's spool folder and are hashed on the way, so no more than a MiB
  of an upload is ever in memory; a body that grows past the limit stops at once and its
  partial file is removed;
* a body that sends nothing for a minute is dropped (it would hold its room in the quota);
* every refusal is one line of text with a 4xx status; nothing raises into the server's log.
  What is left of a refused body is read and dropped for up to ``LINGER_S`` before the answer
  and the close: a server that closes with unread bytes resets the connection, and the client
  may lose the answer it was sent (the lingering close of RFC 9112, section 9.6).
  The browser's widget shows only the status, so a refusal of a session's own upload also
  reruns that session's page, whose uploader says why (:func:`ui.upload_spool.upload_refusal`).

It also installs :class:`ui.upload_spool.SpoolingUploadedFileManager` into the runtime and
sweeps the files of sessions that ended every few seconds.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional

from aqe_core.server_settings import SettingsError, server_settings
from aqe_core.share import UploadRefused, reserve_upload_space

_LOG = logging.getLogger(__name__)
UPLOAD_PATH = re.compile(r"(?P<base>.*)/_stcore/upload_file/(?P<session>[^/]+)/(?P<file>[^/]+)")
#: multipart framing around the file (boundaries, part headers, the file name) and the other
#: fields a body may carry, at most
FRAMING_BYTES = 64 * 1024
MAX_PARTS = 8
#: bytes gathered before a write to the spooled file (off the event loop)
FLUSH_BYTES = 1 << 20
#: seconds a request body may send nothing before the upload is dropped
BODY_IDLE_S = 60.0
#: how often the files of ended sessions are looked for
SWEEP_S = 2.0
#: seconds the rest of a refused body is read and dropped, so the refusal reaches the client
LINGER_S = 2.0

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _ClientGone(Exception):
    """The browser closed the request before its body was sent."""


async def _reply(send: Send, status: int, text: str = "") -> None:
    body = (text + "\n").encode() if text else b""
    headers = [(b"content-length", str(len(body)).encode())]
    if body:  # a refusal: the connection closes, the rest of the body is not read
        headers += [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Reading:
    """``receive`` that remembers whether the request's body has ended."""

    def __init__(self, receive: Receive) -> None:
        self.receive, self.ended = receive, False

    async def __call__(self) -> dict[str, Any]:
        message = await self.receive()
        self.ended = message["type"] != "http.request" or not message.get("more_body", False)
        return message

    async def drain(self) -> None:
        """The rest of the body read and dropped, for at most ``LINGER_S``."""
        loop = asyncio.get_running_loop()
        end = loop.time() + LINGER_S
        while not self.ended and (left := end - loop.time()) > 0:
            try:
                await asyncio.wait_for(self(), left)
            except asyncio.TimeoutError:
                return


def _header(scope: dict[str, Any], name: bytes) -> Optional[str]:
    for k, v in scope.get("headers", ()):
        if k.lower() == name:
            return v.decode("latin-1")
    return None


def _xsrf_ok(scope: dict[str, Any]) -> bool:
    """Streamlit's double-submit check of its own upload handler: the ``X-Xsrftoken`` header
    matches the ``_streamlit_xsrf`` cookie (when XSRF protection is on)."""
    from http.cookies import SimpleCookie

    from streamlit.web.server.server_util import is_xsrf_enabled
    from streamlit.web.server.starlette.starlette_app_utils import validate_xsrf_token
    from streamlit.web.server.starlette.starlette_server_config import XSRF_COOKIE_NAME

    if not is_xsrf_enabled():
        return True
    cookies: SimpleCookie = SimpleCookie()
    try:
        cookies.load(_header(scope, b"cookie") or "")
    except Exception:  # noqa: BLE001 - a cookie header that does not parse holds no token
        return False
    cookie = cookies.get(XSRF_COOKIE_NAME)
    return validate_xsrf_token(_header(scope, b"x-xsrftoken"), cookie.value if cookie else None)


def _base_path() -> str:
    from streamlit import config

    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


@dataclass
class _Body:
    """What the multipart parser found so far (its callbacks fill it)."""

    buf: bytearray = field(default_factory=bytearray)
    file_bytes: int = 0
    other_bytes: int = 0
    parts: int = 0
    files: int = 0
    in_file: bool = False
    name: str = ""
    type: str = "application/octet-stream"
    headers: dict[bytes, bytes] = field(default_factory=dict)
    field_name: bytes = b""
    value: bytes = b""


def _parser(boundary: bytes, body: _Body, limit: int) -> Any:
    from python_multipart.multipart import MultipartParser, parse_options_header

    def part_begin() -> None:
        body.parts += 1
        if body.parts > MAX_PARTS:
            raise _Refused(400, "expected one file in a multipart/form-data body")
        body.headers, body.in_file = {}, False

    def header_field(data: bytes, start: int, end: int) -> None:
        body.field_name += data[start:end]

    def header_value(data: bytes, start: int, end: int) -> None:
        body.value += data[start:end]

    def header_end() -> None:
        body.headers[body.field_name.strip().lower()] = body.value.strip()
        body.field_name, body.value = b"", b""

    def headers_finished() -> None:
        _, options = parse_options_header(body.headers.get(b"content-disposition", b""))
        if b"filename" not in options:
            return
        body.files += 1
        if body.files > 1:
            raise _Refused(400, "expected one file in a multipart/form-data body")
        body.in_file = True
        raw = options[b"filename"]
        body.name = raw.decode("utf-8", "replace").replace("\x00", "")[:255]
        body.type = body.headers.get(b"content-type", b"").decode("latin-1")[:255] or body.type

    def part_data(data: bytes, start: int, end: int) -> None:
        if body.in_file:
            body.file_bytes += end - start
            if body.file_bytes > limit:
                raise _Refused(413, _too_big())
            body.buf += data[start:end]
        else:
            body.other_bytes += end - start
            if body.other_bytes > FRAMING_BYTES:
                raise _Refused(400, "expected one file in a multipart/form-data body")

    callbacks = {"on_part_begin": part_begin, "on_header_field": header_field, "on_header_value": header_value,
                 "on_header_end": header_end, "on_headers_finished": headers_finished, "on_part_data": part_data}
    return MultipartParser(boundary, callbacks)


def _too_big() -> str:
    return f"this file is over the server's upload limit of {server_settings().max_upload_mb:g} MB (max_upload_mb)"


def _boundary(scope: dict[str, Any]) -> bytes:
    from python_multipart.multipart import parse_options_header

    kind, options = parse_options_header(_header(scope, b"content-type") or "")
    boundary = options.get(b"boundary", b"")
    if kind != b"multipart/form-data" or not boundary or len(boundary) > 200:
        raise _Refused(400, "expected one file in a multipart/form-data body")
    return boundary


def _content_length(scope: dict[str, Any], limit: int) -> Optional[int]:
    text = _header(scope, b"content-length")
    if text is None:
        return None
    if not text.strip().isdigit():
        raise _Refused(400, "Content-Length is not a number")
    length = int(text)
    if length > limit + FRAMING_BYTES:
        raise _Refused(413, _too_big())
    return length


class _Spool:
    """The spooled file being written: its bytes hashed on the way, removed unless finished."""

    def __init__(self, folder: Path, file_id: str) -> None:
        self.part = folder / f"{file_id}.part"
        self.path = folder / file_id
        self.sha = hashlib.sha256()
        self.fh = os.fdopen(os.open(self.part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")

    def write(self, data: bytearray) -> None:
        self.sha.update(data)
        self.fh.write(data)

    def finish(self) -> None:
        self.fh.close()
        os.replace(self.part, self.path)

    def discard(self) -> None:
        self.fh.close()
        self.part.unlink(missing_ok=True)


class UploadEndpoint:
    """ASGI middleware answering Streamlit's upload URLs (see the module docstring)."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app
        self.manager: Any = None  # ui.upload_spool.SpoolingUploadedFileManager, once installed
        self.broken: Optional[str] = None  # why uploads are refused, when the manager is not in
        self._inflight: dict[int, list[int]] = {}  # id(request): [bytes reserved, bytes written]
        self._sweeper: Optional[asyncio.Task[None]] = None
        self._install()

    def _install(self) -> None:
        """The spooling manager into the runtime, once it exists (Streamlit makes it before this
        middleware). Tried once: a Streamlit that keeps its manager elsewhere leaves uploads off."""
        from streamlit.runtime import Runtime

        if self.manager is not None or self.broken is not None or not Runtime.exists():
            return
        from ui.upload_spool import install

        try:
            self.manager = install(Runtime.instance())
        except (RuntimeError, OSError, ImportError) as exc:
            self.broken = f"uploads are off on this server: {exc}"
            _LOG.error("%s", self.broken)

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if self._sweeper is None and scope.get("type") in ("http", "websocket", "lifespan"):
            self._install()
            if self.manager is not None:
                self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())
        if scope.get("type") == "http" and scope.get("method") in ("PUT", "DELETE"):
            m = UPLOAD_PATH.fullmatch(scope.get("path", ""))
            if m and m["base"] == _base_path():
                return await self._answer(scope, receive, send, m["session"], m["file"])
        return await self.app(scope, receive, send)

    async def _answer(self, scope: dict[str, Any], receive: Receive, send: Send, session: str, file_id: str) -> None:
        """One upload request answered: 204, or a 4xx with one line; never a traceback."""
        from ui.upload_spool import UploadDenied

        reading = _Reading(receive)
        try:
            if not _xsrf_ok(scope):
                raise _Refused(403, "XSRF token missing or invalid")
            if scope["method"] == "DELETE":
                if self.manager is not None:
                    self.manager.remove_file(session, file_id)
            else:
                await self._put(scope, reading, session, file_id)
        except _ClientGone:
            return None
        except (_Refused, UploadDenied) as exc:
            status, text = exc.status, str(exc)
        except (UploadRefused, SettingsError) as exc:
            status, text = 413 if isinstance(exc, UploadRefused) else 503, str(exc)
        except Exception as exc:  # noqa: BLE001 - one line in the log and to the client, no traceback
            _LOG.warning("upload failed: %s: %s", type(exc).__name__, exc)
            status, text = 500, f"the upload failed ({type(exc).__name__}); nothing was kept"
        else:
            return await _reply(send, 204)
        await reading.drain()
        return await _reply(send, status, text)

    async def _put(self, scope: dict[str, Any], receive: Receive, session: str, file_id: str) -> None:
        from streamlit.runtime import Runtime

        from ui.upload_spool import Spooled

        if self.manager is None:
            raise _Refused(503, self.broken or "uploads are off on this server")
        if not Runtime.instance().is_active_session(session):
            raise _Refused(400, "no such session on this server (reload the page)")
        folder = self.manager.begin(session, file_id)  # 404 for an id not handed out to this session
        key = id(scope)
        try:
            limit = server_settings().max_upload_bytes
            length = _content_length(scope, limit)
            boundary = _boundary(scope)
            self._inflight[key] = [limit + FRAMING_BYTES if length is None else length, 0]
            pending = sum(max(0, r - w) for k, (r, w) in self._inflight.items() if k != key)
            await asyncio.to_thread(reserve_upload_space, self._inflight[key][0], pending=pending)
            body = _Body()
            spool = _Spool(folder, file_id)
            try:
                await self._stream(receive, _parser(boundary, body, limit), body, spool, limit, key)
                await asyncio.to_thread(spool.finish)
            except BaseException:
                spool.discard()
                raise
        except (_Refused, UploadRefused) as exc:
            self.manager.abort(session, file_id)
            self._tell(session, str(exc))
            raise
        except BaseException:
            self.manager.abort(session, file_id)
            raise
        finally:
            self._inflight.pop(key, None)
        self.manager.finish(session, Spooled(file_id, body.name, body.type, spool.path, body.file_bytes,
                                             spool.sha.hexdigest()))

    def _tell(self, session: str, message: str) -> None:
        """The refusal of a PUT from the session's own widget shown on its page: the session
        runs again with its last state (as Streamlit does when a source file changes), and the
        uploader says why (the browser's widget only shows "status code 413")."""
        self.manager.note_refusal(session, message)
        from streamlit.runtime import Runtime

        sessions = getattr(Runtime.instance(), "_session_mgr", None)
        active = sessions.get_active_session_info(session) if sessions is not None else None
        app_session = getattr(active, "session", None)
        last_state = getattr(app_session, "_client_state", None)
        if last_state is not None:
            app_session.request_rerun(last_state)

    async def _stream(self, receive: Receive, parser: Any, body: _Body, spool: _Spool, limit: int, key: int) -> None:
        """The request body through the parser into ``spool``, a MiB at a time."""
        from python_multipart.exceptions import MultipartParseError

        received = 0
        while True:
            try:  # a body that stalls would hold its room in the quota
                message = await asyncio.wait_for(receive(), BODY_IDLE_S)
            except asyncio.TimeoutError:
                raise _Refused(408, f"the upload stalled for {BODY_IDLE_S:g} s; nothing was kept") from None
            if message["type"] == "http.disconnect":
                raise _ClientGone()
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > limit + FRAMING_BYTES:
                raise _Refused(413, _too_big())
            try:
                parser.write(chunk)
            except MultipartParseError:
                raise _Refused(400, "expected one file in a multipart/form-data body") from None
            more = message.get("more_body", False)
            if len(body.buf) >= FLUSH_BYTES or (body.buf and not more):
                data, body.buf = body.buf, bytearray()
                await asyncio.to_thread(spool.write, data)
                self._inflight[key][1] += len(data)
            if not more:
                break
        parser.finalize()
        if body.files != 1:
            raise _Refused(400, "expected one file in a multipart/form-data body")

    async def _sweep_forever(self) -> None:
        """Every few seconds: the files of sessions that ended (shut down, or disconnected and
        expired, which Streamlit does without telling the manager) go."""
        from streamlit.runtime import Runtime

        while True:
            await asyncio.sleep(SWEEP_S)
            try:
                self.manager.sweep(_session_alive(Runtime.instance()))
            except Exception as exc:  # noqa: BLE001 - the sweep tries again; one line in the log
                _LOG.warning("could not sweep spooled uploads: %s: %s", type(exc).__name__, exc)


def _session_alive(runtime: Any) -> Callable[[str], bool]:
    """Whether a session id is still live or may reconnect (Streamlit keeps a disconnected
    session ``server.disconnectedSessionTTL`` seconds)."""
    sessions = getattr(runtime, "_session_mgr", None)
    info = getattr(sessions, "get_session_info", None)
    if info is None:
        return runtime.is_active_session
    return lambda session: info(session) is not None
