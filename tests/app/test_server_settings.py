"""Server settings: defaults on, file then AQE_LENS_* variables, bad values refused clearly."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from aqe_core.server_settings import SAMPLES_DIR, ServerSettings, SettingsError, server_settings, settings_from

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AQE_LENS_CONFIG", raising=False)
    for var in ("AQE_LENS_TRUSTED", "AQE_LENS_RUN_TIME_LIMIT", "AQE_LENS_MASTERS", "AQE_LENS_ROOTS",
                "AQE_LENS_MAX_UPLOAD_MB", "AQE_LENS_UPLOAD_QUOTA_MB", "AQE_LENS_MAX_DECOMPRESSED_MB",
                "AQE_LENS_MAX_DECOMPRESS_S", "AQE_LENS_MEMORY_BUDGET_MB", "AQE_LENS_MAX_CONCURRENT_LOADS",
                "AQE_LENS_MAX_EXECUTIONS", "AQE_LENS_MAX_PLAN_NODES", "AQE_LENS_MAX_TASK_SLOTS", "AQE_LENS_MAX_LOAD_S",
                "AQE_LENS_MAX_LISTING_S"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "home"


def test_every_guard_is_on_by_default(_home):
    s = server_settings()
    assert s == ServerSettings()
    assert s.trusted is False and s.run_time_limit_s == 600 and s.allowed_masters == ("local[*]",)
    assert s.all_roots()[:2] == [SAMPLES_DIR, _home]


def test_file_then_variables(_home, monkeypatch, tmp_path):
    _home.mkdir()
    (_home / "server.toml").write_text('allowed_masters = ["local[2]"]\nrun_time_limit_s = 30\nroots = ["/data/logs"]\n')
    s = server_settings()
    assert s.allowed_masters == ("local[2]",) and s.run_time_limit_s == 30 and s.roots == ("/data/logs",)
    monkeypatch.setenv("AQE_LENS_TRUSTED", "1")
    monkeypatch.setenv("AQE_LENS_MASTERS", "local[*], spark://h:7077")
    s = server_settings()
    assert s.trusted and s.allowed_masters == ("local[*]", "spark://h:7077") and s.run_time_limit_s == 30


@pytest.mark.parametrize("mapping, fragment", [
    ({"trusted": "maybe"}, "trusted"),
    ({"run_time_limit_s": -5}, "run_time_limit_s"),
    ({"allowed_masters": "local[*]"}, None),  # a string is split like the variable: fine
    ({"allowed_masters": [1, 2]}, "allowed_masters"),
    ({"no_such_setting": 1}, "unknown server setting"),
])
def test_bad_values_are_refused_with_the_setting_named(mapping, fragment):
    if fragment is None:
        assert settings_from(mapping).allowed_masters == ("local[*]",)
        return
    with pytest.raises(SettingsError, match=fragment):
        settings_from(mapping)


def test_a_broken_settings_file_stops_the_app_with_one_line(_home):
    _home.mkdir()
    (_home / "server.toml").write_text("trusted = [\n")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    assert any("settings cannot be used" in e.value for e in at.error)
