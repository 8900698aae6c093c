"""Each page's logic paths, run headless with Streamlit's AppTest (no browser, no JVM)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "lens-home"))


def _app(page: str | None = None, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, at.exception
    return at


def _query_pick(at: AppTest):
    """The sidebar's query selectbox (its key names the source)."""
    return next(s for s in at.sidebar.selectbox if (s.key or "").startswith("query_pick"))


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def test_overview_lists_every_execution_of_the_default_sample():
    at = _app()
    from aqe_core.opening import default_sample, load_source

    src = load_source(default_sample().path)
    assert at.dataframe[0].value.shape[0] == len(src.views)
    assert _query_pick(at).value is not None


def test_overview_says_why_aqe_did_not_apply():
    """InsertAdaptiveSparkPlan's reason, from the engine, for a query Spark ran without AQE."""
    at = _app()
    outcomes = list(at.dataframe[0].value["what AQE did"])
    assert any(o.startswith("no AQE: the plan is a command") for o in outcomes), outcomes
    assert all(o != "no AQE" for o in outcomes)


def test_partitions_page_draws_histograms_with_median_threshold_and_target():
    at = _app("partitions")
    specs = _charts(at)
    assert specs, "no chart drawn"
    texts = [a.get("text", "") for s in specs for a in s["layout"].get("annotations", [])]
    assert any(t.startswith("median") for t in texts)
    assert any(t.startswith("skew threshold") for t in texts)
    assert any("target" in t for t in texts)
    assert all(len(s["layout"].get("shapes", [])) >= 3 for s in specs[:1])


def test_whatif_changes_the_lines():
    at = _app("whatif")
    key = "wi-spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes"
    at.text_input(key=key).set_value("1b").run()  # no submit: results follow the change
    assert not at.exception
    assert any("skewedPartitionThresholdInBytes=1b" in m.value for m in at.markdown)
    assert at.session_state["whatif_overrides"] == {"spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "1b"}
    # the main settings come first, the full key is in each field's help, the rest is under Advanced
    labels = [t.label for t in at.text_input]
    assert labels[0] == "advisoryPartitionSizeInBytes" and "autoBroadcastJoinThreshold" in labels[:8]
    assert at.text_input(key=key).help.startswith("**spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes**")
    assert at.expander[0].label == "Advanced"


def test_whatif_rejects_a_bad_size_clearly():
    at = _app("whatif")
    at.text_input(key="wi-spark.sql.adaptive.advisoryPartitionSizeInBytes").set_value("1.5m").run()
    assert not at.exception
    assert any("fractional" in e.value for e in at.error)


def test_compare_shows_one_row_per_preset_and_updates():
    at = _app("compare")
    assert at.dataframe[0].value.shape[0] == 3
    at.multiselect(key="compare_pick").set_value(["actual", "skew-sensitive"]).run()
    assert at.dataframe[0].value.shape[0] == 2
    assert list(at.dataframe[0].value["preset"]) == ["actual", "skew-sensitive"]


def test_share_link_reopens_the_same_view():
    at = _app("share")
    _query_pick(at).set_value("6").run()
    at.button(key="copy_link").click().run()
    rid = at.session_state["share_id"]
    assert len(rid) == 16
    again = _app(report=rid)
    assert again.session_state["query_id"] == "6"


def test_bad_report_id_and_bad_upload_are_reported_not_raised(tmp_path):
    at = _app(report="../../etc/passwd")
    assert any("report id" in e.value for e in at.sidebar.error)
    at.sidebar.radio(key="source_mode").set_value("Upload").run()
    at.sidebar.file_uploader(key="upload").upload("broken.zstd", b"\x28\xb5\x2f\xfd garbage" * 10, "application/octet-stream").run()
    assert not at.exception
    assert at.error or at.sidebar.error or at.warning or at.sidebar.warning


from aqe_core.opening import sample_sources  # noqa: E402 - for the tests below, beside them

PAGES = ["overview", "plans", "partitions", "whatif", "compare", "share", "runs"]


@pytest.mark.slow
@pytest.mark.parametrize("sample", sample_sources(), ids=lambda s: s.key)
def test_every_sample_opens_on_every_page(sample):
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = sample.path
    at.session_state["source_label"] = sample.label
    at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
    at.run()
    assert not at.exception, at.exception
    assert not at.sidebar.error, [e.value for e in at.sidebar.error]
    for page in PAGES[1:]:
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
    if sample.kind == "capture":
        at.switch_page("pages/partitions.py").run()
        assert not any("Approximate" in c.value for c in at.caption)


def _maps(at: AppTest) -> list[dict]:
    """The plan maps' data, as the page sent them to the browser."""
    return [json.loads(el.proto.json) for el in at.get("bidi_component")]


def _map_keys(m: dict) -> list[str]:
    return [b["key"] for b in m["boxes"]]


def test_every_plan_node_carries_its_details_to_the_browser():
    """A click on a node opens its details in the browser, without a re-run (the browser test
    clicks); here: each map holds every box's details and Spark's numbers in its boxes."""
    at = _app("plans")
    assert not at.exception
    maps = _maps(at)
    assert len(maps) == 2
    for m in maps:
        assert m["boxes"] and all(b["details"]["title"] for b in m["boxes"])
        assert m["text"] and any(t["path"] == "0" for t in m["text"])  # the plan text, linked to the root
    final = maps[-1]
    root = next(b for b in final["boxes"] if "0" in b["paths"])
    assert root["details"]["title"].startswith("AdaptiveSparkPlan") or root["stage"]
    # numbers in the boxes: rows, a read's partitions before -> after (Spark's metrics)
    texts = [ln["text"] for m in maps for b in m["boxes"] for ln in b["lines"]]
    assert any(t.endswith(" rows") for t in texts) and any(re.search(r"\d+ -> \d+", t) for t in texts)


def test_a_clicked_query_stage_opens_into_its_operators():
    """"Open this stage's operators" in a stage's details stores the stage as opened for these
    plans; the next draw shows its operators in place and the other stages still closed.
    AppTest cannot click in the browser, so preload what the click stores."""
    at = _app("plans")
    at.segmented_control(key="plan_boxes").set_value("Query stages").run()
    assert not at.exception, at.exception
    keys = _map_keys(_maps(at)[-1])
    assert keys and all(k.startswith("stage:") for k in keys) and len(keys) > 1
    qid = at.session_state["query_id"]
    n = at.slider(key="plan_version").value if at.slider else 1
    head = keys[1][len("stage:"):]
    at.session_state["_plan_expanded"] = {"context": (at.session_state["source_path"], qid, n - 1), "final": {head}}
    at.run()
    opened = _map_keys(_maps(at)[-1])
    assert keys[0] in opened and keys[1] not in opened and head in opened
    at.button(key="collapse_stages").click().run()
    assert _map_keys(_maps(at)[-1]) == keys


def test_the_sidebar_keeps_the_real_source_across_pages(tmp_path):
    """Issue 12: a source opened by path stays shown as a path on every page (the Open choice
    and the path survive the page change), and switching source drops the old query pick and
    its ?q= (a query id of one source never selects a query in another)."""
    at = _app()
    _query_pick(at).set_value("6").run()
    assert at.query_params.get("q") in ("6", ["6"])
    cap = str(Path(__file__).parents[2] / "sample_logs" / "captures" / "4.3.0-broadcast_aggregate.json.gz")
    at.sidebar.radio(key="source_mode").set_value("Path on server").run()
    at.sidebar.text_input(key="server_path").set_value(cap).run()
    at.sidebar.button(key="open_path").click().run()
    assert not at.exception, at.exception
    assert at.session_state["source_path"] == cap
    assert _query_pick(at).value == "0"  # not the old source's 6
    assert at.query_params.get("q") in ("0", ["0"])
    at.switch_page("pages/plans.py").run()
    assert not at.exception, at.exception
    assert at.sidebar.radio(key="source_mode").value == "Path on server"
    assert at.sidebar.text_input(key="server_path").value == cap
    assert "broadcast_aggregate" in at.sidebar.caption[0].value.replace("\\", "")


def test_a_listener_log_is_shown_like_a_capture():
    """Issue 11: the executions the listener recorded are exact on every page (no approximate
    label); the label says how many agree."""
    sample = next(s for s in sample_sources() if s.key == "eventlog:spark430_listener")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = sample.path
    at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
    at.run()
    assert not at.exception, at.exception
    assert "listener" in at.sidebar.caption[0].value
    from aqe_core.opening import load_source

    exact = next(v for v in load_source(sample.path).views if v.source_kind == "capture" and v.shuffles)
    _query_pick(at).set_value(exact.query_id).run()
    at.switch_page("pages/partitions.py").run()
    assert not at.exception, at.exception
    assert not any("Approximate" in c.value or "From an event log" in c.value for c in at.caption)


def test_triage_searches_filters_and_ranks():
    """Issue 12: the Overview ranks every execution by what AQE did; typing "skew" finds the
    skewed join; a finding filter keeps only matching rows."""
    at = _app()
    df = at.dataframe[0].value
    assert list(df.columns)[:3] == ["query", "description", "findings"]
    assert "skewed reducers split" in df["findings"].iloc[0]  # the skew split ranks first
    at.text_input(key="triage_search").set_value("skew").run()
    df = at.dataframe[0].value
    assert len(df) >= 1 and all("skew" in (d + f).lower() for d, f in zip(df["description"], df["what AQE did"]))
    at.text_input(key="triage_search").set_value("").run()
    at.multiselect(key="triage_findings").set_value(["no_aqe"]).run()
    df = at.dataframe[0].value
    assert len(df) >= 1 and all("AQE not applied" in f for f in df["findings"])


def test_plan_timeline_and_overlaid_sizes():
    """Issue 12: the Plans page lists every plan version with the stages it added and what changed;
    the Partitions page overlays the sizes before and after AQE where both are known."""
    at = _app("plans")
    table = at.dataframe[0].value
    assert list(table.columns) == ["version", "new query stages", "changed from the previous version"]
    assert table["new query stages"].str.contains("stage").any()
    from aqe_core.figures.histograms import histogram_figure
    from aqe_core.opening import load_source

    s = next(s for v in load_source("sample_logs/captures/4.3.0-skew_join_inner.json.gz").views for s in v.shuffles
             if s.sizes_before and s.sizes_after)
    names = [t.name for t in histogram_figure(s, which="both").data if getattr(t, "type", "") == "bar"]
    assert names == ["before AQE", "after AQE"]


def test_compare_shows_every_release_with_differences_explained():
    """Issue 13: the default sample's skewed join (a 4.3.0 event log) through every release's
    rules, one row per release, the query's own release marked. A plain log's as-run row is
    Spark's metrics (issue 23), and the estimate for that release is a row of its own."""
    at = _app("compare", q="2")
    assert any(h.value == "Every Spark release" for h in at.subheader)
    table = next(df.value for df in at.dataframe if "release" in df.value.columns)
    from aqe_core.advise.releases import RELEASES

    # one row per release, and the release it ran on twice: Spark's metrics and our estimate
    assert len(table) == len(RELEASES) + 1 and table["release"].str.endswith("(as run)").sum() == 1
    ran = table[table["release"].str.endswith("(as run)")].iloc[0]
    assert ran["evidence"] == "Spark's metric" and ran["partitions after AQE"] == "4 + 4"


def test_whatif_page_draws_the_predicted_bars_beside_the_run():
    """Issue 23: on What-if the bars move with the setting (the 4.3.0 aggregate read 40 reducers
    as 2 partitions; at a 4 KiB advisory size our rules predict more), one bar per partition."""
    cap = str(Path(__file__).parents[2] / "sample_logs" / "captures" / "4.3.0-aggregate_coalesce.json.gz")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = cap
    at.session_state["source_ref"] = {"kind": "path", "path": cap}
    at.run()
    at.switch_page("pages/whatif.py").run()
    assert not at.exception, at.exception
    at.text_input(key="wi-spark.sql.adaptive.advisoryPartitionSizeInBytes").set_value("4k").run()
    assert not at.exception, at.exception

    def bars(spec):
        return [t for t in spec["data"] if t.get("type") == "bar" and any(y is not None for y in t.get("y") or [])]

    specs = _charts(at)
    assert len(specs) == 2
    (old,), (new,) = (bars(s) for s in specs)
    assert len(old["y"]) == 2 and len(new["y"]) > 2
    assert "predicted by our rules" in new["name"] and specs[0]["layout"]["yaxis"]["range"] == specs[1]["layout"]["yaxis"]["range"]


def test_a_query_aqe_left_alone_says_why_on_partitions():
    """Issue 23: q72-like ran with coalescing off; each of its shuffles is drawn with why AQE
    left it alone, in the log's numbers, above its chart (not only in an expander)."""
    from aqe_core.opening import sample_sources

    s = next(x for x in sample_sources() if x.key == "eventlog:spark430_tpcds_like")
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["source_path"] = s.path
    at.session_state["source_label"] = s.label
    at.session_state["source_ref"] = {"kind": "sample", "key": s.key}
    at.query_params["q"] = "30"
    at.run()
    at.switch_page("pages/partitions.py").run()
    assert not at.exception, at.exception
    why = [c.value for c in at.caption if c.value.startswith("AQE left this shuffle as planned \\(no adaptive read")]
    assert len(why) == 5 and all("128 partitions" in w and "coalescing is off" in w for w in why)


def test_overview_shows_spark_ids_and_stage_retries_of_a_4x_log(tmp_path):
    """Issue 25: a 4.2 log's sub-execution names its root and query id, and a retried stage is
    said once on Overview (the log is read from a path under the app's home, as a user's would be)."""
    import shutil

    fixture = sorted((Path(APP).parent / "tests/fixtures/eventlogs/retry_cases/4.2.1").glob("*.zstd"))[0]
    (tmp_path / "lens-home").mkdir(exist_ok=True)
    log = tmp_path / "lens-home" / fixture.name
    shutil.copyfile(fixture, log)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source_path"] = str(log)
    at.session_state["source_ref"] = {"kind": "path", "path": str(log)}
    at.run()
    assert not at.exception, at.exception
    from aqe_core.opening import load_source

    views = load_source(str(log)).views
    sub = next(v for v in views if v.root_execution_id is not None)
    retried = next(v for v in views if v.description == "stage retry")
    pick = _query_pick(at)
    assert f"#{sub.query_id} ctas (sub-execution of #{sub.root_execution_id})" in pick.options  # the sidebar label
    pick.set_value(sub.query_id).run()
    assert not at.exception, at.exception
    shown = [c.value.replace("\\", "") for c in at.caption]  # (markdown-escaped text)
    assert any(f"sub-execution of #{sub.root_execution_id}; Spark query id {sub.spark_query_id}" in c for c in shown)
    _query_pick(at).set_value(retried.query_id).run()
    assert not at.exception, at.exception
    assert any("stage 6 ran 2 attempts" in i.value for i in at.info)  # (markdown-escaped text)


def test_partitions_says_which_key_is_skewed_without_running_spark():
    """Issue 42: a listener log's skewed reducer gets "Which key is skewed" beside its bars: the SQL
    for the user's cluster (labelled as theirs to run) and the fixes; a capture's query offers the
    count on Spark as a button (not pressed here: no JVM in these tests)."""
    for key, query, words in (("eventlog:spark430_listener", "2", "CODE FOR YOU TO RUN"),
                              ("capture:4.3.0-skew_join_inner.json.gz", None, None)):
        sample = next(s for s in sample_sources() if s.key == key)
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["source_path"] = sample.path
        at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
        at.run()
        if query is not None:
            _query_pick(at).set_value(query).run()
        at.switch_page("pages/partitions.py").run()
        assert not at.exception, at.exception
        boxes = [e for e in at.expander if e.label == "Which key is skewed"]
        assert boxes, key
        if words:
            assert any(words in c.value for c in at.code), key
            assert any("did not run it" in c.value for c in at.caption)
        else:
            assert any(b.label == "Count the keys on Spark" for b in at.button)
