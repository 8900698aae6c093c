"""Decision traces (issue 13): for every read of every catalogue query recorded on each of the
eight releases, the trace's verdicts equal what Spark did (its specs in the capture), and a
read Spark left unsplit names the first condition that failed."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from aqe_core.engine import simulate
from aqe_core.engine.trace import FAIL, NOT_REACHED, trace_read
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, CoalescedPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
)
from aqe_core.readers.capture_file import load_capture

CAPTURES = Path(__file__).resolve().parent / "fixtures" / "captures"
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
    from aqe_core.sources import load_source

    path = str(CAPTURES / "4.3.0" / "skew_join_full_outer.json.gz")
    assert main(["explain", path, "--execution", "0", "--json"]) == 0
    reads = json.loads(capsys.readouterr().out)["executions"][0]["reads"]
    skew = [t for r in reads for t in r["trace"] if t["rule"] == "OptimizeSkewedJoin"]
    assert "the join type lets this side be split" in {t["first_failed"] for t in skew}  # a FullOuter join's sides
    assert all(t["verdict"] == "not split" for t in skew)
    view = load_source(path).view("0")
    assert "<h4>Decision trace</h4>" in build_report(view, source_label="capture")
    from aqe_core.sources import sample_sources

    sample = next(x for x in sample_sources() if x.kind == "capture" and "4.3.0" in x.label and "skewed inner" in x.label)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
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
