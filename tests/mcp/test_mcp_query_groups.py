"""``list_query_groups`` (issue 41): the executions grouped by query, as ``explain --json``'s
``query_groups`` gives them, in the answer envelope and its published schema, paged."""
from __future__ import annotations

import json

import jsonschema

from aqe_core.cli import main
from aqe_core.mcp.advice_tools import AdviceTools
from aqe_core.mcp.schemas import answer_schema
from tests.views.test_query_groups import LOG, _executions


def test_list_query_groups_is_explain_json_s_groups_paged(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path))
    monkeypatch.setenv("AQE_LENS_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("AQE_LENS_ROOTS", str(LOG.parent))
    t = AdviceTools()
    got = t.list_query_groups(str(LOG), limit=2).to_dict()
    jsonschema.validate(got, answer_schema("list_query_groups"))
    assert main(["explain", str(LOG), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["query_groups"]
    for g in cli:
        g["execution_ids"] = g["execution_ids"][:200]  # (the tool lists at most 200 ids a group)
    assert got["answer"] == cli[:2]
    assert got["page"] == {"offset": 0, "limit": 2, "total": 4, "next_offset": 2}
    assert [g["executions"] for g in got["answer"]] == [len(_executions("setup views")), len(_executions("daily join"))]
    assert got["evidence"]["level"] == "spark-metric"
    assert "20 x 'daily join, run 1': From execution" in got["summary"] and "sort-merge join" in got["summary"]
    rest = t.list_query_groups(str(LOG), offset=2, limit=200).to_dict()
    jsonschema.validate(rest, answer_schema("list_query_groups"))
    assert rest["answer"] == cli[2:] and rest["page"]["next_offset"] is None
