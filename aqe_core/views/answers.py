"""The JSON answers the CLI prints with ``--json`` and the MCP server returns, built once here so
the two can never say different things about the same question (issue 29).

Each builder takes views (a :class:`~aqe_core.views.query.QueryView` per SQL execution) and
returns plain JSON-ready data; printing, paging and wrapping stay with the caller.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from aqe_core.model.evidence import Evidence
from aqe_core.views.query import QueryView

__all__ = ["diff_entry", "levelled", "lint_entry", "lint_subject", "query_evidence", "recommend_entry", "releases_entry", "select_views",
           "triage_entries", "whatif_entry"]


def select_views(views: list[QueryView], execution: Optional[str]) -> list[QueryView]:
    """Every view, or only the SQL execution ``execution`` (its id as text)."""
    return [v for v in views if execution is None or v.query_id == str(execution)]


def query_evidence(view: QueryView) -> Evidence:
    """How a query's decisions are known: exact (a capture, listener events) or Spark's own
    metrics after AQE (a plain event log; what is derived from those is an estimate)."""
    return view.model.evidence if view.model is not None else Evidence.SPARK_METRIC


#: an evidence label (what a table cell shows people) -> its level
_BY_LABEL = {e.label: e for e in Evidence}


def levelled(row: Mapping[str, Any]) -> dict[str, Any]:
    """A table row for people (its ``evidence`` a label, e.g. "Spark's metric") as answer data:
    ``evidence`` the level (``spark-metric``), as in every other field of an answer, and the
    label beside it as ``evidence_label``. One vocabulary per field (issue 38)."""
    out = dict(row)
    got = out.get("evidence")
    level = got if isinstance(got, Evidence) else _BY_LABEL.get(got) if isinstance(got, str) else None
    if level is None and isinstance(got, str) and got in {e.value for e in Evidence}:
        level = Evidence(got)
    if level is not None:
        out["evidence"], out["evidence_label"] = level.value, level.label
    return out


def recommend_entry(view: QueryView, fixes: list[Any]) -> dict[str, Any]:
    """``recommend --json``'s entry for one query: its fixes (``advise.fixes.fixes_for_view``)."""
    return {"query": view.query_id, "description": view.description, "fixes": [f.to_dict() for f in fixes]}


def releases_entry(view: QueryView, comparison: Any) -> dict[str, Any]:
    """``releases --json``'s entry for one query (``advise.releases.compare_releases``)."""
    doc = comparison.to_dict()
    doc["releases"] = [levelled(r) for r in doc["releases"]]
    return {"query": view.query_id, "description": view.description, "release": view.release_label, **doc}


def lint_subject(view: QueryView) -> tuple[str, dict[str, str], Any]:
    """What ``lint`` checks of a query: (label, its settings, its release: None where the log
    does not say it, never the release the rules are replayed as)."""
    return (f"#{view.query_id} {view.description[:60]}", {**view.conf.explicit, **view.conf.unknown},
            view.spark_version if view.release_known else None)


def lint_entry(label: str, settings: Mapping[str, str], release: Any, target: Any) -> tuple[dict[str, Any], int]:
    """``lint --json``'s entry for one subject checked against ``target`` (default: its own
    release), and its number of error findings."""
    from aqe_core.advise.lint import default_changes, lint_settings

    from aqe_core.versions import NEWEST, as_version

    against = target or release or as_version(NEWEST)  # (release unknown: checked as the newest modelled)
    found = lint_settings(settings, against, source=release)
    changes = default_changes(release, against, None) if release is not None and against != release else []
    set_keys = set(settings)
    changes = [c for c in changes if c.key not in set_keys]
    errors = sum(1 for f in found if f.severity == "error")
    return ({"query": label, "release": str(release) if release else None, "target": str(against),
             "settings": dict(settings), "findings": [f.to_dict() for f in found],
             "default_changes": [c.to_dict() for c in changes]}, errors)


def triage_entries(views: list[QueryView], text: str = "", findings: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """The Overview's ranking (highest score first), filtered as the page filters: each row's
    table cells with its finding codes, score, wasted task time and evidence."""
    from aqe_core.views.triage import triage

    by_id = {v.query_id: v for v in views}
    return [{**r.to_dict(), "finding_codes": list(r.findings), "score": round(r.score, 3), "wasted_task_ms": r.wasted_ms,
             "page": r.page, "evidence": query_evidence(by_id[r.query_id]).value}
            for r in triage(views, text, findings)]


def whatif_entry(view: QueryView, overrides: Mapping[str, str]) -> dict[str, Any]:
    """The What-if page's answer as data: Spark's run and our rules under ``overrides``, each read
    with its partitions and how that is known, and the lines under the overrides."""
    from aqe_core.views.compare import whatif
    from aqe_core.views.explain import lines_json

    got = whatif(view, dict(overrides))
    outcomes = [{"preset": o.preset, "spark_version": o.spark_version, "exact": o.exact, "evidence": o.evidence.value,
                 "note": o.note, "summary": levelled(o.summary_row()), "joins": list(o.join_strategies),
                 "reads": [s.to_dict() for s in o.shuffles]} for o in got.outcomes]
    lines = [{"key": s.key, "stage_id": s.stage_id, "node_id": s.node_id, "evidence": s.evidence.value,
              "lines": lines_json(s, s.evidence)} for s in got.view.shuffles]
    return {"query": view.query_id, "description": view.description, "settings": dict(overrides),
            "errors": list(got.errors), "note": got.note, "outcomes": outcomes, "lines": lines}


def diff_entry(diff: Any, gate: Any) -> dict[str, Any]:
    """``diff --json``'s document: two runs compared (a :class:`~aqe_core.model.run_diff.RunDiff`),
    with the matched queries the :class:`~aqe_core.model.run_diff.Gate` fails, each named."""
    slower = diff.regressions(gate)
    doc = diff.to_dict()
    doc.update(gate.to_dict())
    doc["regressed"] = [q.b.query_id for q in slower]
    doc["failures"] = [gate.failure(q, diff.app[1]) for q in slower]
    return doc
