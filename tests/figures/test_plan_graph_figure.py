"""The plotly plan figure: traces, customdata, text that fits its box at the default 1:1 view,
escaping of untrusted plan text, determinism, search / details / focus."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import plotly.graph_objects as go
import pytest

from aqe_core.api import load_event_log as load
from aqe_core.model.plan import PlanNode
from aqe_core.figures.plan_blocks import box_graph
from aqe_core.figures.plan_figure import (
    FIT_PX, FONT_PX, NODE_KINDS, PAD_X, STAGE_KEY, format_metric, node_kind, plan_figure,
)
from aqe_core.figures.plan_search import node_details, plan_search
from aqe_core.figures.plan_paths import node_at
from aqe_core.figures.text_width import text_px
from aqe_core.views.plan_diff import SMJ_TO_BROADCAST, diff_plans
from aqe_core.figures.synthetic import chain_plan, synthetic_plan

REPO = Path(__file__).resolve().parents[2]
ROLLING_43 = REPO / "sample_logs" / "eventlogs" / "eventlog_v2_local-1795308995034"

MALICIOUS = "<a href=x>x</a><script>alert(1)</script>"


@pytest.fixture(scope="module")
def bhj():
    log = load(str(ROLLING_43))
    ex = next(e for e in log.executions.values() if e.description == "runtime broadcast join")
    final = ex.plan_with_values(ex.final_plan)
    return ex.initial_plan, final, diff_plans(ex.initial_plan, final)


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def _box_text(fig) -> dict[str, list[str]]:
    """Each box's text lines as drawn (tags removed, entities read)."""
    t = _trace(fig, "labels")
    return {k: [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in txt.split("<br>")]
            for k, txt in zip(t.customdata, t.text)}




def _all_strings(fig) -> list[str]:
    out = []
    for t in fig.data:
        for attr in ("hovertext", "text"):
            v = getattr(t, attr, None)
            if v is None:
                continue
            out.extend([v] if isinstance(v, str) else list(v))
        out.append(t.name or "")
    for a in fig.layout.annotations:
        out.append(a.text or "")
    if fig.layout.title and fig.layout.title.text:
        out.append(fig.layout.title.text)
    return out


# --------------------------------------------------------------------------------------------
# structure
# --------------------------------------------------------------------------------------------
def test_traces_and_customdata(bhj):
    """Edges, box fills, AQE outlines, then the text and the click markers: both keyed by box."""
    _initial, final, d = bhj
    fig = plan_figure(final, changes=d, title="Final plan", expanded="all")
    names = [t.name for t in fig.data]
    assert names[0] == "edges" and names[-2:] == ["labels", "boxes"]
    bg = box_graph(final, "all")
    assert list(_trace(fig, "labels").customdata) == list(_trace(fig, "boxes").customdata) == list(bg.boxes)
    assert {n for n in names if n in NODE_KINDS} <= set(NODE_KINDS)
    assert f"AQE: {SMJ_TO_BROADCAST}" in names
    assert fig.layout.meta["box_count"] == len(bg.boxes)
    collapsed = plan_figure(final, changes=d, expanded=())
    keys = list(_trace(collapsed, "boxes").customdata)
    assert keys and all(k.startswith(STAGE_KEY) for k in keys)
    assert "query stage" in [t.name for t in collapsed.data]  # (no promise of a click: the HTML report cannot expand)


def _figures_of_every_sample():
    from aqe_core.opening import load_source, sample_sources
    for sample in sample_sources():
        src = load_source(sample.path)
        for view in src.views:
            d = diff_plans(view.initial_plan, view.final_plan) if view.final_plan is not None else None
            for plan, side in ((view.initial_plan, "before"), (view.final_plan, "after")):
                if plan is None:
                    continue
                for expanded in ("auto", "all", ()):
                    yield f"{sample.label}#{view.query_id}/{side}/{expanded}", plan_figure(
                        plan, changes=d, change_side=side, expanded=expanded)


def test_text_fits_its_box_on_every_sample_plan():
    """At the default 1:1 view every line of a box is narrower than the box (the browser test
    measures the drawn text too), the text is 11 px, and the default window is 1:1."""
    n = 0
    for name, fig in _figures_of_every_sample():
        rects = fig.layout.meta["box_rects"]
        assert FONT_PX * fig.layout.meta["scale"] == pytest.approx(_trace(fig, "labels").textfont.size, abs=0.01)
        for key, lines in _box_text(fig).items():
            x0, x1, y0, y1 = rects[key]
            for line in lines:
                assert text_px(line, FONT_PX) <= (x1 - x0) - 2 * PAD_X + 0.02, (name, key, line)  # rects: 2 decimals
            assert (y1 - y0) >= 15 * len(lines), (name, key)
        xr, yr = fig.layout.xaxis.range, fig.layout.yaxis.range
        assert fig.layout.xaxis.scaleanchor == "y" and fig.layout.xaxis.scaleratio == 1
        plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        assert (yr[1] - yr[0]) * fig.layout.meta["scale"] == pytest.approx(plot_px, abs=1.0), name
        assert (xr[1] - xr[0]) * fig.layout.meta["scale"] <= FIT_PX + 1e-6
        assert _trace(fig, "labels").textfont.size >= 9
        n += 1
    assert n > 100


def test_before_side_marks_removed_and_partner(bhj):
    initial, final, d = bhj
    fig = plan_figure(initial, changes=d, change_side="before", expanded="all")
    names = {t.name for t in fig.data}
    assert "AQE: removed" in names and f"AQE: {SMJ_TO_BROADCAST}" in names
    text = _box_text(fig)
    removed = {node_at(initial, k).name for k, lines in text.items() if "AQE: removed" in lines}
    assert removed == {"Sort"}
    converted = [node_at(initial, k).name for k, lines in text.items() if any("broadcast" in x for x in lines[1:2])]
    assert converted == ["SortMergeJoin"]


def test_highlight_and_changes_as_mapping(bhj):
    _, final, _ = bhj
    read = plan_search(final, "aqeshuffleread local")
    assert read
    fig = plan_figure(final, highlight=read[0], changes={read[0]: "local read"}, expanded="all")
    assert any(t.name == "selected / found" for t in fig.data)
    assert any(t.name == "AQE: local read" for t in fig.data)
    assert "AQE: local read" in _box_text(fig)[read[0]]
    # collapsed: the stage holding the read is ringed
    stages = plan_figure(final, highlight=read[0], expanded=())
    assert any(t.name == "selected / found" for t in stages.data)
    # unknown paths are ignored
    fig2 = plan_figure(final, highlight=["9.9.9"], changes=[{"path": "9.9", "kind": "coalesced read"}])
    assert all(t.name != "selected / found" and not str(t.name).startswith("AQE") for t in fig2.data)


def test_deterministic(bhj):
    initial, final, _ = bhj
    a = plan_figure(final, changes=diff_plans(initial, final), title="t", highlight="0.0").to_json()
    copy = PlanNode.from_dict(final.to_dict())
    b = plan_figure(copy, changes=diff_plans(PlanNode.from_dict(initial.to_dict()), copy), title="t",
                    highlight="0.0").to_json()
    assert a == b
    big = synthetic_plan(1200, seed=1)
    assert plan_figure(big).to_json() == plan_figure(PlanNode.from_dict(big.to_dict())).to_json()


def test_deep_chain_figure():
    plan = chain_plan(2500)
    fig = plan_figure(plan, expanded="all")
    assert len(_trace(fig, "boxes").customdata) == 2500


def test_a_big_plan_opens_as_its_stages():
    plan = synthetic_plan(400, seed=4)
    fig = plan_figure(plan)
    assert fig.layout.meta["box_count"] < 80
    go.Figure(fig.to_dict())  # valid plotly
    small = synthetic_plan(30, seed=4)
    assert not any(k.startswith(STAGE_KEY) for k in _trace(plan_figure(small), "boxes").customdata)


# --------------------------------------------------------------------------------------------
# escaping
# --------------------------------------------------------------------------------------------
def test_hover_text_escapes_plan_strings():
    evil = PlanNode(1, "<b>Evil</b>Scan", MALICIOUS, [
        {"name": "<img src=x onerror=alert(1)>", "type": "size", "accumulator_id": 1, "total": 3 * 2**20},
        {"name": "note", "type": "sum", "accumulator_id": 2, "value": "<i>5</i>"},
    ], [])
    plan = PlanNode(0, "AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true", [], [
        PlanNode(2, "AQEShuffleRead", "AQEShuffleRead coalesced", [], [evil])])
    changes = [{"path": "0.0.0", "kind": "new node", "label": "<u>x</u>", "explanation": MALICIOUS}]
    fig = plan_figure(plan, changes=changes, title=f"query {MALICIOUS}", highlight="0.0.0")
    strings = _all_strings(fig)
    joined = "\n".join(strings)
    for bad in ("<a ", "<a>", "<script", "<img", "<u>", "<b>Evil", "<i>5"):
        assert bad not in joined, bad
    hover = _trace(fig, "boxes")
    text = hover.hovertext[list(hover.customdata).index("0.0.0")]
    assert "&lt;a href=x&gt;x&lt;/a&gt;&lt;script&gt;" in text
    assert "&lt;b&gt;Evil&lt;/b&gt;Scan" in text
    assert "&lt;img src=x onerror=alert(1)&gt;: 3.0 MiB" in text
    assert "&lt;u&gt;x&lt;/u&gt;" in text
    # our own markup is still there
    assert text.startswith("<b>") and "<br>" in text
    assert "&lt;script&gt;" in fig.layout.title.text
    # and nothing breaks out of the HTML export
    html_doc = fig.to_html(include_plotlyjs=False, full_html=False)
    assert "<script>alert(1)" not in html_doc


def test_long_description_truncated_and_entities_not_cut():
    desc = "Project [" + ", ".join(f"c{i}#&<{i}>" for i in range(400)) + "]"
    plan = PlanNode(0, "Project", desc, [], [])
    fig = plan_figure(plan)
    text = _trace(fig, "boxes").hovertext[0]
    assert len(text) < 1200
    for chunk in text.split("<br>"):
        # every '&' starts a complete entity
        i = chunk.find("&")
        while i >= 0:
            assert any(chunk.startswith(e, i) for e in ("&amp;", "&lt;", "&gt;", "&quot;", "&#x27;")), chunk[i:i + 8]
            i = chunk.find("&", i + 1)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric,expected", [
    ({"type": "size", "total": 3 * 2**20}, "3.0 MiB"),
    ({"type": "size", "total": 512}, "512 B"),
    ({"type": "size", "total": 4 * 2**30, "min": 2**20, "med": 2**21, "max": 2**31, "count": 4},
     "4.0 GiB (min 1.0 MiB, med 2.0 MiB, max 2.0 GiB)"),
    ({"type": "timing", "total": 1500}, "1.5 s"),
    ({"type": "timing", "total": 42}, "42 ms"),
    ({"type": "nsTiming", "total": 2_500_000_000}, "2.5 s"),
    ({"type": "sum", "total": 1234567}, "1,234,567"),
    ({"type": "sum", "value": "80,000"}, "80,000"),
    ({"type": "average", "med": 25, "min": 10, "max": 40}, "2.5 (min 1.0, med 2.5, max 4.0)"),
    ({"type": "size"}, None),
])
def test_format_metric(metric, expected):
    assert format_metric(metric) == expected


def test_search_details_zoom(bhj):
    _, final, _ = bhj
    hits = plan_search(final, "AQESHUFFLEREAD")
    assert hits and all(node_at(final, p).name == "AQEShuffleRead" for p in hits)
    assert plan_search(final, "") == [] and plan_search(final, "no such operator") == []
    # hits on folded codegen wrappers map to the drawn node
    drawn = box_graph(final, "all").boxes
    wscg = plan_search(final, "wholestagecodegen")
    assert wscg and all(p in drawn for p in wscg)
    assert set(plan_search(final, "wholestagecodegen", fold_codegen=False)) == {
        p for p, n in ((p, node_at(final, p)) for p in _all_paths(final)) if n.name.startswith("WholeStageCodegen")}
    # description matches too
    assert plan_search(final, "buildright") == [p for p in _all_paths(final) if node_at(final, p).name == "BroadcastHashJoin"]

    read = hits[0]
    det = node_details(final, read)
    assert det["name"] == "AQEShuffleRead" and det["kind"] == "shuffle read"
    assert det["parent"] == read.rsplit(".", 1)[0] and det["children"] == [read + ".0"]
    names = [r["name"] for r in det["metrics"]]
    assert "number of partitions" in names
    assert all(isinstance(r["value"], str) for r in det["metrics"])
    join = plan_search(final, "BroadcastHashJoin [")[0]
    stage_node = node_details(final, join)["codegen_stage"]
    assert stage_node is not None
    assert node_details(final, "7.7") is None and node_details(final, "0.99") is None

    fig = plan_figure(final, expanded="all", focus=read)
    xr = fig.layout.xaxis.range
    x0, x1, _y0, _y1 = fig.layout.meta["box_rects"][read]
    assert xr[0] <= (x0 + x1) / 2 <= xr[1]


def _all_paths(plan):
    from aqe_core.figures.plan_paths import iter_paths
    return [p for p, _ in iter_paths(plan)]


def test_node_kinds():
    def k(name):
        return node_kind(PlanNode(None, name))
    assert k("Scan parquet spark_catalog.default.t") == "scan"
    assert k("FileScan parquet") == "scan" and k("Range") == "scan" and k("BatchScan t") == "scan"
    assert k("Exchange") == "exchange / stage" and k("ShuffleQueryStage") == "exchange / stage"
    assert k("BroadcastExchange") == "exchange / stage" and k("ReusedExchange") == "exchange / stage"
    assert k("AQEShuffleRead") == "shuffle read" and k("CustomShuffleReader") == "shuffle read"
    assert k("SortMergeJoin(skew=true)") == "join" and k("BroadcastNestedLoopJoin") == "join"
    assert k("HashAggregate") == "aggregate" and k("ObjectHashAggregate") == "aggregate"
    assert k("Sort") == "sort" and k("Project") == "project / filter" and k("Filter") == "project / filter"
    assert k("Execute InsertIntoHadoopFsRelationCommand") == "other"


def test_reuse_link_trace():
    ex = PlanNode(3, "Exchange", "Exchange hashpartitioning(k#1L, 40), ENSURE_REQUIREMENTS, [plan_id=7]",
                  children=[PlanNode(4, "Range", "Range (0, 10, step=1, splits=2)")])
    plan = PlanNode(0, "Union", "Union", children=[
        ex, PlanNode(None, "ReusedExchange", "ReusedExchange [k#9L], Exchange hashpartitioning(k#1L, 40), "
                                             "ENSURE_REQUIREMENTS, [plan_id=7]")])
    fig = plan_figure(plan, expanded="all")
    link = [t for t in fig.data if t.name == "reuse / subquery link"]
    assert len(link) == 1 and link[0].line.dash == "dash" and len(link[0].x) == 3
    boxes = _trace(fig, "boxes")
    assert "reuses Exchange hashpartitioning(k, 40) #3" in boxes.hovertext[list(boxes.customdata).index("0.1")]


def test_figure_json_size_reasonable():
    fig = plan_figure(synthetic_plan(2000, seed=3), expanded="all")
    assert len(json.dumps(fig.to_plotly_json(), default=str)) < 6_000_000


def test_the_initial_plan_carries_no_skew_join_mark():
    """Issue 12: a skew join is a change of the later plan; the initial plan's join had none."""
    from aqe_core.opening import default_sample, load_source
    from aqe_core.views.plan_diff import SKEW_JOIN, diff_plans

    src = load_source(default_sample().path)
    view = next(v for v in src.views if any(n.name.startswith("SortMergeJoin(skew=true)")
                                              for n in (v.final_plan.walk() if v.final_plan else [])))
    d = diff_plans(view.initial_plan, view.final_plan)
    assert any(c.kind == SKEW_JOIN for c in d)
    before = plan_figure(view.initial_plan, changes=d, change_side="before")
    after = plan_figure(view.final_plan, changes=d)
    assert f"AQE: {SKEW_JOIN}" not in {t.name for t in before.data}
    assert f"AQE: {SKEW_JOIN}" in {t.name for t in after.data}


def test_hover_boxes_stay_small_enough_to_draw_whole():
    """Issue 23: plotly clips a hover box at the chart's edges; every node's box keeps short
    lines and a bounded count, on the busiest real plans (and AQE's change is never dropped)."""
    from aqe_core.figures.plan_hover import HOVER_MAX_LINES, HOVER_WIDTH
    from aqe_core.opening import load_source
    from aqe_core.views.plan_diff import diff_plans

    root = Path(__file__).resolve().parents[2]
    boxes = 0
    for f in ("sample_logs/eventlogs/eventlog_v2_local-1795308995034", "sample_logs/captures/4.3.0-skew_join_inner.json.gz"):
        for v in load_source(str(root / f)).views:
            if v.final_plan is None:
                continue
            d = diff_plans(v.initial_plan, v.final_plan)
            for expanded in ("all", ()):
                fig = plan_figure(v.final_plan, changes=d, expanded=expanded)
                t = _trace(fig, "boxes")
                members = {b.key: b.members for b in box_graph(v.final_plan, expanded).boxes.values()}
                for key, text in zip(t.customdata, t.hovertext):
                    lines = text.split("<br>")
                    assert len(lines) <= HOVER_MAX_LINES, (f, key, lines)
                    plain = [html.unescape(re.sub(r"</?[bi]>", "", x)) for x in lines]
                    assert max(len(x) for x in plain) <= HOVER_WIDTH + 12, (f, key, plain)
                    for path in members.get(key, (key,)):
                        for c in d.for_path(path):
                            assert f"AQE: {c.label}" in html.unescape(text), (f, key)
                    boxes += 1
    assert boxes > 100
