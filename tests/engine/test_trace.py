"""Decision traces (issue 13): for every read of every catalogue query recorded on each of the
eight releases, the trace's verdicts equal what Spark did (its specs in the capture), and a
read Spark left unsplit names the first condition that failed."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from aqe_core.engine import simulate
from aqe_core.engine.trace import FAIL, NOT_REACHED, trace_read
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, CoalescedPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
)
from aqe_core.readers.capture_file import load_capture
from aqe_core.opening import load_source

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
RELEASES = sorted(p.name for p in CAPTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("release", RELEASES)
def test_verdicts_are_what_spark_did(release):
    firsts: Counter = Counter()
    reads = 0
    for path in sorted((CAPTURES / release).glob("*.json.gz")):
        rep = simulate(load_capture(str(path)))
        for q in rep.queries:
            for r in q.reads:
                specs = r.spark_specs or []
                traces = {t.rule: t for t in trace_read(r, release)}
                split = any(t.verdict == "split" for t in traces.values())
                assert split == any(isinstance(s, PartialReducerPartitionSpec) for s in specs), (path.name, r.stage_id)
                coalesce = traces["CoalesceShufflePartitions"]
                if not any(isinstance(s, PartialMapperPartitionSpec) for s in specs):
                    # (a local read's reducer ranges may be coalesced ranges or its own: Spark's specs do not say)
                    assert (coalesce.verdict == "coalesced") == any(
                        (isinstance(s, CoalescedPartitionSpec) and s.end_reducer_index - s.start_reducer_index > 1)
                        or (isinstance(s, CoalescedMapperPartitionSpec) and s.num_reducers > 1) for s in specs), (
                        path.name, r.stage_id)
                local = next(t for t in traces.values() if "Local" in t.rule)
                assert (local.verdict == "read locally") == (bool(specs) and isinstance(
                    specs[0], (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec))), (path.name, r.stage_id)
                for t in traces.values():  # after the first failure nothing is checked
                    results = [c.result for c in t.checks]
                    if FAIL in results:
                        assert all(x == NOT_REACHED for x in results[results.index(FAIL) + 1:])
                    if t.verdict in ("split", "coalesced"):
                        assert FAIL not in results, (path.name, t.to_dict())
                skew = traces["OptimizeSkewedJoin"].first_failed
                if skew is not None:
                    firsts[skew.condition] += 1
                reads += 1
    assert reads > 50
    assert firsts  # some read in every release's catalogue was left unsplit, and says where it stopped


def test_the_trace_in_explain_json_the_app_and_the_report(capsys):
    import json

    from streamlit.testing.v1 import AppTest

    from aqe_core.cli import main
    from aqe_core.report import build_report
    from aqe_core.opening import load_source

    path = str(CAPTURES / "4.3.0" / "skew_join_full_outer.json.gz")
    assert main(["explain", path, "--execution", "0", "--json"]) == 0
    reads = json.loads(capsys.readouterr().out)["executions"][0]["reads"]
    skew = [t for r in reads for t in r["trace"] if t["rule"] == "OptimizeSkewedJoin"]
    assert "the join type lets this side be split" in {t["first_failed"] for t in skew}  # a FullOuter join's sides
    assert all(t["verdict"] == "not split" for t in skew)
    view = load_source(path).view("0")
    html = build_report(view, source_label="capture")
    assert "<h4>Decision trace</h4>" in html
    assert "Join decision trace:" in html and "the side&#x27;s size fits the broadcast threshold" in html
    from aqe_core.opening import sample_sources

    sample = next(x for x in sample_sources() if x.kind == "capture" and "4.3.0" in x.label and "skewed inner" in x.label)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.session_state["source_path"] = sample.path
    at.session_state["source_label"] = sample.label
    at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
    at.run()
    at.switch_page("pages/partitions.py").run()
    assert not at.exception
    assert any(e.label.startswith("Decision trace: OptimizeSkewedJoin split") for e in at.expander)


@pytest.mark.parametrize("release", RELEASES)
def test_join_traces_end_in_what_spark_chose(release):
    from aqe_core.engine.trace import trace_join

    joins = demoted = 0
    for path in sorted((CAPTURES / release).glob("*.json.gz")):
        for q in simulate(load_capture(str(path))).queries:
            for j in q.joins:
                traces = trace_join(j)
                assert traces[-1].verdict == (j.simulated or "not re-decided")
                if j.outcome == "agrees":
                    assert traces[-1].verdict == j.spark
                    sides = [t for t in traces[:2] if t.verdict == "broadcast"]
                    assert len(sides) == (1 if j.spark.startswith("BroadcastHashJoin") else 0), (path.name, j.spark)
                for t in traces:
                    results = [c.result for c in t.checks]
                    if FAIL in results:
                        assert all(x == NOT_REACHED for x in results[results.index(FAIL) + 1:])
                if any(t.first_failed and t.first_failed.condition.startswith("enough non-empty") for t in traces):
                    demoted += 1
                    assert path.name == "demote_broadcast.json.gz"
                joins += 1
    assert joins > 20 and demoted >= 1


def test_each_read_is_placed_in_the_plan_version_that_decided_it():
    """A three-way join (4.3.0): the first two reads appear in version 2 (after the first stages
    finished), the other two in version 3; the page lists each under its version."""
    from aqe_core.views.plan_timeline import read_versions

    view = load_source(str(CAPTURES / "4.3.0" / "multi_way_join.json.gz")).views[0]
    first = read_versions(view.plan_versions)
    assert first == {0: 2, 1: 2, 3: 3, 2: 3}
    assert {s.stage_id for s in view.shuffles} == set(first)


def test_a_clicked_read_or_join_shows_its_trace_beside_the_plan():
    from streamlit.testing.v1 import AppTest

    from aqe_core.views.plan_timeline import node_trace, read_stage_of

    from aqe_core.opening import sample_sources

    sample = next(x for x in sample_sources() if x.kind == "capture" and "4.3.0" in x.label and "skewed inner" in x.label)
    path = sample.path
    view = load_source(path).views[0]
    final = view.plan_versions[-1]

    def paths(node, p="0"):
        yield p, node
        for i, c in enumerate(node.children):
            yield from paths(c, f"{p}.{i}")

    read_path, read = next((p, n) for p, n in paths(final) if read_stage_of(n) is not None)
    join_path, join = next((p, n) for p, n in paths(final) if "Join" in n.name)
    title, trace = node_trace(view, final, read, True)
    assert title.startswith("Decision trace of the read of stage") and trace[0].rule == "OptimizeSkewedJoin"
    jt = node_trace(view, final, join, True)
    assert jt is not None and jt[1][-1].verdict.startswith("SortMergeJoin")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.session_state["source_path"] = path
    at.session_state["source_label"] = sample.label
    at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
    at.query_params["q"] = view.query_id
    at.run()
    at.switch_page("pages/plans.py").run()
    assert not at.exception, at.exception
    # a click opens the node's details in the browser: the map's data carries each node's trace
    final_map = json.loads(at.get("bidi_component")[-1].proto.json)
    box = next(b for b in final_map["boxes"] if read_path in b["paths"])
    rows = box["details"]["rows"]
    assert any(r.startswith("Decision trace of the read of stage") for r in rows), rows
    assert any(r.startswith("OptimizeSkewedJoin: ") for r in rows), rows
    from aqe_core.views.plan_timeline import read_versions

    k = min(read_versions(view.plan_versions).values())
    at.slider(key="plan_version").set_value(k).run()
    assert f"Decided in plan version {k}" in [s.value for s in at.subheader]
    assert any(e.label.startswith("Join") and "broadcast the left side" in e.label for e in at.expander)


def test_each_join_is_placed_in_the_plan_version_that_decided_it():
    """A join whose strategy changed is placed where its final strategy first appears over the
    same stages (read off Spark's own plan versions); one that kept its strategy, where the reads
    under it appear."""
    from aqe_core.views.plan_timeline import _joins_over, join_versions, read_versions

    for release, name, query in [("4.3.0", "runtime_broadcast", "0"), ("3.0.1", "runtime_broadcast", "0"),
                                 ("4.3.0", "multi_way_join", "0"), ("4.3.0", "skew_join_inner", "0")]:
        view = load_source(str(CAPTURES / release / f"{name}.json.gz")).view(query)
        placed = join_versions(view)
        assert set(placed) == set(range(len(view.join_traces))), (release, name)
        final = _joins_over(view.plan_versions[-1])
        order = sorted(range(len(view.join_traces)), key=lambda i: view.join_nodes[i])
        for pos, (jname, stages, _) in enumerate(final):
            k = placed[order[pos]]
            at_k = [n for n, s, _ in _joins_over(view.plan_versions[k - 1])]
            assert jname in at_k, (release, name, jname, k)
            before = [n for n, s, _ in _joins_over(view.plan_versions[k - 2])] if k > 1 else []
            if jname in before:  # kept its strategy: decided with the reads under it
                assert k == max(v for sid, v in read_versions(view.plan_versions).items() if sid in stages)
    runtime = load_source(str(CAPTURES / "4.3.0" / "runtime_broadcast.json.gz")).view("0")
    names = [[n for n, _, _ in _joins_over(p)] for p in runtime.plan_versions]
    assert join_versions(runtime) == {0: names.index(["BroadcastHashJoin"]) + 1}  # where it became a broadcast


def test_passed_checks_carry_the_settings_they_read():
    """A condition that held still says what it was checked against: the settings in force
    (the query's own), beside the rule's numbers."""
    from aqe_core import config as K

    view = load_source(str(CAPTURES / "4.3.0" / "skew_join_inner.json.gz")).view("0")
    sv = next(s for s in view.shuffles if s.trace and any(t.verdict == "split" for t in s.trace))
    osj = next(t for t in sv.trace if t.rule == "OptimizeSkewedJoin")
    checks = {c.condition: c for c in osj.checks}
    enabled = checks["skew handling is enabled"]
    assert enabled.result == "pass" and enabled.inputs == {K.SKEW_JOIN_ENABLED: True}
    over = checks["a partition is over the skew threshold"]
    assert over.result == "pass"
    assert over.inputs[K.SKEW_JOIN_SKEWED_PARTITION_FACTOR] == view.conf.get(K.SKEW_JOIN_SKEWED_PARTITION_FACTOR)
    assert over.inputs[K.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD] == view.conf.get(K.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD)
    assert len(over.inputs) > 2  # and the rule's own numbers
    coalesce = next(t for t in sv.trace if t.rule == "CoalesceShufflePartitions")
    assert any(K.ADVISORY_PARTITION_SIZE_IN_BYTES in c.inputs for c in coalesce.checks)
    assert all(not c.inputs for t in sv.trace for c in t.checks if c.result in ("not reached", "not applicable"))
    joins = [c for tr in view.join_traces for t in tr for c in t.checks if c.condition.startswith("the side's size")]
    assert joins and all(K.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD in c.inputs for c in joins if c.result != "not applicable")
    assert "spark.sql.adaptive.skewJoin.enabled=true" in enabled.inputs_text()


def test_explain_text_prints_each_rule_and_where_it_stopped(capsys):
    from aqe_core.cli import main

    path = str(CAPTURES / "4.3.0" / "skew_join_then_aggregate.json.gz")
    assert main(["explain", path, "--execution", "0"]) == 0
    out = capsys.readouterr().out
    assert "decision trace (decided in plan version 2):" in out
    assert ("OptimizeSkewedJoin: not split; stopped at: splitting needs no extra shuffle (or forceOptimizeSkewedJoin"
            " is on) [spark.sql.adaptive.forceOptimizeSkewedJoin=false]") in out
    assert "CoalesceShufflePartitions: coalesced" in out
    assert "broadcast the left side: not broadcast; stopped at: the side's size fits the broadcast threshold" in out
    assert "the strategy: SortMergeJoin\n" in out


def test_traces_do_not_depend_on_the_hash_seed():
    """A condition failed (or met) by two reasons names the same one in every process: the
    tables were sets, so ``explain --json`` on this log came out one of three ways, by
    PYTHONHASHSEED (a FullOuter side "never split" or "cannot be split"; a demoted side by its
    size or by its non-empty ratio)."""
    import json
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    log = repo / "tests" / "fixtures" / "eventlogs" / "listener" / "4.3.0" / "local-1795485378221.zstd"
    outs = {subprocess.run([sys.executable, "-m", "aqe_core", "explain", "--json", str(log)], cwd=repo, check=True,
                           capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("0", "1", "2")}
    assert len(outs) == 1
    doc = json.loads(outs.pop())
    details = [c["detail"] for e in doc["executions"] for r in e["reads"] for t in r.get("trace", [])
               for c in t["checks"] if c["condition"] == "the join type lets this side be split" and c["result"] == "fail"]
    assert "FullOuter joins are never split: neither side may be split" in details


def test_final_stage_rules_off_stops_each_shuffle_read_rule_in_its_trace():
    """3.4.2+ with ``applyFinalStageShuffleOptimizations=false``: ``optimizeQueryStage`` leaves every
    shuffle-read rule out on the final stage; each one's trace stops at "runs on this stage" with
    the setting, instead of a verdict with no failed condition."""
    from aqe_core.model.shared_vocabulary import FINAL_STAGE_RULES_OFF

    cap = load_capture(str(CAPTURES / "4.3.0" / "aggregate_coalesce.json.gz"))
    rep = simulate(cap, {"spark.sql.adaptive.applyFinalStageShuffleOptimizations": "false"})
    read = rep.queries[0].reads[0]
    off = [x for x in read.reasons if x.code == FINAL_STAGE_RULES_OFF]
    assert [x.numbers["rule"] for x in off] == ["OptimizeSkewInRebalancePartitions", "CoalesceShufflePartitions",
                                                "OptimizeShuffleWithLocalRead"]
    traces = {t.rule: t for t in trace_read(read, "4.3.0")}
    coalesce = traces["CoalesceShufflePartitions"]
    assert coalesce.verdict == "not coalesced" and coalesce.first_failed.id == "coalesce.runs_on_stage"
    assert "applyFinalStageShuffleOptimizations=false" in coalesce.first_failed.detail
    assert traces["OptimizeSkewInRebalancePartitions"].first_failed.id == "rebalance.runs_on_stage"
