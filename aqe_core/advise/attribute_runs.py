"""What made AQE decide differently in two runs of one query: the data, the settings or the
release (issue 28, requirement 3).

Each run's statistics are replayed under the other run's settings and release through the one
what-if path (:func:`aqe_core.advise.whatif.query_what_if`: exact replays of Spark's rules on
captures and listener logs, labelled estimates over post-AQE sizes on plain logs). For run b's
statistics the steps are

    a as run  ->  b's data, a's settings, a's release  ->  b's data, b's settings, a's release  ->  b as replayed

so a decision that changes in the first step changed with the data, in the second with the
settings, in the third with the release. Two runs with the same effective settings on the same
release differ only in their data: every change is the data's, without a replay (which is what
lets a plain log, whose estimate cannot see a split reducer, still name the cause). Run a's statistics under run b's settings and release
(the reverse) say what run a would have done today. Spark's own decisions in each run come from
the run (the "actual" preset), never from our replay; where our replay of run b as run does not
agree with Spark, :attr:`Attribution.notes` says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence

from aqe_core.advise.whatif import PresetOutcome, QuerySizes, ShuffleOutcome, query_what_if, simulate_preset
from aqe_core.config import SKEW_JOIN_ENABLED, AQEConf
from aqe_core.model.evidence import Evidence
from aqe_core.model.presets import BUILTIN_PRESETS
from aqe_core.model.run_diff import DATA, RELEASE, SETTINGS, Cause

__all__ = ["Attribution", "Outcomes", "SKEW_SPLIT", "PARTITIONS_AFTER", "JOIN_STRATEGY", "attribute",
           "settings_changed", "skew_flag_only"]

SKEW_SPLIT = "skew split"
PARTITIONS_AFTER = "partitions after AQE"
JOIN_STRATEGY = "join strategy"


@dataclass
class Outcomes:
    """A query's decisions in each run and in the replays between them."""

    a: PresetOutcome
    b: PresetOutcome
    b_under_a: PresetOutcome  # b's statistics, a's settings, a's release
    b_settings_a_release: PresetOutcome  # b's statistics, b's settings, a's release
    b_replayed: PresetOutcome  # b's statistics, b's settings and release: our rules, to check agreement
    a_under_b: PresetOutcome  # a's statistics, b's settings and release


@dataclass
class Attribution:
    """The causes found for one matched query, the outcomes behind them, and notes."""

    causes: list[Cause] = field(default_factory=list)
    outcomes: Optional[Outcomes] = None
    evidence: Evidence = Evidence.EXACT
    notes: list[str] = field(default_factory=list)


def settings_changed(a: AQEConf, b: AQEConf) -> list[tuple[str, Optional[str], Optional[str], bool, bool]]:
    """(key, a's effective value, b's, set in a, set in b) for every AQE key whose effective value
    differs, each run's release defaults filling what it left unset (a key one release lacks is
    None on that side)."""
    sa, sb = a.to_strings(), b.to_strings()
    out = []
    for key in sorted(set(sa) | set(sb)):
        va, vb = sa.get(key), sb.get(key)
        if va != vb and not (key in sa and key in sb and _same_value(a, b, key)):
            out.append((key, va, vb, a.is_set(key), b.is_set(key)))
    return out


def _same_value(a: AQEConf, b: AQEConf, key: str) -> bool:
    """Two strings Spark reads as one value ("64k" and "65536", "debug" and "DEBUG")."""
    try:
        va, vb = a.get(key), b.get(key)
    except ValueError:
        return False
    return va == vb or (isinstance(va, str) and isinstance(vb, str) and va.lower() == vb.lower())


def _outcomes(a: QuerySizes, b: QuerySizes) -> Outcomes:
    actual = next(p for p in BUILTIN_PRESETS if p.name == "actual")
    done: dict[tuple[int, str, tuple], PresetOutcome] = {}

    def run(view: QuerySizes, conf: AQEConf, name: str) -> PresetOutcome:
        # runs with the same settings on one release replay alike: once (three replays of run b
        # are one where only the data changed)
        key = (id(view), str(conf.spark_version), tuple(sorted(conf.to_strings().items(), key=lambda kv: kv[0])))
        if key not in done:
            got = query_what_if(view, conf, name, lines=False)
            assert got.outcome is not None
            done[key] = got.outcome
        return replace(done[key], preset=name)

    return Outcomes(
        a=simulate_preset(a, actual), b=simulate_preset(b, actual),
        b_under_a=run(b, a.conf.for_version(a.spark_version), "run b under run a's settings and release"),
        b_settings_a_release=run(b, b.conf.for_version(a.spark_version), "run b under run a's release"),
        b_replayed=run(b, b.conf, "run b replayed"),
        a_under_b=run(a, a.conf.for_version(b.spark_version).with_overrides(
            {k: v for k, v in b.conf.to_strings().items() if v is not None}), "run a under run b's settings and release"),
    )


def _shuffle(outcome: PresetOutcome, key: Optional[str]) -> Optional[ShuffleOutcome]:
    return outcome.shuffle(key)


def _as_run(outcome: PresetOutcome, view: QuerySizes, key: Optional[str]) -> Optional[ShuffleOutcome]:
    """What Spark did with one shuffle in a run: the run's outcome, else -- a shuffle AQE left as
    planned, which an exact source's replay does not list -- its partitions as planned, none split
    (a read that appears in one run only is still a decision that changed)."""
    got = _shuffle(outcome, key)
    if got is not None or key is None:
        return got
    s = next((x for x in view.shuffles if x.key == key), None)
    if s is None or getattr(s, "adaptive_read", True) or s.partitions_before is None:
        return None
    return ShuffleOutcome(s.key, s.label, s.partitions_before, s.partitions_before, list(s.sizes_after or []), 0, 0,
                          outcome.evidence)


def _skewed(s: Optional[ShuffleOutcome]) -> Optional[int]:
    return s.skewed if s is not None else None


def _parts(s: Optional[ShuffleOutcome]) -> Optional[int]:
    return s.partitions_after if s is not None else None


def _factors(fa: Any, x: Any, y: Any, zb: Any) -> tuple[str, ...]:
    """Which step of a -> b_under_a -> b_settings_a_release -> b_replayed changes the value."""
    out = []
    if x != fa:
        out.append(DATA)
    if y != x:
        out.append(SETTINGS)
    if zb != y:
        out.append(RELEASE)
    return tuple(out)


def _gate(conf: AQEConf) -> Optional[int]:
    """The size a reducer must exceed to be split for skew (None: skew join is off)."""
    return conf.skew_threshold_bytes if conf.get_or(SKEW_JOIN_ENABLED, True) else None


def _largest(view: QuerySizes, key: Optional[str]) -> Optional[int]:
    s = next((x for x in view.shuffles if getattr(x, "key", None) == key), None)
    return max(s.sizes_after) if s is not None and s.sizes_after else None


def _estimated_skew_factors(a: QuerySizes, b: QuerySizes, key_a: Optional[str], key_b: Optional[str],
                            fa: int, fb: int) -> Optional[tuple[str, ...]]:
    """A plain log's skew-split change by the threshold alone (its estimate over sizes after AQE
    sees a coalesced median, too high to find skew reliably): the run that did not split has
    its skewed reducer whole among its sizes after AQE, so whether that size passes the other
    run's threshold says if the settings made the difference. None: the threshold cannot tell."""
    ga, gb = _gate(a.conf), _gate(b.conf)
    if ga == gb:
        return None
    if fa and not fb:  # no longer split: would run b's largest partition pass run a's threshold?
        big, mine, other = _largest(b, key_b), gb, ga
    elif fb and not fa:  # now split: run a's largest under run b's threshold
        big, mine, other = _largest(a, key_a), ga, gb
    else:
        return None
    if mine is None:
        return (SETTINGS,)  # skew join was off in the run that did not split
    if big is None or other is None:
        return None
    return (SETTINGS,) if mine >= big > other else (DATA,) if big <= other else None


def _shuffle_causes(o: Outcomes, key_a: Optional[str], key_b: Optional[str], label: str,
                    evidence: Evidence, only_data: bool, views: tuple[QuerySizes, QuerySizes]) -> list[Cause]:
    out: list[Cause] = []
    checks: Sequence[tuple[str, Callable[[Optional[ShuffleOutcome]], Optional[int]]]] = (
        (SKEW_SPLIT, _skewed), (PARTITIONS_AFTER, _parts))
    for decision, f in checks:
        fa, fb = f(_as_run(o.a, views[0], key_a)), f(_as_run(o.b, views[1], key_b))
        if fa is None or fb is None or fa == fb:
            continue
        x, y = f(_shuffle(o.b_under_a, key_b)), f(_shuffle(o.b_settings_a_release, key_b))
        zb = f(_shuffle(o.b_replayed, key_b))
        factors = (DATA,) if only_data else _factors(fa, x, y, zb) if None not in (x, y, zb) else ()
        if not only_data and evidence is not Evidence.EXACT and decision == SKEW_SPLIT:
            factors = _estimated_skew_factors(*views, key_a, key_b, fa, fb) or ()
            out.append(Cause(decision, fa, fb, factors, None, None, evidence, label))  # no estimated split counts
            continue
        under_a = _shuffle(o.b_under_a, key_b)
        parts = under_a.splits if decision == SKEW_SPLIT and under_a is not None else None
        out.append(Cause(decision, fa, fb, factors, x, f(_shuffle(o.a_under_b, key_a)), evidence, label, parts))
    return out


def _join_cause(o: Outcomes, evidence: Evidence, only_data: bool) -> Optional[Cause]:
    fa, fb = _one_form(o.a.join_strategies), _one_form(o.b.join_strategies)
    if fa == fb:
        return None
    x, y, zb = (_one_form(o.b_under_a.join_strategies), _one_form(o.b_settings_a_release.join_strategies),
                _one_form(o.b_replayed.join_strategies))
    factors = (DATA,) if only_data else _factors(fa, x, y, zb)
    return Cause(JOIN_STRATEGY, fa, fb, factors, x, _one_form(o.a_under_b.join_strategies), evidence)


def _one_form(joins: Sequence[str]) -> list[str]:
    """Join strategies in one spelling: a capture names a split join ``SortMergeJoin (skew)``, a
    plan read from an event log ``SortMergeJoin(skew=true)``; the same run read both ways is the
    same decision."""
    return [j.replace("(skew=true)", " (skew)").replace("  (skew)", " (skew)") for j in joins]


def attribute(a: QuerySizes, b: QuerySizes, shuffle_pairs: Sequence[tuple[Optional[str], Optional[str], str]],
              same_data: Optional[bool] = None) -> Attribution:
    """The changed decisions of one query between run ``a`` and run ``b``, each with what
    changed it. ``shuffle_pairs``: (run a's shuffle key, run b's, a label) for the reads matched
    by their place in the plan (:func:`aqe_core.views.align_runs.align_shuffles`); ``same_data``:
    the logs' own numbers say both runs shuffled the very same bytes and rows (True), something
    else (False), or cannot say (None) -- what a plain log's causes are decided on first."""
    o = _outcomes(a, b)
    exact = o.b_under_a.evidence is Evidence.EXACT and o.a_under_b.evidence is Evidence.EXACT
    got = Attribution(outcomes=o, evidence=Evidence.EXACT if exact else Evidence.ESTIMATE)
    # the same settings on the same release: whatever changed, the data changed it (no replay
    # needed, so this holds on plain logs too, where the estimate cannot see a split reducer)
    only_data = a.spark_version == b.spark_version and not settings_changed(a.conf, b.conf)
    for key_a, key_b, label in shuffle_pairs:
        if key_a is not None and key_b is not None:
            got.causes.extend(_shuffle_causes(o, key_a, key_b, label, got.evidence, only_data, (a, b)))
    join = _join_cause(o, got.evidence, only_data)
    # a join that only gained or lost its skew flag is the skew split said again: one decision, in its own words
    if join is not None and not (skew_flag_only(join) and any(c.decision == SKEW_SPLIT for c in got.causes)):
        got.causes.append(join)
    if not exact:
        got.causes = _follow_the_split([_plain_log_cause(c, same_data, a, b) for c in got.causes])
    elif same_data and not only_data:
        ruled_out = [_not_the_data(c, a, b) for c in got.causes]
        if ruled_out != got.causes:
            got.notes.append("both runs' map stages wrote the very same bytes, so the data is ruled out; our replay,"
                             " which re-decides AQE's rules on each run's own plan but cannot plan the query again,"
                             " put a change on the data that the other run's release or settings made")
        got.causes = ruled_out
    if not exact and got.causes:
        got.notes.append("estimated: a plain event log holds only the sizes after AQE, so the replays under the"
                         " other run's settings are estimates over them")
    if exact and _disagrees(o.b, o.b_replayed):
        got.notes.append("our rules replayed over run b's statistics do not reproduce every decision Spark made in"
                         " run b: the causes marked there are less certain")
    return got


#: why a plain log cannot tell a cause when both the data and the settings or release changed
NOT_TOLD = ("{changed} changed between the runs, and a plain event log keeps only the sizes after AQE, so a"
            " replay over them cannot tell which made this decision (a listener log or a capture can)")


def _plain_log_cause(c: Cause, same_data: Optional[bool], a: QuerySizes, b: QuerySizes) -> Cause:
    """A plain log's cause, decided on the log's own numbers before the estimate's replay:
    the same bytes and rows shuffled in both runs mean the data did not change what AQE saw, so
    the settings or the release did (whichever changed); where the data changed too, only a
    change the threshold alone tells (a skew split: :func:`_estimated_skew_factors`) keeps its
    factor, and any other says the log cannot tell, rather than a guess."""
    release = a.spark_version != b.spark_version
    settings = _settings_set(a, b) if release else bool(settings_changed(a.conf, b.conf))
    if not release and not settings:
        return c  # (only the data changed: the one factor, no replay needed)
    if same_data:
        others = tuple(f for f, on in ((SETTINGS, settings), (RELEASE, release)) if on)
        told = tuple(f for f in c.factors if f in others)
        return replace(c, factors=told or others, untold="")
    if c.decision == SKEW_SPLIT and c.factors:
        return c
    changed = " and ".join(w for w, on in (("the data" if same_data is False else "perhaps the data", True),
                                           ("the settings", settings), ("the release", release)) if on)
    return replace(c, factors=(), untold=NOT_TOLD.format(changed=changed[0].upper() + changed[1:]))


def _not_the_data(c: Cause, a: QuerySizes, b: QuerySizes) -> Cause:
    """An exact source's cause when both runs' map stages wrote the very same bytes: the data is
    ruled out. A replay can re-decide AQE's rules but not re-plan the query, so where one
    release planned it otherwise (a union that keeps its children's partitioning from 4.1
    needs no exchange above it) the replay puts the change on the data; with the data ruled
    out, it is what else changed (the settings, the release)."""
    if DATA not in c.factors:
        return c
    told = tuple(f for f in c.factors if f != DATA)
    others = tuple(f for f, on in ((SETTINGS, _settings_set(a, b)), (RELEASE, a.spark_version != b.spark_version)) if on)
    # the replay put the change on the data: its "run b under run a" is not what run a's release did
    return replace(c, factors=told or others, b_under_a=c.b_under_a if told else None,
                   b_under_a_parts=c.b_under_a_parts if told else None)


def _settings_set(a: QuerySizes, b: QuerySizes) -> bool:
    """A setting someone changed: a key of both releases whose value differs, set in either run
    (a key only one release has, or a default one release changed, is the release's)."""
    return any(va is not None and vb is not None and (sa or sb) for _, va, vb, sa, sb in settings_changed(a.conf, b.conf))


def _unskewed(joins: Sequence[str]) -> list[str]:
    return [j.replace("(skew=true)", "").replace(" (skew)", "").strip() for j in joins]


def skew_flag_only(c: Cause) -> bool:
    """A join-strategy change that is no change of strategy: the same joins, one now (or no
    longer) splitting skewed partitions."""
    return c.decision == JOIN_STRATEGY and _unskewed(c.a) == _unskewed(c.b)


def _follow_the_split(causes: list[Cause]) -> list[Cause]:
    """On a plain log, a change that only follows a skew split's (the parts a split adds to a
    read's partition count, a join's skew flag) takes that split's cause: the estimate over
    sizes after AQE cannot re-decide them on its own."""
    split = {c.shuffle: c.factors for c in causes if c.decision == SKEW_SPLIT and c.factors}
    every = tuple(sorted({f for fs in split.values() for f in fs}, key=(DATA, SETTINGS, RELEASE).index))
    # a join's two sides read as many partitions as each other: the side not split moves with the other
    counts = {(c.a, c.b): split[c.shuffle] for c in causes if c.decision == PARTITIONS_AFTER and c.shuffle in split}
    out = []
    for c in causes:
        if c.decision == PARTITIONS_AFTER and (c.shuffle in split or (c.a, c.b) in counts):
            c = replace(c, factors=split.get(c.shuffle) or counts[(c.a, c.b)], untold="")
        elif c.decision == JOIN_STRATEGY and every and _unskewed(c.a) == _unskewed(c.b):
            c = replace(c, factors=every, untold="")
        out.append(c)
    return out


def _disagrees(actual: PresetOutcome, replayed: PresetOutcome) -> bool:
    got = {s.key: (s.partitions_after, s.skewed) for s in replayed.shuffles}
    return any(got.get(s.key, (s.partitions_after, s.skewed)) != (s.partitions_after, s.skewed) for s in actual.shuffles)
