"""Decompression bombs for the fair-load tests and bench (issue 37): a few MB on disk that keep a
load reading until its ``max_load_s``, built in milliseconds from one compressed segment
repeated (no gigabytes are ever compressed)."""
from __future__ import annotations

import gzip
import tarfile
import struct
import zlib
from pathlib import Path

from tests.budget_logs import HEADER

MiB = 1 << 20
#: a task end the reader parses (one per line): real work for every line of the bomb
TASK_END = (b'{"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,"Task Info":{"Task ID":1,"Index":0,'
            b'"Launch Time":1,"Finish Time":2,"Failed":false,"Killed":false,"Accumulables":[]}}\n')


def _deflate_repeated(chunk: bytes, times: int) -> bytes:
    """A raw deflate stream that decodes to ``chunk * times``: one segment compressed from a
    fresh state and ended by a full flush refers to nothing before it, so it can repeat."""
    seg = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = seg.compress(chunk) + seg.flush(zlib.Z_FULL_FLUSH)
    return body * times + zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)


def zip_bomb(path: Path, chunk: bytes, times: int, member: str = "eventlog") -> Path:
    """A zip of one deflated member decoding to ``chunk * times`` (under 4 GiB: no zip64)."""
    size = len(chunk) * times
    assert size < 0xFFFFFFFF
    data = _deflate_repeated(chunk, times)
    crc = 0
    for _ in range(times):
        crc = zlib.crc32(chunk, crc)
    name = member.encode()
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(data), size, len(name), 0) + name
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(data), size,
                          len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)
    return path


def task_zip_bomb(path: Path, mib: int = 400) -> Path:
    """A zip of a log of ``mib`` MiB: each a real log's header and task ends (~19 KB a MiB)."""
    return zip_bomb(path, HEADER + TASK_END * (MiB // len(TASK_END)), mib)


def empty_members_zip_bomb(path: Path, members: int = 20_000_000) -> Path:
    """A zip holding a gzip of ``members`` empty members: nothing is ever decoded, so no size or
    ratio limit stops it (1 MB on disk; before issue 37 it read for 10 minutes, unchecked)."""
    one = gzip.compress(b"", 9)
    per = 50_000
    return zip_bomb(path, one * per, max(1, members // per))


def empty_members_gzip(path: Path, members: int = 200_000) -> Path:
    """A gzip of ``members`` empty members (20 bytes each): it decodes to nothing at all."""
    path.write_bytes(gzip.compress(b"", 9) * members)
    return path


def capture_then_empty_members(path: Path, members: int = 2_000_000) -> Path:
    """A real capture (gzip) followed by ``members`` empty gzip members: a capture whose decoding
    never grows (before issue 37 it held a load slot with no checkpoint until max_decompress_s)."""
    from aqe_core.server_settings import SAMPLES_DIR

    real = (SAMPLES_DIR / "captures" / "4.3.0-skew_join_inner.json.gz").read_bytes()
    path.write_bytes(real + gzip.compress(b"", 9) * members)
    return path


def newlines_gzip(path: Path, mib: int = 4000) -> Path:
    """A gzip of ``mib`` MiB of empty lines (a million a MiB), as repeated members (~1 KB each)."""
    path.write_bytes(gzip.compress(b"\n" * MiB, 9) * mib)
    return path


def folders_tgz(path: Path, folders: int = 2_000_000) -> Path:
    """A tar.gz listing ``folders`` folders (no file: nothing counts against the member limit)."""
    info = tarfile.TarInfo("d")
    info.type = tarfile.DIRTYPE
    block = info.tobuf(format=tarfile.USTAR_FORMAT)
    per = 2048
    path.write_bytes(gzip.compress(block * per, 9) * max(1, folders // per))
    return path
