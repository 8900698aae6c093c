"""Codec stream formats: zstd frames, lz4-java blocks, snappy-java, lzf, gzip; sniffing."""
from __future__ import annotations

import gzip
import io
import struct

import cramjam
import lz4.block
import pytest
import zstandard

from aqe_core.readers.eventlog import codecs
from aqe_core.readers.eventlog.codecs import CountingReader, TruncatedInput
from aqe_core.readers.eventlog.errors import DecodeError
from aqe_core.readers.eventlog.errors import LimitExceeded, Limits

TEXT = b"".join(b'{"Event":"SparkListenerTaskEnd","Stage ID":%d,"x":"%s"}\n' % (i, b"abc" * (i % 50)) for i in range(3000))


def decode_all(codec: str, data: bytes, limits: Limits = Limits()) -> bytes:
    return b"".join(codecs.decode(codec, CountingReader(io.BytesIO(data)), limits))


# -- encoders for the Java stream framings (test-only) ------------------------------------------

def lz4_java(data: bytes, block: int = 32 * 1024, end_mark: bool = True, raw_every: int = 0) -> bytes:
    out = bytearray()
    token_level = (block.bit_length() - 1) - 10
    for n, i in enumerate(range(0, len(data), block)):
        chunk = data[i : i + block]
        comp = lz4.block.compress(chunk, store_size=False)
        checksum = codecs.xxh32(chunk, codecs.LZ4_CHECKSUM_SEED) & 0x0FFFFFFF
        if raw_every and n % raw_every == 0:
            out += b"LZ4Block" + bytes([0x10 | token_level]) + struct.pack("<iii", len(chunk), len(chunk), checksum) + chunk
        else:
            out += b"LZ4Block" + bytes([0x20 | token_level]) + struct.pack("<iii", len(comp), len(chunk), checksum) + comp
    if end_mark:
        out += b"LZ4Block" + bytes([0x10 | token_level]) + b"\x00" * 12
    return bytes(out)


def snappy_java(data: bytes, block: int = 32 * 1024) -> bytes:
    out = bytearray(codecs.SNAPPY_MAGIC + struct.pack(">ii", 1, 1))
    for i in range(0, len(data), block):
        comp = bytes(cramjam.snappy.compress_raw(data[i : i + block]))
        out += struct.pack(">i", len(comp)) + comp
    return bytes(out)


def lzf_stored(data: bytes) -> bytes:
    out = bytearray()
    for i in range(0, len(data), 65535):
        chunk = data[i : i + 65535]
        out += b"ZV\x00" + struct.pack(">H", len(chunk)) + chunk
    return bytes(out)


def zstd_frames(data: bytes, every: int = 5000) -> bytes:
    c = zstandard.ZstdCompressor()
    return b"".join(c.compress(data[i : i + every]) for i in range(0, len(data), every))


# -- tests --------------------------------------------------------------------------------------

def test_xxh32_known_vectors():
    assert codecs.xxh32(b"", 0) == 0x02CC5D05
    assert codecs.xxh32(b"a", 0) == 0x550D7456
    assert codecs.xxh32(b"abc", 0) == 0x32D153FF
    assert codecs.xxh32(b"Nobody inspects the spammish repetition", 0) == 0xE2293B2F


@pytest.mark.parametrize("head,expected", [
    (b"LZ4Block\x25", "lz4"), (codecs.SNAPPY_MAGIC, "snappy"), (b"\x28\xb5\x2f\xfdxx", "zstd"),
    (b"ZV\x01\x00", "lzf"), (b"\x1f\x8b\x08", "gzip"), (b"PK\x03\x04", "zip"), (b'{"Event"', "none"),
    (b"\x04\x22\x4d\x18", "lz4-frame"), (b"\xff\x06\x00\x00sNaPpY", "snappy-framed"), (b"", "empty"),
    (b"\x00\x01garbage", None),
])
def test_sniff(head, expected):
    assert codecs.sniff(head) == expected


@pytest.mark.parametrize("name,codec", [
    ("local-1.lz4", "lz4"), ("local-1.zstd.inprogress", "zstd"), ("events_2_app.snappy.compact", "snappy"),
    ("app_1_2.lzf", "lzf"), ("local-1", None), ("local-1.inprogress", None), ("x.gz", "gzip"),
])
def test_codec_from_name(name, codec):
    assert codecs.codec_from_name(name) == codec


def test_zstd_many_frames_without_content_size():
    data = zstd_frames(TEXT)
    assert data.count(codecs.ZSTD_MAGIC) > 10
    with pytest.raises(zstandard.ZstdError):
        zstandard.ZstdDecompressor().decompress(
            zstandard.ZstdCompressor(write_content_size=False).compress(TEXT))
    assert decode_all("zstd", data) == TEXT


def test_lz4_java_blocks_roundtrip_with_raw_blocks_and_concatenation():
    data = lz4_java(TEXT, raw_every=3) + lz4_java(TEXT)
    assert decode_all("lz4", data) == TEXT + TEXT


def test_lz4_checksum_mismatch_is_detected():
    data = bytearray(lz4_java(TEXT))
    data[17] ^= 0x01  # first block's checksum
    with pytest.raises(DecodeError, match="checksum"):
        decode_all("lz4", bytes(data))


def test_lz4_truncated_keeps_whole_blocks():
    data = lz4_java(TEXT, end_mark=False)
    cut = data[: len(data) - 100]
    out = bytearray()
    with pytest.raises(TruncatedInput):
        for chunk in codecs.decode("lz4", CountingReader(io.BytesIO(cut))):
            out += chunk
    assert TEXT.startswith(bytes(out)) and len(out) >= 32 * 1024


def test_snappy_java_stream_and_repeated_header():
    data = snappy_java(TEXT) + snappy_java(b"tail\n")
    assert decode_all("snappy", data) == TEXT + b"tail\n"


def test_snappy_rejects_framing_format():
    with pytest.raises(DecodeError):
        decode_all("snappy", bytes(cramjam.snappy.compress(TEXT)))


def test_lzf_stored_and_compressed_chunks():
    # a compressed chunk: literal run "abc" + back-reference copying 6 bytes from 3 back
    payload = bytes([2]) + b"abc" + bytes([(4 << 5) | 0, 2])
    comp = b"ZV\x01" + struct.pack(">HH", len(payload), 9) + payload
    assert codecs.lzf_decompress(payload, 9) == b"abcabcabc"
    assert decode_all("lzf", lzf_stored(b"hello\n") + comp) == b"hello\nabcabcabc"


def test_lzf_corrupt_reference():
    with pytest.raises(DecodeError):
        codecs.lzf_decompress(bytes([0x20, 0x50]), 3)


def test_gzip_multi_member():
    assert decode_all("gzip", gzip.compress(b"a\n") + gzip.compress(b"b\n")) == b"a\nb\n"


def test_expansion_ratio_limit_stops_a_bomb():
    bomb = zstandard.ZstdCompressor(level=19).compress(b"\0" * (8 * 1024 * 1024))
    limits = Limits(ratio_grace_bytes=1024 * 1024, max_expansion_ratio=100)
    with pytest.raises(LimitExceeded, match="bomb"):
        decode_all("zstd", bomb, limits)


def test_decompressed_size_limit():
    with pytest.raises(LimitExceeded, match="limit"):
        decode_all("zstd", zstd_frames(TEXT), Limits(max_decompressed_bytes=10_000))
