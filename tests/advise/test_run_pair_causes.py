"""Two runs compared on every kind of source (issue 39): recorded pairs whose cause is known
because they were made that way (``tools/record_run_pairs.py``: advisory size only, data and
advisory size together with both one-factor runs, the same job twice, a skewed join that
appears), each read as a capture, a listener log and the plain event log it holds.

The truth is Spark's: the partition specs of each run's reads (captures), the counterfactual
runs Spark made with one factor changed, and the bytes the exchanges wrote."""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core import api
from aqe_core.advise.attribute_runs import JOIN_STRATEGY, PARTITIONS_AFTER, SKEW_SPLIT
from aqe_core.model.capture import QueryCapture
from aqe_core.model.evidence import Evidence
from aqe_core.model.run_diff import DATA, SETTINGS, Gate
from aqe_core.model.specs import PartialReducerPartitionSpec
from aqe_core.views.diff_runs import same_data

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "run_pairs"
KINDS = ("json.gz", "listener.zstd", "zstd")
EXACT_KINDS = ("json.gz", "listener.zstd")


def _query(pair: str, run: str, label: str = "skew_join") -> QueryCapture:
    return next(q for q in api.load_capture(str(PAIRS / pair / f"{run}.json.gz")).queries if q.label == label)


def _split(q: QueryCapture) -> int:
    """Reducers Spark split for skew (its own specs)."""
    return len({(r.shuffle_id, s.reducer_index) for r in q.reads for s in r.specs
                if isinstance(s, PartialReducerPartitionSpec)})


def _parts(q: QueryCapture) -> list[int]:
    """Partitions each of Spark's reads read (its own specs)."""
    return [len(r.specs) for r in q.reads]


def _diff(pair: str, kind: str, a: str = "a", b: str = "b") -> api.RunDiff:
    return api.diff_runs(str(PAIRS / pair / f"{a}.{kind}"), str(PAIRS / pair / f"{b}.{kind}"))


def _join_query(d: api.RunDiff) -> api.QueryDiff:
    """The skew_join query (its description is the label in a capture, a job tag in a log)."""
    return next(q for q in d.matched if q.a.description == "skew_join" or q.a.description.endswith(":0")
                and "sql at" not in q.a.description)


@pytest.mark.parametrize("kind", KINDS)
def test_an_advisory_size_change_is_the_settings_never_the_data(kind):
    qa, qb = _query("advisory_changed", "a"), _query("advisory_changed", "b")
    assert (_split(qa), _split(qb)) == (1, 0)  # Spark split the hot reducer in a only
    q = _join_query(_diff("advisory_changed", kind))
    skew = next(c for c in q.causes if c.decision == SKEW_SPLIT)
    assert (skew.a, skew.b) == (1, 0)
    for c in q.causes:
        assert c.factors == (SETTINGS,), (kind, c)
    assert "the data changed" not in q.sentence
    assert "advisoryPartitionSizeInBytes 96k -> 1m" in q.sentence
    assert [c for c in q.causes if c.decision == JOIN_STRATEGY] == []  # the skew flag is the split again


def test_a_plain_log_that_shuffled_the_same_bytes_rules_the_data_out():
    va, vb = (next(v for v in api.load_source(str(PAIRS / "advisory_changed" / f"{r}.zstd")).views
                   if v.description.endswith(":0") and "sql at" not in v.description) for r in "ab")
    assert same_data(va, vb) is True  # every first exchange wrote the same bytes and records
    q = _join_query(_diff("advisory_changed", "zstd"))
    parts = next(c for c in q.causes if c.decision == PARTITIONS_AFTER)
    qa, qb = _query("advisory_changed", "a"), _query("advisory_changed", "b")
    assert (parts.a, parts.b) == (_parts(qa)[0], _parts(qb)[0])
    assert parts.factors == (SETTINGS,) and parts.evidence is Evidence.ESTIMATE


@pytest.mark.parametrize("kind", EXACT_KINDS)
def test_data_and_settings_together_are_both_and_the_replays_are_sparks_own_runs(kind):
    qa, qb = _query("both", "a"), _query("both", "b")
    b_data_a_settings, a_data_b_settings = _query("both", "b_data_a_settings"), _query("both", "a_data_b_settings")
    truth_a, truth_b = _parts(qa)[0], _parts(qb)[0]
    # neither factor alone gives run b's decision: Spark's own one-factor runs
    assert _parts(b_data_a_settings)[0] != truth_b and _parts(a_data_b_settings)[0] != truth_b
    q = _join_query(_diff("both", kind))
    parts = next(c for c in q.causes if c.decision == PARTITIONS_AFTER)
    assert (parts.a, parts.b) == (truth_a, truth_b)
    assert parts.factors == (DATA, SETTINGS)
    # the replays are what Spark did with one factor changed
    assert parts.b_under_a == _parts(b_data_a_settings)[0]
    assert parts.a_under_b == _parts(a_data_b_settings)[0]


def test_a_plain_log_says_it_cannot_tell_data_from_settings():
    q = _join_query(_diff("both", "zstd"))
    parts = next(c for c in q.causes if c.decision == PARTITIONS_AFTER)
    assert parts.factors == () and "cannot tell" in parts.untold
    assert "the data changed" not in q.sentence and "cannot tell" in q.sentence
    assert parts.to_dict()["untold"] == parts.untold


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_job_twice_changes_nothing_and_passes_the_gate(kind):
    d = _diff("unchanged", kind)
    assert d.matched and not d.only_a and not d.only_b
    assert all(not q.causes for q in d.matched)
    assert d.regressions(Gate()) == []
    for q in d.matched:
        assert q.sentence.startswith("AQE decided the same way in both runs")


@pytest.mark.parametrize("kind", ("listener.zstd", "zstd"))
def test_a_shuffle_read_as_planned_in_one_run_and_split_in_the_other_is_in_the_diff(kind):
    qa, qb = _query("skew_appears", "a"), _query("skew_appears", "b")
    assert qa.reads == [] and _split(qb) == 1  # no adaptive read in run a; Spark split one reducer in b
    q = _join_query(_diff("skew_appears", kind))
    sides = [s for s in q.shuffles if s.partitions_after[1] is not None and s.partitions_after[1] > 40]
    assert len(sides) == 2  # both sides of the join, each paired with run a's shuffle as planned
    for s in sides:
        assert s.partitions_after[0] == 40 and s.partitions_after[1] == _parts(qb)[0]
    skew = next(c for c in q.causes if c.decision == SKEW_SPLIT)
    assert (skew.a, skew.b, skew.factors) == (0, 1, (DATA,))
    parts = sum(1 for r in qb.reads for sp in r.specs if isinstance(sp, PartialReducerPartitionSpec))  # one reducer's
    assert f"now split for skew into {parts} parts: the data changed" in q.sentence
    assert not [c for c in q.causes if c.decision == JOIN_STRATEGY]


def test_a_capture_has_the_shuffles_read_as_planned_from_sparks_map_statistics():
    qa, qb = _query("skew_appears", "a"), _query("skew_appears", "b")
    q = _join_query(_diff("skew_appears", "json.gz"))
    sides = [s for s in q.shuffles if s.partitions_after == (40, _parts(qb)[0])]
    assert len(sides) == 2
    for s in sides:  # run a's exact sizes: the map output statistics Spark had for each shuffle
        sizes = qa.shuffle(next(st.shuffle_id for st in qa.stages if st.stage_id == s.stage[0])).bytes_by_partition_id
        assert s.shuffle_bytes[0] == sum(sizes) and s.skewed_reducers[0] == 0
    parts = sum(1 for r in qb.reads for sp in r.specs if isinstance(sp, PartialReducerPartitionSpec))
    assert f"now split for skew into {parts} parts: the data changed" in q.sentence
    assert "joins changed from" not in q.sentence


def test_a_listener_log_has_the_task_time_its_plain_log_has():
    plain, listener = _diff("unchanged", "zstd"), _diff("unchanged", "listener.zstd")
    times = {q.a.query_id: q.task_ms for q in plain.matched}
    assert any(t[0] for t in times.values())
    for q in listener.matched:
        assert q.task_ms == times[q.a.query_id]


def _label(pair: str, run: str, description: str) -> str:
    """A query's label: a capture's own, or (a log's job tag ``aqe-lens:<pair>-<run>:<i>``) the
    label of the run's i-th query, which the same run's capture holds."""
    if ":" not in description or "sql at" in description:
        return description
    i = int(description.rsplit(":", 1)[1])
    return next(q.label for q in api.load_capture(str(PAIRS / pair / f"{run}.json.gz")).queries if q.index == i)


@pytest.mark.parametrize("kind", KINDS)
def test_reordered_dropped_and_added_queries_align_by_what_they_are(kind):
    d = _diff("reordered", kind)
    pairs = {(_label("reordered", "a", q.a.description), _label("reordered", "b", q.b.description))
             for q in d.matched if "sql at" not in q.a.description}
    assert pairs == {("skew_join", "skew_join"), ("count_dims", "count_dims")}
    assert [_label("reordered", "a", r.description) for r in d.only_a] == ["by_tag"]
    assert [_label("reordered", "b", r.description) for r in d.only_b] == ["by_name"]
    assert all(not q.causes for q in d.matched)  # the same data and settings: nothing AQE decided changed
