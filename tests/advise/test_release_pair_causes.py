"""Two releases on one job (issue 39): the catalogue recorded on PySpark 3.5.9 and on 4.3.0, one
application each, with the AQE Lens listener (``tests/fixtures/eventlogs/listener/<release>/``),
read as listener logs and as the plain event logs they hold.

The data and the settings are the same in both runs (the same generated tables, the same
presets), so every decision Spark made otherwise was made by the release. Spark's own
decisions are the truth: the partitions each read read and the reducers it split (each log's
record), and the final plans' joins. A few of them differ: 4.3.0 coalesces a union's children
together (§3.4 of the spec), keeps a union's partitioning so the join above it is planned
without a shuffle stage (no adaptive broadcast), splits a broadcast join's streamed side for
skew (SPARK-44065, from 4.2.0) and plans one aggregate where 3.5.9 had a partial and a final."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import zstandard

from aqe_core import api
from aqe_core.advise.attribute_runs import JOIN_STRATEGY
from aqe_core.listener import EVENT_CLASS
from aqe_core.model.run_diff import DATA, RELEASE
from aqe_core.views.align_runs import align_queries
from aqe_core.views.diff_runs import same_data
from aqe_core.views.query import QueryView

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "eventlogs" / "listener"


def _listener_log(release: str) -> Path:
    return next((LOGS / release).glob("local-*"))


@pytest.fixture(scope="module")
def plain_logs(tmp_path_factory) -> dict[str, Path]:
    """Each listener log without the listener's events: what a run without it logs."""
    out = {}
    mark = f'"Event":"{EVENT_CLASS}"'.encode()
    for release in ("3.5.9", "4.3.0"):
        with open(_listener_log(release), "rb") as fh:
            raw = zstandard.ZstdDecompressor().stream_reader(fh).read()
        plain = b"".join(line for line in raw.splitlines(keepends=True) if mark not in line[:200])
        out[release] = tmp_path_factory.mktemp("plain") / f"{release}.zstd"
        out[release].write_bytes(zstandard.ZstdCompressor(level=1).compress(plain))
    return out


def _decisions(v: QueryView) -> tuple[Counter, list[str]]:
    """What Spark decided, by its own record: each read's partitions and split reducers, the joins."""
    reads = Counter((s.partitions_after, s.skewed_partitions or 0) for s in v.shuffles)
    joins = sorted(n.name.replace("(skew=true)", "") for n in (v.final_plan.walk() if v.final_plan else [])
                   if "Join" in (n.name or ""))
    return reads, joins


def _paths(kind: str, plain_logs: dict[str, Path]) -> tuple[str, str]:
    if kind == "listener":
        return str(_listener_log("3.5.9")), str(_listener_log("4.3.0"))
    return str(plain_logs["3.5.9"]), str(plain_logs["4.3.0"])


@pytest.mark.parametrize("kind", ["listener", "plain"])
def test_every_decision_the_release_changed_is_found_and_put_on_the_release(kind, plain_logs):
    pa, pb = _paths(kind, plain_logs)
    d = api.diff_runs(pa, pb)
    assert len(d.matched) == 189 and not d.only_a and not d.only_b
    # each query is matched with itself: the listener's job tag holds the workload and preset
    assert all(q.a.query_id == q.b.query_id for q in d.matched)
    views_a = {v.query_id: v for v in api.load_source(pa).views}
    views_b = {v.query_id: v for v in api.load_source(pb).views}
    changed = {q.a.query_id for q in d.matched if _decisions(views_a[q.a.query_id]) != _decisions(views_b[q.b.query_id])}
    found = {q.a.query_id for q in d.matched if q.causes}
    assert len(changed) >= 4  # the union, the broadcast over a union, the stream-side split, the aggregate
    assert found == changed
    for q in d.matched:
        for c in q.causes:
            assert DATA not in c.factors, (q.a.query_id, c)
            assert c.factors == (RELEASE,), (q.a.query_id, c)
        assert "the release changed (3.5.9 -> 4.3.0)" in q.sentence
        if not q.causes:
            assert "without changing a decision" in q.sentence


def test_a_join_another_release_planned_otherwise_is_the_releases_not_the_datas():
    """broadcast_union, preset adaptive_above_static: 3.5.9 has a shuffle stage above the union
    and broadcasts it by the adaptive threshold; 4.3.0's union keeps its children's partitioning,
    so no stage is there and the join stays sort-merge. A replay re-decides the rules on each
    run's own plan and cannot plan the query again: it would put this on the data. Both runs'
    map stages wrote the same bytes (the captures' map statistics), so the data is ruled out."""
    pa, pb = (str(Path(__file__).resolve().parents[1] / "fixtures" / "captures" / r / "broadcast_union.json.gz")
              for r in ("3.5.9", "4.3.0"))
    va = next(v for v in api.load_source(pa).views if v.description == "broadcast_union/adaptive_above_static")
    vb = next(v for v in api.load_source(pb).views if v.description == "broadcast_union/adaptive_above_static")
    assert same_data(va, vb) is True
    q = next(x for x in api.diff_runs(pa, pb).matched if x.a.description == "broadcast_union/adaptive_above_static")
    c = next(x for x in q.causes if x.decision == JOIN_STRATEGY)
    assert (c.a, c.b, c.factors) == (["BroadcastHashJoin"], ["SortMergeJoin"], (RELEASE,))
    assert c.b_under_a is None  # the replay's "run b under run a" is not what 3.5.9 did: not said
    # the reads the join strategy moved (a local read of the broadcast's streamed side, the sort-merge
    # join's coalesced sides) follow it: the release's too
    assert all(x.factors == (RELEASE,) for x in q.causes)
    assert any("data is ruled out" in n for n in q.notes)
    assert "the joins changed from BroadcastHashJoin to SortMergeJoin: the release changed (3.5.9 -> 4.3.0)" in q.sentence


def test_a_query_another_release_aggregates_otherwise_aligns_by_what_it_reads():
    """4.3.0 plans one aggregate above a join where 3.5.9 planned a partial and a final one: the
    plan shapes differ, the inputs, filters and joins do not."""
    pa, pb = str(_listener_log("3.5.9")), str(_listener_log("4.3.0"))
    matches, only_a, only_b = align_queries(api.load_source(pa).views, api.load_source(pb).views)
    assert not only_a and not only_b
    hows = {m.a.query_id: (m.b.query_id, m.how) for m in matches if m.how.startswith("the same inputs")}
    assert sorted(hows) == ["62", "65", "86", "89"]
    assert all(a == b for a, (b, _) in hows.items())
