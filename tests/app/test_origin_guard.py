"""Only the configured host names reach the app (ui/host_guard.py in front of the real
``streamlit run app.py``): a WebSocket handshake or an HTTP request whose Host or Origin names
another site (the DNS-rebinding pattern), another port of localhost or "null" gets 403; the
app's own address passes, and ``allowed_hosts`` opens it to a proxy's public name."""
from __future__ import annotations

import http.client
from typing import Optional

import pytest

from tests.lens_browser import running_app
from ui.host_guard import allowed_names, is_allowed, request_allowed

pytestmark = pytest.mark.slow

WS_HEADERS = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
              "Sec-WebSocket-Version": "13", "Sec-WebSocket-Protocol": "streamlit"}


def _status(port: int, host: str, origin: Optional[str] = None, *, ws: bool = False, path: str = "/") -> int:
    """The status of one request sent to 127.0.0.1:``port`` with these Host and Origin headers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.putrequest("GET", "/_stcore/stream" if ws else path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        if origin is not None:
            conn.putheader("Origin", origin)
        for k, v in (WS_HEADERS if ws else {}).items():
            conn.putheader(k, v)
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("st") / "streamlit.log") as app:
        yield app


def test_the_apps_own_address_passes(lens):
    own = f"127.0.0.1:{lens.port}"
    assert _status(lens.port, own, f"http://{own}", ws=True) == 101
    assert _status(lens.port, f"localhost:{lens.port}", f"http://localhost:{lens.port}", ws=True) == 101
    assert _status(lens.port, own, ws=True) == 101  # no Origin: not a browser, judged by its Host
    assert _status(lens.port, own) == 200
    assert _status(lens.port, own, path="/_stcore/health") == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "http://localhost:3000", "http://127.0.0.1:1",
                                    "null", "https://127.0.0.1.evil.example:{port}", "file://"])
def test_a_websocket_from_another_origin_is_refused(lens, origin):
    origin = origin.format(port=lens.port)
    assert _status(lens.port, f"127.0.0.1:{lens.port}", origin, ws=True) == 403
    assert _status(lens.port, f"127.0.0.1:{lens.port}", origin) == 403


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "localhost:1", "127.0.0.1",
                                  "127.0.0.1:{port}@evil.example", ""])
def test_a_foreign_host_is_refused_dns_rebinding(lens, host):
    host = host.format(port=lens.port)
    assert _status(lens.port, host, f"http://{host}", ws=True) == 403  # rebinding: Origin and Host agree
    assert _status(lens.port, host, ws=True) == 403
    assert _status(lens.port, host) == 403
    assert _status(lens.port, host, path="/_stcore/health") == 403


def test_allowed_hosts_opens_the_app_to_a_proxys_name(tmp_path):
    env = {"AQE_LENS_ALLOWED_HOSTS": "lens.example.com:443,127.0.0.1"}
    with running_app(tmp_path / "home", tmp_path / "streamlit.log", env=env) as app:
        assert _status(app.port, "lens.example.com", "https://lens.example.com", ws=True) == 101
        assert _status(app.port, "lens.example.com:443", "https://lens.example.com") == 200
        assert _status(app.port, f"localhost:{app.port}", ws=True) == 403  # not listed any more
        assert _status(app.port, "lens.example.com", "http://lens.example.com", ws=True) == 403  # port 80


def test_entries_and_scopes():
    names = allowed_names(("127.0.0.1", "localhost", "[::1]", "lens.example.com:443"))
    assert is_allowed("[::1]:8501", 8501, names) and not is_allowed("[::1]:8502", 8501, names)
    assert is_allowed("Lens.Example.COM.", 8501, names) and not is_allowed("lens.example.com:8501", 8501, names)
    scope = {"type": "http", "server": ("127.0.0.1", 8501),
             "headers": [(b"host", b"127.0.0.1:8501"), (b"origin", b"http://127.0.0.1:8501")]}
    assert request_allowed(scope, names)
    assert not request_allowed({**scope, "headers": scope["headers"] + [(b"host", b"evil.example")]}, names)
    assert not request_allowed({**scope, "headers": [(b"origin", b"http://127.0.0.1:8501")]}, names)  # no Host
    from aqe_core.server_settings import SettingsError

    with pytest.raises(SettingsError, match="allowed_hosts"):
        allowed_names(("http://x/",))
