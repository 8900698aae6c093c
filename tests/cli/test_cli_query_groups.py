"""``explain`` and ``inspect`` on a log that runs one query again and again (issue 41): the
groups in text and under ``--json``'s ``query_groups``, every other key as before."""
from __future__ import annotations

import json
from collections import Counter

from aqe_core.cli import main
from aqe_core.opening import load_source
from aqe_core.readers.eventlog import load
from aqe_core.views.eventlog_summary import log_json
from aqe_core.views.explain import explain_views
from tests.views.test_query_groups import LOG, _executions, _join, raw

NAMES = ("setup views", "daily join", "dim lookup", "row count")


def _check_groups(groups: list[dict]) -> None:
    """Counts and ids from the raw SQLExecutionStart descriptions; the join's flip named."""
    assert [g["name"].split(",")[0] for g in groups] == list(NAMES)
    for g, name in zip(groups, NAMES):
        assert g["execution_ids"] == [str(i) for i in _executions(name)] and g["executions"] == len(_executions(name))
    join = next(d for d in groups[1]["decisions"] if d["kind"] == "join")
    finals = raw()["final"]
    spark = Counter(_join(finals[i])["nodeName"] for i in _executions("daily join"))
    assert {x["value"]: x["executions"] for x in join["distribution"]} == dict(spark)
    assert any("is a sort-merge join (a broadcast hash join in" in s for s in groups[1]["changes"])


def test_explain_json_adds_query_groups_and_keeps_its_keys(capsys):
    assert main(["explain", str(LOG), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    before = explain_views(load_source(str(LOG)).views, None)
    assert set(doc) == set(before) | {"query_groups"}
    _check_groups(doc["query_groups"])


def test_inspect_json_adds_query_groups_and_keeps_its_keys(capsys):
    assert main(["inspect", str(LOG), "--json", "--no-plans", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    before = log_json(load(str(LOG)), plans=False)
    assert set(doc) == set(before) | {"query_groups"}
    assert [e["id"] for e in doc["executions"]] == [e["id"] for e in before["executions"]]
    _check_groups(doc["query_groups"])


def test_text_lists_queries_run_more_than_once(capsys):
    assert main(["explain", str(LOG)]) == 0
    out = capsys.readouterr().out
    assert "Queries run more than once:" in out and "20 executions of 'daily join, run 1'" in out
    assert main(["inspect", str(LOG), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "queries run more than once:" in text and "is a sort-merge join (a broadcast hash join in execution" in text
