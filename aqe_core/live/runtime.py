"""The shared Spark runtime AQE Lens runs queries on.

One SparkSession per process (Spark allows one SparkContext per JVM). By default it is
embedded (``local[*]``); a master URL (``spark://host:port``, ``yarn``, ``k8s://...``) runs
on a cluster, where the data lives. Each run gets its own ``spark.newSession()`` so one
preset's ``spark.sql.*`` settings never leak into another run. If the process already has
an active SparkSession (a notebook, a user's PySpark program), it is adopted as it is.

The runtime heals itself: a SparkContext that was stopped or whose JVM died (a result that
ran the driver out of memory) is dropped, with PySpark's class-level leftovers, and the next
:func:`get_runtime` starts a fresh one. A start that fails raises :class:`SparkStartFailed`
with a one-line reason and leaves nothing half-started behind, so the next attempt is clean.

An embedded (local) runtime turns on Spark's own authentication with a random secret per
SparkContext (:data:`SPARK_AUTHENTICATE`): no other local user can talk to its ports.
"""
from __future__ import annotations

import os
import re
import sys
import time
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

from aqe_core.exception_text import reason_line
from aqe_core.live.event_tap import EventLogTap
from aqe_core.live.java import JavaChoice, ensure_java, installed_pyspark_version

DEFAULT_MASTER = "local[*]"

#: JDK packages Spark < 3.3 needs opened to run on Java 17 (3.3+ opens them itself).
JDK_OPENS = ["java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
             "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs",
             "sun.security.action", "sun.util.calendar"]


#: Largest total of serialized task results one action may bring to the driver (Spark's default is
#: 1g, as large as a default local driver heap); a run above it fails, Spark stays up.
DEFAULT_MAX_RESULT_SIZE = "256m"


#: Spark's own authentication of its RPC and block-transfer ports. On a local master we turn it
#: on and set no secret: Spark then draws a random 256-bit one inside the JVM for this context
#: (``SecurityManager.initializeAuth``), so it is never in a conf, an environment or a command
#: line (PySpark passes builder settings to ``spark-submit`` as ``--conf`` arguments, which every
#: local user can read in ``ps``), and a client that does not hold it is refused. A cluster
#: (``spark://``) needs one secret shared by its daemons: its operator sets it (README).
SPARK_AUTHENTICATE = "spark.authenticate"
#: the local masters ``SecurityManager.initializeAuth`` draws a secret for (its ``LOCAL_N_REGEX``
#: and ``LOCAL_N_FAILURES_REGEX``); any other, e.g. ``local[abc]``, gets Spark's own error
_LOCAL_MASTER = re.compile(r"local|local\[([0-9]+|\*)\]|local\[([0-9]+|\*)\s*,\s*([0-9]+)\]")


class RuntimeConflict(RuntimeError):
    """A runtime with another master is already running in this process."""


class SparkStartFailed(RuntimeError):
    """Spark could not be started (message for people: the master and Spark's reason)."""


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
        except Exception:  # noqa: BLE001 - py4j: the JVM may be gone; the info stays without it
            pass
        return info

    @property
    def alive(self) -> bool:
        """The SparkContext still runs (False once it was stopped or its JVM died)."""
        return _context_alive(self.spark)

    def stop(self) -> None:
        global _RUNTIME
        if self.tap is not None:
            try:
                self.tap.close()
            except Exception:  # noqa: BLE001 - the JVM may be gone
                pass
            self.tap = None
        if self.owned:
            try:
                self.spark.stop()
            except Exception:  # noqa: BLE001 - py4j: a stop that fails resets PySpark instead
                _reset_pyspark()
        with _LOCK:
            if _RUNTIME is self:
                _RUNTIME = None


def _conf_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


_RUNTIME: Optional[SparkRuntime] = None
_LOCK = threading.RLock()


def _context_alive(spark: Any) -> bool:
    try:
        jsc = spark.sparkContext._jsc
        return jsc is not None and not bool(jsc.sc().isStopped())
    except Exception:  # noqa: BLE001 - py4j errors when the JVM is gone
        return False


def _gateway_alive(gateway: Any) -> bool:
    """The gateway's JVM answers and is not shutting down. A driver that ran out of memory
    exits through ``System.exit``: its shutdown hooks stop the SparkContext first, and for a
    moment the JVM still answers. Reusing it then fails the next start with "connection
    refused" once it exits. Java's own test: a shutdown hook cannot be added during shutdown."""
    return _accepts_shutdown_hook(gateway)


def _accepts_shutdown_hook(gateway: Any) -> bool:
    try:
        jvm = gateway.jvm
        probe = jvm.java.lang.Thread()
        runtime = jvm.java.lang.Runtime.getRuntime()
        runtime.addShutdownHook(probe)  # IllegalStateException: "Shutdown in progress"
        runtime.removeShutdownHook(probe)
        return True
    except Exception:  # noqa: BLE001 - py4j: any error means the JVM is shutting down
        return False


def _start_lost_its_jvm(exc: BaseException) -> bool:
    """A failed start whose JVM exited or began exiting under it: a second look after the
    failure, since the JVM can start shutting down after :func:`_gateway_alive` passed. Such a
    start fails with a lost connection or, while the JVM still answers, with a Java error that
    cannot even be described ("An error occurred while calling None.None")."""
    if _lost_connection(exc):
        return True
    try:
        from pyspark import SparkContext
    except ImportError:
        return False
    gateway = SparkContext._gateway
    if gateway is None:
        return False
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.poll() is not None:
        return True
    return not _accepts_shutdown_hook(gateway)


def _lost_connection(exc: BaseException) -> bool:
    """A start that failed talking to the gateway's JVM (it exited under us), not in Spark."""
    try:
        text = f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - py4j describes a Java error by asking the JVM: it is gone
        return True
    return any(s in text for s in ("Py4JNetworkError", "Connection refused", "ConnectionRefusedError",
                                   "Error while sending or receiving", "Answer from Java side is empty",
                                   "does not exist in the JVM"))  # a class lookup on a JVM in shutdown


def _reset_pyspark(drop_gateway: bool = False) -> None:
    """Forget PySpark's class-level state of a dead or half-started Spark so the next
    ``getOrCreate`` starts afresh: the active SparkContext, the instantiated and active
    SparkSession, and (when its JVM is gone or dying, or ``drop_gateway``) the py4j gateway
    and its process. PySpark only clears the active context itself when a start fails inside
    the JVM; after a dead JVM it would hand back the stale session, or fail with "connection
    refused"."""
    try:
        from pyspark import SparkContext
        from pyspark.sql import SparkSession
    except ImportError:
        return
    sc = SparkContext._active_spark_context
    if sc is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sc.stop()
            except Exception:  # noqa: BLE001 - best effort: the context may be half gone
                pass
    with SparkContext._lock:
        SparkContext._active_spark_context = None
        gateway = SparkContext._gateway
        if gateway is not None and (drop_gateway or not _gateway_alive(gateway)):
            try:
                gateway.close()
            except Exception:  # noqa: BLE001 - best effort: the gateway may be gone
                pass
            proc = getattr(gateway, "proc", None)
            if proc is not None:
                try:
                    proc.kill()
                    proc.wait(timeout=10)
                except Exception:  # noqa: BLE001 - best effort: the process may be gone
                    pass
            SparkContext._gateway = None
            SparkContext._jvm = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None


def check_master(master: str) -> None:
    """Refuse a master URL Spark cannot parse before starting a JVM for it (the JVM's own
    refusal only reaches the server's stderr)."""
    ok = (master == "yarn" or master.startswith(("spark://", "k8s://", "local-cluster[")) or
          master == "local" or (master.startswith("local[") and master.endswith("]")))
    if not ok:
        raise SparkStartFailed(f"cannot start Spark on {master!r}: a master URL is local, local[N], local[*], "
                               "spark://host:port, yarn or k8s://...")


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
        except Exception:  # noqa: BLE001 - py4j: no active session to read
            s = None
    if s is None:
        s = getattr(SparkSession, "_instantiatedSession", None)
    if s is not None and not _context_alive(s):
        _reset_pyspark()
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
    :func:`aqe_core.live.java.find_java` when this call starts the JVM. A runtime that
    stopped or died is replaced by a fresh one (raises :class:`SparkStartFailed`,
    :class:`RuntimeConflict` or ``JavaNotFound`` with a message for people).
    """
    global _RUNTIME
    with _LOCK:
        if _RUNTIME is not None:
            if _RUNTIME.alive:
                if master and master != _RUNTIME.master:
                    raise RuntimeConflict(f"a Spark runtime on {_RUNTIME.master} is already running in this"
                                          f" process; cannot also start {master}")
                return _RUNTIME
            dead, _RUNTIME = _RUNTIME, None
            if dead.tap is not None:
                try:
                    dead.tap.close()
                except Exception:  # noqa: BLE001 - best effort: the JVM is gone
                    pass
            _reset_pyspark()
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


#: log4j 2 configuration for the driver JVM's start (see the file)
STARTUP_LOG4J = Path(__file__).with_name("log4j2-startup.properties")
_LOG4J_LEVELS = {x: x.lower() for x in ("ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")}


def _start(master: str, conf: Mapping[str, Any], app_name: str, log_level: str) -> SparkRuntime:
    check_master(master)
    version = installed_pyspark_version()
    java = ensure_java(version)
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master(master).appName(app_name)
    defaults: dict[str, str] = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.maxResultSize": DEFAULT_MAX_RESULT_SIZE,
    }
    if master.startswith("local"):
        defaults["spark.driver.bindAddress"] = "127.0.0.1"
        defaults["spark.driver.host"] = "127.0.0.1"
        if _LOCAL_MASTER.fullmatch(master):
            defaults[SPARK_AUTHENTICATE] = "true"  # Spark draws the secret itself (see above)
    elif master.startswith("spark://"):  # executors connect back: the address that reaches the master
        here = _address_towards(master)
        if here:
            defaults["spark.driver.host"] = here
            defaults["spark.driver.bindAddress"] = here
    java_options = []
    if _vtuple(version) < (3, 3, 0) and java.major >= 17:
        java_options += ["-XX:+IgnoreUnrecognizedVMOptions"] + [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in JDK_OPENS]
    if log_level and _vtuple(version) >= (3, 3, 0):  # log4j 2: the level holds from the JVM's start
        java_options += [f"-Dlog4j2.configurationFile={STARTUP_LOG4J.as_uri()}",
                         f"-Daqe.lens.log.level={_LOG4J_LEVELS.get(log_level.upper(), 'error')}"]
    merged = {**defaults, **{k: _conf_str(v) for k, v in conf.items()}}
    if java_options:  # after the caller's own options, which stay
        own = merged.get("spark.driver.extraJavaOptions", "")
        merged["spark.driver.extraJavaOptions"] = " ".join([own, *java_options]).strip()
    for k, v in merged.items():
        b = b.config(k, v)
    _one_line_accumulator_refusals()
    for attempt in (1, 2):
        try:
            with _worker_python(master):
                spark = b.getOrCreate()
            if log_level:
                spark.sparkContext.setLogLevel(log_level)
            break
        except Exception as exc:  # noqa: BLE001 - any start failure becomes one clear message
            lost = _start_lost_its_jvm(exc)
            _reset_pyspark(drop_gateway=lost)
            if lost and attempt == 1:  # the old JVM exited between our check and the start: a new one
                continue
            reason = reason_line(exc)  # (never raises: a Java error whose JVM is gone is named by its type)
            hint = " (Spark's reason is in the server log)" if "JAVA_GATEWAY_EXITED" in reason else ""
            raise SparkStartFailed(f"could not start Spark on {master}: {reason}{hint}") from None
    if master.startswith("spark://"):
        _wait_for_executors(spark, master, executor_wait_s())
    return SparkRuntime(spark, master, java, owned=True)


def _one_line_accumulator_refusals() -> None:
    """A connection to PySpark's accumulator port with a wrong token (any local program can try)
    is refused by PySpark, which then prints a Python traceback to the server console
    (``socketserver``'s ``handle_error``). Say it in one line instead, naming the peer."""
    try:
        from pyspark import accumulators
    except ImportError:  # pragma: no cover - no PySpark, no port
        return
    server = getattr(accumulators, "AccumulatorTCPServer", None) or getattr(accumulators, "AccumulatorServer", None)
    if server is None or getattr(server, "_aqe_lens_one_line", False):
        return

    def handle_error(self: Any, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        print(f"aqe-lens: PySpark's accumulator port refused a connection from {client_address!r}: "
              f"{reason_line(exc) if exc is not None else 'unknown error'}", file=sys.stderr)

    server.handle_error = handle_error
    server._aqe_lens_one_line = True

@contextmanager
def _worker_python(master: str) -> Iterator[None]:
    """Spark's Python workers start with ``PYSPARK_PYTHON``, else a bare ``python3`` (PySpark's
    ``SparkContext`` reads it once, at its start). From a virtual environment that is the
    system's interpreter, which lacks this project's packages: every scan task that imports a
    codec fails. On a master whose workers run on this machine (local, or a standalone master
    on this host) they get the driver's own interpreter, unless the user set ``PYSPARK_PYTHON``;
    the environment is put back after the start, so a later cluster context is unaffected."""
    if "PYSPARK_PYTHON" in os.environ or not _workers_on_this_host(master):
        yield
        return
    os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        yield
    finally:
        os.environ.pop("PYSPARK_PYTHON", None)


def _workers_on_this_host(master: str) -> bool:
    """Local masters, and a ``spark://`` master whose host is one of this machine's addresses
    (the route towards it leaves from that same address). A multi-master URL counts only when
    every master is here."""
    if master.startswith(("local", "local-cluster[")):
        return True
    if not master.startswith("spark://"):
        return False
    import ipaddress
    import socket

    for hostport in master[len("spark://"):].split(","):
        host = hostport.rpartition(":")[0] or hostport
        try:
            address = socket.gethostbyname(host)
        except OSError:
            return False
        if not (ipaddress.ip_address(address).is_loopback or _address_towards(f"spark://{hostport}") == address):
            return False
    return True


def executor_wait_s() -> float:
    """How long a new cluster context may wait for its first executor (``AQE_LENS_EXECUTOR_WAIT_S``)."""
    try:
        return float(os.environ.get("AQE_LENS_EXECUTOR_WAIT_S", "30"))
    except ValueError:
        return 30.0


def _address_towards(master: str) -> Optional[str]:
    """This machine's address on the route to a ``spark://host:port`` master (no packet is sent:
    a UDP socket's connect only picks the route). None when the host does not resolve."""
    import socket

    hostport = master[len("spark://"):].split(",")[0]
    host, _, port = hostport.rpartition(":")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((host or hostport, int(port or 7077)))
            return str(s.getsockname()[0])
    except (OSError, ValueError):
        return None


def _wait_for_executors(spark: Any, master: str, seconds: float) -> None:
    """A standalone master with no free worker accepts the application and then waits for ever;
    say so within ``seconds`` instead of hanging the first query."""
    deadline = time.monotonic() + seconds
    jsc = spark.sparkContext._jsc.sc()
    while time.monotonic() < deadline:
        try:
            if jsc.getExecutorMemoryStatus().size() > 1:  # the driver's block manager is one entry
                return
        except Exception:  # noqa: BLE001 - py4j: the JVM is gone, stop waiting
            break
        time.sleep(0.5)
    try:
        spark.stop()
    finally:
        _reset_pyspark()
    raise SparkStartFailed(f"no executor started on {master} within {seconds:.0f}s: the master has no ALIVE worker"
                           " with a free core and enough memory for spark.executor.memory (see the master's web UI)")


def stop_runtime() -> None:
    with _LOCK:
        rt = _RUNTIME
    if rt is not None:
        rt.stop()
