"""``releases``: a query's statistics through every supported release's rules, side by side, with
what differs between neighbouring releases and why."""
from __future__ import annotations

import argparse

from aqe_core.cli.common import add_budget_argument, budget_meter
import json
import sys


def add_releases_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="an event log or a capture")
    p.add_argument("--execution", help="only this SQL execution (its id)")
    add_budget_argument(p)
    p.add_argument("--json", action="store_true", help="the comparison as JSON")


def cmd_releases(args: argparse.Namespace) -> int:
    from aqe_core.opening import SourceError, load_source
    from aqe_core.advise.releases import compare_releases
    from aqe_core.views.answers import releases_entry, select_views

    try:
        src = load_source(args.source, meter=budget_meter(args), execution=args.execution)
    except SourceError as e:
        print(f"releases: {args.source}: {e}", file=sys.stderr)
        return 2
    views = select_views(src.views, args.execution)
    if not views:
        print(f"releases: no SQL execution {args.execution} in {args.source}", file=sys.stderr)
        return 2
    docs = []
    out = [src.label]
    for v in views:
        comp = compare_releases(v)
        docs.append(releases_entry(v, comp))
        out.append(f"\n#{v.query_id} {v.description[:80]}")
        out.append(f"  ({comp.note})")
        for r in comp.rows:
            s = r.summary()
            out.append(f"  {s['release']:<18} {('[' + s['evidence'] + ']'):<16} partitions {s['partitions after AQE']:<12}"
                       f" skewed reducers split {s['skewed reducers split']!s:<4} parts {s['skew splits']!s:<4}"
                       f" joins {s['joins']}" + (f"  [left out: {s['settings left out']}]" if s["settings left out"] else ""))
        for d in comp.diffs:
            out.append(f"  {d.before} -> {d.after}: " + "; ".join(d.changes))
            out += [f"    the rules said: {m}" for m in d.rules_said]
            out += [f"    changed between them: {m}" for m in d.changed_between]
    if args.json:
        sys.stdout.write(json.dumps(docs, indent=1) + "\n")
    else:
        sys.stdout.write("\n".join(out) + "\n")
    return 0
