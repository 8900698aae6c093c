"""Bytes the event-log reader keeps packed in the model until asked (plan trees, listener payloads,
plan text).

zstd at level 1: measured on the 47 MB bench log's 282 plan trees (2.4 MB of JSON), it packs
them in 0.006 s to 372 KB where zlib at level 1 takes 0.011 s for 435 KB, and unpacks in half
zlib's time. Compressor contexts are per thread (zstandard's are not thread-safe and cost
about 12 us to create). Bytes packed by an older build with zlib are still read.
"""
from __future__ import annotations

import threading
import zlib
from types import ModuleType
from typing import Optional

_zstd: Optional[ModuleType]
try:
    import zstandard

    _zstd = zstandard
except ImportError:  # pragma: no cover - zlib alone gives the same bytes back
    _zstd = None

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: the first byte of bytes kept as they are (neither a zstd frame's nor a zlib stream's)
_AS_IS = b"\x00"
_local = threading.local()


def pack(data: bytes) -> bytes:
    """``data`` compressed (zstd level 1; zlib level 1 without zstandard).

    >>> unpack(pack(b"AQEShuffleRead " * 100)) == b"AQEShuffleRead " * 100
    True
    """
    if _zstd is None:
        return zlib.compress(data, 1)
    c = getattr(_local, "c", None)
    if c is None:
        c = _local.c = _zstd.ZstdCompressor(level=1)
    # copied: zstandard returns its output in a buffer of the worst-case size (about the input's),
    # shrunk in length only, so each kept result would hold the whole input's memory
    return bytes(memoryview(c.compress(data)))


def as_is(data: bytes) -> bytes:
    """``data`` marked as not compressed (a listing reader's plan text, gone once its execution is
    summarised: compressing it would be work for nothing); :func:`unpack` gives it back.

    >>> unpack(as_is(b"== Physical Plan ==")), unpack(as_is(b""))
    (b'== Physical Plan ==', b'')
    """
    return _AS_IS + data


def unpack(blob: bytes) -> bytes:
    """What :func:`pack` or :func:`as_is` was given (a zstd frame, or a zlib stream); JSON kept as
    it is (a listing reader's plans) comes back as it is.

    >>> unpack(b'{"nodeName": "Exchange"}')
    b'{"nodeName": "Exchange"}'
    """
    if blob[:1] in (b"{", b"["):
        return blob
    if blob[:1] == _AS_IS:
        return blob[1:]
    if blob[:4] == _ZSTD_MAGIC and _zstd is not None:
        d = getattr(_local, "d", None)
        if d is None:
            d = _local.d = _zstd.ZstdDecompressor()
        return d.decompress(blob)
    return zlib.decompress(blob)
