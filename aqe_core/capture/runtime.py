"""The shared Spark runtime AQE Lens runs queries on.

One SparkSession per process (Spark allows one SparkContext per JVM). By default it is
embedded (``local[*]``); a master URL (``spark://host:port``, ``yarn``, ``k8s://...``) runs
on a cluster, where the data lives. Each run gets its own ``spark.newSession()`` so one
preset's ``spark.sql.*`` settings never leak into another run. If the process already has
an active SparkSession (a notebook, a user's PySpark program), it is adopted as it is.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from aqe_core.capture.capture import EventLogTap
from aqe_core.capture.java import JavaChoice, ensure_java, installed_pyspark_version

DEFAULT_MASTER = "local[*]"

#: JDK packages Spark < 3.3 needs opened to run on Java 17 (3.3+ opens them itself).
JDK_OPENS = ["java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
             "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs",
             "sun.security.action", "sun.util.calendar"]


class RuntimeConflict(RuntimeError):
    """A runtime with another master is already running in this process."""


def _vtuple(v: Optional[str]) -> tuple[int, int, int]:
    parts = ((v or "0").split("-")[0].split(".") + ["0", "0"])[:3]
    out = []
    for p in parts:
        digits = "".join(ch for ch in p if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)  # type: ignore[return-value]


@dataclass
class SparkRuntime:
    """The shared session and what was learned starting it."""

    spark: Any
    master: str
    java: Optional[JavaChoice] = None
    owned: bool = False  # we started it (and may stop it)
    tap: Optional[EventLogTap] = None
    warnings: list[str] = field(default_factory=list)

    @property
    def version(self) -> str:
        return str(self.spark.version)

    @property
    def default_parallelism(self) -> int:
        return int(self.spark.sparkContext.defaultParallelism)

    def new_session(self, sql_conf: Optional[Mapping[str, Any]] = None) -> Any:
        """A fresh session sharing the SparkContext, with ``sql_conf`` applied (later wins)."""
        session = self.spark.newSession()
        for k, v in (sql_conf or {}).items():
            session.conf.set(str(k), _conf_str(v))
        return session

    def java_info(self) -> Optional[dict[str, Any]]:
        info = self.java.to_dict() if self.java else None
        try:
            jvm = self.spark._jvm
            props = {"java.version": str(jvm.java.lang.System.getProperty("java.version")),
                     "java.home": str(jvm.java.lang.System.getProperty("java.home"))}
            info = dict(info or {}, runtime=props)
        except Exception:  # noqa: BLE001
            pass
        return info

    def stop(self) -> None:
        global _RUNTIME
        if self.tap is not None:
            self.tap.close()
            self.tap = None
        if self.owned:
            self.spark.stop()
        with _LOCK:
            if _RUNTIME is self:
                _RUNTIME = None


def _conf_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


_RUNTIME: Optional[SparkRuntime] = None
_LOCK = threading.RLock()


def _active_session() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    s = None
    getter = getattr(SparkSession, "getActiveSession", None)
    if getter is not None:
        try:
            s = getter()
        except Exception:  # noqa: BLE001
            s = None
    if s is None:
        s = getattr(SparkSession, "_instantiatedSession", None)
    if s is not None:
        try:
            if s.sparkContext._jsc is None:
                return None
        except Exception:  # noqa: BLE001
            return None
    return s


def get_runtime(
    master: Optional[str] = None,
    conf: Optional[Mapping[str, Any]] = None,
    *,
    app_name: str = "AQE Lens",
    log_level: str = "ERROR",
    event_log: bool = True,
) -> SparkRuntime:
    """The process-wide runtime, started on first use.

    ``conf`` holds SparkConf settings for a new SparkContext (``spark.driver.memory`` ...);
    they cannot change an already running one (a warning is recorded). Java is chosen by
    :func:`aqe_core.capture.java.find_java` when this call starts the JVM.
    """
    global _RUNTIME
    with _LOCK:
        if _RUNTIME is not None:
            try:
                alive = _RUNTIME.spark.sparkContext._jsc is not None
            except Exception:  # noqa: BLE001
                alive = False
            if alive:
                if master and master != _RUNTIME.master:
                    raise RuntimeConflict(f"a Spark runtime on {_RUNTIME.master} is already running in this"
                                          f" process; cannot also start {master}")
                return _RUNTIME
            _RUNTIME = None
        active = _active_session()
        if active is not None:
            rt = SparkRuntime(active, str(active.sparkContext.master), None, owned=False)
            if master and master != rt.master:
                raise RuntimeConflict(f"this process already runs Spark on {rt.master}; cannot start {master}")
            if conf:
                rt.warnings.append("an existing SparkSession was reused: Spark settings given for a new one were not applied")
        else:
            rt = _start(master or os.environ.get("AQE_LENS_MASTER") or DEFAULT_MASTER, conf or {}, app_name, log_level)
        if event_log:
            rt.tap = EventLogTap(rt.spark)
            if rt.tap.error:
                rt.warnings.append(rt.tap.error)
        _RUNTIME = rt
        return rt


def _start(master: str, conf: Mapping[str, Any], app_name: str, log_level: str) -> SparkRuntime:
    version = installed_pyspark_version()
    java = ensure_java(version)
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master(master).appName(app_name)
    defaults: dict[str, str] = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    if master.startswith("local"):
        defaults["spark.driver.bindAddress"] = "127.0.0.1"
        defaults["spark.driver.host"] = "127.0.0.1"
    if _vtuple(version) < (3, 3, 0) and java.major >= 17:
        opens = " ".join(["-XX:+IgnoreUnrecognizedVMOptions"] + [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in JDK_OPENS])
        defaults["spark.driver.extraJavaOptions"] = opens
    for k, v in {**defaults, **{k: _conf_str(v) for k, v in conf.items()}}.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    if log_level:
        spark.sparkContext.setLogLevel(log_level)
    return SparkRuntime(spark, master, java, owned=True)


def stop_runtime() -> None:
    with _LOCK:
        rt = _RUNTIME
    if rt is not None:
        rt.stop()
