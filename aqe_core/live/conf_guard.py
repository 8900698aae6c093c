"""Settings from strangers are code too: only AQE settings (and a few harmless ones) may be set.

A ``spark.sql.*`` setting is not just a number: ``spark.sql.catalog.<name>=<class>`` makes Spark
load a class, ``spark.sql.runSQLOnFiles=true`` lets a query read files by path, and so on. So
settings a user hands us (Run page presets, CLI ``run --conf``, a workload's overrides, the
query settings of an uploaded capture and user presets behind *Re-run for real*) pass
:func:`check_conf` before a guarded run: a key must be in :func:`aqe_core.config.user_settable_keys`
(the AQE key registry minus class-valued keys, plus a short list of harmless keys), and a
registry key's value must parse as Spark would parse it. Anything else is refused with a
reason. ``trusted`` runs (see :mod:`aqe_core.live.sql_guard`) skip the check.

The settings of a new SparkContext (``run --spark-conf``) pass :func:`check_spark_conf`: the
same list plus memory sizes and core counts, so ``spark.jars``, ``spark.sql.extensions`` or
``spark.driver.extraJavaOptions`` never reach a guarded JVM. User presets are judged by the same
rule (:func:`aqe_core.config.user_setting_refusal`) when they are saved.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from aqe_core.config import user_setting_refusal
from aqe_core.live.sql_guard import UnsafeSQL


class UnsafeConf(UnsafeSQL):
    """A setting a guarded run will not apply (message for people)."""


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_conf(conf: Optional[Mapping[str, Any]], *, spark_version: Optional[str] = None,
               ignore: Optional[Callable[[str, str], bool]] = None, context: bool = False) -> dict[str, str]:
    """The settings as Spark conf strings, or :class:`UnsafeConf` naming the first refused one.

    ``ignore(key, value)`` drops a setting instead of judging it (Re-run for real drops the
    settings of an uploaded capture that Spark would not let a session change, or that change
    nothing); dropped settings are not returned. ``context`` judges the settings of a new
    SparkContext (``run --spark-conf``): the same allow-list plus memory sizes and core counts.
    """
    if conf is None:
        return {}
    if not isinstance(conf, Mapping):
        raise UnsafeConf("settings must be key=value pairs")
    out: dict[str, str] = {}
    for key, value in conf.items():
        text = _text(value)
        if isinstance(key, str) and ignore is not None and ignore(key, text):
            continue
        why = user_setting_refusal(key, text, spark_version, context=context)
        if why is not None:
            raise UnsafeConf(why)
        out[key] = text
    return out


def check_spark_conf(conf: Optional[Mapping[str, Any]]) -> dict[str, str]:
    """:func:`check_conf` for the settings of a new SparkContext (``run --spark-conf``)."""
    return check_conf(conf, context=True)
