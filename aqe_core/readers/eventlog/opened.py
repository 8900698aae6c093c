"""Files and folders held open by file descriptor, so that what is read is what was checked.

A shared server checks that a path resolves inside its roots, then must read *that* file: a
second lookup by path could meet a folder swapped for a symlink in between (anyone who may
write to a shared spark-events folder can do that) and read a file outside the roots. So
:class:`Confined` opens the root's folder and walks the checked (already resolved) path one
component at a time with ``openat(dir_fd, name, O_NOFOLLOW)``: a symlink met on the way is
refused, and every file of a rolling log is opened under the folder's own descriptor. A link
*inside* a folder (a rolling log's part) is resolved and checked against the roots again,
then opened by the same walk, so it can point elsewhere inside the roots, never outside.

Only regular files and folders are opened: a FIFO, a device or a socket is refused (files are
opened with ``O_NONBLOCK`` and checked with ``fstat`` before any read, so a FIFO never blocks
a session), and an open that hangs (a stalled network file system) gives up after
:data:`OPEN_TIMEOUT_S`. :class:`Unconfined` (the CLI: the user's own files) follows links
and has no roots, with the same file-type rule.
"""
from __future__ import annotations

import errno
import io
import os
import queue
import stat
import threading
from dataclasses import dataclass
from typing import BinaryIO, Callable, Sequence, TypeVar

from aqe_core.readers.eventlog.errors import EventLogError

#: the message for a path outside the roots: the same whether or not the path exists
OUTSIDE_ROOTS = ("this path is outside the folders this server may open (the bundled samples, the app's data"
                 " directory and the roots set in server.toml)")

#: seconds one open (or folder listing) may take before it is given up
OPEN_TIMEOUT_S = 10.0

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_ANY = os.O_RDONLY | _O_CLOEXEC | _O_NOCTTY | _O_NONBLOCK  # a FIFO opens without waiting for a writer
_DIR = os.O_RDONLY | _O_CLOEXEC | _O_DIRECTORY | _O_NOFOLLOW

T = TypeVar("T")


class Roots:
    """The folders a server may read from; a path is inside when its real path (symlinks
    resolved) is one of them or below one."""

    def __init__(self, roots: Sequence[str]):
        self.real = [os.path.realpath(r) for r in roots]

    def resolve(self, path: str) -> str | None:
        """The real path of ``path`` if it lies inside a root, else None."""
        real = os.path.realpath(path)
        return real if self.root_of(real) is not None else None

    def root_of(self, real: str) -> str | None:
        """The outermost root holding the real path ``real``, else None (a root nested in
        another is then walked through without following links, like any folder)."""
        inside = [r for r in self.real if real == r or real.startswith(r.rstrip(os.sep) + os.sep)]
        return min(inside, key=len) if inside else None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def not_regular_message(name: str, mode: int) -> str:
    return f"{name} is {_kind(mode)}: only regular files and folders are read"


class _Call:
    """One call in a daemon worker thread that the caller may abandon (daemons: a hung file
    system never holds the process at exit); a result that comes after that goes to ``cleanup``."""

    def __init__(self, fn: Callable[[], T], cleanup: Callable[[T], None] | None):
        self.fn, self.cleanup = fn, cleanup
        self.lock, self.done = threading.Lock(), threading.Event()
        self.abandoned = False
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            result = self.fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            self.error = e
            self.done.set()
            return
        with self.lock:
            if self.abandoned:
                if self.cleanup is not None:
                    self.cleanup(result)
                return
            self.result = result
            self.done.set()


_tasks: "queue.SimpleQueue[_Call]" = queue.SimpleQueue()
_idle_lock = threading.Lock()
_idle = 0  # workers waiting for a call; one stuck in a hung open is not idle, so a new one starts


def _work() -> None:
    global _idle
    while True:
        _tasks.get().run()
        with _idle_lock:
            _idle += 1


def _submit(call: _Call) -> None:
    global _idle
    with _idle_lock:
        if _idle:
            _idle -= 1
        else:
            threading.Thread(target=_work, name="aqe-open", daemon=True).start()
    _tasks.put(call)


def _forget_workers() -> None:
    """A forked child has none of its parent's threads: start afresh."""
    global _tasks, _idle_lock, _idle
    _tasks, _idle_lock, _idle = queue.SimpleQueue(), threading.Lock(), 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def _timed(fn: Callable[[], T], what: str, cleanup: Callable[[T], None] | None = None) -> T:
    """``fn()`` in a worker thread, given up after :data:`OPEN_TIMEOUT_S` (:class:`EventLogError`)."""
    call = _Call(fn, cleanup)
    _submit(call)
    if not call.done.wait(OPEN_TIMEOUT_S):
        with call.lock:
            call.abandoned = not call.done.is_set()
        if call.abandoned:
            raise EventLogError(f"opening {what} took more than {OPEN_TIMEOUT_S:g} s; given up (a stalled file system?)")
    if call.error is not None:
        raise call.error
    return call.result  # type: ignore[return-value]


class FdReader(io.RawIOBase):
    """A seekable reader over a descriptor with its own position (``pread``): several readers
    of one open file (a zip's members, a sniffed head) never move each other."""

    def __init__(self, fd: int, *, own: bool):
        super().__init__()
        self._fd, self._own, self._pos = fd, own, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if hasattr(os, "preadv"):
            n = os.preadv(self._fd, [b], self._pos)
        else:
            data = os.pread(self._fd, len(b), self._pos)
            n = len(data)
            b[:n] = data
        self._pos += n
        return n

    def seek(self, pos: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: os.fstat(self._fd).st_size}[whence]
        if base + pos < 0:
            raise OSError(errno.EINVAL, "negative seek position")
        self._pos = base + pos
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        if not self.closed and self._own:
            os.close(self._fd)
        super().close()


@dataclass
class Node:
    """A regular file or a folder held open; ``path`` names it in messages and part names."""

    path: str
    fd: int
    is_dir: bool
    size: int

    def reader(self) -> BinaryIO:
        """A fresh buffered reader from the start of this file (the node keeps the descriptor)."""
        return io.BufferedReader(FdReader(self.fd, own=False), 1 << 16)

    def owning_reader(self) -> BinaryIO:
        """A buffered reader that takes the descriptor over (closing it closes the file)."""
        return io.BufferedReader(FdReader(self.fd, own=True), 1 << 16)

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)


def _node(path: str, fd: int) -> Node:
    """A node for ``fd`` if it is a regular file or a folder; anything else is closed, refused."""
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise EventLogError(not_regular_message(os.path.basename(path) or path, st.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return Node(path, fd, stat.S_ISDIR(st.st_mode), st.st_size)


def _lstat(name: str, dir_fd: int | None, follow: bool = False) -> int:
    """The mode of ``name`` (in the folder ``dir_fd``), 0 if it cannot be read: why an open
    failed (Linux reports a link met with ``O_NOFOLLOW`` as ELOOP, or as ENOTDIR with
    ``O_DIRECTORY``; a socket as ENXIO)."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=follow).st_mode
    except OSError:
        return 0


def _met_link(e: OSError, mode: int) -> bool:
    return e.errno in (errno.ELOOP, errno.EMLINK) or stat.S_ISLNK(mode)


def _os_error(path: str, e: OSError, mode: int = 0) -> EventLogError:
    if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
        return EventLogError(not_regular_message(os.path.basename(path) or path, mode))
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return EventLogError(f"no such file or directory: {path}")
    return EventLogError(f"cannot read {os.path.basename(path) or path}: {e.strerror or type(e).__name__}")


@dataclass(frozen=True)
class Entry:
    """One name in a folder: ``kind`` is "file", "dir", "other" or "outside" (a link whose
    target lies outside the roots); ``size`` for files."""

    name: str
    kind: str
    size: int | None = None


class Unconfined:
    """The CLI's opener: the user's own files, links followed; regular files and folders only.
    Every call is given up after :data:`OPEN_TIMEOUT_S` (:func:`_timed`)."""

    def open(self, path: str) -> Node:
        """Open ``path`` once; raises :class:`EventLogError`."""
        return _timed(lambda: self._open(path), os.path.basename(path) or path, Node.close)

    def child(self, folder: Node, name: str) -> Node:
        """``name`` opened under the held folder (never looked up again by path)."""
        return _timed(lambda: self._child(folder, name), name, Node.close)

    def listdir(self, folder: Node) -> list[str]:
        return sorted(_timed(lambda: os.listdir(folder.fd), os.path.basename(folder.path) or folder.path))

    def entries(self, folder: Node, names: list[str]) -> list[Entry]:
        """What each of ``names`` in ``folder`` is, without opening it."""
        return _timed(lambda: [self._entry(folder, n) for n in names], os.path.basename(folder.path) or folder.path)

    def opener(self, folder: Node, name: str) -> Callable[[], BinaryIO]:
        """Opens ``name`` under ``folder`` when the part is read: ``OSError`` if it is no
        longer a regular file (the loader turns that into a warning)."""
        def open_part() -> BinaryIO:
            try:
                node = self.child(folder, name)
            except EventLogError as e:
                raise OSError(errno.EINVAL, str(e)) from None
            if node.is_dir:
                node.close()
                raise OSError(errno.EISDIR, f"{name} is a folder")
            return node.owning_reader()
        return open_part

    def _open(self, path: str) -> Node:
        try:
            return _node(path, os.open(path, _ANY))
        except OSError as e:
            raise _os_error(path, e, _lstat(path, None, follow=True)) from None

    def _child(self, folder: Node, name: str) -> Node:
        path = os.path.join(folder.path, name)
        try:
            return _node(path, os.open(name, _ANY, dir_fd=folder.fd))
        except OSError as e:
            raise _os_error(path, e, _lstat(name, folder.fd, follow=True)) from None

    def _entry(self, folder: Node, name: str) -> Entry:
        try:
            return _entry(name, os.stat(name, dir_fd=folder.fd))
        except OSError:
            return Entry(name, "other")


def _entry(name: str, st: os.stat_result) -> Entry:
    if stat.S_ISREG(st.st_mode):
        return Entry(name, "file", st.st_size)
    return Entry(name, "dir" if stat.S_ISDIR(st.st_mode) else "other")


class Confined(Unconfined):
    """The server's opener: only real paths inside ``roots``, walked from the root's folder
    with ``O_NOFOLLOW`` (a symlink met after the check is refused: :data:`OUTSIDE_ROOTS`)."""

    def __init__(self, roots: Roots):
        self.roots = roots

    def _open(self, path: str) -> Node:
        """Open the real path ``path`` (checked inside the roots) by walking down from its root."""
        root = self.roots.root_of(path) if os.path.isabs(path) else None
        if root is None or os.path.normpath(path) != path:
            raise EventLogError(OUTSIDE_ROOTS)
        names = [n for n in path[len(root):].split(os.sep) if n]
        try:
            fd = os.open(root, os.O_RDONLY | _O_CLOEXEC | _O_DIRECTORY)
        except OSError as e:
            raise _os_error(path, e) from None
        for i, name in enumerate(names):
            try:
                nfd = os.open(name, _DIR if i < len(names) - 1 else _ANY | _O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                mode = _lstat(name, fd)
                raise (EventLogError(OUTSIDE_ROOTS) if _met_link(e, mode) else _os_error(path, e, mode)) from None
            finally:
                os.close(fd)
            fd = nfd
        return _node(path, fd)

    def _link(self, folder: Node, name: str) -> str | None:
        """The real path of the link ``name`` in ``folder`` if it lies inside the roots."""
        return self.roots.resolve(os.path.join(folder.path, name))

    def _entry(self, folder: Node, name: str) -> Entry:
        try:
            st = os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                real = self._link(folder, name)
                if real is None:
                    return Entry(name, "outside")
                st = os.stat(real)  # only sorts the entry: the part is opened by the walk
        except OSError:
            return Entry(name, "other")
        return _entry(name, st)

    def _child(self, folder: Node, name: str) -> Node:
        path = os.path.join(folder.path, name)
        try:
            return _node(path, os.open(name, _ANY | _O_NOFOLLOW, dir_fd=folder.fd))
        except OSError as e:
            mode = _lstat(name, folder.fd)
            if not _met_link(e, mode):
                raise _os_error(path, e, mode) from None
        real = self._link(folder, name)  # a link: checked, then walked from its root
        if real is None:
            raise EventLogError(OUTSIDE_ROOTS)
        return self._open(real)
