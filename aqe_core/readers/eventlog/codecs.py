"""Byte-stream decoders for Spark event-log codecs.

Spark wraps an event-log file in the *Java* continuous stream of its codec, which is not
what the usual Python frame APIs expect (docs/eventlog-json.md, spec §3.3):

* ``zstd``   many concatenated zstd frames, no content size (zstd-jni, closeFrameOnFlush)
* ``lz4``    lz4-java ``LZ4BlockOutputStream``: 21-byte ``LZ4Block`` headers + raw LZ4 blocks,
             xxHash32 checksums (seed 0x9747b28c, masked to 28 bits)
* ``snappy`` snappy-java ``SnappyOutputStream``: ``\\x82SNAPPY\\0`` header + length-prefixed
             raw snappy blocks
* ``lzf``    ning compress-lzf ``ZV`` chunks (stored or LZF-compressed)
* ``gzip``   not a Spark codec, but Databricks rolls ``.gz`` logs and people gzip logs

Every decoder is a generator of decoded chunks that reads a file object incrementally, so
memory is bounded by the block size whatever the log's size. Problems raise
:class:`DecodeError` *after* every decodable byte before them has been yielded, so callers can
keep a partial load; a stream that simply stops mid-block raises :class:`TruncatedInput`.
"""
from __future__ import annotations

import struct
import zlib
from types import ModuleType
from typing import Any, Callable, Iterator, Optional, Protocol

from aqe_core.readers.eventlog.errors import DEFAULT_LIMITS, DecodeError, LimitExceeded, Limits, describe_bytes

CHUNK = 1 << 20  # raw read size and target size of decoded chunks


class TruncatedInput(DecodeError):
    """The stream ends inside a block/frame (normal for ``.inprogress`` files)."""


# --------------------------------------------------------------------------------------------
# sniffing

LZ4_BLOCK_MAGIC = b"LZ4Block"
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
ZIP_EMPTY_MAGIC = b"PK\x05\x06"
LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"

#: codec names Spark uses as file extensions
SPARK_CODECS = ("lz4", "lzf", "snappy", "zstd")

#: formats recognised only to be rejected with a clear message
_FOREIGN = {
    "lz4-frame": "an LZ4 *frame* stream (lz4 CLI / lz4.frame), not Spark's lz4-java LZ4Block stream",
    "snappy-framed": "a Snappy *framing-format* stream, not snappy-java's SnappyOutputStream",
    "bzip2": "a bzip2 file",
    "xz": "an xz file",
}


def sniff(head: bytes) -> str | None:
    """The format of a stream from its first bytes, or None if unrecognised.

    Returns one of ``none`` (plain JSON lines), ``zstd``, ``lz4``, ``snappy``, ``lzf``, ``gzip``,
    ``zip``, ``tar``, ``empty``, or a foreign format name from :data:`_FOREIGN`.
    """
    if not head:
        return "empty"
    if head.startswith(LZ4_BLOCK_MAGIC):
        return "lz4"
    if head.startswith(SNAPPY_MAGIC):
        return "snappy"
    if head.startswith(ZSTD_MAGIC) or (len(head) >= 4 and 0x50 <= head[0] <= 0x5F and head[1:4] == b"\x2a\x4d\x18"):
        return "zstd"
    if head[:2] == b"ZV" and len(head) >= 3 and head[2] in (0, 1):
        return "lzf"
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZIP_MAGIC) or head.startswith(ZIP_EMPTY_MAGIC):
        return "zip"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    if head.startswith(LZ4_FRAME_MAGIC):
        return "lz4-frame"
    if head.startswith(SNAPPY_FRAMED_MAGIC):
        return "snappy-framed"
    if head.startswith(b"BZh"):
        return "bzip2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"{") or (not stripped and head):
        return "none"
    return None


def describe_foreign(fmt: str) -> str:
    return _FOREIGN.get(fmt, fmt)


def codec_from_name(name: str) -> str | None:
    """The codec Spark's file name implies (part after the last dot once ``.inprogress`` and
    ``.compact`` are stripped), or None for a name without a codec extension."""
    base = name
    for suffix in (".inprogress", ".compact"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    if base.endswith(".inprogress"):
        base = base[: -len(".inprogress")]
    ext = base.rsplit(".", 1)[-1].lower() if "." in base else ""
    if ext in SPARK_CODECS:
        return ext
    if ext in ("gz", "gzip"):
        return "gzip"
    if ext == "zip":
        return "zip"
    return None


# --------------------------------------------------------------------------------------------
# raw input with byte counting


def read_exact(reader: Any, n: int) -> bytes:
    """Read ``n`` bytes from ``reader`` (short reads retried); fewer only at end of stream."""
    data = reader.read(n)
    if len(data) == n or not data:
        return data
    parts = [data]
    got = len(data)
    while got < n:
        more = reader.read(n - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def read_header(reader: Any, n: int, what: str) -> bytes:
    """A fixed-size header from a counting reader: ``b""`` at a clean end of stream, else
    exactly ``n`` bytes; a partial one raises ``TruncatedInput("<what> at byte <offset>")``."""
    offset = reader.count
    data = read_exact(reader, n)
    if data and len(data) < n:
        raise TruncatedInput(f"{what} at byte {offset}")
    return data


class ByteSource(Protocol):
    """What :class:`CountingReader` reads: a binary file, or a raw stream such as
    :class:`~aqe_core.readers.eventlog.log_files.IterStream` (blocking: its ``read`` never gives None)."""

    def read(self, n: int = ..., /) -> bytes | None: ...


class CountingReader:
    """A read-only file wrapper that counts the raw bytes consumed and reports progress."""

    def __init__(self, f: ByteSource, on_read: Callable[[int], None] | None = None):
        self._f = f
        self.count = 0
        self._on_read = on_read

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        if data:
            self.count += len(data)
            if self._on_read is not None:
                self._on_read(len(data))
        return data or b""  # (None only from a non-blocking raw stream, which none of ours is)

    def readable(self) -> bool:  # for io wrappers
        return True

    def read_exact(self, n: int) -> bytes:
        """Up to ``n`` bytes; fewer only at end of stream."""
        return read_exact(self, n)


def _coalesce(blocks: Iterator[bytes], size: int = CHUNK) -> Iterator[bytes]:
    """Join small decoded blocks into chunks of about ``size`` bytes."""
    buf: list[bytes] = []
    n = 0
    try:
        for b in blocks:
            buf.append(b)
            n += len(b)
            if n >= size:
                yield b"".join(buf)
                buf.clear()
                n = 0
    except GeneratorExit:
        raise
    except Exception:
        if buf:  # hand over what decoded fine before the problem, then re-raise it
            yield b"".join(buf)
        raise
    if buf:
        yield b"".join(buf)


# --------------------------------------------------------------------------------------------
# xxHash32 (for lz4-java's block checksums)

_xxhash: Optional[ModuleType]
try:  # optional accelerator
    import xxhash

    _xxhash = xxhash
except ImportError:  # pragma: no cover - depends on the environment
    _xxhash = None

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF
LZ4_CHECKSUM_SEED = 0x9747B28C


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32; uses the ``xxhash`` package when installed, else a pure-Python version."""
    if _xxhash is not None:
        return _xxhash.xxh32_intdigest(data, seed)
    n = len(data)
    i = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M32
        v2 = (seed + _P2) & _M32
        v3 = seed & _M32
        v4 = (seed - _P1) & _M32
        limit = n - (n % 16)
        words = struct.unpack_from(f"<{limit // 4}I", data)
        for j in range(0, len(words), 4):
            v1 = (v1 + words[j] * _P2) & _M32
            v1 = (((v1 << 13) | (v1 >> 19)) * _P1) & _M32
            v2 = (v2 + words[j + 1] * _P2) & _M32
            v2 = (((v2 << 13) | (v2 >> 19)) * _P1) & _M32
            v3 = (v3 + words[j + 2] * _P2) & _M32
            v3 = (((v3 << 13) | (v3 >> 19)) * _P1) & _M32
            v4 = (v4 + words[j + 3] * _P2) & _M32
            v4 = (((v4 << 13) | (v4 >> 19)) * _P1) & _M32
        h = (((v1 << 1) | (v1 >> 31)) + ((v2 << 7) | (v2 >> 25)) + ((v3 << 12) | (v3 >> 20))
             + ((v4 << 18) | (v4 >> 14))) & _M32
        i = limit
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        (k,) = struct.unpack_from("<I", data, i)
        h = (h + k * _P3) & _M32
        h = (((h << 17) | (h >> 15)) * _P4) & _M32
        i += 4
    while i < n:
        h = (h + data[i] * _P5) & _M32
        h = (((h << 11) | (h >> 21)) * _P1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


#: without the ``xxhash`` package, only this many lz4 blocks per file are checksummed
PURE_PYTHON_CHECKSUM_BLOCKS = 4


# --------------------------------------------------------------------------------------------
# decoders


def decode_plain(r: CountingReader, limits: Limits = DEFAULT_LIMITS) -> Iterator[bytes]:
    while True:
        data = r.read(CHUNK)
        if not data:
            return
        yield data


def decode_zstd(r: CountingReader, limits: Limits = DEFAULT_LIMITS) -> Iterator[bytes]:
    import zstandard

    dctx = zstandard.ZstdDecompressor(max_window_size=1 << 27)
    try:
        # zstandard reads any object with read(); its stubs name only IO[bytes]
        reader = dctx.stream_reader(r, read_size=CHUNK, read_across_frames=True)  # type: ignore[arg-type]
        while True:
            data = reader.read(CHUNK)
            if not data:
                return
            yield data
    except zstandard.ZstdError as e:
        raise DecodeError(f"zstd stream is corrupt after {r.count} compressed bytes: {e}") from None


def decode_lz4(
    r: CountingReader, limits: Limits = DEFAULT_LIMITS, verify: str = "auto"
) -> Iterator[bytes]:
    """lz4-java ``LZ4BlockOutputStream`` blocks.

    ``verify``: ``all`` checksums every block, ``none`` none, ``auto`` every block with the
    ``xxhash`` package and the first :data:`PURE_PYTHON_CHECKSUM_BLOCKS` blocks without it.
    """
    import lz4.block

    return _coalesce(_lz4_blocks(r, limits, verify, lz4.block))


def _lz4_blocks(r: CountingReader, limits: Limits, verify: str, lz4block) -> Iterator[bytes]:
    unpack = struct.Struct("<iii").unpack_from
    checked = 0
    blocks = 0
    while True:
        offset = r.count
        header = read_header(r, 21, "lz4 stream ends inside a block header")
        if not header:
            return
        if header[:8] != LZ4_BLOCK_MAGIC:
            raise DecodeError(f"lz4 stream: no LZ4Block header at byte {offset} (corrupt or not lz4-java)")
        token = header[8]
        method = token & 0xF0
        block_size = 1 << (10 + (token & 0x0F))
        clen, olen, checksum = unpack(header, 9)
        if method not in (0x10, 0x20):
            raise DecodeError(f"lz4 stream: unknown block method 0x{method:02x} at byte {offset}")
        if olen == 0:
            if clen != 0 or checksum != 0:
                raise DecodeError(f"lz4 stream: bad end-of-stream mark at byte {offset}")
            continue  # end mark; another (concatenated) stream may follow
        if not (0 < olen <= min(block_size, limits.max_block_bytes)) or not (0 < clen <= limits.max_block_bytes):
            raise DecodeError(
                f"lz4 stream: implausible block lengths (compressed {clen}, original {olen}, "
                f"block size {block_size}) at byte {offset}"
            )
        if method == 0x10 and clen != olen:
            raise DecodeError(f"lz4 stream: stored block with different lengths at byte {offset}")
        payload = r.read_exact(clen)
        if len(payload) < clen:
            raise TruncatedInput(f"lz4 stream ends inside a block at byte {offset}")
        if method == 0x10:
            out = payload
        else:
            try:
                out = lz4block.decompress(payload, uncompressed_size=olen)
            except Exception as e:  # noqa: BLE001 - lz4.block.LZ4BlockError
                raise DecodeError(f"lz4 block at byte {offset} is corrupt: {e}") from None
            if len(out) != olen:
                raise DecodeError(f"lz4 block at byte {offset} decodes to {len(out)} bytes, header says {olen}")
        blocks += 1
        if verify == "all" or (verify == "auto" and (_xxhash is not None or checked < PURE_PYTHON_CHECKSUM_BLOCKS)):
            checked += 1
            if (xxh32(out, LZ4_CHECKSUM_SEED) & 0x0FFFFFFF) != (checksum & 0xFFFFFFFF):
                raise DecodeError(f"lz4 block at byte {offset}: checksum mismatch (corrupt data)")
        yield out


def decode_snappy(r: CountingReader, limits: Limits = DEFAULT_LIMITS) -> Iterator[bytes]:
    """snappy-java ``SnappyOutputStream``: 16-byte header, then (int32 BE length, raw block)*."""
    import cramjam

    return _coalesce(_snappy_blocks(r, limits, cramjam.snappy))


def _snappy_blocks(r: CountingReader, limits: Limits, snappy) -> Iterator[bytes]:
    header = r.read_exact(16)
    if len(header) < 16 or not header.startswith(SNAPPY_MAGIC):
        raise DecodeError("snappy stream: missing the snappy-java header (\\x82SNAPPY\\0)")
    while True:
        offset = r.count
        lb = read_header(r, 4, "snappy stream ends inside a chunk length")
        if not lb:
            return
        if lb == SNAPPY_MAGIC[:4]:  # a concatenated stream's header
            rest = r.read_exact(12)
            if len(rest) < 12 or (lb + rest)[:8] != SNAPPY_MAGIC:
                raise DecodeError(f"snappy stream: bad header at byte {offset}")
            continue
        (n,) = struct.unpack(">i", lb)
        if not (0 < n <= limits.max_block_bytes):
            raise DecodeError(f"snappy stream: implausible chunk length {n} at byte {offset}")
        chunk = r.read_exact(n)
        if len(chunk) < n:
            raise TruncatedInput(f"snappy stream ends inside a chunk at byte {offset}")
        try:
            size = snappy.decompress_raw_len(chunk)
            if size > limits.max_block_bytes:
                raise DecodeError(f"snappy chunk at byte {offset} claims {size} bytes (over the block limit)")
            out = bytes(snappy.decompress_raw(chunk))
        except DecodeError:
            raise
        except Exception as e:  # noqa: BLE001 - the codec's own errors: a corrupt chunk
            raise DecodeError(f"snappy chunk at byte {offset} is corrupt: {e}") from None
        yield out


def lzf_decompress(data: bytes, out_len: int) -> bytes:
    """Decode one raw LZF block (liblzf format) of known decoded length."""
    out = bytearray()
    i = 0
    n = len(data)
    try:
        while i < n:
            ctrl = data[i]
            i += 1
            if ctrl < 32:
                ln = ctrl + 1
                if i + ln > n:
                    raise DecodeError("lzf literal run past the end of the block")
                out += data[i : i + ln]
                i += ln
            else:
                ln = ctrl >> 5
                ref = len(out) - ((ctrl & 0x1F) << 8) - 1
                if ln == 7:
                    ln += data[i]
                    i += 1
                ref -= data[i]
                i += 1
                ln += 2
                if ref < 0:
                    raise DecodeError("lzf back-reference before the start of the block")
                end = ref + ln
                if end <= len(out):
                    out += out[ref:end]
                else:  # overlapping copy (run-length style)
                    for k in range(ln):
                        out.append(out[ref + k])
            if len(out) > out_len:
                raise DecodeError("lzf block decodes past its declared length")
    except IndexError:
        raise DecodeError("lzf block is truncated") from None
    if len(out) != out_len:
        raise DecodeError(f"lzf block decodes to {len(out)} bytes, header says {out_len}")
    return bytes(out)


def decode_lzf(r: CountingReader, limits: Limits = DEFAULT_LIMITS) -> Iterator[bytes]:
    return _coalesce(_lzf_chunks(r))


def _lzf_chunks(r: CountingReader) -> Iterator[bytes]:
    while True:
        offset = r.count
        head = read_header(r, 5, "lzf stream ends inside a chunk header")
        if not head:
            return
        if head[:2] != b"ZV":
            raise DecodeError(f"lzf stream: no ZV chunk header at byte {offset}")
        kind = head[2]
        (n,) = struct.unpack_from(">H", head, 3)
        if kind == 0:
            data = r.read_exact(n)
            if len(data) < n:
                raise TruncatedInput(f"lzf stream ends inside a chunk at byte {offset}")
            yield data
        elif kind == 1:
            more = r.read_exact(2)
            if len(more) < 2:
                raise TruncatedInput(f"lzf stream ends inside a chunk header at byte {offset}")
            (ulen,) = struct.unpack(">H", more)
            payload = r.read_exact(n)
            if len(payload) < n:
                raise TruncatedInput(f"lzf stream ends inside a chunk at byte {offset}")
            try:
                yield lzf_decompress(payload, ulen)
            except DecodeError as e:
                raise DecodeError(f"lzf chunk at byte {offset}: {e}") from None
        else:
            raise DecodeError(f"lzf stream: unknown chunk type {kind} at byte {offset}")


def decode_gzip(r: CountingReader, limits: Limits = DEFAULT_LIMITS,
                checkpoint: Callable[[], None] | None = None) -> Iterator[bytes]:
    """gzip, including multi-member files; output is produced in bounded pieces.
    ``checkpoint()`` is called at the end of every member: a file of empty members yields
    nothing and reads once per MiB, yet each MiB holds ~50,000 of them (a 1 MB zip of such
    members ran 10 minutes without a checkpoint)."""
    d = zlib.decompressobj(wbits=31)
    started = False
    while True:
        data = r.read(CHUNK)
        if not data:
            break
        while data:
            started = True
            try:
                out = d.decompress(data, CHUNK)
            except zlib.error as e:
                raise DecodeError(f"gzip data is corrupt after {r.count} compressed bytes: {e}") from None
            if out:
                yield out
            # once a member ends, zlib keeps the input after it in unused_data (unconsumed_tail
            # may still be set when the end falls on an output-size boundary: looping on it
            # would never end)
            while d.unconsumed_tail and not d.eof:
                try:
                    out = d.decompress(d.unconsumed_tail, CHUNK)
                except zlib.error as e:
                    raise DecodeError(f"gzip data is corrupt after {r.count} compressed bytes: {e}") from None
                if out:
                    yield out
            if d.eof:
                if checkpoint is not None:
                    checkpoint()
                data = d.unused_data
                d = zlib.decompressobj(wbits=31)
                started = False
                if data and not data.startswith(GZIP_MAGIC):
                    if data.strip(b"\x00"):
                        raise DecodeError("gzip: trailing garbage after the last member")
                    data = b""
            else:
                data = b""
    if started and not d.eof:
        tail = d.flush()
        if tail:
            yield tail
        raise TruncatedInput("gzip stream ends before its end-of-member mark")


DECODERS: dict[str, Callable[..., Iterator[bytes]]] = {
    "none": decode_plain,
    "zstd": decode_zstd,
    "lz4": decode_lz4,
    "snappy": decode_snappy,
    "lzf": decode_lzf,
    "gzip": decode_gzip,
}


def decode(codec: str, r: CountingReader, limits: Limits = DEFAULT_LIMITS,
           checkpoint: Callable[[], None] | None = None) -> Iterator[bytes]:
    """Decoded chunks of a stream in ``codec``, with the size and expansion limits enforced.
    ``checkpoint()``: called where a decoder may work long without reading or yielding (gzip's
    member loop; the others read for every block)."""
    try:
        dec = DECODERS[codec]
    except KeyError:
        raise DecodeError(f"unsupported codec {codec!r}") from None
    it = dec(r, limits, checkpoint) if codec == "gzip" else dec(r, limits)
    if codec == "none":
        yield from it
        return
    total = 0
    for chunk in it:
        total += len(chunk)
        if total > limits.max_decompressed_bytes:
            raise LimitExceeded(size_limit_message(limits.max_decompressed_bytes))
        if total > limits.ratio_grace_bytes and total > limits.max_expansion_ratio * max(r.count, 1):
            raise LimitExceeded(ratio_limit_message(total, r.count, limits.max_expansion_ratio))
        yield chunk


def size_limit_message(limit: int) -> str:
    return f"the log decompresses to more than {describe_bytes(limit)}, the limit of decoded bytes"


def ratio_limit_message(total: int, compressed: int, ratio: int) -> str:
    return (f"decompression bomb suspected: {describe_bytes(total)} decoded from {describe_bytes(compressed)} of "
            f"compressed data (more than {ratio} times, the limit)")


def time_limit_message(seconds: float) -> str:
    return f"decoding the log took more than {seconds:g} s of CPU time, the limit"
