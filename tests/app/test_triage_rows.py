"""Issue 38, requirement 1: every Overview row opens its query on the right page, and the Query
picker can show every query, AQE applied or not. On real logs recorded by Spark: the bundled
4.3.0 rolling log (queries 0, 1, 4, 5 and 9 are commands AQE did not apply to) and the TPC-DS-like
4.3.0 log (30 of its 33 executions were not adaptive).

Before the fix the picker listed only adaptive queries: a "no AQE" row set the query, the picker
reset it, the row set it again, and the script reran without end (here: an AppTest run that never
finished within its timeout)."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from aqe_core.opening import default_sample, load_source, sample_sources
from aqe_core.views.triage import triage

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))


def _app(sample=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if sample is not None:
        at.session_state["source_path"] = sample.path
        at.session_state["source_label"] = sample.label
        at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
    at.run()
    assert not at.exception, at.exception
    return at


def _query_pick(at: AppTest):
    return next(s for s in at.sidebar.selectbox if (s.key or "").startswith("query_pick"))


def _tick(at: AppTest, index: int) -> None:
    at.session_state["triage_table"] = {"selection": {"rows": [index], "columns": []}}
    at.run()
    assert not at.exception, at.exception


def _heading(at: AppTest) -> str:
    return next((h.value for h in at.subheader if h.value.startswith("Query ")), "")


def test_a_row_where_aqe_did_not_apply_opens_its_query_and_stays():
    at = _app()
    queries = list(at.dataframe[0].value["query"])
    src = load_source(default_sample().path)
    plain = next(v.query_id for v in src.views if not v.adaptive)
    _tick(at, queries.index(plain))
    assert _heading(at).startswith(f"Query {plain}:")
    assert at.query_params["q"] == [plain] or at.query_params["q"] == plain
    assert _query_pick(at).value == plain
    assert any("Why AQE did not apply" in i.value for i in at.info)
    at.run()  # the table keeps its selection: the next run shows the same query
    assert not at.exception, at.exception
    assert _query_pick(at).value == plain and _heading(at).startswith(f"Query {plain}:")


def test_a_query_picked_after_a_row_is_not_taken_back_by_the_row():
    at = _app()
    queries = list(at.dataframe[0].value["query"])
    _tick(at, queries.index("0"))
    _query_pick(at).set_value("2").run()
    assert not at.exception, at.exception
    assert _query_pick(at).value == "2" and _heading(at).startswith("Query 2:")
    at.run()
    assert _query_pick(at).value == "2"


def test_every_row_of_a_real_log_opens_its_query_on_its_page():
    """Every row of the default sample, of every kind (no AQE, no finding, findings shown on
    Partitions or Plans): its query is the one picked afterwards, on the page its finding names."""
    src = load_source(default_sample().path)
    rows = triage(src.views)
    kinds = {r.page for r in rows} | {("no_aqe" in r.findings) for r in rows}
    assert {"overview", "partitions", True, False} <= kinds, kinds
    for i, row in enumerate(rows):
        at = _app()
        _tick(at, i)
        assert at.session_state["query_id"] == row.query_id, (i, row.query_id, row.findings)
        assert _query_pick(at).value == row.query_id
        if row.page == "overview":
            assert _heading(at).startswith(f"Query {row.query_id}:")


def test_the_query_picker_lists_every_query_of_a_mostly_plain_log():
    sample = next(s for s in sample_sources() if s.key == "eventlog:spark430_tpcds_like")
    src = load_source(sample.path)
    plain = [v.query_id for v in src.views if not v.adaptive]
    assert len(plain) >= 20  # the log's q72-like and q88-like runs and their commands
    at = _app(sample)
    pick = _query_pick(at)
    assert list(pick.options) and len(pick.options) == len(src.views)
    assert pick.value == next(v.query_id for v in src.views if v.shuffles)  # it starts on an adaptive read
    queries = list(at.dataframe[0].value["query"])
    _tick(at, queries.index(plain[-1]))
    assert _query_pick(at).value == plain[-1] and _heading(at).startswith(f"Query {plain[-1]}:")
