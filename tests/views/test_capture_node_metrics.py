"""A capture's plan nodes name their metrics but hold no values (issue 23: the details panel
showed ``****`` for them). The adaptive reads get the values their captured partition specs
give: they must be Spark's own, checked against the event log Spark wrote in the same run
(the listener fixtures hold both); every other metric stays without a value and is said so."""
from __future__ import annotations

import json

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from aqe_core.api import load_event_log as load
from aqe_core.figures.plan_hover import format_metric
from aqe_core.opening import sample_sources, views_from_capture_file
from aqe_core.views.from_capture import EXACT_READ_METRICS

ROOT = Path(__file__).resolve().parents[2]
LISTENER = ROOT / "tests" / "fixtures" / "eventlogs" / "listener"
READS = ("AQEShuffleRead", "CustomShuffleReader")


def _read_values(plan) -> list[dict[str, str]]:
    """Per adaptive read of a plan, in plan order: its exact-read metrics that have a value."""
    out = []
    for n in plan.walk():
        if n.name in READS:
            out.append({m["name"]: format_metric(m) for m in n.metrics
                        if m["name"] in EXACT_READ_METRICS and format_metric(m) is not None})
    return out


@pytest.mark.parametrize("version", sorted(p.name for p in LISTENER.iterdir()))
def test_capture_read_values_are_sparks_own(version):
    """The same queries, the same run: the capture's reads say what Spark's metrics in the event
    log say (number of partitions, partition data size with min/med/max, coalesced and skewed)."""
    folder = LISTENER / version
    log = load(str(next(p for p in folder.iterdir() if "captures" not in p.name)))
    spark = {ex.id: _read_values(ex.plan_with_values(ex.final_plan)) for ex in log.executions_by_id()
             if ex.final_plan is not None}
    cap = views_from_capture_file(str(folder / "captures.json.gz"))
    compared = 0
    for v, eids in zip(cap.views, _execution_ids(folder)):
        ours = _read_values(v.final_plan)
        theirs = next((spark[e] for e in reversed(eids) if e in spark and len(spark[e]) == len(ours)), None)
        if theirs is None:
            continue
        for mine, sparks in zip(ours, theirs):
            for name, value in mine.items():
                if name in sparks:
                    assert value == sparks[name], (version, v.description, name)
                    compared += 1
    if version != "3.0.1":  # 3.0's CustomShuffleReader values are not compared (none are filled)
        assert compared > 150, compared


def _execution_ids(folder: Path) -> list[list[int]]:
    """The Spark SQL executions each captured query ran as (the same run's event log)."""
    from aqe_core.readers.capture_file import load_capture

    return [list(q.execution_ids) for q in load_capture(str(folder / "captures.json.gz")).queries]


def test_only_declared_read_metrics_get_values():
    for s in sample_sources():
        if s.kind != "capture":
            continue
        for v in views_from_capture_file(s.path).views:
            for n in v.final_plan.walk():
                for m in n.metrics:
                    if m.get("source") == "capture":
                        assert n.name in READS and m["name"] in EXACT_READ_METRICS
                    elif n.name not in READS or m["name"] not in EXACT_READ_METRICS:
                        assert format_metric(m) is None  # a capture holds no other values


def test_details_panel_shows_values_or_says_why_not(tmp_path, monkeypatch):
    """A capture's read clicked in the final plan: real values, never empty bold ``****``."""
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    sample = next(s for s in sample_sources() if s.key == "capture:4.3.0-skew_join_inner.json.gz")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["source_path"], at.session_state["source_label"] = sample.path, sample.label
    at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
    at.run()
    at.switch_page("pages/plans.py").run()
    assert not at.exception, at.exception
    qid = at.session_state["query_id"]
    n = at.slider(key="plan_version").value if at.slider else 1
    view = views_from_capture_file(sample.path).view(qid)
    plan = view.plan_versions[n - 1] if view.plan_versions else view.final_plan
    read = next(p for p, node in _paths(plan) if node.name == "AQEShuffleRead")
    sort = next(p for p, node in _paths(plan) if node.name == "Sort")
    # a click opens the node's details in the browser: the final map's data holds them
    final_map = json.loads(at.get("bidi_component")[-1].proto.json)

    def rows(path):
        return next(b for b in final_map["boxes"] if path in b["paths"])["details"]["rows"]

    text = "\n".join(rows(read))
    assert "****" not in text
    assert any(r.startswith("number of partitions: ") and r.endswith("(exact: the capture's partition specs)")
               for r in rows(read)), rows(read)
    assert any("without a value: a capture records the names" in r for r in rows(read))
    # an operator with no value at all: no list of empty values, one line that says why
    assert any(r.startswith("3 metrics without a value") for r in rows(sort)), rows(sort)


def _paths(plan):
    stack = [("0", plan)]
    while stack:
        path, node = stack.pop()
        yield path, node
        stack.extend((f"{path}.{i}", c) for i, c in enumerate(node.children))
