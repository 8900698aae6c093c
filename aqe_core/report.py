"""Self-contained HTML report: one file, works offline, no external requests.

plotly.js is inlined once; each figure is a div; each plan is a plan map (its data as JSON, drawn
by the inlined plan map script, the app's own). A strict Content-Security-Policy forbids every
network request, and every string that came from a log, a plan or a user is HTML-escaped (or,
in a plan map, set as text by the script).
"""
from __future__ import annotations

import datetime as _dt
import html
import json
from typing import Any, Optional, Sequence

import plotly.io as pio
from plotly.offline import get_plotlyjs

import aqe_core
from aqe_core.views.diff_runs import caused_by
from aqe_core.views.query import QueryView
from aqe_core.views.query_groups import QueryGroup
from aqe_core.advise.whatif import PresetOutcome
from aqe_core.advise.releases import ReleaseComparison
from aqe_core.advise.recommend import Fix
from aqe_core.figures.fix_figure import fix_figure
from aqe_core.figures.plan_map import plan_map_script
from aqe_core.figures.run_diff import partition_overlay
from aqe_core.model.run_diff import QueryDiff, RunDiff

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data: blob:; font-src data:; connect-src 'none'")

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#212529}
h1{margin-bottom:0} .meta{color:#495057;font-size:.9em} table{border-collapse:collapse;margin:8px 0 16px}
td,th{border:1px solid #dee2e6;padding:4px 8px;font-size:.9em;text-align:left;vertical-align:top}
th{background:#f1f3f5} .approx{background:#fff3bf;padding:6px 10px;border-radius:4px}
.plans{display:grid;grid-template-columns:1fr;gap:12px} section{margin-bottom:28px}
code,pre{background:#f8f9fa;padding:2px 4px;font-size:.85em;white-space:pre-wrap}
"""


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def _join_traces(view: QueryView) -> str:
    """Each join's decision trace (exact sources): per side the broadcast conditions, then the strategy."""
    out = []
    for i, trace in enumerate(view.join_traces or []):
        decision = view.join_decisions[i] if i < len(view.join_decisions or []) else f"join {i + 1}"
        out.append(f"<h4>Join decision trace: {_e(decision[:200])}</h4>" + _table(_trace_rows(trace, "step")))
    return "".join(out)


def _trace_rows(trace: list, first: str = "rule") -> list[dict[str, Any]]:
    """One table row per condition of a decision trace (``first``: the first column's name)."""
    return [{first: t.rule, "verdict": t.verdict, "condition": c.condition, "result": c.result, "detail": c.detail,
             "inputs": c.inputs_text()} for t in trace for c in t.checks]


def _table(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "<p>(none)</p>"
    cols = list(rows[0].keys())
    head = "".join(f"<th>{_e(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{_e(r.get(c))}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _json_in_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element or open a comment (log strings inside)."""
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _plan_map_div(data: dict[str, Any], div_id: str) -> str:
    """A plan map: its data as JSON, drawn on load by the inlined plan map script (the same
    drawing, zoom, details and plan text as the app's)."""
    return (f"<div class='plan-map' id='{div_id}'></div>"
            f"<script type='application/json' id='{div_id}-data'>{_json_in_script(data)}</script>")


_PLAN_MAP_BOOT = ("document.querySelectorAll('.plan-map').forEach(function(d){"
                  "renderPlanMap(d, JSON.parse(document.getElementById(d.id + '-data').textContent), {});});")


def _fig_div(fig: Any, div_id: str) -> str:
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=div_id,
                       config={"displaylogo": False, "scrollZoom": True})


def build_report(
    view: QueryView,
    *,
    source_label: str,
    plan_figures: Sequence[tuple[str, Any]] = (),
    histogram_figures: Sequence[tuple[str, Any]] = (),
    comparison: Sequence[PresetOutcome] = (),
    plan_changes: Sequence[dict[str, Any]] = (),
    link: Optional[str] = None,
    releases: Optional[ReleaseComparison] = None,
    fixes: Sequence[Fix] = (),
    hot_keys: Optional[Sequence[dict[str, Any]]] = None,
    query_group: Optional[QueryGroup] = None,
) -> str:
    """The whole report as one HTML string. ``hot_keys``: the entries of
    :func:`aqe_core.views.hot_key_entries.hot_key_entries` (with keys counted on Spark where the
    caller did); None builds them without Spark (the SQL for the user's cluster). ``query_group``:
    the query's executions across the application, where it ran more than once."""
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts: list[str] = []
    parts.append(f"<h1>AQE Lens report</h1><p class='meta'>Source: {_e(source_label)} &middot; query {_e(view.query_id)}:"
                 f" {_e(view.description)} &middot; {_e(view.release_label)}"
                 + (f" &middot; default parallelism {_e(view.parallelism_how)}" if view.parallelism_how else "")
                 + f" &middot; status {_e(view.status)}"
                 f" &middot; generated {now} by AQE Lens {_e(aqe_core.__version__)}"
                 + (f" &middot; link: <code>{_e(link)}</code>" if link else "") + "</p>")
    parts.append(f"<section><h2>What AQE did</h2><p>{_e(view.outcome)}</p>"
                 + (f"<p>Why AQE did not apply: {_e(view.adaptive_reason)}</p>" if view.adaptive_reason else "")
                 + ("<ul>" + "".join(f"<li>{_e(c)}</li>" for c in (view.join_decisions or view.join_changes)) + "</ul>"
                    if (view.join_decisions or view.join_changes) else "")
                 + _join_traces(view) + "</section>")
    if query_group is not None and query_group.count > 1:
        parts.append(_group_section(query_group))
    if plan_figures:
        divs = "".join(f"<div>{_plan_map_div(f, f'plan-{i}')}</div>" if isinstance(f, dict)
                       else f"<div><h3>{_e(t)}</h3>{_fig_div(f, f'plan-{i}')}</div>" for i, (t, f) in enumerate(plan_figures))
        rows = [{"change": c.get("label") or c.get("kind"), "node": c.get("node"), "what happened": c.get("explanation")}
                for c in plan_changes]
        parts.append(f"<section><h2>Plans</h2><div class='plans'>{divs}</div>{_table(rows)}</section>")
    parts.append(_partitions_section(view, histogram_figures))
    if fixes:
        parts.append(_fixes_section(fixes))
    parts.append(_hot_keys_section(view, hot_keys))
    if comparison:
        notes = "".join(f"<li><b>{_e(o.preset)}</b>: {_e(o.note)}</li>" for o in comparison)
        parts.append(f"<section><h2>Presets compared</h2>{_table([o.summary_row() for o in comparison])}<ul>{notes}</ul></section>")
    if releases is not None:
        diffs = "".join(f"<li><b>{_e(d.before)} &rarr; {_e(d.after)}</b>: {_e('; '.join(d.changes))}<ul>"
                        + "".join(f"<li>the rules said: {_e(m)}</li>" for m in d.rules_said)
                        + "".join(f"<li class='meta'>changed between them: {_e(m)}</li>" for m in d.changed_between)
                        + "</ul></li>" for d in releases.diffs)
        lint = "".join(f"<li>{_e(r.release)}: {_e(f.message)}</li>" for r in releases.rows for f in r.lint)
        parts.append(f"<section><h2>Every Spark release</h2><p class='meta'>{_e(releases.note)}</p>"
                     f"{_table([r.summary() for r in releases.rows])}<ul>{diffs}</ul>"
                     + (f"<h3>Settings a release lacks or rejects</h3><ul>{lint}</ul>" if lint else "") + "</section>")
    conf_rows = [{"setting": k, "value": v} for k, v in view.conf.to_strings().items() if v is not None]
    parts.append(f"<section><h2>Effective AQE configuration</h2>{_table(conf_rows)}</section>")
    if view.warnings:
        parts.append("<section><h2>Warnings</h2><ul>" + "".join(f"<li>{_e(w)}</li>" for w in view.warnings) + "</ul></section>")
    maps = any(isinstance(f, dict) for _t, f in plan_figures)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        f"<title>AQE Lens: {_e(view.description[:80])}</title><style>{_STYLE}</style>"
        f"<script type='text/javascript'>{get_plotlyjs()}</script></head><body>"
        + "".join(parts)
        + (f"<script type='text/javascript'>{plan_map_script()}\n{_PLAN_MAP_BOOT}</script>" if maps else "")
        + "</body></html>"
    )


def _partitions_section(view: QueryView, histogram_figures: Sequence[tuple[str, Any]]) -> str:
    """Each shuffle's histogram, lines, skew rows, reasons and decision trace (kept apart so the
    report's frame stays short)."""
    sh = []
    for s in view.shuffles:
        block = [f"<h3>{_e(s.label)}</h3>"]
        if s.approx_reason and not s.exact:
            block.append(f"<p class='approx'>Approximate: {_e(s.approx_reason)}</p>")
        block.append(_table([{"line": ln.kind, "value (bytes)": ln.value, "meaning": ln.label,
                              "settings": ", ".join(ln.config_keys)} for ln in s.lines]))
        if s.skew_rows:
            block.append(_table([r.to_dict() for r in s.skew_rows]))
        if s.reasons:
            block.append("<ul>" + "".join(f"<li>{_e(r.message)}</li>" for r in s.reasons) + "</ul>")
        if s.trace:
            block.append("<h4>Decision trace</h4>" + _table(_trace_rows(s.trace)))
        sh.append("".join(block))
    hist = "".join(f"<div>{_fig_div(f, f'hist-{i}')}</div>" for i, (_t, f) in enumerate(histogram_figures))
    return f"<section><h2>Partitions</h2>{hist}{''.join(sh)}</section>"


def _group_section(g: QueryGroup) -> str:
    """The query across the application: its executions, their span, AQE's decisions and changes."""
    span = g.span_text()
    head = (f"<p>{g.count:,} executions of this query (the same plan, join strategies aside): executions"
            f" {_e(', '.join(g.execution_ids[:10]))}{' ...' if g.count > 10 else ''}" + (f", over {_e(span)}" if span else "")
            + "</p>")
    rows = [{"decision": d.label, "executions": d.distribution_text(), "changes": d.changed} for d in g.shown_decisions()]
    changes = "".join(f"<li>{_e(c.sentence)}</li>" for c in g.changes())
    return f"<section><h2>This query across the application</h2>{head}{_table(rows)}" + (
        f"<ul>{changes}</ul>" if changes else "") + "</section>"


def _page(title: str, body: str) -> str:
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
            f"<title>AQE Lens: {_e(title[:80])}</title><style>{_STYLE}</style>"
            f"<script type='text/javascript'>{get_plotlyjs()}</script></head><body>{body}</body></html>")


def _query_diff_section(i: int, q: QueryDiff) -> str:
    """One matched query: its sentence, causes, settings and shuffles, with the overlays."""
    parts = [f"<section><h2>#{_e(q.a.query_id)} &rarr; #{_e(q.b.query_id)} {_e(q.b.description[:120])}</h2>",
             f"<p><b>{_e(q.sentence)}</b></p>"]
    parts += [f"<p class='approx'>{_e(n)}</p>" for n in q.notes]
    if q.causes:
        parts.append(_table([{"decision": c.decision, "shuffle": c.shuffle, "run a": c.a, "run b": c.b,
                              "caused by": caused_by(c),
                              "run b under run a's settings": c.b_under_a, "evidence": c.evidence.label}
                             for c in q.causes]))
    if q.settings:
        parts.append(_table([s.to_dict() for s in q.settings]))
    for k, sd in enumerate(q.shuffles):
        rows = [{"": key, "run a": v["a"], "run b": v["b"]} for key, v in sd.to_dict().items()
                if isinstance(v, dict) and set(v) == {"a", "b"}]
        parts.append(f"<h3>{_e(sd.label)}</h3>{_table(rows)}")
        if any(sd.sizes_after) or any(sd.sizes_before):
            parts.append(_fig_div(partition_overlay(sd), f"overlay-{i}-{k}"))
    return "".join(parts) + "</section>"


def build_diff_report(d: RunDiff, *, link: Optional[str] = None) -> str:
    """Two runs compared (:class:`RunDiff`) as one offline HTML page: the aligned queries ranked
    by time lost, then each query's diff with both runs' partition sizes on one axis."""
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"<h1>AQE Lens: two runs compared</h1><p class='meta'>run a: {_e(d.source_a)} ({_e(d.kind[0])}, Spark"
             f" {_e(d.release[0])}) &middot; run b: {_e(d.source_b)} ({_e(d.kind[1])}, Spark {_e(d.release[1])})"
             f" &middot; generated {now} by AQE Lens {_e(aqe_core.__version__)}"
             + (f" &middot; link: <code>{_e(link)}</code>" if link else "") + "</p>"]
    parts += [f"<p class='approx'>{_e(n)}</p>" for n in d.notes]
    rows = [{"query a": q.a.query_id, "query b": q.b.query_id, "description": q.b.description[:80],
             "duration a (ms)": q.duration_ms[0], "duration b (ms)": q.duration_ms[1], "change %": q.duration_change_pct,
             "what happened": q.sentence} for q in d.matched]
    parts.append(f"<section><h2>Queries, most time lost first</h2>{_table(rows)}")
    for side, refs in (("a", d.only_a), ("b", d.only_b)):
        if refs:
            parts.append(f"<p>Only in run {side}: " + "; ".join(f"#{_e(r.query_id)} {_e(r.description[:60])}"
                                                               for r in refs) + "</p>")
    parts.append("</section>")
    if d.groups:
        from aqe_core.views.diff_groups import group_diff_rows

        parts.append("<section><h2>Queries run more than once, each run's executions side by side</h2>"
                     f"{_table(group_diff_rows(d.groups))}</section>")
    parts += [_query_diff_section(i, q) for i, q in enumerate(d.matched)]
    return _page(f"{d.source_a} vs {d.source_b}", "".join(parts))


def _hot_keys_section(view: QueryView, entries: Optional[Sequence[dict[str, Any]]]) -> str:
    """Which key is skewed: per skewed reducer its keys (where counted), checks, fixes and the SQL
    for the user's cluster ("" without a skewed reducer)."""
    from aqe_core.views.hot_key_entries import hot_key_entries
    from aqe_core.views.hot_keys import skewed_shuffles

    if entries is None:
        entries = hot_key_entries(view, skewed_shuffles(view))
    if not entries:
        return ""
    out = ["<section><h2>Which key is skewed</h2>"]
    for e in entries:
        where = f"reducer {e['reducer']}" if e["reducer"] is not None else "reducers the source does not name"
        size = f", {e['bytes']:,} B ({e['bytes_evidence']})" if e["bytes"] is not None else ""
        out.append(f"<h3>{_e(e['side'])}: {_e(where)}{_e(size)}"
                   + (f", split into {e['splits']}" if e["splits"] else "") + "</h3>")
        if e["error"]:
            out.append(f"<p class='approx'>Keys not counted: {_e(e['error'])}</p>")
        if e["keys"] is not None:
            trust = "verified against Spark's record" if e["verified"] else "unverified: a check failed"
            out.append(f"<p class='meta'>{e['rows']:,} rows ({_e(e['rows_evidence'])}), {trust}; keys:"
                       f" {_e(', '.join(e['key_names']))}; bytes per key are estimates</p>" + _table(e["keys"]))
            out.append("<ul>" + "".join(f"<li>{'ok' if c['passed'] else 'FAILED'}: {_e(c['detail'])}</li>"
                                        for c in e["checks"]) + "</ul>")
        for f in e["fixes"]:
            settings = " ".join(f"{k}={v}" for s in f["settings"] for k, v in s.items())
            out.append(f"<p><b>{_e(f['kind'])}</b>: {_e(f['text'])}" + (f" <code>{_e(settings)}</code>" if settings
                                                                            else "") + "</p>"
                       + (f"<pre>{_e(f['code'])}</pre>" if f["code"] else ""))
        code = e["code_for_your_cluster"]
        if code:
            out.append(f"<p class='meta'>{_e(code['label'])}: {_e(code['note'])}</p><pre>{_e(code['sql'])}</pre>")
    return "".join(out) + "</section>"


def _fixes_section(fixes: Sequence[Fix]) -> str:
    """Each fix: the finding, the lines to apply it, the predicted histograms next to today's,
    its effects on the query and the application, alternatives and hints."""
    out = ["<section><h2>Fixes</h2><p class='meta'>Predicted by replaying the captured statistics under each change"
           " (exact); a change's new shuffles and re-planned stages only a run can size.</p>"]
    for i, f in enumerate(fixes):
        where = f"stage {f.stage_id}" if f.stage_id is not None else f"join node {f.join_node}"
        fig = fix_figure(f.today, f.after)
        out.append(f"<h3>{_e(f.finding)} ({_e(where)})</h3><p>{_e(f.why)}</p><pre>{_e(chr(10).join(f.conf_lines()))}</pre>"
                   + "<ul>" + "".join(f"<li>{_e(x)}</li>" for x in [*f.effects, *(f'assumes: {a}' for a in f.assumes),
                                                                     *f.application]) + "</ul>"
                   + (_fig_div(fig, f"fix-{i}") if fig is not None else "")
                   + "".join(f"<p class='meta'>alternative: <code>{_e(' '.join(f'--conf {k}={v}' for k, v in a.settings.items()))}"
                             f"</code> {_e('; '.join(a.effects))}</p>" for a in f.alternatives)
                   + "".join(f"<p class='meta'>hint: {_e(h)}</p>" for h in f.hints))
    return "".join(out) + "</section>"
