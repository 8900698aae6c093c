"""Bad input never raises anything but EventLogError: a clear error or a partial load with warnings.

The big inputs (a 100 MB single line, decompression bombs) are generated at run time.
"""
from __future__ import annotations

import gzip
import json
import random
import resource
import struct
import zipfile
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aqe_core.api import EventLog, EventLogError, load_event_log as load
from aqe_core.readers.eventlog.errors import Limits

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs" / "eventlogs"
MANIFEST = json.loads((SAMPLES / "MANIFEST.json").read_text())
SINGLE_FILES = [SAMPLES / MANIFEST[k]["files"][0] for k in
                ("spark301_plain", "spark359_zstd", "spark359_lzf", "spark430_lz4", "spark430_snappy")]
PLAIN = SAMPLES / MANIFEST["spark301_plain"]["files"][0]


def try_load(path, **kw) -> EventLog | None:
    """Load; only EventLogError (one clear line) is an acceptable failure."""
    try:
        log = load(str(path), **kw)
    except EventLogError as e:
        msg = str(e)
        assert msg and "\n" not in msg
        return None
    assert isinstance(log, EventLog)
    for w in log.warnings:
        assert isinstance(w, str)
    return log


@pytest.mark.parametrize("src", SINGLE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("frac", [0.0005, 0.1, 0.5, 0.93, 0.9999])
def test_truncated(tmp_path, src, frac):
    data = src.read_bytes()
    cut = tmp_path / src.name
    cut.write_bytes(data[: max(1, int(len(data) * frac))])
    log = try_load(cut)
    if log is not None and frac >= 0.5:
        assert not log.complete
        assert log.executions


@pytest.mark.parametrize("src", SINGLE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("seed", range(4))
def test_flipped_bytes(tmp_path, src, seed):
    rnd = random.Random(seed)
    data = bytearray(src.read_bytes())
    for _ in range(1 + seed * 3):
        i = rnd.randrange(len(data))
        data[i] ^= 1 << rnd.randrange(8)
    p = tmp_path / src.name
    p.write_bytes(bytes(data))
    try_load(p)


@pytest.mark.parametrize("src", SINGLE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("ext", [".lz4", ".zstd", ".snappy", ".lzf", "", ".gz", ".zip"])
def test_wrong_extension(tmp_path, src, ext):
    p = tmp_path / ("local-123" + ext)
    p.write_bytes(src.read_bytes())
    log = try_load(p)
    if ext not in (".gz", ".zip"):
        assert log is not None and log.complete


def _lines() -> list[bytes]:
    return PLAIN.read_bytes().splitlines(keepends=True)


def test_unknown_and_vendor_events(tmp_path):
    lines = _lines()
    extra = [b'{"Event":"com.databricks.DBCEventLoggingListenerMetadata","x":1}\n',
             b'{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent","progress":{}}\n',
             b'{"Event":"SparkListenerSomethingNew","Stage ID":1}\n',
             b'{"x":1,"Event":"SparkListenerTaskEnd"}\n',
             b'[1,2,3]\n', b'null\n', b'"just a string"\n', b'\xff\xfe garbage \x00\n', b'{"Event":\n',
             b"[" * 100000 + b"\n", b'{"Event":"SparkListenerTaskEnd"' + b',"a":[' * 50000 + b"\n"]
    mixed = lines[:50] + extra + lines[50:]
    p = tmp_path / "mixed"
    p.write_bytes(b"".join(mixed))
    log = try_load(p)
    assert log is not None and log.complete
    assert any("not JSON" in w for w in log.warnings)
    assert any("DBCEventLoggingListenerMetadata" in n for n in log.notes)
    ref = load(str(PLAIN))
    assert len(log.executions) == len(ref.executions)


@pytest.mark.parametrize("seed", range(6))
def test_missing_fields(tmp_path, seed):
    rnd = random.Random(seed)
    out = []
    for line in _lines():
        ev = json.loads(line)
        if rnd.random() < 0.3:
            keys = [k for k in ev if k != "Event"]
            for k in rnd.sample(keys, k=min(len(keys), rnd.randint(1, 3))):
                if rnd.random() < 0.5:
                    del ev[k]
                else:
                    ev[k] = rnd.choice([None, "x", -1, [], {}, True, 1.5])
        out.append(json.dumps(ev).encode() + b"\n")
    p = tmp_path / "missing"
    p.write_bytes(b"".join(out))
    log = try_load(p)
    assert log is not None


def test_events_out_of_order(tmp_path):
    lines = _lines()
    random.Random(7).shuffle(lines)
    p = tmp_path / "shuffled"
    p.write_bytes(b"".join(lines))
    assert try_load(p) is not None


def test_empty_and_tiny_inputs(tmp_path):
    for name, data in [("empty", b""), ("nl", b"\n\n\n"), ("brace", b"{"), ("lz4hdr.lz4", b"LZ4Block"),
                       ("snappy", b"\x82SNAPPY\x00"), ("zstd", b"\x28\xb5\x2f\xfd"), ("lzf", b"ZV\x01"),
                       ("gz.gz", b"\x1f\x8b"), ("zip.zip", b"PK\x03\x04junk"), ("frame.lz4", b"\x04\x22\x4d\x18abc")]:
        p = tmp_path / name
        p.write_bytes(data)
        try_load(p)


def test_archives_and_directories_without_logs(tmp_path):
    z = tmp_path / "empty.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("readme.txt", "")
    try_load(z)
    d = tmp_path / "eventlog_v2_local-1"
    d.mkdir()
    (d / "appstatus_local-1.inprogress").write_bytes(b"")
    with pytest.raises(EventLogError):
        load(str(d))
    (d / "events_2_local-1.zstd").write_bytes(b"garbage")
    try_load(d)
    e = tmp_path / "nothing"
    e.mkdir()
    with pytest.raises(EventLogError):
        load(str(e))


@pytest.mark.slow
def test_100mb_single_line_is_skipped_with_bounded_memory(tmp_path):
    lines = _lines()
    p = tmp_path / "bigline"
    with open(p, "wb") as f:
        f.writelines(lines[:40])
        f.write(b'{"Event":"SparkListenerTaskEnd","junk":"')
        block = b"x" * (1 << 20)
        for _ in range(100):
            f.write(block)
        f.write(b'"}\n')
        f.writelines(lines[40:])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    log = try_load(p)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert log is not None and log.complete
    assert any("line limit" in w for w in log.warnings)
    assert grown_mb < 80, f"peak RSS grew by {grown_mb:.0f} MB"
    # a higher limit reads the line (and reports it as a bad event, not a crash)
    log2 = try_load(p, limits=Limits(max_line_bytes=128 << 20))
    assert log2 is not None and not any("line limit" in w for w in log2.warnings)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["zstd", "gzip"])
def test_decompression_bomb(tmp_path, kind):
    zeros = b"\0" * (16 << 20)
    p = tmp_path / ("bomb." + ("zstd" if kind == "zstd" else "gz"))
    if kind == "zstd":
        c = zstandard.ZstdCompressor(level=3)
        with open(p, "wb") as f, c.stream_writer(f) as w:
            for _ in range(256):  # 4 GiB of zeros
                w.write(zeros)
    else:
        with gzip.open(p, "wb", compresslevel=1) as g:
            for _ in range(64):  # 1 GiB
                g.write(zeros)
    assert p.stat().st_size < 8 << 20
    log = try_load(p)
    assert log is None or any("bomb" in w or "limit" in w for w in log.warnings)


def _lz4_header(clen: int, olen: int) -> bytes:
    return b"LZ4Block" + bytes([0x25]) + struct.pack("<iii", clen, olen, 0)


def test_lz4_lying_headers(tmp_path):
    for name, data in [("neg.lz4", _lz4_header(-5, 10)), ("huge.lz4", _lz4_header(1 << 30, 1 << 30) + b"abc"),
                       ("short.lz4", _lz4_header(100, 200) + b"\x00" * 100)]:
        p = tmp_path / name
        p.write_bytes(data)
        try_load(p)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_mutations(tmp_path, data):
    src = data.draw(st.sampled_from(SINGLE_FILES))
    raw = bytearray(src.read_bytes()[:200_000])
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(["flip", "delete", "insert", "dup"]))
        i = data.draw(st.integers(0, len(raw) - 1))
        n = data.draw(st.integers(1, 64))
        if op == "flip":
            raw[i] ^= data.draw(st.integers(1, 255))
        elif op == "delete":
            del raw[i : i + n]
        elif op == "insert":
            raw[i:i] = data.draw(st.binary(min_size=1, max_size=n))
        else:
            raw[i:i] = raw[i : i + n]
        if not raw:
            raw = bytearray(b"x")
    p = tmp_path / src.name
    p.write_bytes(bytes(raw))
    try_load(p)


# --------------------------------------------------------------------------------------------
# End to end: 1,100 mutated event logs and captures through load_source (views built), with
# the limits and root confinement the app uses. Seeded: the same cases on every run.

from tests._fuzz_corpus import capture_cases, eventlog_cases  # noqa: E402 - the end-to-end section's own imports

from aqe_core.opening import LoadedSource, SourceError, load_source  # noqa: E402 - the end-to-end section's own imports

FUZZ_LIMITS = Limits(max_decompressed_bytes=64 << 20, max_seconds=30.0)


def _check_source(path: Path, roots: list[str], execution: "str | None" = None) -> None:
    """``load_source`` raises only SourceError, and never its last-resort "internal error" one
    (nor the reader's): the event-log reader raised only EventLogError and the capture loader
    only CaptureFormatError, and building the views raised nothing. ``execution``: one execution
    opened alone (the reader's focus: the other executions' lines skipped unparsed)."""
    try:
        src = load_source(str(path), limits=FUZZ_LIMITS, roots=roots, execution=execution)
    except SourceError as e:
        msg = str(e)
        assert msg and "\n" not in msg and "internal error" not in msg, (path.name, msg)
        return
    assert isinstance(src, LoadedSource)
    for v in src.views:
        assert all(isinstance(w, str) for w in v.warnings)
        assert all(isinstance(s.lines, list) for s in v.shuffles)


@pytest.mark.parametrize("seed", range(10))
def test_fuzz_event_logs_end_to_end(tmp_path, seed):
    """60 mutated logs per seed: JSON fields of the wrong type, huge and negative numbers, NaN,
    bad conf strings, lines cut, removed, repeated or swapped, bit flips in every codec, lying
    codec headers, cut archives and archives with hostile member names."""
    for name, data in eventlog_cases(seed, 60):
        p = tmp_path / name.replace("/", "_")
        p.write_bytes(data)
        _check_source(p, [str(tmp_path)])
        p.unlink()


@pytest.mark.parametrize("seed", range(4))
def test_fuzz_one_execution_read_alone(tmp_path, seed):
    """The same mutated logs, one execution opened alone (what the app's picker of a listed log
    and ``explain --execution`` do): a cut or retyped start line, an id that is not a number."""
    for k, (name, data) in enumerate(eventlog_cases(seed, 60)):
        p = tmp_path / name.replace("/", "_")
        p.write_bytes(data)
        _check_source(p, [str(tmp_path)], execution=str(k % 4))
        p.unlink()


@pytest.mark.parametrize("seed", range(10))
def test_fuzz_captures_end_to_end(tmp_path, seed):
    """50 mutated captures per seed: every level of the document retyped, emptied or removed,
    huge ints, NaN and infinities, negative sizes, bad conf strings, cut JSON, flipped gzip bits."""
    for name, data in capture_cases(seed, 50):
        p = tmp_path / name
        p.write_bytes(data)
        _check_source(p, [str(tmp_path)])
        p.unlink()
