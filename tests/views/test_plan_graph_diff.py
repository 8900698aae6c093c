"""AQE plan diff: the changes it reports on the recorded sample logs must be the ones the
plan strings in the logs show; synthetic plans cover join conversions and empty relations."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aqe_core.api import load_event_log as load
from aqe_core.model.plan import PlanNode
from aqe_core.figures.plan_paths import iter_paths, node_at
from aqe_core.views.plan_diff import (
    COALESCED_AND_SKEWED, COALESCED_READ, EMPTY_PRUNED, LOCAL_READ, NEW_NODE, REMOVED, SHUFFLE_READ, SKEW_JOIN,
    SKEWED_READ, SMJ_TO_BROADCAST, SMJ_TO_SHUFFLED_HASH, Change, PlanDiff, diff_execution, diff_plans, diff_versions,
)
from aqe_core.figures.synthetic import synthetic_plan

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs" / "eventlogs"
ROLLING_43 = SAMPLES / "eventlog_v2_local-1795308995034"
SPARK_301 = SAMPLES / "local-1795309249168"
#: the big-plan sample (tools/record_big_plans.py), by its manifest key
TPCDS_LIKE = json.loads((SAMPLES / "MANIFEST.json").read_text())["spark430_tpcds_like"]["files"][0]

#: what each adaptive read description means (aqe_rules.md §10)
READ_KIND_BY_TEXT = {
    "AQEShuffleRead coalesced": COALESCED_READ,
    "AQEShuffleRead coalesced and skewed": COALESCED_AND_SKEWED,
    "AQEShuffleRead skewed": SKEWED_READ,
    "AQEShuffleRead local": LOCAL_READ,
    "CustomShuffleReader coalesced": COALESCED_READ,
    "CustomShuffleReader local": LOCAL_READ,
    "CustomShuffleReader no skewed partition": SHUFFLE_READ,
}


def _read_kind(desc: str) -> str:
    if re.match(r"CustomShuffleReader \d+ skewed partitions? with size\(", desc):
        return SKEWED_READ
    return READ_KIND_BY_TEXT[desc]


@pytest.fixture(scope="module")
def logs():
    return {p.name: load(str(p)) for p in sorted(SAMPLES.iterdir()) if p.name != "MANIFEST.json"}


def _exec(log, description):
    found = [e for e in log.executions.values() if e.description == description]
    assert len(found) == 1, description
    return found[0]


def _paths_where(plan, pred):
    return [p for p, n in iter_paths(plan) if pred(n)]


# --------------------------------------------------------------------------------------------
# the recorded logs
# --------------------------------------------------------------------------------------------
def test_skewed_join_spark_43(logs):
    ex = _exec(logs[ROLLING_43.name], "skewed join")
    final = ex.final_plan
    d = diff_plans(ex.initial_plan, final)
    smj = _paths_where(final, lambda n: n.name == "SortMergeJoin(skew=true)")
    cs = _paths_where(final, lambda n: n.description == "AQEShuffleRead coalesced and skewed")
    co = _paths_where(final, lambda n: n.description == "AQEShuffleRead coalesced")
    assert len(smj) == 1 and len(cs) == 1 and len(co) == 1
    got = {(c.path, c.kind) for c in d}
    assert (smj[0], SKEW_JOIN) in got
    assert (cs[0], COALESCED_AND_SKEWED) in got
    assert (co[0], COALESCED_READ) in got
    # the join was a plain SortMergeJoin in the initial plan: matched, not new
    before = node_at(ex.initial_plan, d.matches[smj[0]])
    assert before.name == "SortMergeJoin"
    assert not [c for c in d if c.kind in (NEW_NODE, REMOVED)]
    # explanation uses the exchange's partition count from the plan string
    ex_desc = next(n.description for n in final.walk() if n.name == "Exchange" and "hashpartitioning(key#1L" in n.description)
    n_parts = int(re.search(r"hashpartitioning\(key#1L, (\d+)\)", ex_desc).group(1))
    cs_change = next(c for c in d if c.kind == COALESCED_AND_SKEWED)
    assert f"{n_parts} partitions" in cs_change.explanation


@pytest.mark.parametrize("logname,read_name", [
    ("eventlog_v2_local-1795308995034", "AQEShuffleRead"),
    ("local-1795309160158.zstd", "AQEShuffleRead"),
    ("local-1795309249168", "CustomShuffleReader"),
])
def test_runtime_broadcast_join(logs, logname, read_name):
    ex = _exec(logs[logname], "runtime broadcast join")
    initial, final = ex.initial_plan, ex.final_plan
    assert _paths_where(initial, lambda n: n.name == "SortMergeJoin")
    assert not _paths_where(final, lambda n: n.name.startswith("SortMergeJoin"))
    bhj = _paths_where(final, lambda n: n.name == "BroadcastHashJoin")
    assert len(bhj) == 1
    d = diff_plans(initial, final)
    conv = [c for c in d if c.kind == SMJ_TO_BROADCAST]
    assert [c.path for c in conv] == bhj
    assert node_at(initial, conv[0].before_path).name == "SortMergeJoin"
    local = _paths_where(final, lambda n: n.description == f"{read_name} local")
    assert local and sorted(c.path for c in d if c.kind == LOCAL_READ) == sorted(local)
    # the sorts under the old join are gone, the broadcast exchange is new
    removed = [c for c in d if c.kind == REMOVED]
    assert {c.node_name for c in removed} == {"Sort"}
    assert all(c.side == "before" and node_at(initial, c.path).name == "Sort" for c in removed)
    assert len(removed) == len(_paths_where(initial, lambda n: n.name == "Sort"))
    new = [c for c in d if c.kind == NEW_NODE]
    assert [node_at(final, c.path).name for c in new] == ["BroadcastExchange"]


def test_skewed_join_spark_301(logs):
    ex = _exec(logs[SPARK_301.name], "skewed join")
    final = ex.final_plan
    d = diff_plans(ex.initial_plan, final)
    skewed = _paths_where(final, lambda n: n.name == "CustomShuffleReader" and "skewed partitions with size" in n.description)
    other = _paths_where(final, lambda n: n.description == "CustomShuffleReader no skewed partition")
    assert len(skewed) == 1 and len(other) == 1
    kinds = {c.path: c.kind for c in d}
    assert kinds[skewed[0]] == SKEWED_READ
    assert kinds[other[0]] == SHUFFLE_READ
    assert kinds[_paths_where(final, lambda n: n.name == "SortMergeJoin(skew=true)")[0]] == SKEW_JOIN


def test_every_read_and_skew_join_in_every_log(logs):
    """Every adaptive read / skew join of every final plan gets the change its plan string says;
    only the runtime broadcast conversion adds or removes operators."""
    seen_kinds = _check_reads_and_skew_joins({k: v for k, v in logs.items() if k != TPCDS_LIKE})
    assert {SKEW_JOIN, COALESCED_AND_SKEWED, COALESCED_READ, LOCAL_READ, SMJ_TO_BROADCAST, SKEWED_READ} <= seen_kinds


def test_every_read_and_skew_join_in_the_tpcds_like_log(logs):
    """Issue 23 (AQE noise): the 300-node plans report their reads and skew joins and nothing
    that only moved because a stage was cut (ColumnarToRow, ReusedExchange, BroadcastExchange)."""
    kinds = _check_reads_and_skew_joins({TPCDS_LIKE: logs[TPCDS_LIKE]})
    assert kinds == {COALESCED_READ, COALESCED_AND_SKEWED, SKEW_JOIN}


def _check_reads_and_skew_joins(logs) -> set[str]:
    seen_kinds = set()
    for name, log in logs.items():
        for ex in log.executions.values():
            if not ex.plan_versions or ex.initial_plan is None:
                continue
            final = ex.final_plan
            d = diff_plans(ex.initial_plan, final)
            by_path: dict[str, set[str]] = {}
            for c in d:
                if c.side == "after":
                    by_path.setdefault(c.path, set()).add(c.kind)
            copies = _reused_copies(final)
            for path, node in iter_paths(final):
                if path in copies:
                    assert path not in by_path  # a reused stage's copy: its changes are marked where it is drawn in full
                elif node.name in ("AQEShuffleRead", "CustomShuffleReader"):
                    assert by_path.get(path) == {_read_kind(node.description)}, (name, ex.id, path)
                elif node.name.endswith("(skew=true)"):
                    assert SKEW_JOIN in by_path.get(path, set()), (name, ex.id, path)
                elif node.name.startswith("WholeStageCodegen") or node.name == "InputAdapter" or "QueryStage" in node.name:
                    assert path not in by_path
            for c in d:
                seen_kinds.add(c.kind)
                if c.kind == NEW_NODE:
                    assert c.node_name == "BroadcastExchange", (name, ex.id, c)
                if c.kind == REMOVED:
                    assert c.node_name == "Sort", (name, ex.id, c)
            # every change record points at the node it names
            for c in d:
                plan = final if c.side == "after" else ex.initial_plan
                assert node_at(plan, c.path).name == c.node_name
    return seen_kinds


def _reused_copies(plan) -> set[str]:
    """Paths of operators the diff does not compare: a reused stage's copy under a
    ReusedExchange, when the same stage is drawn in full elsewhere in the plan."""
    from aqe_core.views.plan_match import _Tree, is_wrapper

    compared = set(_Tree(plan, {}).paths)
    out = set()
    for path, node in iter_paths(plan):
        if path not in compared and not is_wrapper(node):
            parts = path.split(".")
            assert any(node_at(plan, ".".join(parts[:k])).name == "ReusedExchange" for k in range(1, len(parts)))
            out.add(path)
    return out


def test_consecutive_versions_report_each_change_once(logs):
    for name, log in logs.items():
        for ex in log.executions.values():
            if not ex.plan_versions:
                continue
            steps = diff_versions(ex.initial_plan, ex.plan_versions)
            assert len(steps) == len(ex.plan_versions)
            total = diff_plans(ex.initial_plan, ex.final_plan)
            # each read / skew join / conversion of the final plan appears in exactly one step
            # (reads that are still there at the end)
            final_kinds = sorted(c.kind for c in total if c.kind not in (NEW_NODE, REMOVED))
            step_kinds = []
            for i, step in enumerate(steps):
                for c in step:
                    if c.kind in (NEW_NODE, REMOVED):
                        continue
                    later = ex.plan_versions[i]
                    assert node_at(later, c.path).name == c.node_name
                    step_kinds.append(c.kind)
            assert sorted(step_kinds) == final_kinds, (name, ex.id)


def test_diff_execution_and_no_initial(logs):
    ex = _exec(logs[ROLLING_43.name], "skewed join")
    assert diff_execution(ex).table() == diff_plans(ex.initial_plan, ex.final_plan).table()
    only_final = diff_plans(None, ex.final_plan)
    assert {c.kind for c in only_final} == {SKEW_JOIN, COALESCED_AND_SKEWED, COALESCED_READ}
    assert diff_plans(ex.final_plan, ex.final_plan).changes == []


def test_metric_values_in_explanations(logs):
    ex = _exec(logs[ROLLING_43.name], "skewed join")
    final = ex.plan_with_values(ex.final_plan)
    d = diff_plans(ex.initial_plan, final)
    cs_path = next(c.path for c in d if c.kind == COALESCED_AND_SKEWED)
    node = node_at(final, cs_path)
    splits = next(m for m in node.metrics if m["name"] == "number of skewed partition splits")
    skewed = next(m for m in node.metrics if m["name"] == "number of skewed partitions")
    expl = next(c.explanation for c in d if c.kind == COALESCED_AND_SKEWED)
    assert f"{skewed['total']} skewed partition" in expl and f"split into {splits['total']}" in expl


# --------------------------------------------------------------------------------------------
# synthetic plans
# --------------------------------------------------------------------------------------------
def N(name, desc=None, *children, id=None):
    return PlanNode(id, name, desc if desc is not None else name, [], list(children))


def _side(key, rows):
    return N("Exchange", f"Exchange hashpartitioning({key}, 200), ENSURE_REQUIREMENTS, [plan_id=1]",
             N("Project", f"Project [{key}]", N("Range", f"Range (0, {rows}, step=1, splits=2)")))


def _smj_initial():
    return N("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=false",
             N("Project", "Project [k#1L]",
               N("SortMergeJoin", "SortMergeJoin [k#1L], [k#2L], Inner",
                 N("Sort", "Sort [k#1L ASC NULLS FIRST], false, 0", _side("k#1L", 100)),
                 N("Sort", "Sort [k#2L ASC NULLS FIRST], false, 0", _side("k#2L", 10)))))


def _stage(i, exch):
    exch = PlanNode(exch.id, exch.name, exch.description.replace("plan_id=1", f"plan_id={50 + i}"), [],
                    [N("WholeStageCodegen (9)", None, exch.children[0])])
    return N("ShuffleQueryStage", f"ShuffleQueryStage {i}", exch)


def test_smj_to_shuffled_hash_with_skew():
    final = N("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true",
              N("WholeStageCodegen (3)", None,
                N("Project", "Project [k#1L]",
                  N("ShuffledHashJoin(skew=true)", "ShuffledHashJoin(skew=true) [k#1L], [k#2L], Inner, BuildRight",
                    N("InputAdapter", None, N("AQEShuffleRead", "AQEShuffleRead coalesced and skewed",
                                              _stage(0, _side("k#1L", 100)))),
                    N("InputAdapter", None, N("AQEShuffleRead", "AQEShuffleRead coalesced",
                                              _stage(1, _side("k#2L", 10))))))))
    d = diff_plans(_smj_initial(), final)
    kinds = {(c.node_name, c.kind) for c in d}
    assert ("ShuffledHashJoin(skew=true)", SMJ_TO_SHUFFLED_HASH) in kinds
    assert ("ShuffledHashJoin(skew=true)", SKEW_JOIN) in kinds
    assert ("AQEShuffleRead", COALESCED_AND_SKEWED) in kinds and ("AQEShuffleRead", COALESCED_READ) in kinds
    assert sorted(c.node_name for c in d if c.kind == REMOVED) == ["Sort", "Sort"]
    assert not [c for c in d if c.kind == NEW_NODE]
    # the join change is listed before the skew flag of the same node
    join_changes = [c.kind for c in d if c.node_name.startswith("ShuffledHashJoin")]
    assert join_changes == [SMJ_TO_SHUFFLED_HASH, SKEW_JOIN]


def test_empty_relation_replaces_join():
    final = N("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true",
              N("Project", "Project [k#1L]", N("LocalTableScan", "LocalTableScan <empty>, [k#1L]")))
    initial = _smj_initial()
    d = diff_plans(initial, final)
    empty = [c for c in d if c.kind == EMPTY_PRUNED]
    assert len(empty) == 1 and empty[0].path == "0.0.0"
    assert node_at(initial, empty[0].before_path).name == "SortMergeJoin"
    assert "SortMergeJoin subtree" in empty[0].explanation
    removed = [c for c in d if c.kind == REMOVED]
    assert len(removed) == 1 and removed[0].node_name == "SortMergeJoin"
    below = sum(1 for _ in node_at(initial, removed[0].path).walk()) - 1
    assert len(removed[0].related) == below
    assert not [c for c in d if c.kind == NEW_NODE]


def test_empty_relation_replaces_one_side():
    initial = _smj_initial()
    final = N("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true",
              N("Project", "Project [k#1L]",
                N("SortMergeJoin", "SortMergeJoin [k#1L], [k#2L], LeftOuter",
                  N("Sort", "Sort [k#1L ASC NULLS FIRST], false, 0", _stage(0, _side("k#1L", 100))),
                  N("LocalTableScan", "LocalTableScan <empty>, [k#2L]"))))
    d = diff_plans(initial, final)
    empty = [c for c in d if c.kind == EMPTY_PRUNED]
    assert [c.path for c in empty] == ["0.0.0.1"]
    assert node_at(initial, empty[0].before_path).name == "Sort"
    assert node_at(initial, empty[0].before_path).children[0].description.startswith("Exchange hashpartitioning(k#2L")


def test_change_records_shape():
    d = diff_plans(_smj_initial(), _smj_initial())
    assert isinstance(d, PlanDiff) and len(d) == 0 and not d and list(d) == []
    c = Change("0.1", SKEW_JOIN, "skew join", "why", "SortMergeJoin(skew=true)")
    assert set(c.to_dict()) == {"path", "kind", "label", "node", "explanation", "side", "before_path", "related"}


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------
def _wrap_like_executed(plan: PlanNode, rnd) -> PlanNode:
    """Same operators, wrapped the way an executed adaptive plan is: query stages over
    exchanges, codegen stages and input adapters; plan ids renumbered."""
    d = plan.to_dict()

    def rebuild(x):
        node = PlanNode(x["id"], x["name"], re.sub(r"plan_id=\d+", f"plan_id={rnd.randint(1, 999)}", x["description"]),
                        x["metrics"], [rebuild(c) for c in x["children"]])
        if node.name == "Exchange":
            return PlanNode(None, "ShuffleQueryStage", f"ShuffleQueryStage {rnd.randint(0, 9)}", [], [node])
        if rnd.random() < 0.3:
            node = PlanNode(None, "InputAdapter", "InputAdapter", [], [node])
        if rnd.random() < 0.2:
            node = PlanNode(1, "WholeStageCodegen (7)", "WholeStageCodegen (7)", [], [node])
        return node

    import sys
    lim = sys.getrecursionlimit()
    sys.setrecursionlimit(max(lim, 10000))
    try:
        return rebuild(d)
    finally:
        sys.setrecursionlimit(lim)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 120), st.integers(0, 10_000), st.randoms(use_true_random=False))
def test_wrappers_are_not_changes(n, seed, rnd):
    plan = synthetic_plan(n, seed=seed, codegen=False)
    wrapped = _wrap_like_executed(plan, rnd)
    d = diff_plans(plan, wrapped)
    # only the reads / skew joins that are there in both are self-evident; nothing is new or removed
    assert not [c for c in d if c.kind in (NEW_NODE, REMOVED, SMJ_TO_BROADCAST, SMJ_TO_SHUFFLED_HASH, EMPTY_PRUNED)]
    assert not [c for c in d if c.kind in (COALESCED_READ, SKEW_JOIN)]  # unchanged since before
    ops = [p for p, node in iter_paths(wrapped) if node.name not in ("ShuffleQueryStage", "InputAdapter")
           and not node.name.startswith("WholeStageCodegen (7)")]
    assert len(d.matches) == len(ops)


def test_deep_chain_diff():
    from aqe_core.figures.synthetic import chain_plan
    a = chain_plan(3000)
    b = chain_plan(3000)
    node = b
    while node.children:
        node = node.children[0]
    node.children.append(PlanNode(9999, "LocalTableScan", "LocalTableScan <empty>, [a#1]"))
    d = diff_plans(a, b)
    assert [c.kind for c in d] == [EMPTY_PRUNED]


# --------------------------------------------------------------------------------------------
# what a cut stage brings is not AQE's change (issue 23)
# --------------------------------------------------------------------------------------------
FIXTURES = REPO / "tests" / "fixtures"
PARQUET_JOINS = next((FIXTURES / "plan_diff").glob("parquet_broadcast_joins_*.zstd"))
#: operators that appear because a query stage was cut or reused, never because AQE re-planned
STAGE_CUT = ("ColumnarToRow", "RowToColumnar", "InputAdapter", "ReusedExchange",
             "ShuffleQueryStage", "BroadcastQueryStage", "TableCacheQueryStage", "ResultQueryStage")


def _every_recorded_source() -> list[Path]:
    """Every sample and fixture log and capture recorded from real Spark (all versions)."""
    out = [p for p in sorted(SAMPLES.iterdir()) if p.name != "MANIFEST.json"]
    out += sorted((REPO / "sample_logs" / "captures").glob("*.json.gz"))
    out += sorted((FIXTURES / "captures").glob("*/*.json.gz"))
    out += sorted(p for p in (FIXTURES / "eventlogs" / "listener").glob("*/*") if "captures" not in p.name)
    out += [PARQUET_JOINS]
    return out


def _no_ids(desc: str) -> str:
    return re.sub(r"#\d+L?|,?\s*\[(?:plan_id=\d+|id=#\d+)\]", "", desc)


@pytest.fixture(scope="module")
def recorded_diffs():
    """(source, query, later plan, earlier plan, diff) for the initial plan against every later
    plan version and the final plan, as the Plans page shows them."""
    from aqe_core.opening import load_source

    out = []
    for path in _every_recorded_source():
        for v in load_source(str(path)).views:
            if v.initial_plan is None:
                continue
            laters = {id(p): p for p in [*v.plan_versions, v.final_plan] if p is not None and p is not v.initial_plan}
            for later in laters.values():
                out.append((path.name, v.query_id, later, v.initial_plan, diff_plans(v.initial_plan, later)))
    return out


def test_a_cut_stage_is_not_a_change(recorded_diffs):
    """Wrappers, columnar transitions and reused stages are never a new or removed node; a new
    BroadcastExchange is always the one a join strategy change brought; a new Exchange is a
    shuffle the earlier plan did not have (its partitioning, ids aside, is new there)."""
    assert len(recorded_diffs) > 1000
    seen_new = set()
    for name, qid, later, earlier, d in recorded_diffs:
        changed_joins = {c.path for c in d if c.kind in (SMJ_TO_BROADCAST, SMJ_TO_SHUFFLED_HASH)}
        for c in d:
            where = (name, qid, c.path, c.node_name)
            if c.kind not in (NEW_NODE, REMOVED):
                continue
            assert c.node_name not in STAGE_CUT and not c.node_name.startswith("WholeStageCodegen"), where
            if c.kind == REMOVED:
                assert c.node_name in ("Sort", "SortAggregate"), where
                continue
            seen_new.add(c.node_name)
            if c.node_name == "BroadcastExchange":
                assert any(c.path.startswith(j + ".") for j in changed_joins), where
            elif c.node_name == "Exchange":
                part = _no_ids(node_at(later, c.path).description)
                count = lambda plan: sum(1 for n in plan.walk() if n.name == "Exchange" and _no_ids(n.description) == part)  # noqa: E731 - a one-line local helper
                assert count(later) > count(earlier), where
    assert "BroadcastExchange" in seen_new and "Exchange" in seen_new


def test_real_changes_are_still_reported(recorded_diffs):
    kinds = {c.kind for *_, d in recorded_diffs for c in d}
    assert {SMJ_TO_BROADCAST, SMJ_TO_SHUFFLED_HASH, SKEW_JOIN, COALESCED_AND_SKEWED, SKEWED_READ, COALESCED_READ,
            LOCAL_READ, SHUFFLE_READ, NEW_NODE, REMOVED} <= kinds
    # every adaptive read and skew join of every later plan is reported, whatever was cut around it
    for name, qid, later, earlier, d in recorded_diffs:
        earlier_reads = {_no_ids(n.description) for n in earlier.walk() if n.name in ("AQEShuffleRead", "CustomShuffleReader")}
        if earlier_reads:
            continue  # a read already in the earlier plan is not reported again
        on = {c.path for c in d if c.side == "after"}
        copies = _reused_copies(later)
        for path, node in iter_paths(later):
            if path in copies:
                continue  # marked where the reused stage is drawn in full
            if node.name in ("AQEShuffleRead", "CustomShuffleReader") or node.name.endswith("(skew=true)"):
                assert path in on, (name, qid, path)


def test_parquet_broadcast_joins_have_no_noise():
    """A real Spark 4.3 query72-like run on parquet: 8 broadcast joins planned statically, every
    scan under a ColumnarToRow in the final plan only. AQE coalesced the final aggregate's
    shuffle and did nothing else."""
    log = load(str(PARQUET_JOINS))
    ex = max(log.executions.values(), key=lambda e: len(e.plan_versions))
    initial, final = ex.initial_plan, ex.final_plan
    assert not [n for n in initial.walk() if n.name == "ColumnarToRow"]
    assert len([n for n in final.walk() if n.name == "ColumnarToRow"]) == 9
    assert len([n for n in final.walk() if n.name == "BroadcastHashJoin"]) == 8
    for later in [*ex.plan_versions, final]:
        assert [c.kind for c in diff_plans(initial, later)] in ([], [COALESCED_READ])
    d = diff_plans(initial, final)
    assert [(c.kind, c.node_name) for c in d] == [(COALESCED_READ, "AQEShuffleRead")]
    # every operator of the initial plan has its partner in the final plan
    ops = [n for n in initial.walk() if not n.name.startswith("WholeStageCodegen")
           and n.name not in STAGE_CUT]
    assert len(d.matches) == len(ops)


def test_a_reused_stage_stands_for_the_exchange_it_reuses():
    """A real 3.3.4 capture: AQE reused the shuffle of one side for the third join input (a
    ReusedExchange over the original Exchange) and, for the skew join, added a shuffle and a
    sort between the joins. The reuse is no change; the added shuffle is."""
    from aqe_core.opening import load_source

    v = load_source(str(FIXTURES / "captures" / "3.3.4" / "multi_way_join_same_key.json.gz")).view("1")
    d = diff_plans(v.initial_plan, v.final_plan)
    reused = _paths_where(v.final_plan, lambda n: n.name == "ReusedExchange")
    assert len(reused) == 1
    before = node_at(v.initial_plan, d.matches[reused[0]])
    assert before.name == "Exchange" and before.description.startswith("Exchange hashpartitioning(k#1773L, 40)")
    assert sorted((c.kind, c.node_name) for c in d if c.kind in (NEW_NODE, REMOVED)) == [
        (NEW_NODE, "Exchange"), (NEW_NODE, "Sort")]
    new_exchange = next(c for c in d if c.kind == NEW_NODE and c.node_name == "Exchange")
    assert node_at(v.final_plan, new_exchange.path).description.startswith("Exchange hashpartitioning(k#1759L, 40)")
    # the SinglePartition exchange of the aggregate is the same one as before, not a new one
    single = _paths_where(v.final_plan, lambda n: n.name == "Exchange" and "SinglePartition" in n.description)
    assert node_at(v.initial_plan, d.matches[single[0]]).description.startswith("Exchange SinglePartition")


def test_columnar_transitions_are_wrappers():
    scan = N("FileScan", "FileScan parquet [k#1L] Batched: true")
    initial = N("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=false",
                N("BroadcastHashJoin", "BroadcastHashJoin [k#1L], [k#2L], Inner, BuildRight",
                  N("Filter", "Filter isnotnull(k#1L)", scan),
                  N("BroadcastExchange", "BroadcastExchange HashedRelationBroadcastMode(List(input[0, bigint, false]),false), [plan_id=5]",
                    N("Filter", "Filter isnotnull(k#2L)", N("FileScan", "FileScan parquet [k#2L] Batched: true")))))
    final = N("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true",
              N("WholeStageCodegen (2)", None,
                N("BroadcastHashJoin", "BroadcastHashJoin [k#1L], [k#2L], Inner, BuildRight",
                  N("Filter", "Filter isnotnull(k#1L)", N("ColumnarToRow", None, N("InputAdapter", None, scan))),
                  N("InputAdapter", None, N("BroadcastQueryStage", "BroadcastQueryStage 0",
                    N("BroadcastExchange", "BroadcastExchange HashedRelationBroadcastMode(List(input[0, bigint, false]),false), [plan_id=9]",
                      N("WholeStageCodegen (1)", None, N("Filter", "Filter isnotnull(k#2L)", N("RowToColumnar", None,
                        N("ColumnarToRow", None, N("FileScan", "FileScan parquet [k#2L] Batched: true")))))))))))
    d = diff_plans(initial, final)
    assert d.changes == []
    assert len(d.matches) == 7


def test_tpcds_like_q72_and_q88_have_no_aqe_changes(logs):
    """The big sample's q72-like (8 broadcast + 2 sort-merge joins, no adaptive read) and
    q88-like (ReusedExchange of the broadcast dimensions) ran as planned: every plan version
    against the initial plan reports nothing (before issue 23: 55 and 740 records)."""
    log = logs[TPCDS_LIKE]
    for desc in ("q72-like", "q88-like"):
        ex = _exec(log, desc)
        assert ex.plan_versions and any(n.name == "ColumnarToRow" for n in ex.final_plan.walk())
        for later in ex.plan_versions:
            assert diff_plans(ex.initial_plan, later).changes == [], desc
