"""Find the files of one event log and open them as decoded byte streams.

A user may point at: a single log file (``<appId>[_<attempt>][.<codec>][.inprogress]``); a
rolling directory ``eventlog_v2_<appId>[_<attempt>]/`` with ``events_<N>_<appId>[.codec]``
parts, ``.compact`` parts and an ``appstatus_*`` marker; a directory holding exactly one of
those; or a ``.zip`` / ``.gz`` / ``.tar[.gz]`` around any of them (the History Server's
``/logs`` download is a zip). The format is always sniffed from the bytes; the name is only a
hint that is checked.
"""
from __future__ import annotations

import gzip
import io
import os
import posixpath
import re
import stat
import tarfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from struct import error as struct_error
from typing import BinaryIO, Callable, Iterator, Sequence

from aqe_core.readers.eventlog import codecs
from aqe_core.readers.eventlog.errors import (
    DEFAULT_LIMITS, BudgetExceeded, DecodeError, EventLogError, LimitExceeded, Limits,
)
from aqe_core.readers.eventlog.opened import OUTSIDE_ROOTS, Confined, Node, Roots, Unconfined

ROLLING_DIR_PREFIX = "eventlog_v2_"
_EVENTS_RE = re.compile(r"events_(\d+)_([^/]+?)(\.compact)?\Z")
_DBX_RE = re.compile(r"eventlog(?:-(\d{4}-\d\d-\d\d--\d\d-\d\d)(?:\.gz)?)?\Z")
_APPSTATUS_RE = re.compile(r"appstatus_([^/]+?)(\.inprogress)?\Z")
_HEAD = 512


@dataclass
class Part:
    """One file of an event log."""

    name: str
    size: int | None
    opener: Callable[[], BinaryIO]
    index: int | None = None
    compact: bool = False
    wrapper: str | None = None  # "gzip" when the whole part is gzipped around its codec


@dataclass
class LogSource:
    path: str
    layout: str  # "single" | "rolling"
    parts: list[Part]
    #: True/False from the name or the rolling appstatus marker; None if the name says nothing
    complete_by_name: bool | None = None
    container: str | None = None  # "zip" | "gzip" | "tar"
    container_size: int | None = None  # bytes of the archive file (for the expansion ratio)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _closers: list = field(default_factory=list, repr=False)

    @property
    def total_size(self) -> int | None:
        sizes = [p.size for p in self.parts]
        return None if any(s is None for s in sizes) else sum(sizes)  # type: ignore[arg-type]

    def close(self) -> None:
        for c in self._closers:
            try:
                c.close()
            except Exception:  # noqa: BLE001 - best effort: closing every stream
                pass
        self._closers.clear()

    def __enter__(self) -> "LogSource":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --------------------------------------------------------------------------------------------


class IterStream(io.RawIOBase):
    """A read-only file object over an iterator of byte chunks."""

    def __init__(self, chunks: Iterator[bytes]):
        self._it = chunks
        self._buf = b""
        self._pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while self._pos >= len(self._buf):
            try:
                self._buf = next(self._it)
            except StopIteration:
                return 0
            self._pos = 0
        n = min(len(b), len(self._buf) - self._pos)
        b[:n] = self._buf[self._pos : self._pos + n]
        self._pos += n
        return n


def _is_rolling_name(name: str) -> bool:
    return name.startswith(ROLLING_DIR_PREFIX)


def _rolling_parts(entries: list[tuple[str, int | None, Callable[[], BinaryIO]]], where: str,
                   limits: Limits) -> tuple[list[Part], bool | None, list[str], list[str]]:
    """Order a rolling directory's files the way the History Server does."""
    parts: list[Part] = []
    status: bool | None = None
    notes: list[str] = []
    warnings: list[str] = []
    for name, size, opener in entries:
        base = name.rsplit("/", 1)[-1]
        if base.startswith(".") or base.endswith(".crc"):
            continue
        m = _APPSTATUS_RE.match(base)
        if m:
            status = m.group(2) is None
            continue
        stem = base[: -len(".inprogress")] if base.endswith(".inprogress") else base
        compact = stem.endswith(".compact")
        core = stem[: -len(".compact")] if compact else stem
        em = re.match(r"^events_(\d+)_", core)
        if not em:
            warnings.append(f"{where}: ignored {base!r} (not an events_<N>_<appId> file)")
            continue
        parts.append(Part(name=name, size=size, opener=opener, index=int(em.group(1)), compact=compact))
    if len(parts) > limits.max_files:
        raise EventLogError(f"{where} holds {len(parts)} event files, over the limit of {limits.max_files}")
    if not parts:
        raise EventLogError(f"{where} is a rolling event log directory without any events_<N>_* file")
    parts.sort(key=lambda p: (p.index, 1 if p.compact else 0))
    last_compact = max((i for i, p in enumerate(parts) if p.compact), default=None)
    if last_compact is not None:
        dropped = parts[:last_compact]
        parts = parts[last_compact:]
        notes.append(
            f"compacted rolling log: {parts[0].name.rsplit('/', 1)[-1]} replaces files 1..{parts[0].index}"
            + (f" ({len(dropped)} older files present and skipped)" if dropped else "")
            + "; the History Server's compaction drops the SQL events of executions that had"
            " finished at compaction time, so their plans and metrics are missing"
        )
    # The History Server requires contiguous indices.
    idx = [p.index for p in parts if not p.compact]
    first = parts[0].index
    assert first is not None  # (every part of a rolling log was given its number above)
    expected = list(range(first + (1 if parts[0].compact else 0), first + (1 if parts[0].compact else 0) + len(idx)))
    if idx != expected:
        warnings.append(
            f"{where}: event file indices are not contiguous ({', '.join(map(str, [p.index for p in parts]))});"
            " events in the missing files are lost"
        )
    if last_compact is None and parts[0].index != 1:
        warnings.append(f"{where}: the first event file is events_{parts[0].index}, not events_1; the start of the log is missing")
    return parts, status, notes, warnings


def _member_ok(name: str) -> bool:
    """An archive member name that stays inside the archive's folder: relative, no ``..``,
    no drive letters or backslash tricks (we never extract, but names are shown and grouped)."""
    if not name or name.startswith(("/", "\\")) or "\\" in name or "\x00" in name or re.match(r"^[A-Za-z]:", name):
        return False
    parts = name.split("/")
    return ".." not in parts and posixpath.normpath(name) == name.rstrip("/")


def _read_head(node: Node, n: int = _HEAD) -> bytes:
    with node.reader() as f:
        return f.read(n)


def open_source(path: "str | os.PathLike[str] | Node", limits: Limits = DEFAULT_LIMITS,
                roots: "Sequence[str] | Roots | None" = None,
                checkpoint: Callable[[], None] | None = None) -> LogSource:
    """Resolve ``path`` into a :class:`LogSource`. Raises :class:`EventLogError`.
    ``checkpoint()`` is called while a gzip's head is looked for and a tar is listed (a tar of
    300,000 folders lists for 24 s before any event is read); it may raise to stop.

    ``roots``: when given, ``path`` and every file read for it must resolve (symlinks followed)
    inside one of these folders, and is then opened by descriptor from its root's folder
    (:mod:`.opened`: a link swapped in after the check is refused); a part pointing outside
    is skipped with a warning. ``path`` may be a :class:`~.opened.Node` already opened by
    the same rule (the source takes it over)."""
    walker: Unconfined = Unconfined()
    if roots is not None:
        roots = roots if isinstance(roots, Roots) else Roots(roots)
        walker = Confined(roots)
    if isinstance(path, Node):
        node = path
    else:
        path = os.fspath(path)
        if roots is not None:
            real = roots.resolve(path)
            if real is None:
                raise EventLogError(OUTSIDE_ROOTS)
            path = real
        node = walker.open(path)
    try:
        src = _open_node(node, limits, walker, checkpoint)
    except BaseException:
        node.close()
        raise
    src._closers.append(node)
    return src


def _open_node(node: Node, limits: Limits, walker: Unconfined,
               checkpoint: Callable[[], None] | None = None) -> LogSource:
    """The log held by ``node`` (kept open by the caller while the source is read)."""
    path = node.path
    if node.is_dir:
        return _open_dir(node, limits, walker, checkpoint)
    parent = os.path.dirname(os.path.abspath(path))
    if _EVENTS_RE.match(os.path.basename(path)) and _is_rolling_name(os.path.basename(parent)):
        src = open_source(walker.open(parent), limits, getattr(walker, "roots", None), checkpoint)
        src.notes.append(f"{os.path.basename(path)} is one part of a rolling log: read the whole directory {parent}")
        return src
    try:
        head = _read_head(node)
    except OSError as e:
        raise EventLogError(f"cannot read {path}: {e.strerror or e}") from None
    fmt = codecs.sniff(head)
    if fmt == "zip":
        return _open_zip(node, limits)
    if fmt == "tar":
        return _open_tar(node, limits, None, checkpoint)
    if fmt == "gzip":
        inner_head = _gzip_head(node, limits, checkpoint)
        if codecs.sniff(inner_head) == "tar":
            return _open_tar(node, limits, "gzip", checkpoint)
        name = os.path.basename(path)
        inner_name = name[:-3] if name.endswith(".gz") else name
        part = Part(name=path, size=node.size, opener=node.reader, wrapper="gzip")
        return LogSource(path=path, layout="single", parts=[part], container="gzip",
                         complete_by_name=_complete_from_name(inner_name))
    return LogSource(path=path, layout="single", parts=[Part(name=path, size=node.size, opener=node.reader)],
                     complete_by_name=_complete_from_name(os.path.basename(path)))


def _complete_from_name(name: str) -> bool | None:
    return False if name.endswith(".inprogress") else None


def _gzip_head(node: Node, limits: Limits, checkpoint: Callable[[], None] | None = None) -> bytes:
    with node.reader() as f:
        r = codecs.CountingReader(f)
        try:
            for chunk in codecs.decode("gzip", r, limits, checkpoint):
                return chunk[:_HEAD]
        except DecodeError:
            return b""
    return b""


def _open_dir(folder: Node, limits: Limits, walker: Unconfined,
              checkpoint: Callable[[], None] | None = None) -> LogSource:
    """A rolling directory, a Databricks-style rolled log, or a folder holding one log. Every
    file is opened under the folder's descriptor; messages never list the folder's names."""
    path = folder.path
    names = walker.listdir(folder)
    if len(names) > limits.max_files:
        raise EventLogError(f"{os.path.basename(path)} holds {len(names)} files, over the limit of {limits.max_files}")
    base = os.path.basename(os.path.normpath(path))
    if _is_rolling_name(base) or any(_EVENTS_RE.match(n) for n in names):
        found = walker.entries(folder, names)
        entries = [(os.path.join(path, e.name), e.size, walker.opener(folder, e.name)) for e in found if e.kind == "file"]
        outside = sum(e.kind == "outside" for e in found)
        parts, status, notes, warnings = _rolling_parts(entries, path, limits)
        if outside:
            warnings.insert(0, f"{base}: skipped {outside} file(s) that link outside the folders this server may open")
        return LogSource(path=path, layout="rolling", parts=parts, complete_by_name=status,
                         notes=notes, warnings=warnings)
    considered = [n for n in names
                  if not n.startswith(".") and not n.endswith(".crc") and n not in ("MANIFEST.json", "README.md")]
    kinds = {e.name: e for e in walker.entries(folder, considered)}
    candidates = [n for n, e in kinds.items() if e.kind in ("file", "outside") or _is_rolling_name(n)]
    if not candidates:
        raise EventLogError(f"{path} holds no event log file or eventlog_v2_* directory")
    dbx = [n for n in candidates if _DBX_RE.match(n)]
    if len(candidates) > 1 and len(dbx) == len(candidates):
        # Databricks rolls one log into eventlog-<yyyy-mm-dd--hh-mm>[.gz] files; "eventlog" is the newest
        dbx.sort(key=lambda n: (n == "eventlog", _DBX_RE.match(n).group(1) or ""))  # type: ignore[union-attr]
        if any(kinds[n].kind != "file" for n in dbx):
            raise EventLogError(f"{base}: a file of this log links outside the folders this server may open")
        parts = [Part(name=os.path.join(path, n), size=kinds[n].size, opener=walker.opener(folder, n)) for n in dbx]
        return LogSource(path=path, layout="rolling", parts=parts,
                         notes=[f"Databricks-style rolled log: {len(parts)} files read in time order"])
    if len(candidates) > 1:  # no names: a folder's listing is not for messages (report ids, uploads)
        raise EventLogError(f"{path} holds {len(candidates)} event logs; pass one of them")
    if not isinstance(walker, Confined):
        return open_source(walker.child(folder, candidates[0]), limits, checkpoint=checkpoint)
    hide = _hider(candidates[0])
    try:
        src = open_source(walker.child(folder, candidates[0]), limits, walker.roots, checkpoint)
    except EventLogError as e:
        raise EventLogError(hide(str(e))) from None
    src.path = hide(src.path)
    for p in src.parts:
        p.name = hide(p.name)
    src.notes, src.warnings = [hide(n) for n in src.notes], [hide(w) for w in src.warnings]
    return src


#: what a server calls a folder's only log: the user named the folder, not that file (a name in
#: a shared folder, such as a report id or an upload's digest, is not for messages)
_ONLY_FILE = "(this folder's only file)"


def _hider(name: str) -> Callable[[str], str]:
    """Replaces ``name`` where it stands as a name (not inside a longer one) with :data:`_ONLY_FILE`."""
    pattern = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.[\w-])")
    return lambda text: pattern.sub(_ONLY_FILE, text)


def _zip_entry_count(node: Node) -> int | None:
    """Entries the zip's end record announces (read before ``ZipFile`` builds one object per
    entry: a small file may announce millions)."""
    try:
        with node.reader() as fh:
            end = zipfile._EndRecData(fh)  # type: ignore[attr-defined]
    except (OSError, ValueError, struct_error, zipfile.BadZipFile):
        return None
    return None if not end else int(end[zipfile._ECD_ENTRIES_TOTAL])  # type: ignore[attr-defined]


_ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def _open_zip(node: Node, limits: Limits) -> LogSource:
    path = node.path
    name = os.path.basename(path)
    count = _zip_entry_count(node)
    if count is not None and count > limits.max_files:
        raise EventLogError(f"{name}: zip holds {count} files, over the limit of {limits.max_files}")
    try:
        zf = zipfile.ZipFile(node.reader())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct_error, NotImplementedError) as e:
        raise EventLogError(f"{name}: not a readable zip file ({type(e).__name__})") from None
    infos = [i for i in zf.infolist() if not i.is_dir()]
    if len(infos) > limits.max_files:
        zf.close()
        raise EventLogError(f"{name}: zip holds {len(infos)} files, over the limit of {limits.max_files}")
    kept, skipped = [], 0
    for i in infos:
        is_link = stat.S_ISLNK(i.external_attr >> 16)
        # stored/deflated only: bzip2/lzma members decompress without an output bound
        if is_link or not _member_ok(i.filename) or i.compress_type not in _ZIP_METHODS or i.flag_bits & 0x1:
            skipped += 1
        else:
            kept.append(i)

    def opener(info: zipfile.ZipInfo) -> Callable[[], BinaryIO]:
        return lambda: zf.open(info)  # type: ignore[return-value]

    try:
        src = _select_members(path, [(i.filename, i.file_size, opener(i)) for i in kept], limits, "zip")
    except BaseException:
        zf.close()
        raise
    if skipped:
        src.warnings.insert(0, f"{name}: ignored {skipped} member(s) that are links, encrypted, use an unsupported"
                               " compression, or have names outside the archive's folder")
    src.container_size = node.size
    src._closers.append(zf)
    return src


#: decoded bytes a tar.gz skips between two checkpoints (~20 ms of gzip)
_SEEK_STEP = 8 << 20


class _CappedStream(io.RawIOBase):
    """A seekable view of a decompressing stream that refuses to go past ``limit`` decoded
    bytes, past ``ratio`` times the compressed size, or past ``max_seconds`` of CPU time:
    ``tarfile`` skips members by seeking, and a gzip seek decompresses everything skipped."""

    def __init__(self, inner: BinaryIO, limits: Limits, compressed_size: int,
                 checkpoint: Callable[[], None] | None = None):
        self._inner = inner
        self._checkpoint = checkpoint
        cap = limits.max_decompressed_bytes
        if compressed_size * limits.max_expansion_ratio > limits.ratio_grace_bytes:
            cap = min(cap, max(limits.ratio_grace_bytes, compressed_size * limits.max_expansion_ratio))
        self._cap = cap
        self._limits = limits
        self._started = time.thread_time()

    def _check(self, pos: int) -> None:
        if self._checkpoint is not None:
            self._checkpoint()
        if pos > self._cap:
            raise LimitExceeded(codecs.size_limit_message(self._cap))
        if self._limits.max_seconds is not None and time.thread_time() - self._started > self._limits.max_seconds:
            raise LimitExceeded(codecs.time_limit_message(self._limits.max_seconds))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._inner.tell()

    def seek(self, pos: int, whence: int = 0) -> int:
        target = pos if whence == 0 else self._inner.tell() + pos if whence == 1 else None
        if target is None:
            raise OSError("cannot seek from the end of a compressed tar")
        self._check(target)
        here = self._inner.tell()
        while target - here > _SEEK_STEP:  # skipping decompresses: in steps, each a checkpoint
            here = self._inner.seek(here + _SEEK_STEP)
            self._check(here)
        return self._inner.seek(target)

    def read(self, n: int = -1) -> bytes:
        pos = self._inner.tell()
        if n is None or n < 0:
            n = self._cap + 1 - pos
        self._check(pos + 1)
        data = self._inner.read(min(n, self._cap + 1 - pos))
        self._check(pos + len(data))
        return data

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


def _open_tar(node: Node, limits: Limits, wrapper: str | None,
              checkpoint: Callable[[], None] | None = None) -> LogSource:
    path = node.path
    name = os.path.basename(path)
    fobj: BinaryIO | None = None
    try:
        if wrapper == "gzip":
            # (GzipFile and _CappedStream are binary streams; typeshed's BinaryIO is a nominal class)
            fobj = _CappedStream(gzip.GzipFile(fileobj=node.reader(), mode="rb"), limits, node.size,  # type: ignore[assignment, arg-type]
                                 checkpoint)
            tf = tarfile.open(fileobj=fobj, mode="r:")
        else:
            tf = tarfile.open(fileobj=node.reader(), mode="r:")
        members: list[tarfile.TarInfo] = []
        skipped = 0
        listing_stopped = None
        it = iter(tf)
        while True:  # one header at a time: stop at the member limit, not after reading them all
            if checkpoint is not None:
                checkpoint()
            try:
                m = next(it)
            except StopIteration:
                break
            except BudgetExceeded:  # (from the checkpoint) the whole load stops
                raise
            except LimitExceeded as e:  # the members found so far are still read (partially)
                if not members:
                    raise
                listing_stopped = str(e)
                break
            if m.isfile() and _member_ok(m.name):
                members.append(m)
            elif not m.isdir():
                skipped += 1  # links, devices, names with .. or absolute: never read
            if len(members) + skipped > limits.max_files:
                tf.close()
                raise EventLogError(f"{name}: tar holds more than {limits.max_files} files, over the limit")
    except EventLogError:
        if fobj is not None:
            fobj.close()
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error, ValueError) as e:
        if fobj is not None:
            fobj.close()
        raise EventLogError(f"{name}: not a readable tar archive ({type(e).__name__})") from None

    def opener(m: tarfile.TarInfo) -> Callable[[], BinaryIO]:
        return lambda: tf.extractfile(m)  # type: ignore[return-value]

    try:
        src = _select_members(path, [(m.name, m.size, opener(m)) for m in members], limits, "tar")
    except BaseException:
        tf.close()
        raise
    if skipped:
        src.warnings.insert(0, f"{name}: ignored {skipped} member(s) that are links or have names outside the"
                               " archive's folder")
    if listing_stopped:
        src.warnings.insert(0, f"{name}: {listing_stopped}; members after that point were not looked at")
    src.container_size = node.size
    src._closers.append(tf)
    if fobj is not None:
        src._closers.append(fobj)
    return src


def _select_members(path: str, entries: list, limits: Limits, container: str) -> LogSource:
    """Pick the event log inside an archive: a rolling directory or a single file."""
    entries = [e for e in entries if not e[0].rsplit("/", 1)[-1].startswith(".") and not e[0].endswith(".crc")]
    rolling: dict[str, list] = {}
    singles = []
    for e in entries:
        name = e[0]
        parent, _, base = name.rpartition("/")
        pbase = parent.rsplit("/", 1)[-1]
        if _is_rolling_name(pbase) or _EVENTS_RE.match(base) or _APPSTATUS_RE.match(base):
            rolling.setdefault(parent, []).append(e)
        else:
            singles.append(e)
    logs = [("rolling", k) for k in sorted(rolling)] + [("single", e[0]) for e in singles]
    if not logs:
        raise EventLogError(f"{os.path.basename(path)}: the {container} holds no event log")
    warnings = []
    if len(logs) > 1:
        warnings.append(
            f"{path}: the {container} holds {len(logs)} event logs; reading {logs[0][1] or '(top level)'}"
            f" and ignoring {', '.join(str(x[1]) for x in logs[1:4])}{', ...' if len(logs) > 4 else ''}"
        )
    kind, key = logs[0]
    if kind == "rolling":
        parts, status, notes, w = _rolling_parts(rolling[key], f"{path}:{key}", limits)
        return LogSource(path=path, layout="rolling", parts=parts, complete_by_name=status,
                         container=container, notes=notes, warnings=warnings + w)
    name, size, opener = next(e for e in singles if e[0] == key)
    return LogSource(path=path, layout="single", parts=[Part(name=f"{path}:{name}", size=size, opener=opener)],
                     complete_by_name=_complete_from_name(name), container=container, warnings=warnings)
