"""Uploads kept on disk, not in the server's memory: Streamlit's uploaded-file manager replaced.

Streamlit's own manager holds every upload's bytes in memory for the session's life and takes
any file id a client makes up. :class:`SpoolingUploadedFileManager` takes its place in the
runtime (:func:`install`, once at start-up, from :mod:`ui.upload_endpoint`):

* it hands out the file ids of a session's upload URLs and remembers them; the upload endpoint
  spools a PUT to one of those ids into the session's folder of
  :func:`aqe_core.share.spool_folder` (0700) and records it here, any other id is refused;
* ``st.file_uploader`` gets a :class:`SpooledUploadedFile`, a read-only file object reading
  that file (``spool_path`` and ``digest`` let the app keep it without reading it);
* a session's files go when the widget deletes them, when the app replaces the source
  (:meth:`~SpoolingUploadedFileManager.keep_only`), when the session shuts down, and when a
  disconnected session expires (:meth:`~SpoolingUploadedFileManager.sweep`: Streamlit drops
  those without shutting them down).
"""
from __future__ import annotations

import hashlib
import io
import math
import mmap
import os
import re
import shutil
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec, UploadFileUrlInfo

from aqe_core.share import spool_folder

if TYPE_CHECKING:
    from streamlit.runtime.stats import CacheStat

#: Streamlit's session and file ids (uuid4): checked before either names a folder or a file
ID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
#: upload URLs one request gets (the app's uploader takes one file), ids a session may hold
#: unused (older ones are forgotten), and files a session may hold at once
MAX_URLS_PER_REQUEST = 16
MAX_UNUSED_IDS = 64
MAX_FILES_PER_SESSION = 16
#: how long a refused upload's reason waits for the page to show it
REFUSAL_SHOWN_S = 60.0
_RECEIVING = "receiving"


class UploadDenied(Exception):
    """A PUT the server will not take: the HTTP status and one line for the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Spooled:
    """One upload on disk: what the browser said it is, where it is, its size and sha256."""

    file_id: str
    name: str
    type: str
    path: Path
    size: int
    digest: str


class SpooledRec(UploadedFileRec):
    """The record Streamlit's widgets get for a spooled upload: no bytes (``data`` is empty),
    the :class:`Spooled` file in ``spool``."""

    spool: Spooled

    @classmethod
    def of(cls, spooled: Spooled) -> "SpooledRec":
        rec = cls(spooled.file_id, spooled.name, spooled.type, b"")
        rec.spool = spooled
        return rec


class SpooledUploadedFile(UploadedFile):
    """An ``UploadedFile`` whose bytes stay in the spooled file: every read goes to the file
    (opened on first use), so the session holds a path, not the upload. Read-only. Made for a
    :class:`SpooledRec`; any other record gets Streamlit's own ``UploadedFile``."""

    def __new__(cls, record: UploadedFileRec, file_urls: Any) -> Any:
        if not isinstance(record, SpooledRec):
            return UploadedFile(record, file_urls)
        return super().__new__(cls)

    def __init__(self, record: SpooledRec, file_urls: Any) -> None:
        io.BytesIO.__init__(self)  # an empty buffer: nothing of the upload in memory
        self.file_id, self.name, self.type = record.file_id, record.name, record.type
        self.size = record.spool.size
        self.spool_path = record.spool.path
        self.digest = record.spool.digest
        self._spool = record.spool
        self._file_urls = file_urls
        self._fh: Optional[io.BufferedReader] = None

    def __deepcopy__(self, memo: dict) -> "SpooledUploadedFile":
        """Streamlit deep-copies a widget's value: a copy names the same file (never its bytes)."""
        return SpooledUploadedFile(SpooledRec.of(self._spool), self._file_urls)

    def __copy__(self) -> "SpooledUploadedFile":
        return self.__deepcopy__({})

    def __reduce__(self) -> tuple:
        return SpooledUploadedFile, (SpooledRec.of(self._spool), self._file_urls)

    def _file(self) -> io.BufferedReader:
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        if self._fh is None:
            self._fh = open(self.spool_path, "rb")  # closed with this object
        return self._fh

    def read(self, size: Optional[int] = -1) -> bytes:
        return self._file().read(size)

    def read1(self, size: Optional[int] = -1) -> bytes:
        return self._file().read1(-1 if size is None else size)

    def readinto(self, buffer: Any) -> int:
        return self._file().readinto(buffer)

    def readline(self, size: Optional[int] = -1) -> bytes:
        return self._file().readline(size)

    def readlines(self, hint: Optional[int] = -1) -> list[bytes]:
        return self._file().readlines(-1 if hint is None else hint)

    def __iter__(self) -> "SpooledUploadedFile":
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._file().seek(pos, whence)

    def tell(self) -> int:
        return self._file().tell()

    def getvalue(self) -> bytes:
        """The whole file, read now (what the caller asked for: prefer reading in chunks)."""
        return self.spool_path.read_bytes()

    def getbuffer(self) -> memoryview:
        """A read-only view of the file, mapped, not read (``hashlib.file_digest`` uses it)."""
        if self.size == 0:
            return memoryview(b"")
        return memoryview(mmap.mmap(self._file().fileno(), 0, access=mmap.ACCESS_READ))

    def writable(self) -> bool:
        return False

    def write(self, data: Any) -> int:
        raise io.UnsupportedOperation("an uploaded file is read-only")

    def writelines(self, lines: Any) -> None:
        raise io.UnsupportedOperation("an uploaded file is read-only")

    def truncate(self, size: Optional[int] = None) -> int:
        raise io.UnsupportedOperation("an uploaded file is read-only")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        super().close()


class SpoolingUploadedFileManager(MemoryUploadedFileManager):
    """Streamlit's uploaded-file manager, keeping uploads on disk (see the module docstring).
    A subclass of the memory manager only so Streamlit's ``isinstance`` checks still hold;
    none of its storage is used. Thread-safe (script threads read, the event loop writes)."""

    def __init__(self, upload_endpoint: str) -> None:
        super().__init__(upload_endpoint)
        self._ids: dict[str, dict[str, "Spooled | str | None"]] = {}  # None: handed out, not sent yet
        self._refusals: dict[str, tuple[float, str]] = {}  # why a session's last upload was refused
        self._ids_lock = threading.Lock()

    # -- Streamlit's interface -----------------------------------------------------------------

    def get_upload_urls(self, session_id: str, file_names: Sequence[str]) -> list[UploadFileUrlInfo]:
        out = []
        with self._ids_lock:
            ids = self._ids.setdefault(session_id, {})
            for _ in list(file_names)[:MAX_URLS_PER_REQUEST]:
                file_id = str(uuid.uuid4())
                ids[file_id] = None
                out.append(UploadFileUrlInfo(file_id, f"{self.endpoint}/{session_id}/{file_id}",
                                             f"{self.endpoint}/{session_id}/{file_id}"))
            unused = [f for f, v in ids.items() if v is None]
            for f in unused[:max(0, len(unused) - MAX_UNUSED_IDS)]:  # the oldest go
                del ids[f]
        return out

    def get_files(self, session_id: str, file_ids: Sequence[str]) -> list[UploadedFileRec]:
        with self._ids_lock:
            ids = self._ids.get(session_id, {})
            found = [ids.get(f) for f in file_ids]
        return [SpooledRec.of(s) for s in found if isinstance(s, Spooled) and s.path.is_file()]

    def remove_file(self, session_id: str, file_id: str) -> None:
        with self._ids_lock:
            gone = self._ids.get(session_id, {}).pop(file_id, None)
        if isinstance(gone, Spooled):
            gone.path.unlink(missing_ok=True)

    def remove_session_files(self, session_id: str) -> None:
        with self._ids_lock:
            self._ids.pop(session_id, None)
            self._refusals.pop(session_id, None)
        if ID_RE.match(session_id):
            shutil.rmtree(spool_folder() / session_id, ignore_errors=True)

    def add_file(self, session_id: str, file: UploadedFileRec) -> None:
        """Bytes handed over in memory (Streamlit's own upload route, which the upload endpoint
        stands in front of): spooled like a PUT, if the id was handed out to that session."""
        path = self.begin(session_id, file.file_id) / file.file_id
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(file.data)
        except OSError:
            self.abort(session_id, file.file_id)
            raise
        self.finish(session_id, Spooled(file.file_id, file.name, file.type, path, len(file.data),
                                        hashlib.sha256(file.data).hexdigest()))

    def get_stats(self, family_names: Optional[Sequence[str]] = None) -> dict[str, list["CacheStat"]]:
        return {}  # nothing held in memory

    # -- the upload endpoint's and the app's -------------------------------------------------

    def begin(self, session_id: str, file_id: str) -> Path:
        """Claim a handed-out, unused id for a PUT; the session's spool folder. UploadDenied
        (nothing written) for an id this server did not hand out to this session."""
        with self._ids_lock:
            ids = self._ids.get(session_id)
            if ids is None or file_id not in ids or not ID_RE.match(session_id):
                raise UploadDenied(404, "unknown upload id: upload through the app's file picker"
                                        " (ids are handed out per session)")
            if ids[file_id] is not None:
                raise UploadDenied(409, "this upload id was used already")
            if sum(isinstance(v, Spooled) for v in ids.values()) >= MAX_FILES_PER_SESSION:
                raise UploadDenied(409, f"this session holds {MAX_FILES_PER_SESSION} uploads; remove one first")
            ids[file_id] = _RECEIVING
        folder = spool_folder() / session_id
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            self.abort(session_id, file_id)
            raise
        return folder

    def abort(self, session_id: str, file_id: str) -> None:
        """A PUT that failed: its id may be used again."""
        with self._ids_lock:
            ids = self._ids.get(session_id)
            if ids is not None and ids.get(file_id) == _RECEIVING:
                ids[file_id] = None

    def finish(self, session_id: str, spooled: Spooled) -> None:
        """A PUT received whole; if the session ended meanwhile its file goes at once."""
        with self._ids_lock:
            ids = self._ids.get(session_id)
            live = ids is not None and ids.get(spooled.file_id) == _RECEIVING
            if live:
                ids[spooled.file_id] = spooled
        if not live:
            spooled.path.unlink(missing_ok=True)

    def note_refusal(self, session_id: str, message: str) -> None:
        """A PUT of the session's widget was refused: the page says why on its next run (the
        browser's widget only shows the HTTP status)."""
        with self._ids_lock:
            if session_id in self._ids:
                self._refusals[session_id] = (time.monotonic(), message)

    def take_refusal(self, session_id: str) -> Optional[str]:
        """The refusal, once, if recent (one not shown within a minute is old news)."""
        with self._ids_lock:
            when, message = self._refusals.pop(session_id, (0.0, None))
        return message if time.monotonic() - when < REFUSAL_SHOWN_S else None

    def keep_only(self, session_id: str, file_id: str) -> None:
        """The app opened ``file_id`` as the session's source: its other uploads go."""
        with self._ids_lock:
            ids = self._ids.get(session_id, {})
            others = [f for f, v in ids.items() if isinstance(v, Spooled) and f != file_id]
        for f in others:
            self.remove_file(session_id, f)

    def sweep(self, alive: Callable[[str], bool]) -> list[str]:
        """Remove the files of sessions that are gone (``alive`` says which are not), and any
        session folder on disk this manager does not know; returns the sessions removed."""
        with self._ids_lock:
            known = list(self._ids)
        gone = [s for s in known if not alive(s)]
        for s in gone:
            self.remove_session_files(s)
        with self._ids_lock:
            known = set(self._ids)
        for d in spool_folder().iterdir():
            if d.is_dir() and d.name not in known and not alive(d.name):
                shutil.rmtree(d, ignore_errors=True)
        return gone

    def held(self, session_id: str) -> list[Spooled]:
        """The session's spooled uploads (tests and the app look)."""
        with self._ids_lock:
            return [v for v in self._ids.get(session_id, {}).values() if isinstance(v, Spooled)]


def spooled_manager() -> Optional[SpoolingUploadedFileManager]:
    """The running server's spooling manager (None in AppTest or before :func:`install`)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    mgr = getattr(Runtime.instance(), "uploaded_file_mgr", None)
    return mgr if isinstance(mgr, SpoolingUploadedFileManager) else None


#: Streamlit's widget modules that build ``UploadedFile`` objects from the manager's records
_WIDGET_MODULES = ("streamlit.elements.widgets.file_uploader", "streamlit.elements.widgets.camera_input",
                   "streamlit.elements.widgets.audio_input", "streamlit.elements.widgets.chat")


def install(runtime: Any) -> SpoolingUploadedFileManager:
    """Put a spooling manager in ``runtime`` (before it has sessions), in each place Streamlit
    keeps its manager, and make the widgets build :class:`SpooledUploadedFile` objects.
    RuntimeError when this Streamlit keeps them elsewhere: uploads are then refused."""
    import importlib

    current = getattr(runtime, "_uploaded_file_mgr", None)
    if isinstance(current, SpoolingUploadedFileManager):
        return current
    sessions = getattr(runtime, "_session_mgr", None)
    if not isinstance(current, MemoryUploadedFileManager) or getattr(sessions, "_uploaded_file_mgr", None) is not current:
        raise RuntimeError("this Streamlit version keeps its uploaded-file manager where AQE Lens does not look")
    mine = SpoolingUploadedFileManager(current.endpoint)
    spool_folder()  # made now: a killed server's spooled files go at start-up
    runtime._uploaded_file_mgr = mine
    sessions._uploaded_file_mgr = mine
    for name in _WIDGET_MODULES:
        module = importlib.import_module(name)
        if getattr(module, "UploadedFile", None) is UploadedFile:
            module.UploadedFile = SpooledUploadedFile
    return mine


def keep_upload(up: UploadedFile) -> str:
    """Keep the upload ``up`` (:mod:`aqe_core.share`) and return its digest: a spooled one
    becomes the kept file without a copy; one Streamlit holds in memory (AppTest) is copied a
    MiB at a time. UploadRefused (one line) when it cannot be kept."""
    from aqe_core.share import UploadRefused, keep_spooled_upload, store_upload_stream

    try:
        if isinstance(up, SpooledUploadedFile):
            return keep_spooled_upload(up.name, up.spool_path, up.digest)
        up.seek(0)
        return store_upload_stream(up.name, up)
    except OSError as exc:
        raise UploadRefused(f"this upload could not be kept ({exc.strerror or type(exc).__name__});"
                            " upload it again") from None


def drop_other_uploads(up: UploadedFile) -> None:
    """``up`` is the session's source now: the session's other spooled uploads go."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    mgr, ctx = spooled_manager(), get_script_run_ctx()
    if mgr is not None and ctx is not None:
        mgr.keep_only(ctx.session_id, up.file_id)


def upload_refusal() -> Optional[str]:
    """Why this session's last upload was refused, once (None if it was not)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    mgr, ctx = spooled_manager(), get_script_run_ctx()
    return mgr.take_refusal(ctx.session_id) if mgr is not None and ctx is not None else None


def widget_limit_mb(max_mb: float) -> int:
    """``st.file_uploader``'s own limit (whole MB, at least 1) for ``max_upload_mb``: the browser
    refuses a bigger file before sending it; the endpoint checks the exact limit."""
    return max(1, math.ceil(max_mb))
