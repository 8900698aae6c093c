"""Every release side by side (issue 13) against what each release really did.

The catalogue was recorded on all ten releases; where a query's statistics came out identical
on two releases (most of them: same data, same row format and codec), one release's recording
through the other release's rules must give exactly what the other release did: every read's
partition specs and every join's strategy. A query family that does not agree is listed in
KNOWN_GAPS with the release pairs, so a fix or a new gap changes this test.
"""
from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

import pytest

from aqe_core.engine import simulate
from aqe_core.engine.simulate import one_query
from aqe_core.model.specs import spec_to_dict
from aqe_core.readers.capture_file import load_capture
from aqe_core.opening import load_source
from aqe_core.advise.whatif import simulate_preset
from aqe_core.model.presets import BUILTIN_PRESETS
from aqe_core.advise.releases import RELEASES, compare_releases

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
NEWER = {r: set(RELEASES[i + 1:]) for i, r in enumerate(RELEASES)}
#: (capture, preset) -> release pairs (recorded on -> rules of) that do not agree yet. None: a union of
#: aggregates through 4.3.0's rules now coalesces both children as one group (4.1+'s Union reports
#: its children's partitioning: aqe_core/rules/union_exec.py); multi_way_join_same_key/force was
#: never a rule difference (every release from 3.3.4 recorded the same specs): its shuffle is read
#: twice through a reused exchange, and matching reads by statistics alone paired one join's read
#: with the other's (see _keyed)
KNOWN_GAPS: dict[tuple[str, str], set[tuple[str, str]]] = {}


def _stats(q) -> list[tuple[int, ...]]:
    return sorted(tuple(s.bytes_by_partition_id or ()) for s in q.shuffles.values())


def _key(q, r):
    sh = q.shuffle(r.shuffle_id)
    return tuple(sh.bytes_by_partition_id) if sh and sh.bytes_by_partition_id else None


def _keyed(q, reads) -> dict:
    """Reads by their shuffle's statistics and, for a shuffle read more than once (a reused
    exchange: multi_way_join_same_key reads one shuffle in two joins), the read's place among
    that shuffle's reads in plan order."""
    out: dict = {}
    seen: dict = defaultdict(int)
    for r in reads:
        k = _key(q, r)
        out[(k, seen[k])] = r
        seen[k] += 1
    return out


def _specs(specs):
    return None if specs is None else [spec_to_dict(s) for s in specs]


@pytest.mark.slow
def test_one_release_recording_through_another_release_rules_gives_what_that_release_did():
    captures = {(v, p.name): load_capture(str(p)) for v in RELEASES for p in sorted((CAPTURES / v).glob("*.json.gz"))}
    gaps: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    compared = 0
    for a, b in itertools.permutations(RELEASES, 2):
        for (v, name), capture in captures.items():
            other = captures.get((b, name))
            if v != a or other is None:
                continue
            for qa in capture.queries:
                qb = next((x for x in other.queries if x.label == qa.label), None)
                if qb is None or _stats(qa) != _stats(qb):
                    continue
                sim = simulate(one_query(capture, qa), None, b).queries[0]
                real = simulate(one_query(other, qb)).queries[0]
                real_reads = _keyed(qb, real.reads)
                preset = qa.label.split("/")[-1]
                for key, r in _keyed(qa, sim.reads).items():
                    rr = real_reads.get(key)
                    if rr is not None:
                        compared += 1
                        if _specs(r.simulated_specs) != _specs(rr.spark_specs):
                            gaps[(name, preset)].add((a, b))
                compared += 1
                if [j.simulated for j in sim.joins] != [j.spark for j in real.joins]:
                    gaps[(name, preset)].add((a, b))
    assert compared > 5000
    assert dict(gaps) == KNOWN_GAPS


def test_the_release_a_capture_ran_on_is_what_spark_did():
    view = load_source(str(CAPTURES / "4.3.0" / "skew_join_inner.json.gz")).view("0")
    comp = compare_releases(view)
    assert [r.release for r in comp.rows] == list(RELEASES) and comp.exact
    own = next(r for r in comp.rows if r.own)
    actual = simulate_preset(view, next(p for p in BUILTIN_PRESETS if p.name == "actual"))
    assert [s.partitions_after for s in own.outcome.shuffles] == [s.partitions_after for s in actual.shuffles]
    assert own.outcome.join_strategies == actual.join_strategies
    # 3.0.1 judged skew on coalesced partitions and split nothing; 3.1.3 split reducer 5: the rules say so
    first = comp.diffs[0]
    assert (first.before, first.after) == ("3.0.1", "3.1.3")
    assert any("3.1.3: left partition 5 is skewed" in s for s in first.rules_said)
    assert any("3.0.1: no partition was split: the largest left partition, 371.7 KiB, is not above 5 x median 77.9 KiB"
               " (over the coalesced partitions, as 3.0/3.1 judge skew) = 389.6 KiB" in s for s in first.rules_said)
    assert "coalescePartitions.minPartitionSize" in comp.rows[0].summary()["settings left out"]


def test_cli_releases(capsys):
    from aqe_core.cli import main
    import json

    assert main(["releases", str(CAPTURES / "4.3.0" / "skew_join_inner.json.gz"), "--execution", "0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc[0]["exact"] and [r["release"] for r in doc[0]["releases"]][-1] == "4.3.0 (as run)"
    assert main(["releases", str(CAPTURES / "4.3.0" / "skew_join_inner.json.gz"), "--execution", "0"]) == 0
    out = capsys.readouterr().out
    assert "3.0.1 -> 3.1.3" in out and "the rules said" in out


def test_report_carries_every_release():
    from aqe_core.report import build_report

    view = load_source(str(CAPTURES / "4.3.0" / "skew_join_inner.json.gz")).view("0")
    comp = compare_releases(view)
    html = build_report(view, source_label="capture", releases=comp)
    assert "<h2>Every Spark release</h2>" in html and "4.3.0 (as run)" in html
    assert "3.1.3: left partition 5 is skewed" in html


def test_a_planner_change_the_replay_cannot_follow_is_said():
    """From 4.1 a Union whose children agree on a partitioning reports it. The replay follows what
    that does to coalescing (union_aggregates: both children in one coalesce group, no caveat), not
    an exchange an older plan has above such a union (broadcast_union: 4.3 plans none)."""
    view = load_source(str(CAPTURES / "3.5.9" / "union_aggregates.json.gz")).view("0")
    assert not any(r.caveats for r in compare_releases(view).rows)
    view = load_source(str(CAPTURES / "3.5.9" / "broadcast_union.json.gz")).view("0")
    rows = {r.release: r for r in compare_releases(view).rows}
    assert rows["4.3.0"].caveats and not rows["4.0.0"].caveats and not rows["3.5.9"].caveats
    assert "exchange above the Union" in rows["4.3.0"].caveats[0]
