"""The AQE settings of a query, checked against a Spark release: keys Apache Spark does not have,
keys the release does not have yet (or any more), legacy names, values the release rejects, and
the defaults that differ from the release the query ran on.

Everything comes from the key registry in :mod:`aqe_core.config`, which is checked against each
release's own ``SQLConf`` (``tests/fixtures/sqlconf/``: the keys, defaults, visibility, and
which values ``SQLConf.setConfString`` accepts).

>>> for f in lint_settings({"spark.sql.adaptive.skewJoin.skewedPartitionFactor": "2.5",
...                         "spark.sql.adaptive.skewedJoin.enabled": "true"}, "3.3.4"):
...     print(f.severity, f.kind, f.message)
error invalid Spark 3.3.4 rejects 2.5 for spark.sql.adaptive.skewJoin.skewedPartitionFactor: should be int, but was '2.5' (a double from 3.4.0)
error unknown spark.sql.adaptive.skewedJoin.enabled is not a setting of Apache Spark (any release 3.0.1-4.3.0); Spark keeps it and nothing reads it. Did you mean spark.sql.adaptive.skewJoin.enabled?
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from aqe_core import config
from aqe_core.config import ConfKey, ConfValueError
from aqe_core.versions import SparkVersion, as_version

__all__ = ["LintFinding", "default_changes", "lint_settings", "SUPPORTED_RANGE"]

SUPPORTED_RANGE = "3.0.1-4.3.0"
#: keys the registry knows although no rule reads them under that name: the legacy advisory key
_LEGACY = {config.A + "shuffle.targetPostShuffleInputSize": config.ADVISORY_PARTITION_SIZE_IN_BYTES}
_SEVERITY = {"unknown": "error", "invalid": "error", "not_in_release": "warning", "legacy_name": "warning",
             "internal": "info", "type_changed": "info", "default_changed": "info"}


@dataclass(frozen=True)
class LintFinding:
    key: str
    kind: str  # unknown | not_in_release | invalid | legacy_name | internal | type_changed | default_changed
    message: str
    value: Optional[str] = None
    suggestion: Optional[str] = None  # a key to use instead

    @property
    def severity(self) -> str:
        return _SEVERITY[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "severity": self.severity, "message": self.message,
                "value": self.value, "suggestion": self.suggestion}


def _entries(key: str) -> list[ConfKey]:
    return [k for k in config._KEYS if k.key == key]


def _linted(key: str) -> bool:
    """Keys this linter speaks for: AQE's namespace and the registry's other keys."""
    return key.startswith(config.ADAPTIVE_PREFIX) or bool(_entries(key))


def lint_settings(settings: Mapping[str, str], target: "str | SparkVersion",
                  source: "str | SparkVersion | None" = None) -> list[LintFinding]:
    """Findings for ``settings`` (key -> conf string) in the ``target`` release; with
    ``source`` (the release the settings were written for), type changes between the two too.
    Keys outside AQE's namespace and the registry are not judged (Spark has thousands)."""
    t = as_version(target)
    s = as_version(source) if source is not None else None
    out: list[LintFinding] = []
    for key, value in settings.items():
        if not _linted(key):
            continue
        entries = _entries(key)
        if not entries:
            out.append(_unknown(key, value))
            continue
        here = next((e for e in entries if e.exists_in(t)), None)
        if here is None:
            out.append(_not_in_release(key, value, entries, t))
            continue
        try:
            config.parse_value(here, value)
        except ConfValueError as exc:
            out.append(LintFinding(key, "invalid", f"Spark {t} rejects {value or repr(value)} for {key}: "
                                   f"{_why(str(exc), key)}{_other_type(entries, here)}", value))
            continue
        if key in _LEGACY:
            out.append(LintFinding(key, "legacy_name", f"{key} is the legacy name of {_LEGACY[key]}: it is read only"
                                   f" while {_LEGACY[key]} is unset", value, _LEGACY[key]))
        elif here.internal:
            out.append(LintFinding(key, "internal", f"{key} is internal in Spark {t} (not documented; it may change"
                                   " without notice)", value))
        if s is not None:
            before = next((e for e in entries if e.exists_in(s)), None)
            if before is not None and before.type != here.type:
                out.append(LintFinding(key, "type_changed", f"{key} is {_a(before.type)} in Spark {s} and"
                                       f" {_a(here.type)} in Spark {t}", value))
    return out


def default_changes(source: "str | SparkVersion", target: "str | SparkVersion",
                    keys: Optional[set[str]] = None) -> list[LintFinding]:
    """AQE settings whose default differs between two releases (and settings one of them lacks),
    for the keys in ``keys`` (default: every public key of the registry).

    >>> [f.message for f in default_changes("3.1.3", "3.2.4", {"spark.sql.adaptive.enabled"})]
    ['spark.sql.adaptive.enabled: default false in Spark 3.1.3, true in Spark 3.2.4']
    """
    s, t = as_version(source), as_version(target)
    ks, kt = config.keys_for(s), config.keys_for(t)
    out: list[LintFinding] = []
    for key in config.all_key_names():
        if keys is not None and key not in keys:
            continue
        a, b = ks.get(key), kt.get(key)
        if a is None and b is None or (keys is None and any(e is not None and e.internal for e in (a, b))):
            continue  # internal settings only when asked about (the query set them)
        if a is None or b is None:
            have, lack = (t, s) if a is None else (s, t)
            entry = b or a
            assert entry is not None  # (both None was skipped above)
            out.append(LintFinding(key, "default_changed", f"{key}: in Spark {have} (default {_default(entry)}), not"
                                   f" in Spark {lack}"))
            continue
        da, db = _parsed_default(a, s), _parsed_default(b, t)
        if da != db:
            out.append(LintFinding(key, "default_changed", f"{key}: default {_default(a)} in Spark {s},"
                                   f" {_default(b)} in Spark {t}"))
    return out


def _parsed_default(entry: ConfKey, v: SparkVersion) -> Any:
    if entry.fallback or entry.default is None:
        return entry.default
    try:
        value = config.parse_value(entry, entry.default)
    except ConfValueError:
        return entry.default
    return value.upper() if entry.check == "log_level" else value


def _default(entry: ConfKey) -> str:
    if entry.default is None:
        return "unset"
    return f"that of {entry.default}" if entry.fallback else entry.default


def _unknown(key: str, value: str) -> LintFinding:
    near = difflib.get_close_matches(key, config.all_key_names(), n=1, cutoff=0.9)
    hint = f". Did you mean {near[0]}?" if near else ""
    return LintFinding(key, "unknown", f"{key} is not a setting of Apache Spark (any release {SUPPORTED_RANGE});"
                       f" Spark keeps it and nothing reads it{hint}", value, near[0] if near else None)


def _not_in_release(key: str, value: str, entries: list[ConfKey], t: SparkVersion) -> LintFinding:
    first = min(as_version(e.since) for e in entries)
    if t < first:
        when = f"it was added in {first}"
    else:
        last = max((as_version(e.until) for e in entries if e.until), default=None)
        when = f"it was removed in {last}" if last is not None else "it does not exist there"
    return LintFinding(key, "not_in_release", f"Spark {t} has no setting {key} ({when}); it keeps the value and"
                       " nothing reads it", value)


def _why(text: str, key: str) -> str:
    """Our parse error without the key repeated."""
    return text.replace(f"{key} ", "").replace(f"{key}: ", "").strip()


def _other_type(entries: list[ConfKey], here: ConfKey) -> str:
    other = [e for e in entries if e.type != here.type]
    if not other:
        return ""
    e = other[0]
    span = f"from {e.since}" if as_version(e.since) > as_version(here.since) else f"before {e.until or here.since}"
    return f" ({_a(e.type)} {span})"


def _a(type_name: str) -> str:
    return {"int": "an int", "double": "a double", "bool": "a boolean", "bytes": "a byte size",
            "string": "a string"}.get(type_name, type_name)
