"""Issue 41: the Overview of a log that runs one query again and again opens on its queries (one
row per query: executions, span, AQE's decisions), a query picked lists its executions, and an
execution picked opens as a row of the executions table does. On the real PySpark 4.3.0 log
of tests/fixtures/eventlogs/repeated (counts from its SQLExecutionStart descriptions)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from aqe_core.opening import default_sample, load_source
from tests.views.test_query_groups import LOG, _executions, groups
from ui.state import group_executions_key

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))


def _app(tmp_path) -> AppTest:
    (tmp_path / "lens-home").mkdir(exist_ok=True)
    log = tmp_path / "lens-home" / LOG.name  # read from a path under the app's home, as a user's would be
    shutil.copyfile(LOG, log)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = str(log)
    at.session_state["source_ref"] = {"kind": "path", "path": str(log)}
    at.run()
    assert not at.exception, at.exception
    return at


def _pick(at: AppTest, key: str, index: int) -> None:
    at.session_state[key] = {"selection": {"rows": [index], "columns": []}}
    at.run()
    assert not at.exception, at.exception


def test_a_long_running_log_opens_on_its_queries_and_a_query_lists_its_executions(tmp_path):
    at = _app(tmp_path)
    radio = next(r for r in at.radio if (r.key or "").startswith("overview_list"))
    assert radio.value == "Queries"
    table = at.dataframe[0].value
    names = [n.split(",")[0] for n in table["query"]]
    assert names == ["setup views", "daily join", "dim lookup", "row count"]
    assert list(table["executions"]) == [len(_executions(n)) for n in names]
    daily = names.index("daily join")
    assert "broadcast hash join in 17, sort-merge join in 3" in table["AQE's decisions (executions)"][daily]
    _pick(at, "query_group_table", daily)
    shown = " ".join(m.value for m in at.markdown).replace("\\", "")  # (markdown-escaped text)
    assert "is a sort-merge join (a broadcast hash join in execution" in shown  # the change, in the log's numbers
    executions = at.dataframe[1].value
    assert sorted(int(q) for q in executions["query"]) == _executions("daily join")
    first = list(executions["query"]).index(str(_executions("daily join")[0]))
    _pick(at, group_executions_key(groups()["daily join"].query), first)
    assert at.session_state["query_id"] == str(_executions("daily join")[0])


def test_executions_stay_one_list_where_no_query_runs_long(tmp_path):
    """The bundled sample's queries repeat a few times (its commands): the Overview stays on
    its executions, and offers its queries."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    radio = next(r for r in at.radio if (r.key or "").startswith("overview_list"))
    assert radio.value == "Executions" and "query" in at.dataframe[0].value
    radio.set_value("Queries").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert "executions" in table and sum(table["executions"]) == len(load_source(default_sample().path).views)
    assert max(table["executions"]) > 1 and len(table) < sum(table["executions"])
