"""Spark's Python workers run the driver's interpreter on a master whose workers are on this
machine: from a virtual environment, PySpark would otherwise start them with the system's
``python3``, which lacks the project's packages (a fleet scan's codec imports fail). A user's own
``PYSPARK_PYTHON`` wins; a remote master is left to Spark's own ways (README)."""
from __future__ import annotations

import json
import os
import site
import socket
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from aqe_core.live.runtime import _workers_on_this_host

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r'''
import json, os, sys
from aqe_core.live.runtime import get_runtime
rt = get_runtime("local[1]", event_log=False)
workers = rt.spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("sys").executable).collect()
print("RESULT " + json.dumps({"driver": sys.executable, "worker": workers[0],
                               "env_after": os.environ.get("PYSPARK_PYTHON")}))
rt.stop()
'''


def test_masters_whose_workers_run_here():
    here = socket.gethostname()
    assert _workers_on_this_host("local[*]") and _workers_on_this_host("local-cluster[2,1,1024]")
    assert _workers_on_this_host("spark://127.0.0.1:7077") and _workers_on_this_host(f"spark://{here}:7077")
    assert not _workers_on_this_host("yarn") and not _workers_on_this_host("k8s://https://k:443")
    assert not _workers_on_this_host("spark://host.invalid:7077")
    assert not _workers_on_this_host("spark://127.0.0.1:7077,host.invalid:7077")


def _run_in_venv(tmp_path: Path, extra_env: dict[str, str]) -> dict:
    """A venv of its own (another interpreter path) that imports the packages this test's Python
    has: a .pth names this Python's site-packages, whatever the system Python holds (a stock
    one has none of them when the project lives in its .venv/)."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    Path(own, "aqe_lens_test_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update(PYTHONPATH=str(ROOT), AQE_LENS_HOME=str(tmp_path / "home"), **extra_env)
    proc = subprocess.run([str(python), "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, proc.stdout[-2000:] + proc.stderr[-3000:]
    return {**json.loads(line[len("RESULT "):]), "venv_python": str(python)}


@pytest.mark.slow
def test_from_a_virtual_environment_the_workers_run_its_python(tmp_path):
    out = _run_in_venv(tmp_path, {})
    assert out["driver"] == out["venv_python"]
    assert out["worker"] == out["driver"]  # not the system python3 the venv sits on
    assert out["env_after"] is None  # put back after the start


@pytest.mark.slow
def test_a_users_own_worker_python_wins(tmp_path):
    out = _run_in_venv(tmp_path, {"PYSPARK_PYTHON": sys.executable})
    assert out["worker"] == sys.executable != out["driver"]


@pytest.mark.slow
def test_a_scan_whose_executors_lack_the_packages_fails_first_naming_them(tmp_path):
    """A cluster's executor Python without requirements.txt (here: a bare venv as PYSPARK_PYTHON):
    the scan stops before reading any log, naming the modules and the fix, instead of turning
    every compressed log into an error row."""
    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_DRIVER_PYTHON"}
    env.update(PYTHONPATH=str(ROOT), AQE_LENS_HOME=str(tmp_path / "home"), PYSPARK_PYTHON=str(bare / "bin" / "python"))
    proc = subprocess.run([sys.executable, "-m", "aqe_core", "scan", str(ROOT / "sample_logs" / "eventlogs"),
                           "-o", str(tmp_path / "out"), "--no-progress"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("scan: failed:"))
    assert f"{bare / 'bin' / 'python'} lacks " in line and "zstandard" in line and "PYSPARK_PYTHON" in line, line
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()  # no log was read
