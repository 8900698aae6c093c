"""Issue 38, requirement 5: agents get the same truth as people. Through a real MCP client
session over stdio (the server and helpers of test_mcp_server), on logs and captures recorded by
real Spark: every evidence level is the one the app shows for the same query, one name per
meaning, one vocabulary per field, and a refusal under a limit is not remembered once the
operator raises the limit."""
from __future__ import annotations

import os
import time

import pytest

from aqe_core.model.evidence import Evidence
from aqe_core.server_settings import SAMPLES_DIR
from tests.mcp.test_mcp_server import CAPTURE, LISTENER, LOG, ROOT, Session, answer, refused

LEVELS = {e.value for e in Evidence}
LABELS = {e.label for e in Evidence}
PLAIN_LOGS = [LOG, str(SAMPLES_DIR / "eventlogs" / "local-1795309249168"),  # 3.5.9 zstd, 3.0.1 plain
              str(SAMPLES_DIR / "eventlogs" / "eventlog_v2_local-1795308995034")]  # 4.3.0 rolling


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """One stdio server for the module, as test_mcp_server starts it."""
    home = tmp_path_factory.mktemp("lens_home")
    s = Session({"AQE_LENS_HOME": str(home), "AQE_LENS_CONFIG": str(home / "none.toml"), "PYTHONPATH": str(ROOT)})
    yield s
    s.close()


def _app_level(path: str, execution: str) -> str:
    """What the app shows for the query: the views' own evidence (aqe_core.views.answers)."""
    from aqe_core.opening import load_source
    from aqe_core.views.answers import query_evidence

    return query_evidence(next(v for v in load_source(path).views if v.query_id == execution)).value


def _evidence_fields(doc, where="answer"):
    """Every ``evidence`` value in an answer, with where it sits."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "evidence" and not isinstance(v, dict):
                yield where, v
            yield from _evidence_fields(v, f"{where}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _evidence_fields(v, f"{where}[{i}]")


@pytest.mark.parametrize("path", PLAIN_LOGS)
def test_lint_of_a_plain_log_is_labelled_as_the_app_labels_its_query(session, path):
    """Was "exact" on every plain log: the settings checked are Spark's record in the log."""
    doc = answer(session, "lint_settings", {"source": path, "execution": "2"})
    assert doc["evidence"]["level"] == _app_level(path, "2") == "spark-metric"
    assert doc["evidence"]["label"] == "Spark's metric"
    whole = answer(session, "lint_settings", {"source": path})
    assert whole["evidence"]["level"] == "spark-metric"


def test_lint_of_a_capture_and_of_given_settings_stays_exact(session):
    assert answer(session, "lint_settings", {"source": CAPTURE, "execution": "0"})["evidence"]["level"] == "exact"
    got = answer(session, "lint_settings", {"settings": {"spark.sql.adaptive.coalescePartitions.enabled": "true"},
                                            "target": "4.0.x"})
    assert got["evidence"]["level"] == "exact"


@pytest.mark.parametrize("source,execution", [(CAPTURE, "0"), (LOG, "2"), (LISTENER, "6")])
def test_every_answer_speaks_one_evidence_vocabulary(session, source, execution):
    """Each tool's answer: every ``evidence`` field is a level, its label (where given) the
    level's own; the envelope's level is the weakest, and for explain the app's own."""
    key = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
    explain = answer(session, "explain_query", {"source": source, "execution": execution})
    assert explain["evidence"]["level"] == _app_level(source, execution)
    node = explain["answer"]["executions"][0]["reads"][0]["node_id"]
    docs = [explain,
            answer(session, "open_source", {"path": source}),
            answer(session, "list_queries", {"source": source}),
            answer(session, "histogram", {"source": source, "execution": execution, "node_id": node}),
            answer(session, "what_if", {"source": source, "execution": execution, "settings": {key: "1m"}}),
            answer(session, "recommend", {"source": source, "execution": execution}),
            answer(session, "compare_releases", {"source": source, "execution": execution}),
            answer(session, "lint_settings", {"source": source, "execution": execution})]
    for doc in docs:
        assert doc["evidence"]["level"] in LEVELS and doc["evidence"]["label"] == Evidence(doc["evidence"]["level"]).label
        for where, value in _evidence_fields(doc["answer"]):
            assert value in LEVELS, (doc["tool"], where, value)
    releases = docs[6]["answer"][0]["releases"]
    assert releases and all(r["evidence_label"] == Evidence(r["evidence"]).label for r in releases)
    if source == LOG:  # the run as Spark recorded it, then our estimates: both named as levels
        assert {r["evidence"] for r in releases} == {"spark-metric", "estimate"}
        assert any(r["evidence_label"] == "Spark's metric" for r in releases)
    for o in docs[4]["answer"]["outcomes"]:
        assert o["summary"]["evidence"] == o["evidence"] and o["summary"]["evidence_label"] in LABELS


def test_histogram_names_the_median_after_aqe_and_the_skew_rules_median_apart(session):
    """The 3.0.1 skewed join's left read: the partitions after AQE have one median, the skew
    rule judged against another (3.0/3.1 take it over the coalesced partitions, later releases
    over the reducers); each has its own name."""
    explain = answer(session, "explain_query", {"source": CAPTURE, "execution": "0"})
    read = explain["answer"]["executions"][0]["reads"][0]
    doc = answer(session, "histogram", {"source": CAPTURE, "execution": "0", "node_id": read["node_id"]})
    got = doc["answer"]
    assert "median" not in got and "largest" not in got
    sizes = sorted(p["bytes"] for p in read["partitions"] if p["bytes"] is not None)
    assert got["median_after_aqe"] == sizes[len(sizes) // 2] and got["largest_after_aqe"] == sizes[-1]
    rule = [ln for ln in got["lines"] if ln["kind"] == "median"]
    assert rule, got["lines"]
    assert f"median {got['median_after_aqe']} B after AQE" in doc["summary"]
    for name in ("median_after_aqe", "largest_after_aqe"):
        assert sum(1 for k in got if k == name) == 1


def test_a_listing_is_read_again_after_the_operator_raises_the_limit(tmp_path):
    """A plain 3.5.9 log of 11 SQL executions under max_executions = 2, then 100: the server
    lists it by query (issue 41), then re-reads its settings file and opens the log whole,
    instead of answering from the old listing."""
    home = tmp_path / "home"
    home.mkdir()
    conf = home / "server.toml"
    conf.write_text("max_executions = 2\n")
    s = Session({"AQE_LENS_HOME": str(home), "AQE_LENS_CONFIG": str(conf), "PYTHONPATH": str(ROOT)})
    try:
        doc = answer(s, "open_source", {"path": LOG})
        assert doc["answer"]["executions"] == 11 and doc["answer"]["listed_queries"]
        assert "listed by query" in refused(s, "list_queries", {"source": LOG})
        assert answer(s, "explain_query", {"source": LOG, "execution": "2"})["query"] == "2"
        conf.write_text("max_executions = 100\n")
        later = time.time() + 5
        os.utime(conf, (later, later))  # a new mtime even within the file system's clock step
        doc = answer(s, "open_source", {"path": LOG})
        assert doc["answer"]["executions"] == 11 and doc["answer"]["cached"] is False
        assert doc["answer"]["listed_queries"] is None
        conf.write_text("max_executions = 2\n")
        os.utime(conf, (later + 5, later + 5))
        assert answer(s, "open_source", {"path": LOG})["answer"]["cached"] is True  # what was read stays read
    finally:
        s.close()
