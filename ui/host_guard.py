"""Answer only to this server's own names: the Host and Origin check in front of the web app.

A page on another site can make a viewer's browser talk to a server listening on 127.0.0.1:

* **DNS rebinding**: ``evil.example`` resolves to 127.0.0.1 once its page has loaded; the
  browser then sends ``Host: evil.example:8501`` and ``Origin: http://evil.example:8501``, which
  Streamlit takes for a same-origin request.
* **Another local site**: Streamlit accepts a WebSocket from every ``localhost`` origin, any
  port, so a page served by any other program (or user) on this machine could drive the app.

:class:`HostGuard` is a plain ASGI middleware that ``app.py`` puts in front
of every HTTP request and WebSocket handshake through ``st.App(middleware=...)``, Streamlit's
supported hook, so it holds from the first request on. A request passes when its ``Host`` names
an entry of the ``allowed_hosts`` server setting and, when a browser sent one, so does its
``Origin`` (scheme http or https). An entry ``name`` means that name on the port the server
listens on; ``name:port`` any other port (a reverse proxy's public one, e.g.
``lens.example.com:443``); a Host or Origin without a port came through port 80 or 443. Anything
else gets ``403`` (a WebSocket is closed before it is accepted, which is a 403 too). Requests
without an ``Origin`` (``curl``, health checks) are judged by their Host alone.

Behind the check, :class:`ui.upload_endpoint.UploadEndpoint` answers Streamlit's upload URLs
itself: uploads are spooled to disk under the upload quota, only to file ids the server handed
out (Streamlit's own handler keeps them in memory, under any id).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Awaitable, Callable, Optional
from urllib.parse import urlsplit

from aqe_core.server_settings import SettingsError, server_settings

_LOG = logging.getLogger(__name__)
_DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}
REFUSED = (b"AQE Lens answers only to the host names it is configured for (allowed_hosts in server.toml, "
           b"see README 'Serving a team').\n")


@dataclass(frozen=True)
class HostName:
    """One allowed name; ``port`` None means the port the server listens on."""

    name: str
    port: Optional[int] = None


def _split(netloc: str) -> tuple[str, Optional[int]]:
    """(lower-case name, port or None) of ``host[:port]``; ValueError when it is not one."""
    parts = urlsplit("//" + netloc)
    name, port = parts.hostname, parts.port  # .port raises ValueError for a bad port
    if not name or parts.username is not None or parts.password is not None or parts.path or parts.query \
            or parts.fragment or any(c.isspace() for c in netloc):
        raise ValueError(netloc)
    return name.rstrip("."), port


@lru_cache(maxsize=8)
def allowed_names(entries: tuple[str, ...]) -> tuple[HostName, ...]:
    """The ``allowed_hosts`` entries, parsed (raises SettingsError naming a bad one)."""
    out = []
    for entry in entries:
        try:
            out.append(HostName(*_split(entry.strip())))
        except ValueError:
            raise SettingsError(f"server setting allowed_hosts: {entry!r} is not a host name or host:port") from None
    return tuple(out)


def is_allowed(netloc: str, served_port: Optional[int], names: tuple[HostName, ...],
               default_port: Optional[int] = None) -> bool:
    """``netloc`` (a Host header, or an Origin's ``host[:port]``) names an allowed host.

    >>> names = allowed_names(("127.0.0.1", "localhost", "lens.example.com:443"))
    >>> [is_allowed(h, 8501, names) for h in ("127.0.0.1:8501", "LOCALHOST:8501", "localhost:3000",
    ...                                        "evil.example:8501", "lens.example.com", "127.0.0.1")]
    [True, True, False, False, True, False]
    """
    try:
        name, port = _split(netloc)
    except ValueError:
        return False
    ports = {port} if port is not None else ({default_port} if default_port else {80, 443})
    return any(n.name == name and (n.port if n.port is not None else served_port) in ports for n in names)


def _header(scope: dict[str, Any], key: bytes) -> Optional[str]:
    values = [v for k, v in scope.get("headers", ()) if k.lower() == key]
    if len(values) != 1:  # none, or a repeated header: no single answer to judge
        return None if not values else "\0"
    return values[0].decode("latin-1")


def request_allowed(scope: dict[str, Any], names: tuple[HostName, ...]) -> bool:
    """The Host (required) and the Origin (when sent) of an HTTP or WebSocket request are allowed."""
    server = scope.get("server")
    served_port = server[1] if isinstance(server, (tuple, list)) and len(server) > 1 else None
    host = _header(scope, b"host")
    if host is None or not is_allowed(host, served_port, names):
        return False
    origin = _header(scope, b"origin")
    if origin is None:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or parts.path or parts.query or parts.fragment:
        return False  # "null" (a sandboxed frame, a file), another scheme
    return is_allowed(parts.netloc, served_port, names, _DEFAULT_PORTS[parts.scheme])


Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class HostGuard:
    """ASGI middleware refusing requests for other host names (see the module docstring)."""

    def __init__(self, app: Callable[..., Awaitable[None]],
                 entries: Optional[Callable[[], tuple[str, ...]]] = None) -> None:
        from ui.upload_endpoint import UploadEndpoint

        self.app = UploadEndpoint(app)  # uploads spooled to disk, behind this check (ui.upload_endpoint)
        self.entries = entries or (lambda: server_settings().allowed_hosts)

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope.get("type") not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        try:
            ok = request_allowed(scope, allowed_names(tuple(self.entries())))
        except SettingsError as exc:  # a broken settings file never opens the server
            _LOG.error("refusing every request: %s", exc)
            ok = False
        if ok:
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
            return None
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(REFUSED)).encode())]})
        await send({"type": "http.response.body", "body": REFUSED})
        return None
