"""The command line over live Spark (issue 9): one ``aqe_core.cli`` module, requests in
``aqe_core.live.requests``, old command modules kept as aliases. No Spark is started here."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aqe_core import cli
from aqe_core.live import requests
from aqe_core.live.sql_guard import UnsafeSQL

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def guarded(monkeypatch):
    monkeypatch.setattr(requests, "trusted_by_default", lambda: False)


@pytest.mark.parametrize("req", [
    requests.RunRequest(sql="SELECT 1\x00"),
    requests.RunRequest(sql="SELECT 1", conf={"spark.sql.catalog.x": "com.example.Evil"}),
    requests.RunRequest(workload="aggregate_coalesce", conf={"spark.sql.warehouse.dir": "/tmp"}),
])
def test_precheck_refuses_before_spark_starts(guarded, req):
    with pytest.raises(UnsafeSQL):
        req.precheck()


def test_precheck_leaves_workload_sql_to_the_runner_and_trusted_runs_alone(guarded):
    requests.RunRequest(sql="SELECT 1\x00", workload="aggregate_coalesce").precheck()
    requests.RunRequest(sql="SELECT 1\x00", conf={"spark.sql.catalog.x": "y"}, trusted=True).precheck()


def test_cli_and_api_import_without_spark():
    code = ("import sys, aqe_core.cli, aqe_core.api; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j') or m == 'aqe_core.live.runner']; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_command_has_help():
    parser = cli.build_parser()
    for name in cli.COMMANDS:
        with pytest.raises(SystemExit) as e:
            parser.parse_args([name, "--help"])
        assert e.value.code == 0


def test_workload_presets_have_a_name_of_their_own():
    from aqe_core.model import presets
    from aqe_core.live import workloads

    assert workloads.Preset is workloads.WorkloadPreset is not presets.Preset
    assert all(isinstance(p, workloads.WorkloadPreset) for n in workloads.names() for p in workloads.get(n).presets)
