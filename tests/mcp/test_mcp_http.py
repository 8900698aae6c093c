"""``python -m aqe_core mcp --http``: streamable HTTP on 127.0.0.1 only, with the SDK's client,
and a request naming another host (DNS rebinding) refused."""
from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from aqe_core.server_settings import SAMPLES_DIR
from tests.listening import listen_addresses

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = str(SAMPLES_DIR / "captures" / "4.3.0-skew_join_inner.json.gz")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    home = tmp_path_factory.mktemp("lens_home")
    port = _free_port()
    env = {"AQE_LENS_HOME": str(home), "AQE_LENS_CONFIG": str(home / "none.toml"), "PYTHONPATH": str(ROOT),
           "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sys.executable, "-m", "aqe_core", "mcp", "--http", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if proc.poll() is not None:
            pytest.fail(f"the server exited: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.2)
    yield port
    proc.terminate()
    proc.wait(30)


def test_http_serves_the_tools_on_loopback_only(http_server):
    from mcp.client import Client

    async def call():
        async with Client(f"http://127.0.0.1:{http_server}/mcp") as client:
            return await client.call_tool("open_source", {"path": CAPTURE})

    got = asyncio.run(call())
    assert not got.is_error and got.structured_content["answer"]["kind"] == "capture"
    addresses = listen_addresses(http_server)
    assert addresses == {"127.0.0.1"}, addresses  # loopback, nothing else


def test_a_foreign_host_header_is_refused(http_server):
    req = urllib.request.Request(f"http://127.0.0.1:{http_server}/mcp", method="POST", data=b"{}",
                                 headers={"Host": "evil.example.com", "Content-Type": "application/json",
                                          "Accept": "application/json, text/event-stream"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code in (400, 403, 421)
