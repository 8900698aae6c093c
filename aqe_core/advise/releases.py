"""Every supported Spark release side by side (issue 13): the same query's statistics through each
release's rules, for "what does upgrading (or staying) do to this query".

The query's own settings go with it (those a release lacks or rejects are left out, and the
linter says so); every other setting takes the release's default. A capture or listener log
is replayed exactly on its pre-AQE statistics; a plain event log gets the estimate. Between two
neighbouring releases whose outcome differs, the differences are explained by what changed:
the rule order (:mod:`aqe_core.engine.pipeline`) and the defaults the query did not set.

Checked against real Spark: for every catalogue query recorded with identical statistics on two
releases, the newer or older release's rules on one recording give what the other release did
(tests/views/test_releases.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core import config
from aqe_core.advise.lint import LintFinding, default_changes, lint_settings
from aqe_core.advise.whatif import QuerySizes, join_names, what_if
from aqe_core.config import AQEConf, checked_layers
from aqe_core.engine.estimate import PresetOutcome
from aqe_core.engine.pipeline import pipeline_for, rule_changes
from aqe_core.engine.simulate import SimulationReport
from aqe_core.engine.stage_plan import exchange_over_union
from aqe_core.model.evidence import Evidence
from aqe_core.versions import as_version

__all__ = ["RELEASES", "ReleaseComparison", "ReleaseRow", "compare_releases"]

#: the releases AQE Lens models, one per line of Spark it was checked against
RELEASES = ("3.0.1", "3.1.3", "3.2.4", "3.3.4", "3.4.4", "3.5.9", "4.0.0", "4.1.4", "4.2.1", "4.3.0")
#: the row of Spark's own record when the log does not say which release ran
UNKNOWN = "release unknown"


#: the settings AQE's decisions read (a default change elsewhere, e.g. the log level, is not news)
DECISION_KEYS = frozenset({
    config.ADAPTIVE_EXECUTION_ENABLED, config.ADVISORY_PARTITION_SIZE_IN_BYTES, config.COALESCE_PARTITIONS_ENABLED,
    config.COALESCE_PARTITIONS_MIN_PARTITION_NUM, config.COALESCE_PARTITIONS_INITIAL_PARTITION_NUM,
    config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE, config.COALESCE_PARTITIONS_PARALLELISM_FIRST,
    config.COALESCE_PARTITIONS_MAX_REDUCER_PARTITIONS_PER_TASK, config.LOCAL_SHUFFLE_READER_ENABLED,
    config.SKEW_JOIN_ENABLED, config.SKEW_JOIN_SKEWED_PARTITION_FACTOR, config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD,
    config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN, config.NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN,
    config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD, config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD,
    config.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED, config.ADAPTIVE_REBALANCE_PARTITIONS_SMALL_PARTITION_FACTOR,
    config.ADAPTIVE_APPLY_FINAL_STAGE_SHUFFLE_OPTIMIZATIONS, config.CONVERT_SMJ_TO_SHJ_ENABLED,
    config.CONVERT_SMJ_TO_SHJ_MIN_WIDENING_FACTOR, config.SHUFFLE_PARTITIONS, config.AUTO_BROADCASTJOIN_THRESHOLD,
})


@dataclass
class ReleaseRow:
    """One release's outcome. The release the query ran on (``own``) shows what Spark did, from
    its own record (a plain log's metrics, a capture's specs); ``rules`` then holds what our
    rules give under that release, the figure the other releases' rows are compared with."""

    release: str
    outcome: PresetOutcome
    lint: list[LintFinding] = field(default_factory=list)
    own: bool = False  # the release the query ran on: ``outcome`` is Spark's own record
    #: read label -> the rules' reasons under this release (exact sources only)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    #: where this release's planner would build a different plan than the one replayed
    caveats: list[str] = field(default_factory=list)
    #: (own release) our rules' outcome under it, which the neighbouring rows are diffed against
    rules: Optional[PresetOutcome] = None

    @property
    def label(self) -> str:
        if self.own and self.release == UNKNOWN:
            return "as run (release unknown)"
        if self.own:
            return self.release + " (as run)"
        return self.release + (" (estimate)" if self.outcome.evidence is Evidence.ESTIMATE else "")

    def summary(self) -> dict[str, Any]:
        o = self.outcome
        row = o.summary_row()
        return {"release": self.label, "evidence": o.evidence.label,
                "partitions after AQE": " + ".join(str(s.partitions_after) for s in o.shuffles) or "no adaptive read",
                "skewed reducers split": row["skewed reducers split"], "skew splits": row["skew split parts"],
                "joins": ", ".join(o.join_strategies) or "-",
                "settings left out": ", ".join(f.key for f in self.lint if f.kind in ("invalid", "not_in_release")) or "",
                "caveat": "; ".join(self.caveats)}


@dataclass
class ReleaseDiff:
    """What differs between two neighbouring releases' outcomes, and what changed between them."""

    before: str
    after: str
    changes: list[str]
    #: what the rules said differently (exact sources: each release's own reasons for the read)
    rules_said: list[str] = field(default_factory=list)
    #: what changed between the two releases that bears on AQE's decisions (the candidates)
    changed_between: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.before, "to": self.after, "changes": self.changes, "rules_said": self.rules_said,
                "changed_between": self.changed_between}


@dataclass
class ReleaseComparison:
    rows: list[ReleaseRow]
    diffs: list[ReleaseDiff]
    exact: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"exact": self.exact, "note": self.note, "releases": [r.summary() for r in self.rows],
                "lint": {r.release: [f.to_dict() for f in r.lint] for r in self.rows if r.lint},
                "differences": [d.to_dict() for d in self.diffs]}


def compare_releases(view: QuerySizes, releases: tuple[str, ...] = RELEASES) -> ReleaseComparison:
    """The query under each release's rules, its own settings carried where the release has them."""
    settings = {**view.conf.explicit, **view.conf.unknown}
    # the release the log names (a view whose log names none is replayed as the newest modelled,
    # which is not the release it ran on: Spark's record then gets a row of its own)
    known = getattr(view, "release_known", True)
    own = str(view.spark_version) if known else ""
    if known and not any(as_version(r) == view.spark_version for r in releases):
        releases = tuple(sorted({*releases, own}, key=as_version))
    rows = []
    if not known:
        ran = what_if(view.model, view.shuffles, join_names(view), view.conf, name=UNKNOWN, lines=False, actual=True,
                      default_parallelism=view.default_parallelism).outcome
        assert ran is not None
        rows.append(ReleaseRow(UNKNOWN, ran, own=True))
    for rel in releases:
        layers, _notes = checked_layers(rel, [settings])
        conf = AQEConf.resolve(rel, layers, validate=False)
        got = what_if(view.model, view.shuffles, join_names(view), conf, name=rel, lines=False,
                      default_parallelism=view.default_parallelism)
        assert got.outcome is not None
        lint = [f for f in lint_settings(settings, rel, source=own or None) if f.severity != "info"]
        row = ReleaseRow(rel, got.outcome, lint, reasons=_reasons(got.replay), caveats=_planner_caveats(view, conf))
        if known and as_version(rel) == as_version(own):
            ran = what_if(view.model, view.shuffles, join_names(view), conf, name=rel, lines=False, actual=True,
                          default_parallelism=view.default_parallelism).outcome
            assert ran is not None
            if ran.evidence is Evidence.SPARK_METRIC:  # a plain log: the estimate gets its own row
                rows.append(row)
                row = ReleaseRow(rel, ran, lint, caveats=row.caveats, rules=got.outcome)
            else:
                row.outcome, row.rules = ran, got.outcome
            row.own = True
        rows.append(row)
    exact = bool(rows) and rows[-1].outcome.exact
    compared = [r for r in rows if r.outcome.evidence is not Evidence.SPARK_METRIC]
    diffs = [d for a, b in zip(compared, compared[1:]) if (d := _diff(a, b, set(settings))) is not None]
    # (the replay's note about plan-changing settings does not apply: every release gets the query's own)
    note = "exact: each release's rules replayed over the captured statistics" if exact else (rows[-1].outcome.note if rows else "")
    if not known:
        note += (f". The log does not say which release it ran on ({getattr(view, 'release', '') or 'release unknown'}):"
                 " Spark's own record is the first row, and no release is marked as run")
    note += _calibration(rows)
    return ReleaseComparison(rows, diffs, exact, note)


def _calibration(rows: list[ReleaseRow]) -> str:
    """Where the estimate for the release the query ran on misses what Spark did, say so: the
    other releases' estimates are no closer."""
    ran = next((r for r in rows if r.own and r.outcome.evidence is Evidence.SPARK_METRIC and r.rules), None)
    if ran is None or ran.rules is None:
        return ""
    got, did = _partitions(ran.rules), _partitions(ran.outcome)
    if got == did:
        return (f". For {ran.release}, the release it ran on, the estimate gives what Spark's metrics say"
                f" ({did})")
    return (f". For {ran.release}, the release it ran on, the estimate gives {got} where Spark's metrics"
            f" say {did}: the estimate cannot see the pre-AQE sizes or what a skew split kept apart, so read the"
            " estimated rows as a direction, not a count")


def _partitions(o: PresetOutcome) -> str:
    """"21 + 17 partitions", or "no adaptive read" (never "none partitions")."""
    if not o.shuffles:
        return "no adaptive read"
    return " + ".join(str(s.partitions_after) for s in o.shuffles) + " partitions"


def _planner_caveats(view: QuerySizes, conf: AQEConf) -> list[str]:
    """Known planner changes the replay of the recorded plan cannot follow.

    From 4.1 (``spark.sql.unionOutputPartitioning``) a Union whose children agree on a hash
    partitioning reports it (``UnionExec.outputPartitioning``), so ``EnsureRequirements`` plans no
    exchange above it for that partitioning. The replay follows the coalescing this changes
    (:mod:`aqe_core.rules.union_exec`), but not an exchange an older recording has above such a
    union: that shuffle would not exist."""
    if (not conf.get_or(config.UNION_OUTPUT_PARTITIONING, False)
            or view.conf.get_or(config.UNION_OUTPUT_PARTITIONING, False)):
        return []
    plans = [p for p in (view.initial_plan, view.final_plan) if p is not None]
    if any(exchange_over_union(n) for p in plans for n in p.walk()):
        return [f"{conf.spark_version}'s Union reports its children's partitioning: the exchange above the Union"
                " for that partitioning would not be planned; the replayed plan is the recorded release's"
                " (a run on it decides)"]
    return []


def _reasons(rep: Optional[SimulationReport]) -> dict[str, list[str]]:
    """Each read's reasons under the release, in the rules' words (exact sources: the replay
    behind the release's outcome)."""
    if rep is None or not rep.queries:
        return {}
    return {f"shuffle {r.shuffle_id} (stage {r.stage_id})": [x.message for x in r.reasons] for r in rep.queries[0].reads}


def _outcome_changes(a: PresetOutcome, b: PresetOutcome) -> list[str]:
    out = []
    for sa, sb in zip(a.shuffles, b.shuffles):
        if sa.partitions_after != sb.partitions_after or sa.splits != sb.splits:
            out.append(f"{sb.label}: {sa.partitions_after} -> {sb.partitions_after} partitions"
                       + (f", skew splits {sa.splits} -> {sb.splits}" if sa.splits != sb.splits else ""))
    if a.join_strategies != b.join_strategies:
        out.append(f"joins: {', '.join(a.join_strategies) or '-'} -> {', '.join(b.join_strategies) or '-'}")
    return out


def _diff(a: ReleaseRow, b: ReleaseRow, set_keys: set[str]) -> Optional[ReleaseDiff]:
    """Neighbouring releases under our rules (the own release's rules outcome, not Spark's record:
    like is compared with like)."""
    changes = _outcome_changes(a.rules or a.outcome, b.rules or b.outcome)
    if not changes:
        return None
    said: list[str] = []
    for label in a.reasons:
        ra, rb = a.reasons.get(label, []), b.reasons.get(label, [])
        if ra != rb:
            said += [f"{label}, {a.release}: {m}" for m in ra if m not in rb]
            said += [f"{label}, {b.release}: {m}" for m in rb if m not in ra]
    between: list[str] = []
    pa, pb = pipeline_for(a.release), pipeline_for(b.release)
    if pa.rules != pb.rules:
        between.append(f"rule order: {' > '.join(pa.rules)} in {a.release}; {' > '.join(pb.rules)} in {b.release}")
    if pa.final_stage != pb.final_stage:
        between.append(f"which rules run on the final stage: {pa.final_stage} in {a.release}, {pb.final_stage} in"
                       f" {b.release}")
    joins = [j for o in (a.rules or a.outcome, b.rules or b.outcome) for j in o.join_strategies]
    between += rule_changes(a.release, b.release, joins)
    between += [f.message for f in default_changes(a.release, b.release, set(DECISION_KEYS) - set_keys)]
    gone = {f.key for f in b.lint} - {f.key for f in a.lint}
    between += [f.message for f in b.lint if f.key in gone]
    return ReleaseDiff(a.release, b.release, changes, said, between)
