"""The MCP tools that advise (what-if, recommend, releases, lint) and read a fleet scan; the
reading tools are in :mod:`aqe_core.mcp.tools`. Same rules: the CLI's own builders, bounded
answers, one-line refusals, no SQL and no Spark."""
from __future__ import annotations

from typing import Any

from aqe_core.model.evidence import Evidence
from aqe_core.model.run_diff import DEFAULT_MIN_MS, DEFAULT_THRESHOLD_PCT, Gate
from aqe_core.opening import SourceError
from aqe_core.views.answers import (
    diff_entry, lint_entry, lint_subject, query_evidence, recommend_entry, releases_entry, whatif_entry,
)
from aqe_core.mcp.tools import (
    MAX_QUERIES, MAX_SETTINGS, Answer, ToolInputError, Tools, _int, _page, _text, _worst, bounded, listed_refusal,
)

__all__ = ["AdviceTools"]


def _settings(value: Any, release: Any) -> dict[str, str]:
    """Settings an assistant passes (``{"spark.sql...": "value"}``), each checked as the app's
    conf guard checks a user's: AQE keys only, values Spark would parse."""
    from aqe_core.config import user_setting_refusal

    if not isinstance(value, dict) or not value:
        raise ToolInputError("settings must be an object of setting name -> value (text), at least one")
    if len(value) > MAX_SETTINGS:
        raise ToolInputError(f"at most {MAX_SETTINGS} settings at once")
    out = {}
    for k, v in value.items():
        text = v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v) if isinstance(v, (int, float)) else None
        if text is None:
            raise ToolInputError(f"setting {str(k)[:120]}: the value must be text, a number or true/false")
        why = user_setting_refusal(k, text, release)
        if why:
            raise ToolInputError(why)
        out[k] = text
    return out


def _release(name: str, value: Any):
    from aqe_core.cli.lint import release_arg

    if value is None:
        return None
    try:
        return release_arg(_text(name, value, 20))
    except ValueError as exc:
        raise ToolInputError(f"{name}: {exc}") from None


class AdviceTools(Tools):
    """:class:`Tools` with the advice and fleet tools."""

    def what_if(self, source: Any, settings: Any, execution: Any = None) -> Answer:
        opened = self._source(source)
        view = self._view(opened.source, execution)
        entry = whatif_entry(view, _settings(settings, view.spark_version))
        if entry["errors"]:
            raise ToolInputError("; ".join(entry["errors"])[:500])
        ran, got = (entry["outcomes"] + [None, None])[:2]
        evidence = Evidence(got["evidence"]) if got else query_evidence(view)
        summary = f"#{view.query_id} under {', '.join(f'{k}={v}' for k, v in entry['settings'].items())}: "
        if ran and got:
            a, b = ran["summary"], got["summary"]
            summary += (f"partitions {a['partitions after AQE']} -> {b['partitions after AQE']}, skewed reducers split"
                        f" {a['skewed reducers split']} -> {b['skewed reducers split']}, joins {a['joins']} -> {b['joins']}"
                        f" ({entry['note'] or got['evidence']})")
        return bounded(Answer("what_if", summary, entry, evidence, source=opened.key, query=view.query_id))

    def hot_keys(self, source: Any, execution: Any = None) -> Answer:
        """The skewed reducers of a query, the SQL to run on the user's cluster for their keys
        (code for them, never run here) and the settings that would split each (no Spark)."""
        import argparse

        from aqe_core.cli.hot_keys import hot_keys_doc

        opened = self._source(source)
        view = self._view(opened.source, execution)
        doc = hot_keys_doc([view], argparse.Namespace(no_spark=True, top=5))
        summary = (f"#{view.query_id}: {len(doc)} skewed reducer(s)" + ("; each with SQL for the user's cluster"
                                                                        " (code for them, not run here)" if doc else ""))
        return bounded(Answer("hot_keys", summary, doc, query_evidence(view), source=opened.key, query=view.query_id,
                              notes=["keys are counted only by count_hot_keys (a server started with --allow-runs) or"
                                     " python -m aqe_core hot-keys on a capture"]))

    def recommend(self, source: Any, execution: Any = None) -> Answer:
        from aqe_core.advise.fixes import fix_notes, fixes_for_view

        opened = self._source(source)
        view = self._view(opened.source, execution)
        fixes = fixes_for_view(view)
        entry = recommend_entry(view, fixes)
        lines = [f"#{view.query_id}: {len(fixes)} fix(es)"]
        for f in fixes[:5]:
            lines.append(f"{f.finding}: {f.why}")
            lines += [f"  {line}" for line in f.conf_lines()[:2]]
            lines += [f"  predicted ({'exact replay' if f.exact else 'estimate'}): {e}" for e in f.effects[:4]]
        if not fixes:
            lines.append("nothing a setting would fix: no skew left unsplit, no over- or under-coalescing, no missed"
                         " or demoted broadcast")
        levels = [Evidence.EXACT if f.exact else Evidence.ESTIMATE for f in fixes] or [query_evidence(view)]
        notes = [] if query_evidence(view) is Evidence.EXACT else fix_notes(view)
        notes.append("to confirm an exact fix on Spark: verify_fix (served when the operator allows runs) or"
                     " recommend --verify")
        if opened.source.listing is not None:  # (a log past max_executions: no other execution was read)
            notes.append(f"this log is listed by query ({opened.source.listing.executions:,} executions): the fixes are"
                         f" weighed on execution {view.query_id} alone, not on the application's other executions")
        return bounded(Answer("recommend", "\n".join(lines), [entry], _worst(levels), source=opened.key,
                              query=view.query_id, notes=notes))

    def compare_releases(self, source: Any, execution: Any = None) -> Answer:
        from aqe_core.advise.releases import compare_releases

        opened = self._source(source)
        view = self._view(opened.source, execution)
        comp = compare_releases(view)
        entry = releases_entry(view, comp)
        lines = [f"#{view.query_id} ({comp.note})"]
        for r in comp.rows:
            s = r.summary()
            lines.append(f"{s['release']}: partitions {s['partitions after AQE']}, skewed reducers split"
                         f" {s['skewed reducers split']}, joins {s['joins']} [{s['evidence']}]")
        lines += [f"{d.before} -> {d.after}: " + "; ".join(d.changes) for d in comp.diffs[:6]]
        evidence = Evidence.EXACT if comp.exact else Evidence.ESTIMATE
        return bounded(Answer("compare_releases", "\n".join(lines), [entry], evidence, source=opened.key,
                              query=view.query_id))

    def lint_settings(self, source: Any = None, execution: Any = None, settings: Any = None, target: Any = None,
                      source_version: Any = None) -> Answer:
        target_v, given = _release("target", target), _release("source_version", source_version)
        key = query = None
        # how the settings checked are known, as the app shows their query: the settings an
        # assistant gives are checked as given (exact); a plain log's are Spark's record (issue 38)
        levels = [Evidence.EXACT]
        if settings is not None:
            if target_v is None and given is None:
                raise ToolInputError("with settings, give target (and optionally source_version)")
            subjects = [("--conf", _lint_settings(settings), given)]
        elif source is not None:
            opened = self._source(source)
            key = opened.key
            if execution is None and opened.source.listing is not None:
                raise ToolInputError(listed_refusal(opened.source, "linting a source's settings reads every execution"))
            views = opened.source.views if execution is None else [self._view(opened.source, execution)]
            if len(views) > MAX_QUERIES:
                raise ToolInputError(f"this source has {len(views)} SQL executions: give execution")
            query = views[0].query_id if execution is not None else None
            subjects = [lint_subject(v) for v in views]
            levels = [query_evidence(v) for v in views] or levels
        else:
            raise ToolInputError("give a source (its queries' settings) or settings to check")
        doc, errors = [], 0
        for label, values, release in subjects:
            entry, n = lint_entry(label, values, release, target_v)
            doc.append(entry)
            errors += n
        found = [f for d in doc for f in d["findings"]]
        summary = (f"{len(doc)} subject(s) checked against Spark {doc[0]['target'] if doc else '?'}: {errors} error(s),"
                   f" {len(found) - errors} other finding(s)" + "".join(f"\n{f['severity']}: {f['message']}" for f in found[:8]))
        return bounded(Answer("lint_settings", summary, doc, _worst(levels), source=key, query=query,
                              notes=["checked against the key registry, itself checked against each release's"
                                     " recorded SQLConf"]))

    def diff_runs(self, a: Any, b: Any, threshold: Any = DEFAULT_THRESHOLD_PCT, min_ms: Any = DEFAULT_MIN_MS) -> Answer:
        """Run ``a`` (the baseline) and run ``b`` of one job compared (``diff a b --json``)."""
        from aqe_core.views.diff_runs import diff_views

        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 10_000:
            raise ToolInputError("threshold is a percentage from 0 to 10000")
        if isinstance(min_ms, bool) or not isinstance(min_ms, int) or not 0 <= min_ms <= 10**9:
            raise ToolInputError("min_ms is a whole number of milliseconds from 0")
        first, second = self._source(a), self._source(b)
        sa, sb = first.source, second.source
        for side, src in (("a", sa), ("b", sb)):
            if src.listing is not None:
                raise ToolInputError(listed_refusal(src, f"diff_runs compares every execution of both runs ({side})"))
        d = diff_views(sa.views, sb.views, source_a=a, source_b=b, kind=(sa.kind, sb.kind),
                       release=(sa.spark_version or "", sb.spark_version or ""), app=(sa.app_name or "", sb.app_name or ""))
        doc = diff_entry(d, Gate(float(threshold), min_ms))
        lines = [f"{len(d.matched)} queries matched, {len(d.only_a)} only in a, {len(d.only_b)} only in b"
                 + (f"; slower by more than {threshold:g}% and {min_ms} ms: " + ", ".join(f"#{q}" for q in doc["regressed"])
                    if doc["regressed"] else "")]
        if d.groups:  # (a streaming job's, a Thrift server's: each query once, its executions side by side)
            lines.append(f"{len(d.groups)} queries run more than once: " + "; ".join(g.sentence for g in d.groups[:3]))
        lines += [f"#{q.a.query_id} -> #{q.b.query_id}: {q.sentence}" for q in d.matched[:8]]
        levels = [query_evidence(v) for v in (*sa.views, *sb.views)]
        return bounded(Answer("diff_runs", "\n".join(lines), doc, _worst(levels) if levels else Evidence.EXACT,
                              source=f"{first.key} -> {second.key}"))

    def scan_summary(self, path: Any, findings: Any = None, text: Any = "", sort: Any = "wasted task time",
                     offset: Any = 0, limit: Any = 50) -> Answer:
        from aqe_core.fleet.history import worse_since_last
        from aqe_core.fleet.result import SORTS, load_scan
        from aqe_core.views.triage import FINDINGS

        findings = findings or []
        if not isinstance(findings, list) or any(not isinstance(f, str) or f not in FINDINGS for f in findings):
            raise ToolInputError(f"findings must be a list of: {', '.join(FINDINGS)}")
        if not isinstance(sort, str) or sort not in SORTS:
            raise ToolInputError(f"sort must be one of: {', '.join(SORTS)}")
        text = _text("text", text or "")
        offset, limit = _int("offset", offset, 0, 100_000_000), _int("limit", limit, 1, MAX_QUERIES)
        try:
            scan = load_scan(_text("path", path, 4096))
        except SourceError as exc:
            raise ToolInputError(str(exc)) from None
        rows = scan.rows(findings or None, text, sort)
        shown = [c for c in _ROW_COLUMNS if c in rows.columns]
        records = [{k: _plain(v) for k, v in r.items()} for r in rows[shown].to_dict("records")]
        got, page = _page(records, offset, limit)
        worse = [{"app": c.app, "before_file": c.before_file, "after_file": c.after_file,
                  "wasted_before_s": c.wasted_before_s, "wasted_after_s": c.wasted_after_s,
                  "findings_before": c.findings_before, "findings_after": c.findings_after}
                 for c in (worse_since_last(scan.history) if scan.history is not None else [])]
        counts = scan.finding_counts()
        answer = {"path": scan.path, "scans": scan.scans, "logs": int(scan.executions["file"].nunique()),
                  "executions": int(len(scan.executions) - len(scan.errors)), "errors": int(len(scan.errors)),
                  "finding_counts": counts, "worse_since_last": worse[:50], "rows": got}
        summary = (f"{answer['logs']} logs, {answer['executions']} SQL executions, {answer['errors']} unreadable;"
                   f" findings: {', '.join(f'{FINDINGS[f][0]} {n}' for f, n in counts.items()) or 'none'}"
                   + (f"; {len(worse)} application(s) worse than their run before" if worse else ""))
        levels = [Evidence(r["evidence"]) for r in got if r.get("evidence") in {e.value for e in Evidence}]
        return bounded(Answer("scan_summary", summary, answer, _worst(levels), source=scan.path, page=page))


#: the executions table's columns a scan summary lists (the Fleet page's, with ids to open)
_ROW_COLUMNS = ["file", "execution_id", "description", "findings", "read_stage_tasks", "wasted_task_ms", "duration_ms",
                "partitions_before", "partitions_after", "evidence", "outcome", "app_name", "spark_version", "score"]


def _plain(v: Any) -> Any:
    """A table cell as JSON: NaN and missing as null, numpy numbers as Python numbers."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return None
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v if isinstance(v, (str, int, float, bool)) else str(v)


def _lint_settings(value: Any) -> dict[str, str]:
    """Settings to lint: any key (an unknown key is what lint reports), values as text."""
    if not isinstance(value, dict) or not value or len(value) > MAX_SETTINGS:
        raise ToolInputError(f"settings must be an object of 1 to {MAX_SETTINGS} setting name -> value")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or len(k) > 200 or not isinstance(v, (str, int, float, bool)) or len(str(v)) > 200:
            raise ToolInputError("each setting is a name (text, at most 200 characters) and a value (text or number)")
        out[k] = str(v).lower() if isinstance(v, bool) else str(v)
    return out

