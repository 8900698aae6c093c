"""Values kept out of the heap: how a big event log is read and held in flat memory (issue 14).

An execution of a big log holds ~50 KB of objects (plan versions, metric summaries, reads,
stage task arrays). The History Server keeps its listeners' state in a disk store for the same
reason (``spark.history.store.path``). Here an ended execution is pickled and appended to one
anonymous temporary file; a map keeps its offset and reads it back when asked (the last ones
asked are kept). Pickles are not compressed: most of an execution's bytes are its plan versions,
packed already (14.2 KB of pickle became 9.9 KB at a quarter of the pickling's cost).

Pickle reads back only what this process wrote, into a file nobody else can open: it is made
by :func:`tempfile.TemporaryFile` (``O_EXCL``, mode 0600, unlinked at once, gone when closed).
Input never reaches :func:`pickle.loads` except as values our own objects hold.
"""
from __future__ import annotations

import os
import pickle
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Generic, TypeVar


K = TypeVar("K")
V = TypeVar("V")

#: values asked for most recently that a map keeps read back
KEEP_READ = 64


class SpillFile:
    """An append-only anonymous file of pickles, read by offset (``os.pread``: threads may
    read at once). Writes are gathered in memory up to :attr:`BUFFER` bytes (one system call
    for many small values). ``directory``: where to make it (None: the system's temporary dir)."""

    BUFFER = 1 << 20

    def __init__(self, directory: str | None = None) -> None:
        self._file = tempfile.TemporaryFile(dir=directory)
        self._fd = self._file.fileno()
        self._end = 0  # bytes in the file and the buffer
        self._flushed = 0  # bytes in the file
        self._buf = bytearray()
        self._lock = threading.Lock()

    def put(self, value: object) -> tuple[int, int]:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            off = self._end
            self._end += len(data)
            self._buf += data
            if len(self._buf) >= self.BUFFER:
                self._flush()
        return off, len(data)

    def _flush(self) -> None:
        view = memoryview(self._buf)
        n = 0
        while n < len(view):
            n += os.pwrite(self._fd, view[n:], self._flushed + n)
        view.release()
        self._flushed += n
        self._buf.clear()

    def get(self, ref: tuple[int, int]) -> object:
        off, size = ref
        with self._lock:
            if off >= self._flushed:
                return pickle.loads(self._buf[off - self._flushed:off - self._flushed + size])
        data = os.pread(self._fd, size, off)
        if len(data) != size:
            raise OSError(f"spill file: {size} bytes expected at {off}, {len(data)} read")
        return pickle.loads(data)

    @property
    def size(self) -> int:
        """Bytes written (to the file and its buffer)."""
        return self._end


class SpillMap(MutableMapping[K, V], Generic[K, V]):
    """A dict whose values can be moved to a :class:`SpillFile` (:meth:`spill`) and are read
    back when asked: the :data:`KEEP_READ` read last are kept. Keys keep their first
    insertion order, spilled or not. A spilled value read is a copy while it is not in the kept
    set: change one by assigning it back (which keeps it in memory).

    >>> m = SpillMap({1: "a"}, SpillFile())
    >>> m[2] = "b"; m.spill(1); (dict(m), m.spilled)
    ({1: 'a', 2: 'b'}, 1)
    """

    def __init__(self, items: "Mapping[K, V] | None" = None, file: SpillFile | None = None,
                 keep: int = KEEP_READ) -> None:
        #: values in memory (readers on a hot path may use it directly)
        self.mem: dict[K, V] = dict(items or {})
        self._keys: dict[K, None] = dict.fromkeys(self.mem)
        self._refs: dict[K, tuple[int, int]] = {}
        self._recent: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.file = file
        self.keep = keep

    @property
    def spilled(self) -> int:
        return len(self._refs)

    def is_spilled(self, key: K) -> bool:
        return key in self._refs

    def spill(self, key: K) -> None:
        """Move ``key``'s value to the file (a no-op for a spilled key)."""
        if key in self._refs:
            return
        if self.file is None:
            raise ValueError("this map has no spill file")
        self._refs[key] = self.file.put(self.mem[key])  # (kept in memory if that raises)
        del self.mem[key]

    def spill_together(self, keys: "list[K]") -> None:
        """Move the values of ``keys`` to the file as one pickle (read back together)."""
        keys = [k for k in keys if k in self.mem]
        if not keys:
            return
        if self.file is None:
            raise ValueError("this map has no spill file")
        off, size = self.file.put({k: self.mem[k] for k in keys})
        for k in keys:
            del self.mem[k]
            self._refs[k] = (off, size, True)  # type: ignore[assignment]

    def add_spilled(self, key: K, ref: tuple[int, int]) -> None:
        """A value already in this map's file (``ref``: what :meth:`SpillFile.put` returned)."""
        if key in self.mem:
            del self.mem[key]
        self._refs[key] = ref
        self._keys.setdefault(key, None)

    def take(self, key: K) -> V:
        """``key``'s value, back in memory for good (to be changed in place)."""
        value = self[key]
        if key in self._refs:
            del self._refs[key]
            with self._lock:
                self._recent.pop(key, None)
            self.mem[key] = value
        return value

    def __getitem__(self, key: K) -> V:
        try:
            return self.mem[key]
        except KeyError:
            pass
        ref = self._refs[key]
        with self._lock:
            hit = self._recent.get(key, self)
            if hit is not self:
                self._recent.move_to_end(key)
                return hit  # type: ignore[return-value]
        value = self.file.get(ref[:2])  # type: ignore[union-attr]
        if len(ref) == 3:  # spilled together with other keys
            value = value[key]
        with self._lock:
            self._recent[key] = value  # type: ignore[assignment]
            while len(self._recent) > self.keep:
                self._recent.popitem(last=False)
        return value  # type: ignore[return-value]

    def __setitem__(self, key: K, value: V) -> None:
        if key in self._refs:
            del self._refs[key]
            with self._lock:
                self._recent.pop(key, None)
        self.mem[key] = value
        self._keys.setdefault(key, None)

    def __delitem__(self, key: K) -> None:
        if key in self.mem:
            del self.mem[key]
        else:
            del self._refs[key]
            with self._lock:
                self._recent.pop(key, None)
        del self._keys[key]

    def __contains__(self, key: object) -> bool:
        return key in self.mem or key in self._refs

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._keys))

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"SpillMap({len(self.mem)} in memory, {len(self._refs)} spilled)"

    def __reduce__(self):
        # a pickled log carries its values (the file is this process's): as a plain dict
        return dict, (list(self.items()),)
