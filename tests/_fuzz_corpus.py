"""Mutated event logs and captures for the end-to-end fuzz run (seeded, deterministic, small).

Each case is ``(name, bytes)``; the mutations mimic what strangers upload: bit flips, cuts,
lines removed or repeated, JSON values of the wrong type, huge or negative numbers, NaN, bad
conf strings, deep nesting, and foreign or lying codec headers.
"""
from __future__ import annotations

import copy
import gzip
import io
import json
import random
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import zstandard

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_logs"
FIXTURES = REPO / "tests" / "fixtures"

WEIRD_VALUES: list[Any] = [
    None, True, False, "", "maybe", "12x", "-1", "9" * 40, -1, 0, -(2 ** 63) - 1, 2 ** 63, 2 ** 64 + 7,
    10 ** 400, 1e308, -1e308, float("nan"), float("inf"), 1.5, [], {}, [[[[[]]]]], {"a": {"b": None}},
    "\u202e\u0000\ud7ff", "![x](http://example.invalid/px.png)", list(range(50)),
]
CONF_VALUES = {
    "spark.sql.adaptive.enabled": ["maybe", "", "yes please", "1"],
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": ["12x", "-5", "1.5m", "99999999999999999999999", "k"],
    "spark.sql.adaptive.skewJoin.skewedPartitionFactor": ["nan", "-inf", "abc", "1e999"],
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": ["-1", "1t1", "ten"],
    "spark.sql.shuffle.partitions": ["0", "-3", "2147483648", "many"],
    "spark.sql.adaptive.coalescePartitions.minPartitionSize": ["xx", "-1b"],
    "spark.sql.adaptive.coalescePartitions.initialPartitionNum": ["-1", "0", "lots"],
    "spark.default.parallelism": ["-4", "0", "999999999999999999999"],
    "spark.master": ["local[99999999999999999999]", "local[0]", "yarn"],
}
HEADERS = [b"LZ4Block", b"LZ4Block\x25" + b"\xff" * 12, b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01",
           b"\x28\xb5\x2f\xfd", b"ZV\x01\xff\xff\xff\xff", b"ZV\x00", b"\x1f\x8b\x08\x00", b"PK\x03\x04",
           b"PK\x05\x06" + b"\x00" * 18, b"\x04\x22\x4d\x18", b"BZh9", b"\xfd7zXZ\x00", b"\xef\xbb\xbf",
           b"\x00" * 257 + b"ustar\x0000"]


# ------------------------------------------------------------------------------------------
# base material


@lru_cache(maxsize=None)
def eventlog_lines() -> tuple[tuple[bytes, ...], ...]:
    """Plain JSON lines of a few real logs (3.0.1 plain, 3.5.9 and 4.3.0 zstd decoded)."""
    out = [tuple((SAMPLES / "eventlogs" / "local-1795309249168").read_bytes().splitlines())]
    d = zstandard.ZstdDecompressor()
    for name in ("local-1795309160158.zstd", "eventlog_v2_local-1795308995034/events_1_local-1795308995034.zstd"):
        raw = (SAMPLES / "eventlogs" / name).read_bytes()
        text = d.stream_reader(io.BytesIO(raw), read_across_frames=True).read()
        out.append(tuple(text.splitlines()))
    return tuple(out)


@lru_cache(maxsize=None)
def compressed_logs() -> tuple[tuple[str, bytes], ...]:
    files = ["local-1795309052779.lz4", "local-1795309110291.snappy", "local-1795309160158.zstd",
             "local-1795309209855.lzf"]
    out = [(f, (SAMPLES / "eventlogs" / f).read_bytes()) for f in files]
    for f in ("local-1795309249168.gz", "shs_download_lz4.zip", "shs_download_rolling_zstd.zip",
              "eventlog_v2_local-1795308995034.tar.gz"):
        out.append((f, (FIXTURES / "eventlogs" / f).read_bytes()))
    return tuple(out)


@lru_cache(maxsize=None)
def capture_docs() -> tuple[str, ...]:
    paths = sorted((SAMPLES / "captures").glob("*.json.gz")) + sorted((FIXTURES / "captures").glob("3.*/skew_join_*.json.gz"))[:4]
    return tuple(gzip.decompress(p.read_bytes()).decode() for p in paths)


# ------------------------------------------------------------------------------------------
# JSON mutations


def _paths(doc: Any, prefix: tuple = (), out: list | None = None, limit: int = 4000) -> list[tuple]:
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append(prefix + (k,))
            _paths(v, prefix + (k,), out, limit)
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:40]):
            out.append(prefix + (i,))
            _paths(v, prefix + (i,), out, limit)
    return out


def _get_parent(doc: Any, path: tuple) -> Any:
    for k in path[:-1]:
        doc = doc[k]
    return doc


def mutate_json(rnd: random.Random, doc: Any, n: int) -> Any:
    """Replace, delete or retype ``n`` values anywhere in ``doc`` (a deep copy is changed)."""
    doc = copy.deepcopy(doc)
    paths = _paths(doc)
    if not paths:
        return rnd.choice(WEIRD_VALUES)
    for _ in range(n):
        path = rnd.choice(paths)
        try:
            parent = _get_parent(doc, path)
            key = path[-1]
            old = parent[key]
        except (KeyError, IndexError, TypeError):
            continue
        if not isinstance(parent, (dict, list)):
            continue
        op = rnd.random()
        if op < 0.15 and isinstance(parent, dict):
            del parent[key]
        elif op < 0.25 and isinstance(old, list) and old:
            parent[key] = old * rnd.randint(2, 5) if rnd.random() < 0.5 else old[: rnd.randrange(len(old))]
        elif op < 0.35 and isinstance(old, (int, float)) and not isinstance(old, bool):
            parent[key] = rnd.choice([-old, old * 10 ** rnd.randint(5, 30), -1, 2 ** 62, 2 ** 70, float(old) + 0.5])
        elif op < 0.42 and isinstance(old, str):
            parent[key] = old[: rnd.randrange(len(old) + 1)] + rnd.choice(["", "x", "\\", "\"", "#1L", "\n"])
        else:
            parent[key] = copy.deepcopy(rnd.choice(WEIRD_VALUES))
    return doc


def _dumps(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


# ------------------------------------------------------------------------------------------
# event logs


def _bad_conf_event(rnd: random.Random) -> bytes:
    props = {k: rnd.choice(v) for k, v in rnd.sample(sorted(CONF_VALUES.items()), k=rnd.randint(1, 4))}
    return _dumps({"Event": "SparkListenerEnvironmentUpdate", "Spark Properties": props,
                   "JVM Information": {}, "System Properties": {}, "Classpath Entries": {}})


def mutated_log_lines(rnd: random.Random) -> bytes:
    lines = list(rnd.choice(eventlog_lines()))
    # keep inputs small: the head (app/env events) and a random window of the rest
    if rnd.random() < 0.7:
        start = rnd.randrange(3, max(4, len(lines) - 200))
        lines = lines[:3] + lines[start : start + rnd.randint(20, 200)] + lines[-2:]
    for _ in range(rnd.randint(1, 8)):
        if not lines:
            break
        i = rnd.randrange(len(lines))
        op = rnd.random()
        if op < 0.45:
            try:
                ev = json.loads(lines[i])
            except (ValueError, RecursionError):
                continue
            lines[i] = _dumps(mutate_json(rnd, ev, rnd.randint(1, 4)))
        elif op < 0.55:
            del lines[i]
        elif op < 0.65:
            lines[i:i] = [lines[i]] * rnd.randint(1, 3)
        elif op < 0.72:
            lines[i] = lines[i][: rnd.randrange(len(lines[i]) + 1)]
        elif op < 0.80:
            lines.insert(i, _bad_conf_event(rnd))
        elif op < 0.85:
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op < 0.90:
            lines.insert(i, b'{"Event":"SparkListenerTaskEnd","Stage ID":' + b"[" * rnd.randint(1, 3000))
        else:
            lines.insert(i, bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 80))))
    data = b"\n".join(lines) + (b"\n" if rnd.random() < 0.9 else b"")
    enc = rnd.random()
    if enc < 0.25:
        data = gzip.compress(data, compresslevel=1, mtime=0)
    elif enc < 0.45:
        data = zstandard.ZstdCompressor(level=1).compress(data)
    return data


def mutated_log_bytes(rnd: random.Random) -> tuple[str, bytes]:
    name, raw = rnd.choice(compressed_logs())
    data = bytearray(raw)
    op = rnd.random()
    if op < 0.35:
        for _ in range(rnd.randint(1, 10)):
            i = rnd.randrange(len(data))
            data[i] ^= 1 << rnd.randrange(8)
    elif op < 0.55:
        data = data[: rnd.randrange(1, len(data))]
    elif op < 0.75:
        data = bytearray(rnd.choice(HEADERS)) + data[rnd.choice([0, 8, 16, 21, 100]):]
    elif op < 0.85:
        i = rnd.randrange(len(data))
        data[i:i] = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 64)))
    else:
        i = rnd.randrange(len(data))
        n = rnd.randint(1, 4096)
        data[i:i] = data[i : i + n] * rnd.randint(1, 3)
    return name, bytes(data)


def hostile_zip(rnd: random.Random) -> bytes:
    buf = io.BytesIO()
    lines = b"\n".join(eventlog_lines()[0][:60]) + b"\n"
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        names = rnd.sample(["../evil", "/etc/passwd", "a/../../b", "eventlog_v2_x/events_1_x", "eventlog_v2_x/../events_2_x",
                            "local-1", "eventlog_v2_x/appstatus_x", "dir/", "\\..\\win"], k=rnd.randint(1, 4))
        for n in names:
            zf.writestr(n, lines if rnd.random() < 0.7 else bytes(rnd.getrandbits(8) for _ in range(50)))
    return buf.getvalue()


def hostile_tar(rnd: random.Random) -> bytes:
    import tarfile

    buf = io.BytesIO()
    lines = b"\n".join(eventlog_lines()[0][:60]) + b"\n"
    with tarfile.open(fileobj=buf, mode=rnd.choice(["w", "w:gz"])) as tf:
        for name in rnd.sample(["../evil", "/abs", "eventlog_v2_x/events_1_x", "local-1", "a/../../b"], k=rnd.randint(1, 3)):
            info = tarfile.TarInfo(name)
            if rnd.random() < 0.3:
                info.type, info.linkname = rnd.choice([tarfile.SYMTYPE, tarfile.LNKTYPE]), "/etc/passwd"
                tf.addfile(info)
            else:
                info.size = len(lines)
                tf.addfile(info, io.BytesIO(lines))
    data = bytearray(buf.getvalue())
    if rnd.random() < 0.4:
        data = data[: rnd.randrange(1, len(data))]
    return bytes(data)


def eventlog_cases(seed: int, n: int) -> Iterator[tuple[str, bytes]]:
    rnd = random.Random(seed)
    for k in range(n):
        r = rnd.random()
        if r < 0.6:
            yield f"log-{seed}-{k}", mutated_log_lines(rnd)
        elif r < 0.93:
            name, data = mutated_log_bytes(rnd)
            yield f"{seed}-{k}-{name}", data
        elif r < 0.965:
            yield f"archive-{seed}-{k}.zip", hostile_zip(rnd)
        else:
            yield f"archive-{seed}-{k}.tar", hostile_tar(rnd)


# ------------------------------------------------------------------------------------------
# captures


def capture_cases(seed: int, n: int) -> Iterator[tuple[str, bytes]]:
    rnd = random.Random(seed)
    docs = capture_docs()
    for k in range(n):
        text = rnd.choice(docs)
        r = rnd.random()
        if r < 0.75:
            doc = json.loads(text)
            doc = mutate_json(rnd, doc, rnd.randint(1, 6))
            if isinstance(doc, dict) and rnd.random() < 0.8:
                doc["format"] = "aqe-lens-capture"  # keep most mutants recognisable as captures
                if rnd.random() < 0.8:
                    doc["format_version"] = 1
            if rnd.random() < 0.15 and isinstance(doc, dict) and isinstance(doc.get("queries"), list) and doc["queries"]:
                q = doc["queries"][0]
                if isinstance(q, dict):
                    q["conf"] = {k2: rnd.choice(v) for k2, v in CONF_VALUES.items()}
            data = json.dumps(doc).encode()
        elif r < 0.85:
            data = text.encode()
            data = data[: rnd.randrange(1, len(data))]
        else:
            data = bytearray(gzip.compress(text.encode(), mtime=0))
            for _ in range(rnd.randint(1, 6)):
                i = rnd.randrange(10, len(data))
                data[i] ^= 1 << rnd.randrange(8)
            yield f"capture-{seed}-{k}.json.gz", bytes(data)
            continue
        if rnd.random() < 0.5:
            data = gzip.compress(data, compresslevel=1, mtime=0)
            yield f"capture-{seed}-{k}.json.gz", data
        else:
            yield f"capture-{seed}-{k}.json", data
