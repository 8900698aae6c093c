"""``recommend``: for each finding (skew left unsplit, over- or under-coalescing, small files after
a rebalance, a missed or demoted broadcast), the smallest setting change that fixes it, replayed
on every read and join of the query and of the application, with the lines to apply it."""
from __future__ import annotations

import argparse

from aqe_core.cli.common import add_budget_argument, budget_meter
import json
import sys


def add_recommend_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="a capture or an event log: exact with a capture or a log written with the AQE "
                   "Lens listener, estimated (with what it assumes) on a plain log")
    p.add_argument("--execution", help="only this SQL execution (its id)")
    add_budget_argument(p)
    p.add_argument("--json", action="store_true", help="the fixes as JSON")
    p.add_argument("--verify", action="store_true",
                   help="run the query again on Spark with each exact fix and score the prediction (needs its SQL text)")
    p.add_argument("--master", default=None, help="with --verify: Spark master URL (default local[*])")


def cmd_recommend(args: argparse.Namespace) -> int:
    from aqe_core.model.evidence import Evidence
    from aqe_core.advise.fixes import PLAIN_NOTE, fix_notes, fixes_for_view
    from aqe_core.opening import SourceError, load_source
    from aqe_core.views.answers import recommend_entry, select_views

    try:
        src = load_source(args.source, meter=budget_meter(args), execution=args.execution)
    except SourceError as e:
        print(f"recommend: {args.source}: {e}", file=sys.stderr)
        return 2
    views = select_views(src.views, args.execution)
    if not views:
        print(f"recommend: no SQL execution {args.execution} in {args.source}", file=sys.stderr)
        return 2
    docs, out = [], [src.label]
    plain = False
    for v in views:
        fixes = fixes_for_view(v)
        plain = plain or not (v.model is not None and v.model.evidence is Evidence.EXACT)
        doc = recommend_entry(v, fixes)
        docs.append(doc)
        if not fixes:
            continue
        out.append(f"\n#{v.query_id} {v.description[:80]}")
        for i, f in enumerate(fixes):
            out += _fix_lines(f)
            if args.verify and f.exact:
                line, score = verify_fix(v, f, args.master)
                out.append(f"    verify: {line}")
                out += [f"      {r}" for r in _read_lines(score)]
                doc["fixes"][i]["verify"] = score
    if args.json:
        sys.stdout.write(json.dumps(docs, indent=1) + "\n")
    else:
        if not any(d["fixes"] for d in docs):
            out.append("nothing a setting would fix: no skew left unsplit, no over- or under-coalescing, no missed or"
                       " demoted broadcast")
        if plain:
            out.append(f"\nnote: {PLAIN_NOTE}")
            out += [f"note: {n}" for n in dict.fromkeys(n for v in views for n in fix_notes(v)) if n != PLAIN_NOTE]
        sys.stdout.write("\n".join(out) + "\n")
    return 0


def _fix_lines(f) -> list[str]:
    where = f"stage {f.stage_id}" if f.stage_id is not None else f"join node {f.join_node}"
    out = [f"  {f.finding} ({where}): {f.why}"]
    out += [f"    {line}" for line in f.conf_lines()]
    out += [f"    predicted ({'exact replay' if f.exact else 'estimate'}): {e}" for e in f.effects]
    if f.today and f.after:
        out.append(f"    partitions: {len(f.today)} (largest {max(f.today)} B) -> {len(f.after)} (largest {max(f.after)} B)")
    out += [f"    assumes: {a}" for a in f.assumes]
    out += [f"    {line}" for line in f.application[:6]]
    for a in f.alternatives:
        out.append("    alternative: " + " ".join(f"--conf {k}={v}" for k, v in a.settings.items())
                   + (f" ({'; '.join(a.effects)})" if a.effects else "") + "".join(f"; assumes: {x}" for x in a.assumes))
    out += [f"    hint: {h}" for h in f.hints]
    return out


def _read_lines(score) -> list[str]:
    """Each scored read: predicted, not predicted (and why) or not created, beside what Spark read."""
    out = []
    for r in (score or {}).get("reads", []):
        where = f"stage {r['stage']}" if r["stage"] is not None else "a new stage"
        said = r["predicted partitions"] if r["predicted partitions"] is not None else "-"
        spark = r["Spark partitions"] if r["Spark partitions"] is not None else "no such read"
        out.append(f"{where}: predicted {said}, Spark {spark}: {r['verdict']}" + (f" ({r['detail']})" if r["detail"] else ""))
    return out


def verify_fix(view, fix, master, *, time_limit_s=None, trusted=None):
    """Run the query again with the fix on Spark; (one line, the score as a dict or None).
    ``trusted=False`` holds the SQL and settings to the guards whatever the server settings say
    (the MCP server's runs); ``time_limit_s`` cancels the run past it."""
    from aqe_core.live.java import JavaNotFound
    from aqe_core.live.runner import RunFailed, Runner
    from aqe_core.live.runtime import SparkStartFailed
    from aqe_core.live.sql_guard import UnsafeSQL
    from aqe_core.advise.verify import score_fix

    capture, index = view.model.raw
    q = next(x for x in capture.queries if x.index == index)
    try:
        sql, setup = capture.sql_of(q), capture.setup_statements()
    except ValueError as e:  # a malformed run (CaptureFormatError)
        return f"not verified: {e}", None
    if not sql:
        return "not verified: the source does not hold this query's SQL text", None
    try:
        runner = Runner(master=master, time_limit_s=time_limit_s, trusted=trusted)
        real = runner.rerun(sql, [("fix", {**q.conf, **fix.settings})], setup=setup, label=q.label)
    except (JavaNotFound, SparkStartFailed, RunFailed, UnsafeSQL, ValueError) as e:
        return f"not verified: {str(e).splitlines()[0][:300]}", None
    got = score_fix(fix, q, real)
    return got.summary(), got.to_dict()
