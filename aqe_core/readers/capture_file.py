"""Reading and writing capture files: plain or gzip JSON, with the decoded size and CPU time
bounded so a hostile upload (a gzip bomb, deep nesting) fails with one line, never a hang.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import time
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Callable, Optional, Union

from aqe_core import storage
from aqe_core.readers.eventlog.errors import describe_bytes
from aqe_core.model.capture import Capture, CaptureFormatError
from aqe_core.units import MiB

#: decoded JSON bytes of one capture (a capture is parsed whole; bundled ones are < 1 MiB)
DEFAULT_MAX_CAPTURE_BYTES = 64 * MiB


PathLike = Union[str, "os.PathLike[str]"]


def dumps(capture: Capture) -> str:
    return json.dumps(capture.to_dict(), separators=(",", ":"), allow_nan=False)


def save_capture(capture: Capture, path: PathLike, *, compress: Optional[bool] = None) -> Path:
    """Write ``capture`` as JSON; gzip when ``compress`` or the name ends in ``.gz``."""
    p = Path(path)
    if compress is None:
        compress = p.suffix == ".gz"
    data = dumps(capture).encode()
    if compress:
        buf = io.BytesIO()
        # mtime=0: the same capture always gives the same bytes
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
            gz.write(data)
        data = buf.getvalue()
    storage.atomic_write_bytes(p, data)  # a killed save leaves a temp file start-up removes
    return p


def _read_limited(fh: Any, max_bytes: int, max_seconds: Optional[float],
                  checkpoint: Optional[Callable[[], None]] = None) -> bytes:
    """The decoded bytes of a plain or gzip stream, never more than ``max_bytes`` (a gzip bomb
    stops at the cap, with memory bounded by it) nor more than ``max_seconds`` of CPU time.
    ``checkpoint()`` runs after every chunk and every gzip member (a server's load meter: its
    wall time and its turn in the load slots; a file of empty members decodes to nothing)."""
    start = time.thread_time()
    head = fh.read(2)
    out = bytearray()
    chunk = 1 << 20

    def check() -> None:
        if len(out) > max_bytes:
            raise CaptureFormatError(f"this capture decompresses to more than {describe_bytes(max_bytes)}, the limit for"
                                     " one capture")
        if max_seconds is not None and time.thread_time() - start > max_seconds:
            raise CaptureFormatError(f"decoding this capture took more than {max_seconds:g} s of CPU time, the limit")
        if checkpoint is not None:
            checkpoint()

    if head != b"\x1f\x8b":
        out += head
        while True:
            data = fh.read(chunk)
            if not data:
                return bytes(out)
            out += data
            check()
    d = zlib.decompressobj(wbits=31)
    pending = head
    in_member = False
    try:
        while True:
            more = fh.read(chunk)
            pending += more
            while pending:
                in_member = True
                out += d.decompress(pending, chunk)
                check()
                pending = d.unconsumed_tail
                if d.eof:  # another gzip member may follow
                    in_member = False
                    pending = d.unused_data
                    d = zlib.decompressobj(wbits=31)
                    if pending and not pending.startswith(b"\x1f\x8b"):
                        if pending.strip(b"\x00"):
                            raise CaptureFormatError("not a capture: garbage after the gzip data")
                        pending = b""
            if not more:
                break
    except zlib.error:
        raise CaptureFormatError("the gzip data of this capture is corrupt") from None
    if in_member:
        raise CaptureFormatError("the gzip data of this capture is cut short")
    return bytes(out)


def loads(data: "bytes | str", *, max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
          max_seconds: Optional[float] = None) -> Capture:
    """A capture from its (plain or gzip) JSON; raises only :class:`CaptureFormatError`."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return _parse(_read_limited(io.BytesIO(data), max_bytes, max_seconds))


def _parse(raw: bytes) -> Capture:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CaptureFormatError("not a capture: the file is not UTF-8 text") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise CaptureFormatError(f"not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise CaptureFormatError("not a capture: JSON nested too deeply") from None
    except (ValueError, MemoryError) as e:
        raise CaptureFormatError(f"not JSON ({type(e).__name__})") from None
    try:
        return Capture.from_dict(doc)
    except CaptureFormatError:
        raise
    except RecursionError:
        raise CaptureFormatError("malformed capture: nested too deeply") from None


def load_capture(source: "PathLike | bytes | io.IOBase | BinaryIO", *, max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
                 max_seconds: Optional[float] = None, checkpoint: Optional[Callable[[], None]] = None) -> Capture:
    """Read a capture from a path (plain or gzip JSON), bytes, or a binary file object.

    At most ``max_bytes`` of JSON are decoded (gzip bombs stop there) and at most
    ``max_seconds`` of CPU time spent; raises only :class:`CaptureFormatError` (and
    ``OSError`` when a path cannot be opened, and what ``checkpoint`` raises)."""
    if isinstance(source, (bytes, bytearray)):
        return loads(bytes(source), max_bytes=max_bytes, max_seconds=max_seconds)
    if hasattr(source, "read"):
        return _parse(_read_limited(source, max_bytes, max_seconds, checkpoint))
    with open(source, "rb") as fh:
        return _parse(_read_limited(fh, max_bytes, max_seconds, checkpoint))


def looks_like_capture(path: Path) -> bool:
    """A capture starts (after gzip, if any) with a JSON object naming its format; only the
    first 4 KiB are decoded, so this is cheap and bounded whatever the file holds."""
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        return starts_like_capture(fh)


def starts_like_capture(fh: BinaryIO) -> bool:
    """:func:`looks_like_capture` on an open binary file (read from its current position)."""
    head = fh.read(4096)
    if head[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(wbits=31)
        try:
            out = d.decompress(head, 4096)
            while len(out) < 4096 and not d.eof:
                more = fh.read(4096)
                if not more and not d.unconsumed_tail:
                    break
                out += d.decompress(d.unconsumed_tail + more, 4096 - len(out))
        except zlib.error:
            return False
        head = out
    return head.lstrip().startswith(b"{") and b'"aqe-lens-capture"' in head
