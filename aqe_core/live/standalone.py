"""A real Spark standalone cluster (Master and Workers) from the installed PySpark's jars, on
127.0.0.1: for the cluster tests and for trying ``--master spark://...`` on one machine.

A pip-installed PySpark has the jars and ``bin/spark-class`` but no ``sbin/start-master.sh``,
so the daemons are started with ``java -cp jars/*`` as ``spark-class`` would, and a Worker is
given what ``spark-class`` sets for the executors it launches: ``SPARK_HOME`` (the package
directory, whose ``jars/`` the executor command puts on its class path), ``SPARK_SCALA_VERSION``
(read from the Scala library jar: a pip install has no ``launcher/target`` to guess it from)
and ``JAVA_HOME`` (the Java the Master runs on). The daemons do not get this process's
``PYTHONPATH``, so Python code reaches the executors only the way it reaches a remote cluster.

    with StandaloneCluster(workers=1) as c:
        ... SparkSession.builder.master(c.master_url) ...
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Optional

from aqe_core.live.history_server import HistoryServerError, find_java, free_port, pyspark_jars

__all__ = ["ClusterError", "StandaloneCluster", "scala_version"]


class ClusterError(RuntimeError):
    """The cluster did not start (the message has the daemon's last log lines)."""


def scala_version(jars: Path) -> str:
    """``2.12`` / ``2.13`` from ``scala-library-2.13.x.jar``."""
    for p in jars.glob("scala-library-*.jar"):
        m = re.match(r"scala-library-(\d+\.\d+)\.", p.name)
        if m:
            return m.group(1)
    raise ClusterError(f"no scala-library jar in {jars}")


class StandaloneCluster:
    """A Master and ``workers`` Workers (``cores`` and ``memory`` each) on 127.0.0.1."""

    def __init__(self, workers: int = 1, *, cores: int = 1, memory: str = "1g", startup_timeout: float = 90.0,
                 env: Optional[dict[str, str]] = None) -> None:
        self.workers, self.cores, self.memory = workers, cores, memory
        self.extra_env = dict(env or {})  # what the nodes' own environment differs in (e.g. their PATH)
        self.startup_timeout = startup_timeout
        self.port, self.ui_port = free_port(), free_port()
        self._tmp = tempfile.TemporaryDirectory(prefix="aqe-lens-cluster-")
        self.dir = Path(self._tmp.name)
        self.procs: list[subprocess.Popen] = []
        self._logs: list[Path] = []

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        try:
            java = find_java()
            jars = pyspark_jars()
        except HistoryServerError as e:
            raise ClusterError(str(e)) from None
        env = dict(os.environ, SPARK_HOME=str(jars.parent), SPARK_SCALA_VERSION=scala_version(jars),
                   JAVA_HOME=str(Path(java).resolve().parent.parent), SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_PUBLIC_DNS="127.0.0.1")
        # executors inherit the Worker's environment: without ours, they find AQE Lens only as a
        # remote cluster's would, in what the driver ships (addPyFile)
        env.pop("PYTHONPATH", None)
        return {**env, **self.extra_env}

    def _daemon(self, name: str, main: str, args: list[str]) -> subprocess.Popen:
        env = self._env()
        log = self.dir / f"{name}.log"
        self._logs.append(log)
        cmd = [find_java(), "-Xmx512m", "-cp", str(pyspark_jars() / "*"), main, *args]
        with open(log, "wb") as out:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.dir)
        self.procs.append(p)
        return p

    def status(self) -> dict:
        """The Master's ``/json`` page (workers, applications)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=3) as r:
            return json.loads(r.read())

    def start(self) -> "StandaloneCluster":
        self._daemon("master", "org.apache.spark.deploy.master.Master",
                     ["--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(self.ui_port)])
        for i in range(self.workers):
            work = self.dir / f"work-{i}"
            work.mkdir()
            self._daemon(f"worker-{i}", "org.apache.spark.deploy.worker.Worker",
                         ["--host", "127.0.0.1", "--webui-port", str(free_port()), "--cores", str(self.cores),
                          "--memory", self.memory, "--work-dir", str(work), self.master_url])
        self.wait_for_workers(self.workers)
        return self

    def wait_for_workers(self, n: int) -> None:
        deadline = time.time() + self.startup_timeout
        while time.time() < deadline:
            if any(p.poll() is not None for p in self.procs):
                break
            try:
                alive = [w for w in self.status().get("workers", []) if w.get("state") == "ALIVE"]
                if len(alive) >= n:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        tail = self.tail()
        self.stop()
        raise ClusterError(f"the standalone cluster did not start with {n} worker(s): {tail}")

    def kill_application(self, app_id: str) -> None:
        """What the Master UI's "(kill)" link does (4.x asks for the page's CSRF token)."""
        import http.cookiejar
        import urllib.parse

        base = f"http://127.0.0.1:{self.ui_port}/"
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        page = opener.open(base, timeout=5).read().decode("utf-8", "replace")
        token = re.search(r'name="csrfToken" value="([^"]+)"', page)
        form = {"id": app_id, "terminate": "true", **({"csrfToken": token.group(1)} if token else {})}
        opener.open(urllib.request.Request(base + "app/kill/", data=urllib.parse.urlencode(form).encode(),
                                           method="POST"), timeout=5).read()

    def tail(self, n: int = 1500) -> str:
        return " | ".join(p.read_text(errors="replace")[-n:] for p in self._logs if p.exists())

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs = []

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._tmp.cleanup()
