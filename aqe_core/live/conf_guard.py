"""Settings from strangers are code too: only AQE settings (and a few harmless ones) may be set.

A ``spark.sql.*`` setting is not just a number: ``spark.sql.catalog.<name>=<class>`` makes Spark
load a class, ``spark.sql.runSQLOnFiles=true`` lets a query read files by path, and so on. So
settings a user hands us (Run page presets, CLI ``run --conf``, a workload's overrides, the
query settings of an uploaded capture and user presets behind *Re-run for real*) pass
:func:`check_conf` before a guarded run: a key must be in :func:`aqe_core.config.user_settable_keys`
(the AQE key registry minus class-valued keys, plus a short list of harmless keys), and a
registry key's value must parse as Spark would parse it. Anything else is refused with a
reason. ``trusted`` runs (see :mod:`aqe_core.live.sql_guard`) skip the check.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from aqe_core import config
from aqe_core.config import (
    CLASS_VALUED_KEYS,
    ConfValueError,
    keys_for,
    parse_value,
    user_settable_keys,
)
from aqe_core.live.sql_guard import UnsafeSQL
from aqe_core.versions import NEWEST

MAX_VALUE_CHARS = 200


class UnsafeConf(UnsafeSQL):
    """A setting a guarded run will not apply (message for people)."""


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_conf(conf: Optional[Mapping[str, Any]], *, spark_version: Optional[str] = None,
               ignore: Optional[Callable[[str, str], bool]] = None) -> dict[str, str]:
    """The settings as Spark conf strings, or :class:`UnsafeConf` naming the first refused one.

    ``ignore(key, value)`` drops a setting instead of judging it (Re-run for real drops the
    settings of an uploaded capture that Spark would not let a session change, or that change
    nothing); dropped settings are not returned.
    """
    if conf is None:
        return {}
    if not isinstance(conf, Mapping):
        raise UnsafeConf("settings must be key=value pairs")
    allowed = user_settable_keys()
    known = keys_for(spark_version or NEWEST)
    newest = keys_for(NEWEST)
    out: dict[str, str] = {}
    for key, value in conf.items():
        if not isinstance(key, str):
            raise UnsafeConf(f"setting name {key!r} is not text")
        text = _text(value)
        if ignore is not None and ignore(key, text):
            continue
        if key in CLASS_VALUED_KEYS:
            raise UnsafeConf(f"setting {key} names a Java class for Spark to load, so it cannot be set here")
        if key not in allowed:
            shown = key if len(key) <= 120 else key[:120] + "..."
            raise UnsafeConf(f"setting {shown!r} cannot be set here: only AQE settings and "
                             f"{config.SHUFFLE_PARTITIONS}, {config.AUTO_BROADCASTJOIN_THRESHOLD} and a few others "
                             "can (other settings can load classes or read files)")
        if len(text) > MAX_VALUE_CHARS or any(ord(c) < 32 for c in text):
            raise UnsafeConf(f"setting {key}: the value is too long or holds control characters")
        entry = known.get(key) or newest.get(key)
        if entry is not None:
            try:
                parse_value(entry, text)
            except ConfValueError as exc:
                raise UnsafeConf(f"setting {exc}") from None
        out[key] = text
    return out
