"""One conf guard on every path: the settings of a new SparkContext (CLI ``run --spark-conf``)
and user presets (refused when saved) pass the same allow-list as the app's runs."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aqe_core.live.conf_guard import UnsafeConf, check_spark_conf
from aqe_core.live.requests import RunRequest

ROOT = Path(__file__).resolve().parents[2]


def _context_tricks(where: Path) -> list[tuple[str, str]]:
    """Settings that make a new JVM load or run something (each leaves a trace under ``where``
    when it reaches the JVM: the GC log of extraJavaOptions is written as the JVM starts)."""
    return [("spark.jars", str(where / "evil.jar")),
            ("spark.sql.extensions", "com.example.EvilExtensions"),
            ("spark.driver.extraJavaOptions", f"-Xlog:gc:file={where / 'marker'}")]


@pytest.mark.parametrize("i", range(3), ids=["spark.jars", "spark.sql.extensions", "extraJavaOptions"])
def test_cli_run_refuses_context_settings_before_spark_starts(tmp_path, i):
    key, value = _context_tricks(tmp_path)[i]
    out = tmp_path / "never.json"
    env = {k: v for k, v in os.environ.items() if k != "AQE_LENS_TRUSTED"}
    env["AQE_LENS_HOME"] = str(tmp_path / "home")
    proc = subprocess.run([sys.executable, "-m", "aqe_core", "run", "--sql", "SELECT 1", "--spark-conf",
                           f"{key}={value}", "-o", str(out), "--no-progress"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-500:]
    assert proc.stderr.startswith("run: not run: ") and key in proc.stderr and "--trusted" in proc.stderr
    assert "started in" not in proc.stderr  # no Spark
    assert not out.exists() and not (tmp_path / "marker").exists()


def test_trusted_lifts_the_context_guard_and_sizes_pass_without_it(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AQE_LENS_TRUSTED", raising=False)
    tricks = dict(_context_tricks(tmp_path))
    RunRequest(sql="SELECT 1", spark_conf=tricks, trusted=True).precheck()
    with pytest.raises(UnsafeConf, match="spark.jars"):
        RunRequest(sql="SELECT 1", spark_conf=tricks).precheck()
    sizes = {"spark.driver.memory": "2g", "spark.executor.memory": "1024", "spark.executor.cores": "2",
             "spark.sql.shuffle.partitions": "8"}
    RunRequest(sql="SELECT 1", spark_conf=sizes).precheck()
    assert check_spark_conf(sizes) == sizes
    for key, bad in [("spark.driver.memory", "0"), ("spark.driver.memory", "1.5g"), ("spark.executor.cores", "two"),
                     ("spark.executor.extraJavaOptions", "-Dx=1"), ("spark.plugins", "com.example.Evil")]:
        with pytest.raises(UnsafeConf, match=key.replace(".", r"\.")):
            check_spark_conf({key: bad})


@pytest.mark.parametrize("key,value,why", [
    ("spark.sql.extensions", "com.example.Evil", "cannot be set here"),
    ("spark.jars", "/tmp/evil.jar", "cannot be set here"),
    ("spark.sql.catalog.x", "com.example.Evil", "cannot be set here"),
    ("spark.sql.adaptive.customCostEvaluatorClass", "com.example.Evil", "Java class"),
    ("spark.sql.adaptive.advisoryPartitionSizeInBytes", "1.5m", "fractional"),
])
def test_a_preset_with_a_refused_setting_is_refused_when_saved(tmp_path, monkeypatch, key, value, why):
    from aqe_core import user_presets as P

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    P.save_user_preset("fine", {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "64m"})
    before = (tmp_path / "home" / "presets.json").read_bytes()
    with pytest.raises(ValueError, match=f"preset not saved: .*{why}"):
        P.save_user_preset("evil", {"spark.sql.shuffle.partitions": "8", key: value})
    assert (tmp_path / "home" / "presets.json").read_bytes() == before
    assert [p.name for p in P.load_user_presets().presets] == ["fine"]
