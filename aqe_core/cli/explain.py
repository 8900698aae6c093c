"""``explain``: every adaptive read, its partitions and how each number is known."""
from __future__ import annotations

import argparse

from aqe_core.cli.common import add_budget_argument, budget_meter
import json
import sys


def add_explain_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="an event log (any codec, rolling directory) or a capture")
    p.add_argument("--execution", help="only this SQL execution (its id)")
    add_budget_argument(p)
    p.add_argument("--json", action="store_true", help="the view model as JSON (docs/explain-json.md)")


def cmd_explain(args: argparse.Namespace) -> int:
    from aqe_core.opening import SourceError, load_source
    from aqe_core.views.explain import explain_views
    from aqe_core.views.query import single_partition_sentence
    from aqe_core.views.query_groups import group_views, groups_json, groups_lines

    try:
        # one execution: the log read in listing mode, only that execution kept (a log of 10^6)
        src = load_source(args.source, meter=budget_meter(args), execution=args.execution)
    except SourceError as e:
        print(f"explain: {args.source}: {e}", file=sys.stderr)
        return 2
    doc = explain_views(src.views, args.execution)
    groups = group_views(src.views) if args.execution is None else []
    if args.execution is not None and not doc["executions"]:
        print(f"explain: no SQL execution {args.execution} in {args.source}", file=sys.stderr)
        return 2
    if args.json:
        if args.execution is None:  # (one execution's document stays the MCP explain_query's answer)
            doc["query_groups"] = groups_json(groups)
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        return 0
    out = [src.label]
    for ex in doc["executions"]:
        out.append(f"\n#{ex['id']} {ex['description'][:80]}" + (f" [{ex['engine']}]" if ex.get("engine") else ""))
        for r in ex["reads"]:
            skewed = r["skewed_reducers"]
            what = ("skew: not in this log" if skewed is None else
                    "no skewed reducer split" if not skewed else
                    "split reducers " + ", ".join(f"{'?' if x['reducer'] is None else x['reducer']}"
                                                  f" ({x['parts'] if x['parts'] is not None else '?'} parts)" for x in skewed))
            if r.get("adaptive_read") is False:
                out.append(f"  shuffle node {r['node_id']} [{r['evidence']}]: {r['partitions_before'] or '(not in the log)'} partitions"
                           " read as planned (no adaptive read)")
            else:
                if skewed and all(x["reducer"] is None for x in skewed):
                    parts = [x["parts"] for x in skewed]
                    total = sum(parts) if None not in parts else r.get("skewed_parts_total", "?")
                    n = len(skewed)
                    what = (f"{n} skewed reducer{'s' if n != 1 else ''} split into {total} parts in all (which"
                            f" reducer{'s' if n != 1 else ''}{'' if None not in parts else ', and the parts of each'},"
                            " the log does not say)")
                out.append(f"  {'rebalance read' if r.get('rebalance') else 'read'} node {r['node_id']} [{r['evidence']}]:"
                           f" {r['partitions_before'] or '(not in the log)'} -> {_after(r)} partitions"
                           + (" (local read)" if r.get("local") else "") + f"; {what}")
            out += [f"    - {t}" for t in r["sentences"]]
            if r.get("trace"):
                version = r.get("decided_in_version")
                out.append("    decision trace" + (f" (decided in plan version {version})" if version else "") + ":")
                out += trace_lines(r["trace"], "      ")
        single = single_partition_sentence(ex.get("single_partition_exchanges") or 0)
        if single:
            out.append(f"  {single}")
        elif not ex["reads"] and ex.get("adaptive"):
            out.append("  no shuffle in the final plan")
        out += [f"  AQE changed a join: {c}" for c in ex.get("join_changes") or []]
        out += [f"  the engine changed a join: {c}" for c in ex.get("engine_changes") or []]
        for j in ex.get("joins") or []:
            out.append(f"  join: {j['decision']}")
            out += trace_lines(j["trace"], "      ")
    if args.execution is None and any(g.count > 1 for g in groups):
        out += ["", "Queries run more than once:"] + groups_lines(groups)
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _after(r: dict) -> object:
    """Partitions the read produced: Spark's own count where the JSON has it (a local read logs
    no sizes), else the partitions listed."""
    n = r.get("partitions_after")
    return n if n is not None else len(r["partitions"])


def trace_lines(trace: list[dict], indent: str) -> list[str]:
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
