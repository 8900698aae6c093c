"""``recommend``: for skew AQE left unsplit, the smallest setting change that splits it, replayed
on every read and join of the query, with the lines to apply it."""
from __future__ import annotations

import argparse
import json
import sys


def add_recommend_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="a capture or an event log written with the AQE Lens listener")
    p.add_argument("--execution", help="only this SQL execution (its id)")
    p.add_argument("--json", action="store_true", help="the fixes as JSON")


def cmd_recommend(args: argparse.Namespace) -> int:
    from aqe_core.engine.recommend import recommend
    from aqe_core.model.evidence import Evidence
    from aqe_core.sources import SourceError, load_source

    try:
        src = load_source(args.source)
    except SourceError as e:
        print(f"recommend: {args.source}: {e}", file=sys.stderr)
        return 2
    views = [v for v in src.views if args.execution is None or v.query_id == str(args.execution)]
    if not views:
        print(f"recommend: no SQL execution {args.execution} in {args.source}", file=sys.stderr)
        return 2
    docs, out = [], [src.label]
    for v in views:
        m = v.model
        if m is None or m.raw is None or m.evidence is not Evidence.EXACT:
            docs.append({"query": v.query_id, "fixes": None, "note": "needs exact statistics"})
            out.append(f"#{v.query_id}: needs exact statistics (a capture, or a log written with the listener:"
                       " python -m aqe_core listener --spark-conf)")
            continue
        capture, index = m.raw
        q = next(x for x in capture.queries if x.index == index)
        fixes = recommend(capture, q)
        docs.append({"query": v.query_id, "description": v.description, "fixes": [f.to_dict() for f in fixes]})
        if not fixes:
            continue
        out.append(f"\n#{v.query_id} {v.description[:80]}")
        for f in fixes:
            out.append(f"  {f.finding} (stage {f.stage_id}): {f.why}")
            out += [f"    {line}" for line in f.conf_lines()]
            out += [f"    predicted: {e}" for e in f.effects]
    if args.json:
        sys.stdout.write(json.dumps(docs, indent=1) + "\n")
    else:
        if len(out) == 1:
            out.append("no skew left unsplit that a setting would split")
        sys.stdout.write("\n".join(out) + "\n")
    return 0
