"""Clean state (issue 24, requirement 5): ids matched exactly, nothing written for an unknown
id, temp files of interrupted saves removed at start-up.

Real files in a real data directory (``AQE_LENS_HOME`` in a tmp dir); the interrupted save is
a real process killed in the middle of :func:`aqe_core.storage.atomic_write_bytes`.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqe_core import storage
from aqe_core.share import ShareError, load_view_state, save_view_state, upload_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))
    return tmp_path / "lens-home"


# ------------------------------------------------------------------------------------------
# ?report= ids


@pytest.mark.parametrize("rid", ["deadbeefdeadbee0\n", "deadbeefdeadbee0\r\n", "\ndeadbeefdeadbee0",
                                 "deadbeefdeadbee0 ", "DEADBEEFDEADBEE0", "deadbeefdeadbee0\x00"])
def test_a_report_id_with_anything_around_it_is_not_an_id(home, rid):
    saved = save_view_state({"source": {"kind": "sample", "key": "x"}, "query_id": "1"})
    for bad in (rid, rid.replace("deadbeefdeadbee0", saved)):
        with pytest.raises(ShareError, match="not a report id"):
            load_view_state(bad)
    assert not list((home / "reports").glob("*\n*"))


def test_an_unknown_report_id_leaves_no_file(home):
    save_view_state({"source": {"kind": "sample", "key": "x"}, "query_id": "1"})
    before = sorted(p.name for p in (home / "reports").iterdir())
    for k in range(50):
        with pytest.raises(ShareError, match="no saved view"):
            load_view_state(f"{k:016x}")
    assert sorted(p.name for p in (home / "reports").iterdir()) == before


def test_an_upload_digest_with_a_trailing_newline_is_not_a_digest(home):
    from aqe_core.share import store_upload

    digest = store_upload("log.json", b"{}\n")
    assert upload_path(digest) is not None
    assert upload_path(digest + "\n") is None


def test_a_preset_name_with_a_trailing_newline_is_refused(home):
    from aqe_core.model.presets import save_user_preset

    with pytest.raises(ValueError, match="preset names"):
        save_user_preset("mine\n", {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "64m"})


def test_sql_guard_names_are_matched_whole():
    from aqe_core.live.sql_guard import _PLAIN

    assert _PLAIN.match("t1_x")
    assert not _PLAIN.match("t1\n"), "a name with a trailing newline passes the plain-name check"
