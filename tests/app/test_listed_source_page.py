"""Issue 41 in the app: a log of more executions than ``max_executions`` opens on the Overview
listed by query (one row per query: executions, span, AQE's decisions), an execution of a query
opens on demand (from the Overview or the sidebar's picker) and every page draws it. On the real
PySpark 4.3.0 streaming log of tests/fixtures/eventlogs/streaming (72 executions, 2 queries),
under max_executions = 5."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.state import LISTED_GROUP, LISTED_POSITION, LISTED_ROW_POSITION, LISTED_TABLE, listed_key

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LOG = ROOT / "tests" / "fixtures" / "eventlogs" / "streaming" / "4.3.0" / "plain" / "local-1795904411977.zstd"


@pytest.fixture(autouse=True)
def _server(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))
    monkeypatch.setenv("AQE_LENS_MAX_EXECUTIONS", "5")


def _app(tmp_path) -> tuple[AppTest, str]:
    (tmp_path / "lens-home").mkdir(exist_ok=True)
    log = tmp_path / "lens-home" / LOG.name  # under the app's home, as a user's path would be
    shutil.copyfile(LOG, log)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = str(log)
    at.session_state["source_ref"] = {"kind": "path", "path": str(log)}
    at.run()
    assert not at.exception, at.exception
    return at, str(log)


def _queries() -> list[dict]:
    got = subprocess.run([sys.executable, "-m", "aqe_core", "inspect", str(LOG), "--queries", "--json", "--quiet"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(got.stdout)["query_groups"]


def test_the_overview_lists_the_queries_and_opens_an_execution_of_one(tmp_path):
    at, _ = _app(tmp_path)
    captions = " ".join(c.value for c in at.caption)
    assert "This log holds 72 SQL executions, more than the server keeps (max_executions = 5)" in captions
    table = at.dataframe[0].value
    want = _queries()
    assert list(table["executions"]) == [g["executions"] for g in want]
    assert [len(c) > 0 for c in table["AQE's decisions (executions)"]] == [True, True]
    join = next(i for i, g in enumerate(want) if any(d["kind"] == "join" for d in g["decisions"]))
    at.session_state[LISTED_TABLE] = {"selection": {"rows": [join], "columns": []}}
    at.run()
    assert not at.exception, at.exception
    shown = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "broadcast hash join in 12, sort-merge join in 12" in shown
    assert "is a sort-merge join (a broadcast hash join in execution" in shown  # where it changed
    place = next(n for n in at.number_input if (n.key or "").startswith(LISTED_ROW_POSITION))
    place.set_value(3).run()
    eid = want[join]["execution_ids"][2]
    button = next(b for b in at.button if b.key == "listed_open_row")
    assert button.label == f"Open execution {eid}"
    button.click().run()
    assert not at.exception, at.exception
    assert at.session_state["query_id"] == eid
    assert [s.value.split(":")[0] for s in at.subheader] == [f"Query {eid}"]  # its details, below the queries
    # the sidebar's picker shows the execution opened: its query and its place
    assert (at.sidebar.selectbox[0].value, at.sidebar.number_input[0].value) == (join, 3)


def test_the_sidebar_picks_an_execution_and_every_page_draws_it(tmp_path):
    at, log = _app(tmp_path)
    assert not at.subheader  # nothing opened before it is asked for (opening reads the log again)
    first = _queries()[0]
    at.session_state[listed_key(LISTED_GROUP, log)] = 0
    at.session_state[listed_key(LISTED_POSITION, log)] = first["executions"]  # its last execution
    at.run()
    eid = first["execution_ids"][-1]
    button = next(b for b in at.sidebar.button if b.key == "listed_open")
    assert button.label == f"Open execution {eid}"
    button.click().run()
    assert not at.exception, at.exception
    assert at.session_state["query_id"] == eid
    for page in ("pages/plans.py", "pages/partitions.py", "pages/whatif.py", "pages/compare.py", "pages/share.py",
                 "pages/runs.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert at.session_state["query_id"] == eid, page
        if page == "pages/plans.py":  # the execution's own plans, read on demand
            assert "What AQE changed" in [s.value for s in at.subheader]
