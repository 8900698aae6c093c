"""Which logs the app on this server cannot open from a fleet scan's rows (issue 14): said by the
scan command before it reads and by the Fleet page before any click.

Apart from :mod:`aqe_core.fleet.result`, which re-exports it, so the scan command says it without
importing pandas (0.3-0.4 s of the command's CPU, for a scan that reads no earlier table).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from aqe_core.opening import SourceError, resolve_in_roots

__all__ = ["Unopenable", "local_path", "unopenable"]


def local_path(file: str) -> Optional[str]:
    """A row's file as a path this server can open (``file:`` URIs included), else None."""
    if file.startswith("file:"):
        return "/" + file[len("file:"):].lstrip("/")
    return None if ":" in file.split("/", 1)[0] else file


@dataclass(frozen=True)
class Unopenable:
    """Logs the app on this server cannot open from a Fleet row, by why: outside its roots, or
    not on its file system (``hdfs:``, ``s3a:`` ...). Said before any click."""

    outside_roots: list[str]
    elsewhere: list[str]

    def __bool__(self) -> bool:
        return bool(self.outside_roots or self.elsewhere)

    def sentences(self, shown: int = 3, quote: Callable[[str], str] = str) -> list[str]:
        """One sentence per kind, naming the first ``shown`` logs, each through ``quote`` (the
        page's markdown escape: the names come from the scanned logs' paths)."""
        def some(files: list[str]) -> str:
            more = f" and {len(files) - shown} more" if len(files) > shown else ""
            return ", ".join(quote(f) for f in files[:shown]) + more

        out = []
        if self.outside_roots:
            n = len(self.outside_roots)
            out.append(f"{n} log{'s are' if n != 1 else ' is'} outside this server's roots ({some(self.outside_roots)}):"
                       f" add {'their folder' if n != 1 else 'its folder'} to roots in the server settings (AQE_LENS_ROOTS)"
                       f" to open {'them' if n != 1 else 'it'} here")
        if self.elsewhere:
            n = len(self.elsewhere)
            out.append(f"{n} log{'s are' if n != 1 else ' is'} not on this server's file system"
                       f" ({some(self.elsewhere)}): open {'them where they are' if n != 1 else 'it where it is'}")
        return out


def unopenable(files: Iterable[Any], roots: Optional[list[str]] = None) -> Unopenable:
    """Which of ``files`` (a scan's ``file`` column, or the logs a scan is about to read) the app
    cannot open, checked against ``roots`` (default: the server's) as opening one would."""
    outside: list[str] = []
    elsewhere: list[str] = []
    for file in dict.fromkeys(str(f) for f in files if isinstance(f, str) and f):
        path = local_path(file)
        if path is None:
            elsewhere.append(file)
            continue
        try:
            resolve_in_roots(path, roots)
        except SourceError:
            outside.append(file)
    return Unopenable(outside, elsewhere)
