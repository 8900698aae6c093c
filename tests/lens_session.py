"""A session of the real app without a browser: Streamlit's own WebSocket protocol (protobuf
back and forward messages), and its upload URLs. Tests of the server's upload path run a page,
pick widgets by key, ask for upload URLs and PUT files as the browser's uploader does, in a
fraction of the time a browser takes."""
from __future__ import annotations

import http.client
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Common_pb2 import FileURLs, FileUploaderState, UploadedFileInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

#: the double-submit XSRF pair a browser sends (any equal cookie and header pass Streamlit's check)
XSRF = {"X-Xsrftoken": "a1b2", "Cookie": "_streamlit_xsrf=a1b2"}
BOUNDARY = "lens-test-boundary"


def multipart(data: bytes, name: str = "log.json", boundary: str = BOUNDARY) -> bytes:
    """One file in a multipart/form-data body, as the browser's uploader sends it."""
    return (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()


def request(port: int, method: str, path: str, body: Optional[bytes] = None, *, headers: Optional[dict] = None,
            length: Optional[int] = None, chunks: Iterable[bytes] = ()) -> tuple[int, str]:
    """(status, text) of one request. ``length``: a Content-Length to declare (the body sent
    may be shorter: a refusal comes before it is read); ``chunks``: sent after ``body`` until
    the server closes the connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path)
        for k, v in (headers if headers is not None else {**XSRF, "Content-Type":
                                                             f"multipart/form-data; boundary={BOUNDARY}"}).items():
            conn.putheader(k, v)
        if length is not None or body is not None:
            conn.putheader("Content-Length", str(length if length is not None else len(body or b"")))
        conn.endheaders()
        try:
            if body:
                conn.send(body)
            for chunk in chunks:
                conn.send(chunk)
        except OSError:  # refused and closed before the whole body went
            pass
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


@dataclass
class Upload:
    session_id: str
    file_id: str
    url: str
    name: str = ""
    size: int = 0


@dataclass
class LensSession:
    """One WebSocket session of the app on ``port`` (use as a context manager)."""

    port: int
    ws: Any = None
    widgets: dict[str, str] = field(default_factory=dict)  # user key -> widget id
    texts: list[str] = field(default_factory=list)  # markdown, errors and captions of the last run
    states: dict[str, WidgetState] = field(default_factory=dict)

    def __enter__(self) -> "LensSession":
        from websockets.sync.client import connect

        self.ws = connect(f"ws://127.0.0.1:{self.port}/_stcore/stream", subprotocols=["streamlit"],
                          max_size=None, open_timeout=30, close_timeout=1)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.ws.close()

    def _recv(self, timeout: float = 120) -> ForwardMsg:
        msg = ForwardMsg()
        msg.ParseFromString(self.ws.recv(timeout=timeout))
        return msg

    def run(self) -> list[str]:
        """Run the page with the widget states set so far; the texts it drew."""
        back = BackMsg()
        back.rerun_script.query_string = ""
        for state in self.states.values():
            back.rerun_script.widget_states.widgets.append(state)
        self.ws.send(back.SerializeToString())
        return self.finished_run()

    def finished_run(self) -> list[str]:
        """The texts of the run under way (the next one, if none is), once it has finished."""
        self.texts = []
        while True:
            msg = self._recv()
            kind = msg.WhichOneof("type")
            if kind == "script_finished":
                return self.texts
            if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                widget = getattr(el, el.WhichOneof("type"))
                wid = getattr(widget, "id", "")
                if wid.startswith("$$ID-"):
                    self.widgets[wid.split("-", 2)[2]] = wid
                self.texts.append(str(getattr(widget, "body", "") or getattr(widget, "label", "")))

    def set_choice(self, key: str, value: str) -> None:
        self.states[key] = WidgetState(id=self.widgets[key], string_value=value)

    def upload_urls(self, n: int = 1) -> list[Upload]:
        """Ask the server for ``n`` upload URLs, as the browser's uploader does."""
        back = BackMsg()
        back.file_urls_request.request_id = f"r{time.monotonic_ns()}"
        back.file_urls_request.file_names.extend(f"f{i}" for i in range(n))
        self.ws.send(back.SerializeToString())
        while True:
            msg = self._recv(30)
            if msg.WhichOneof("type") == "file_urls_response":
                return [Upload(u.upload_url.split("/")[-2], u.file_id, u.upload_url)
                        for u in msg.file_urls_response.file_urls]

    def put(self, up: Upload, data: bytes, name: str = "log.json") -> tuple[int, str]:
        up.name, up.size = name, len(data)
        return request(self.port, "PUT", up.url, multipart(data, name))

    def choose_file(self, key: str, up: Optional[Upload]) -> None:
        """The uploader ``key`` now shows ``up`` (None: emptied), as after the browser's upload."""
        state = FileUploaderState()
        if up is not None:
            state.uploaded_file_info.append(UploadedFileInfo(
                file_id=up.file_id, name=up.name, size=up.size,
                file_urls=FileURLs(file_id=up.file_id, upload_url=up.url, delete_url=up.url)))
        self.states[key] = WidgetState(id=self.widgets[key], file_uploader_state_value=state)
