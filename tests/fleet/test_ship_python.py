"""``scan --ship-python`` refuses what it cannot mean, before Spark starts (the cluster run itself
is in tests/live/test_cluster.py, on nodes whose ``python3`` has only the standard library)."""
from __future__ import annotations

import pytest

from aqe_core.cli import main
from aqe_core.fleet.ship_env import ENV_DIR, ship_settings


@pytest.mark.parametrize("master", [None, "local[2]"])
def test_on_a_local_master_it_is_refused(tmp_path, capsys, master):
    argv = ["scan", str(tmp_path), "-o", str(tmp_path / "out"), "--ship-python"] + (["--master", master] if master else [])
    assert main(argv) == 2
    assert "for a cluster master" in capsys.readouterr().err


def test_with_pysparks_python_already_set_it_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/python/bin/python3")
    assert main(["scan", str(tmp_path), "-o", str(tmp_path / "out"), "--ship-python", "--master", "spark://h:7077"]) == 2
    assert "unset PYSPARK_PYTHON" in capsys.readouterr().err


def test_the_archive_joins_the_users_own_archives(tmp_path):
    conf, python = ship_settings(tmp_path / "env.tar.gz", {"spark.archives": "deps.zip#deps", "spark.x": "1"})
    assert conf["spark.archives"] == f"deps.zip#deps,{tmp_path / 'env.tar.gz'}#{ENV_DIR}" and conf["spark.x"] == "1"
    assert python == f"./{ENV_DIR}/bin/python"
