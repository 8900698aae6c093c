"""``diff`` grouped by query (issue 41): two runs' executions of each repeated query side by
side, held to what Spark wrote in real logs.

* tests/fixtures/eventlogs/repeated and repeated/threshold_32k: one PySpark 4.3.0 job (a join
  run 20 times over growing data, other queries interleaved) recorded twice by
  tools/record_repeated_queries.py, at a 48 KiB and at a 32 KiB AQE broadcast threshold;
* tests/fixtures/eventlogs/streaming/{3.5.9,4.3.0}/{plain,listener}: one Structured Streaming
  job (tools/record_streaming.py) on two releases, plain and with the listener.

The expected numbers (join strategies per execution, execution ids, settings) are read from the
raw events (tests/views/test_query_groups.py's reader), never from our own code.
"""
from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from pathlib import Path

import jsonschema

from aqe_core.cli import main
from aqe_core.model.run_diff import GroupDiff, RunDiff
from aqe_core.opening import load_source
from aqe_core.views.diff_groups import FINGERPRINT, group_diff_lines
from aqe_core.views.diff_runs import diff_views
from tests.views.test_query_groups import LOG, _join, raw

ROOT = Path(__file__).resolve().parents[2]
LOG_32K = next((ROOT / "tests" / "fixtures" / "eventlogs" / "repeated" / "threshold_32k").glob("*.zstd"))
STREAMING = ROOT / "tests" / "fixtures" / "eventlogs" / "streaming"
PAIRS = ROOT / "tests" / "fixtures" / "run_pairs"


def _log(release: str, kind: str) -> Path:
    return next((STREAMING / release / kind).glob("*.zstd"))


@lru_cache(maxsize=4)
def _diff(a: Path, b: Path) -> RunDiff:
    sa, sb = load_source(str(a)), load_source(str(b))
    return diff_views(sa.views, sb.views, source_a=str(a), source_b=str(b), kind=(sa.kind, sb.kind),
                      release=(sa.spark_version or "", sb.spark_version or ""))


def _ids(path: Path, prefix: str) -> list[int]:
    return sorted(i for i, d in raw(path)["desc"].items() if d.startswith(prefix))


def _strategies(path: Path, prefix: str) -> Counter:
    """How many of the query's executions Spark ran with each join operator (its final plans)."""
    return Counter(_join(raw(path)["final"][i])["nodeName"] for i in _ids(path, prefix))


def _daily(d: RunDiff) -> GroupDiff:
    return next(g for g in d.groups if g.a is not None and g.a.name.startswith("daily join"))


def test_one_job_at_two_thresholds_each_query_once_side_by_side():
    d = _diff(LOG, LOG_32K)
    g = _daily(d)
    assert g.only is None and g.how == FINGERPRINT and g.b is not None and g.a is not None
    assert list(g.a.execution_ids) == [str(i) for i in _ids(LOG, "daily join")]
    assert list(g.b.execution_ids) == [str(i) for i in _ids(LOG_32K, "daily join")]
    join = next(x for x in g.decisions if x.kind == "join")
    assert dict(join.a or ()) == _strategies(LOG, "daily join")
    assert dict(join.b or ()) == _strategies(LOG_32K, "daily join")
    assert join.differs and join.changed == (1, 1)  # (the join flips once in each run, at its own run)
    # where each run's join became a sort-merge join, with that run's threshold
    for side, path in ((g.a, LOG), (g.b, LOG_32K)):
        first = next(i for i in _ids(path, "daily join") if _join(raw(path)["final"][i])["nodeName"] == "SortMergeJoin")
        threshold = raw(path)["props"]["spark.sql.adaptive.autoBroadcastJoinThreshold"]
        flip = next(c for c in side.changes if "sort-merge join" in c)
        assert flip.startswith(f"From execution {first} the Inner join")
        assert f"autoBroadcastJoinThreshold = {int(threshold.rstrip('k')) * 1024:,} B" in flip
    assert "broadcast hash join in" in g.sentence and "in run a," in g.sentence and "in run b" in g.sentence
    # every query either run ran more than once, once, and in both runs (the same job)
    runs = Counter(desc.split(", run")[0] for desc in raw(LOG)["desc"].values())
    repeated = {q for q, n in runs.items() if n > 1}
    assert {x.a.name.split(", run")[0] for x in d.groups if x.a} == repeated
    assert all(x.only is None and x.how == FINGERPRINT for x in d.groups)


def test_a_query_decided_alike_says_so():
    d = _diff(LOG, LOG_32K)
    views = next(g for g in d.groups if g.a is not None and g.a.name.startswith("setup views"))
    assert views.decisions == [] and "no decision of AQE in either run" in views.sentence
    lookup = next(g for g in d.groups if g.a is not None and g.a.name.startswith("dim lookup"))
    if not any(x.differs for x in lookup.decisions):
        assert "AQE decided alike" in lookup.sentence


def test_streaming_on_3_5_and_4_3_micro_batches_matched_aqe_off_in_3_5():
    a, b = _log("3.5.9", "plain"), _log("4.3.0", "plain")
    d = _diff(a, b)
    both = [g for g in d.groups if g.only is None]
    assert len(both) == 2
    # the micro-batches: 4.3 plans them otherwise (a different shape), their inputs are the same
    g = next(x for x in both if x.a is not None and x.a.not_adaptive)
    assert g.a is not None and g.b is not None
    assert g.how == "the same inputs, filters and joins, planned otherwise"
    for side, path in ((g.a, a), (g.b, b)):  # the micro-batches' root executions
        roots = [i for i, r in raw(path)["root"].items() if r in (None, i)]
        assert [int(i) for i in side.execution_ids] == roots[:len(side.execution_ids)] and side.executions == len(roots)
    assert g.a.not_adaptive == g.a.executions and g.b.not_adaptive == 0
    assert all(x.a is None for x in g.decisions) and any(x.kind == "join" and x.b for x in g.decisions)
    assert g.sentence.endswith(f"AQE ran in none of run a's executions and in {g.b.executions} of run b's")
    # foreachBatch's aggregation with AQE set on (3.5) is 4.3's two aggregations: the same plan once
    # the micro-batch's plan 4.3 logs under the batch DataFrame's scan is set aside; no join of its own
    agg = next(x for x in both if x is not g)
    assert agg.how == FINGERPRINT and agg.a is not None and agg.b is not None
    assert agg.a.not_adaptive == 0 and agg.b.executions == 2 * agg.a.executions
    assert [x.kind for x in agg.decisions] == ["partitions"]
    # every execution of both runs is in one group of its run; the aggregation 3.5 ran without AQE
    # is run a's alone
    assert sum(x.a.executions for x in d.groups if x.a) == len(raw(a)["desc"])
    assert sum(x.b.executions for x in d.groups if x.b) == len(raw(b)["desc"])
    only = [x for x in d.groups if x.only]
    assert [x.only for x in only] == ["a"] and only[0].a is not None and only[0].a.not_adaptive == only[0].a.executions
    assert "no query of run b is paired with it" in only[0].sentence


def test_one_streaming_job_plain_and_with_the_listener_match_by_fingerprint():
    d = _diff(_log("4.3.0", "plain"), _log("4.3.0", "listener"))
    assert d.groups and all(g.only is None and g.how == FINGERPRINT for g in d.groups)
    for g in d.groups:
        assert g.a is not None and g.b is not None and g.a.executions == g.b.executions
        assert g.b.span_ms is not None  # (the listener's exact views keep the log's execution times)
        # one job on one release: Spark decided alike, and the listener's reads are the plain log's
        # (keyed by the exchange under their query stage; a read left as planned counted once)
        assert g.decisions and not any(x.differs for x in g.decisions)
        assert "AQE decided alike" in g.sentence


def test_no_repeated_query_no_group_section(capsys):
    a, b = PAIRS / "setting_changed" / "a.json.gz", PAIRS / "setting_changed" / "b.json.gz"
    assert _diff(a, b).groups == []
    main(["diff", str(a), str(b), "--json", "--threshold", "1000000"])
    assert json.loads(capsys.readouterr().out)["query_groups"] == []
    main(["diff", str(a), str(b), "--threshold", "1000000"])
    assert "queries run more than once" not in capsys.readouterr().out


def test_cli_text_and_json(capsys):
    d = _diff(LOG, LOG_32K)
    main(["diff", str(LOG), str(LOG_32K), "--threshold", "1000000"])
    text = capsys.readouterr().out
    assert "\n".join(group_diff_lines(d.groups)) in text
    assert text.index("queries run more than once") < text.index("execution by execution:")
    join = next(x for x in _daily(d).decisions if x.kind == "join")
    assert f"    a: broadcast hash join in {dict(join.a or ())['BroadcastHashJoin']}" in text
    main(["diff", str(LOG), str(LOG_32K), "--json", "--threshold", "1000000"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["query_groups"] == [g.to_dict() for g in d.groups]
    g = next(x for x in doc["query_groups"] if x["a"]["name"].startswith("daily join"))
    assert set(g) == {"a", "b", "only", "how", "decisions", "sentence"}
    assert g["a"]["span_ms"] == g["a"]["last_end_ms"] - g["a"]["first_start_ms"]
    documented = (ROOT / "docs" / "diff-json.md").read_text()
    for key in ("query_groups", "not_adaptive", "span_ms", "execution_ids"):
        assert f"`{key}`" in documented or f'"{key}"' in documented


def test_mcp_diff_runs_carries_the_groups(monkeypatch, tmp_path, capsys):
    from aqe_core.mcp.advice_tools import AdviceTools
    from aqe_core.mcp.schemas import answer_schema

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path))
    monkeypatch.setenv("AQE_LENS_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("AQE_LENS_ROOTS", str(LOG.parent))
    got = AdviceTools().diff_runs(str(LOG), str(LOG_32K), threshold=10_000).to_dict()
    jsonschema.validate(got, answer_schema("diff_runs"))
    main(["diff", str(LOG), str(LOG_32K), "--json", "--threshold", "10000"])
    assert got["answer"]["query_groups"] == json.loads(capsys.readouterr().out)["query_groups"]
    assert "4 queries run more than once: " in got["summary"]


def test_html_report_and_compare_runs_page_show_the_groups(tmp_path, monkeypatch):
    import shutil

    from streamlit.testing.v1 import AppTest

    from aqe_core.report import build_diff_report
    from aqe_core.views.diff_groups import group_diff_rows

    d = _diff(LOG, LOG_32K)
    html = build_diff_report(d)
    assert "Queries run more than once" in html and "daily join, run 1" in html
    rows = group_diff_rows(d.groups)
    assert [r["executions a"] for r in rows] == [g.a.executions for g in d.groups if g.a]
    # the Compare runs page: run a from the sidebar, run b a path on the server
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))
    (tmp_path / "lens-home").mkdir()
    a, b = tmp_path / "lens-home" / LOG.name, tmp_path / "lens-home" / LOG_32K.name
    shutil.copyfile(LOG, a)
    shutil.copyfile(LOG_32K, b)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["source_path"] = str(a)
    at.session_state["source_ref"] = {"kind": "path", "path": str(a)}
    at.run()
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    at.text_input(key="runs_path").input(str(b)).run()
    assert not at.exception, at.exception
    assert any("Queries run more than once" in m.value for m in at.markdown)
    shown = [df.value for df in at.dataframe if "what differs" in df.value.columns]
    assert shown and list(shown[0]["what differs"]) == [g.sentence for g in d.groups]


def test_two_different_jobs_share_no_query_but_their_commands():
    """The repeated batch job against the repeated streaming job: a bare scan of a range in both
    is no evidence of one query (only inputs that are filtered or joined are)."""
    d = _diff(LOG, next((ROOT / "tests" / "fixtures" / "eventlogs" / "repeated" / "streaming").glob("*.zstd")))
    names = {(g.only, (g.a or g.b).name.split(", run")[0].split(" (")[0]) for g in d.groups}  # type: ignore[union-attr]
    assert {("a", "daily join"), ("a", "dim lookup"), ("a", "row count"), ("b", "joined_rows")} <= names
    assert all(g.how == FINGERPRINT for g in d.groups if g.only is None)  # (createOrReplaceTempView: one command)
