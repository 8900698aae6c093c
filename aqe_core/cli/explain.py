"""``explain``: every adaptive read, its partitions and how each number is known."""
from __future__ import annotations

import argparse
import json
import sys


def add_explain_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="an event log (any codec, rolling directory) or a capture")
    p.add_argument("--execution", help="only this SQL execution (its id)")
    p.add_argument("--json", action="store_true", help="the view model as JSON (docs/explain-json.md)")


def cmd_explain(args: argparse.Namespace) -> int:
    from aqe_core.sources import SourceError, load_source
    from aqe_core.views.explain import explain_views

    try:
        src = load_source(args.source)
    except SourceError as e:
        print(f"explain: {args.source}: {e}", file=sys.stderr)
        return 2
    doc = explain_views(src.views, args.execution)
    if args.execution is not None and not doc["executions"]:
        print(f"explain: no SQL execution {args.execution} in {args.source}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        return 0
    out = [src.label]
    for ex in doc["executions"]:
        out.append(f"\n#{ex['id']} {ex['description'][:80]}")
        for r in ex["reads"]:
            skewed = r["skewed_reducers"]
            what = ("skew: not in this log" if skewed is None else
                    "no skewed reducer split" if not skewed else
                    "split reducers " + ", ".join(f"{'?' if x['reducer'] is None else x['reducer']}"
                                                  f" ({x['parts'] if x['parts'] is not None else '?'} parts)" for x in skewed))
            out.append(f"  read node {r['node_id']} [{r['evidence']}]: {r['partitions_before'] or '?'} -> "
                       f"{len(r['partitions'])} partitions; {what}")
            out += [f"    - {t}" for t in r["sentences"]]
            if r.get("trace"):
                version = r.get("decided_in_version")
                out.append("    decision trace" + (f" (decided in plan version {version})" if version else "") + ":")
                out += _trace_lines(r["trace"], "      ")
        for j in ex.get("joins") or []:
            out.append(f"  join: {j['decision']}")
            out += _trace_lines(j["trace"], "      ")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _trace_lines(trace: list[dict], indent: str) -> list[str]:
    """One line per rule: its verdict and, where it stopped, the condition with what it read."""
    from aqe_core.engine.trace import inputs_text

    out = []
    for t in trace:
        if all(c["result"] == "not applicable" for c in t["checks"]):
            out.append(f"{indent}{t['rule']}: {t['verdict']}" + (" (does not apply)" if t["verdict"].startswith("not") else ""))
            continue
        stop = next((c for c in t["checks"] if c["condition"] == t["first_failed"]), None)
        line = f"{indent}{t['rule']}: {t['verdict']}"
        if stop is not None:
            line += f"; stopped at: {stop['condition']}"
            if stop["inputs"]:
                line += f" [{inputs_text(stop['inputs'])}]"
        out.append(line)
    return out
