"""Issue 41 over MCP: a log past the server's ``max_executions`` opens listed by query, as the app
opens it. On the real recorded PySpark 4.3.0 streaming log (72 SQL executions) under
``max_executions = 5``: ``open_source`` says it is listed, ``list_query_groups`` gives
``inspect --queries --json``'s groups, ``explain_query`` with an execution id answers what it
answers on the log opened whole, and what needs every execution is refused in one line."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from aqe_core.mcp.advice_tools import AdviceTools
from aqe_core.mcp.schemas import answer_schema
from aqe_core.mcp.tools import ToolInputError
from tests.server_dirs import server_root

ROOT = Path(__file__).resolve().parents[2]
STREAMING = ROOT / "tests" / "fixtures" / "eventlogs" / "streaming" / "4.3.0" / "plain" / "local-1795904411977.zstd"


@pytest.fixture
def listed(tmp_path, monkeypatch):
    root = server_root(tmp_path, monkeypatch, no_config=True, AQE_LENS_MAX_EXECUTIONS="5")
    log = root / STREAMING.name
    shutil.copyfile(STREAMING, log)
    return AdviceTools(), str(log), monkeypatch


def _valid(answer):
    got = answer.to_dict()
    jsonschema.validate(got, answer_schema(got["tool"]))
    return got


def _inspect_groups(path: str) -> list:
    got = subprocess.run([sys.executable, "-m", "aqe_core", "inspect", path, "--queries", "--json", "--quiet"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(got.stdout)["query_groups"]


def test_open_source_says_the_log_is_listed_and_how_to_go_on(listed):
    t, log, _ = listed
    got = _valid(t.open_source(log))
    assert got["answer"]["executions"] == 72 and got["answer"]["listed_queries"] == 2
    assert got["answer"]["queries"] == []
    for words in ("72 SQL executions listed as 2 queries", "on demand", "read again from the log",
                  "list_query_groups", "explain_query with execution="):
        assert words in got["summary"], words
    assert _valid(t.open_source(log))["answer"]["cached"] is True


def test_list_query_groups_is_inspect_queries_groups(listed):
    t, log, _ = listed
    got = _valid(t.list_query_groups(log, limit=200))
    want = _inspect_groups(log)
    for g in want:
        g["execution_ids"] = g["execution_ids"][:200]  # (the tool lists at most 200 ids a group)
    assert got["answer"] == want
    assert got["page"]["total"] == 2 and got["summary"].startswith("72 SQL executions, 2 queries")


def test_explain_query_on_one_execution_is_the_whole_log_s(listed):
    t, log, monkeypatch = listed
    groups = t.list_query_groups(log).answer
    ids = [groups[0]["execution_ids"][3], groups[-1]["execution_ids"][-1]]
    listed_docs = [_valid(t.explain_query(log, execution=eid)).get("answer") for eid in ids]
    rec = _valid(t.recommend(log, execution=ids[0]))  # (any tool given an execution: its view read on demand)
    assert rec["query"] == ids[0]
    assert any(f"weighed on execution {ids[0]} alone" in n for n in rec["notes"])
    monkeypatch.delenv("AQE_LENS_MAX_EXECUTIONS")
    whole = AdviceTools()  # (a store of its own: the log read again, every view held)
    assert _valid(whole.open_source(log))["answer"]["listed_queries"] is None
    for eid, doc in zip(ids, listed_docs):
        assert json.dumps(doc, sort_keys=True) == json.dumps(whole.explain_query(log, execution=eid).answer,
                                                             sort_keys=True)


def test_what_needs_every_execution_is_refused_in_one_line(listed):
    t, log, _ = listed
    for call in (lambda: t.list_queries(log), lambda: t.explain_query(log), lambda: t.recommend(log),
                 lambda: t.lint_settings(source=log, target="4.2.1"), lambda: t.diff_runs(log, log)):
        with pytest.raises(ToolInputError) as exc:
            call()
        msg = str(exc.value)
        assert "\n" not in msg and "listed by query" in msg and "72 SQL executions" in msg, msg
        assert "list_query_groups" in msg and "explain_query" in msg and "execution id" in msg, msg
    with pytest.raises(ToolInputError, match="no SQL execution 99999 in this log .*list_query_groups"):
        t.explain_query(log, execution="99999")
