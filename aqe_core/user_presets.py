"""User presets: the named sets of AQE settings people save on a server (:class:`Preset`).

The built-ins are data in :mod:`aqe_core.model.presets`; user presets are saved as JSON on the server
(``$AQE_LENS_HOME/presets.json``, default ``~/.aqe-lens``), validated with Spark's own parsing
and the conf guard's allow-list (:func:`aqe_core.config.user_setting_refusal`),
written atomically under a lock (:mod:`aqe_core.storage`) so no save is lost and a file that does
not parse is kept aside and reported, never written over.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from aqe_core import config, storage
from aqe_core.config import AQEConf, ConfValueError
from aqe_core.model.presets import BUILTIN_PRESETS, Preset
from aqe_core.server_settings import lens_home
from aqe_core.versions import NEWEST

_NAME_RE = re.compile(r"[A-Za-z0-9 _.\-]{1,60}\Z")  # \Z: "$" passes a trailing newline


def _store() -> Path:
    return lens_home() / "presets.json"


@dataclass(frozen=True)
class UserPresets:
    """The user presets on this server, and what went wrong reading them.

    ``problem`` is a message for people (None when all is well): a presets file that did not
    parse was moved aside to ``kept_as`` (never written over) and stays reported while any such
    kept file sits beside ``presets.json``, so whoever opens the Compare page next sees it, not
    only the request that found it. ``kept`` lists those files (newest last)."""

    presets: list[Preset]
    problem: Optional[str] = None
    kept: tuple[Path, ...] = ()


def _valid_store(data: Any) -> bool:
    return isinstance(data, list) and all(
        isinstance(d, dict) and isinstance(d.get("name"), str) and isinstance(d.get("settings", {}), dict)
        and isinstance(d.get("description", ""), str) and isinstance(d.get("spark_version") or "", str)
        and d.get("base", "query") in ("query", "defaults")
        and all(isinstance(k, str) and isinstance(v, str) for k, v in d.get("settings", {}).items())
        for d in data)


def _read_locked(path: Path) -> list[Preset]:
    """Presets in ``path`` (call under :func:`storage.locked`); raises CorruptFile after moving it aside."""
    data = storage.read_json(path, [], _valid_store)
    return [Preset(d["name"], d.get("description", ""), dict(d.get("settings", {})), d.get("spark_version"),
                   d.get("base", "query"), builtin=False) for d in data]


def _kept_files(path: Path) -> tuple[Path, ...]:
    try:
        return tuple(sorted(path.parent.glob(path.name + ".corrupt-*"), key=lambda p: p.name))
    except OSError:
        return ()


def _report(path: Path) -> tuple[Optional[str], tuple[Path, ...]]:
    kept = _kept_files(path)
    if not kept:
        return None, ()
    names = ", ".join(k.name for k in kept[-3:]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
    return (f"A presets file on this server could not be read and was kept aside as {names} in {path.parent} "
            "(nothing was written over it). Presets saved since then are in presets.json; an operator can repair "
            "or remove the kept file to clear this message."), kept


def load_user_presets() -> UserPresets:
    """User presets saved on this server, with the problem (if any) to show; never raises for a bad file."""
    path = _store()
    with storage.locked(path):
        try:
            presets = _read_locked(path)
        except storage.CorruptFile:
            presets = []
    problem, kept = _report(path)
    return UserPresets(presets, problem, kept)


def all_presets() -> list[Preset]:
    return BUILTIN_PRESETS + load_user_presets().presets


def get_preset(name: str) -> Optional[Preset]:
    return next((p for p in all_presets() if p.name == name), None)


def _write_locked(path: Path, presets: list[Preset]) -> None:
    # one preset per line: readable, and json's fast encoder (indent= takes the slow one)
    storage.atomic_write_text(path, "[\n" + ",\n".join(json.dumps(p.to_dict()) for p in presets) + "\n]\n")


def save_user_preset(name: str, settings: dict[str, str], *, description: str = "", spark_version: Optional[str] = None) -> Preset:
    """Validate (name; every setting allowed by the conf guard's list and parsed as Spark
    would) and store; replaces a user preset of the same name. Raises ValueError with a message
    for people: a preset is run by Re-run for real, so a setting a guarded run refuses
    (``spark.sql.extensions``, a catalog class...) is refused here, when it is saved.

    Read-modify-write under a lock with an atomic replace, so concurrent saves from several
    sessions (or server processes) all land. A presets file that does not parse is moved aside
    first (see :class:`UserPresets`), so the save keeps the new preset and loses nothing old."""
    if not _NAME_RE.match(name or ""):
        raise ValueError("preset names use letters, digits, space, '-', '_' or '.', at most 60 characters")
    if any(p.name == name for p in BUILTIN_PRESETS):
        raise ValueError(f"'{name}' is a built-in preset; choose another name")
    version = spark_version or NEWEST
    for key, value in settings.items():  # the conf guard's own rule: refused now, not at the next run
        why = config.user_setting_refusal(key, value if isinstance(value, str) else str(value), version)
        if why is not None:
            raise ValueError(f"preset not saved: {why}")
    try:
        AQEConf.resolve(version, [settings])
    except ConfValueError as exc:
        raise ValueError(str(exc)) from None
    preset = Preset(name, description, dict(settings), spark_version, builtin=False)
    path = _store()
    with storage.locked(path):
        try:
            current = _read_locked(path)
        except storage.CorruptFile:
            current = []  # the unreadable file is kept aside and reported by load_user_presets
        _write_locked(path, [p for p in current if p.name != name] + [preset])
    return preset


def delete_user_preset(name: str) -> bool:
    """Remove a user preset; False when there is none of that name (or the file was unreadable)."""
    path = _store()
    with storage.locked(path):
        try:
            presets = _read_locked(path)
        except storage.CorruptFile:
            return False
        keep = [p for p in presets if p.name != name]
        if len(keep) == len(presets):
            return False
        _write_locked(path, keep)
    return True
