"""Which key is skewed without Spark (issue 42): the skewed reducers as the views list them, the
SQL for the user's cluster written from the exchange's text, the split settings, the report."""
from __future__ import annotations

from aqe_core.opening import load_source
from aqe_core.report import build_report
from aqe_core.server_settings import SAMPLES_DIR
from aqe_core.views.hot_key_entries import hot_key_entries
from aqe_core.views.hot_keys import cluster_code, skewed_shuffles

LISTENER = str(SAMPLES_DIR / "eventlogs" / "local-1795485556982.zstd")
PLAIN = str(SAMPLES_DIR / "eventlogs" / "local-1795309052779.lz4")
BOTH = str(SAMPLES_DIR / "captures" / "4.3.0-skew_join_both_sides.json.gz")


def test_a_listener_logs_split_reducer_gets_sql_with_its_keys_partitions_and_reducer():
    view = load_source(LISTENER).view("2")
    (s,) = [x for x in skewed_shuffles(view) if 5 in x.reducers]
    assert s.reducers[5] == 2 and not s.positions_only and s.shuffle_id == 0
    code = cluster_code(s, view.final_plan)
    assert code is not None and code.keys == ["key"] and code.num_partitions == 40 and code.reducers == [5]
    assert "pmod(hash(key), 40) AS reducer" in code.sql and "WHERE reducer IN (5)" in code.sql
    assert code.sql.startswith("-- CODE FOR YOU TO RUN")


def test_a_plain_logs_split_without_reducer_names_lists_the_heaviest_reducers():
    view = load_source(PLAIN).view("2")
    (s,) = skewed_shuffles(view)
    assert s.unnamed_splits == 1 and s.positions_only and not s.reducers
    (e,) = hot_key_entries(view, [s])
    assert e["reducer"] is None and "WHERE reducer IN" not in e["code_for_your_cluster"]["sql"]
    assert "does not say which" in e["notes"][0]


def test_an_unsplit_reducer_gets_the_settings_that_would_split_it():
    view = load_source(BOTH).view("2")  # the skew_join_off preset: skewJoin.enabled=false
    entries = hot_key_entries(view, skewed_shuffles(view))
    assert entries and all(e["splits"] is None for e in entries)
    settings = [s for e in entries for f in e["fixes"] if f["kind"] == "split_settings" for s in f["settings"]]
    assert settings and all(s.get("spark.sql.adaptive.skewJoin.enabled") == "true" for s in settings)


def test_the_report_says_which_key_is_skewed():
    view = load_source(LISTENER).view("2")
    html = build_report(view, source_label="listener log")
    assert "<h2>Which key is skewed</h2>" in html and "CODE FOR YOU TO RUN" in html
    assert "AQE Lens did not run it" in html
