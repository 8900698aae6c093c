"""``hot-keys``: which key made each skewed reducer heavy, and the fix for that key (issue 42).

    python -m aqe_core hot-keys skew.json.gz [--execution 0] [--json]
    python -m aqe_core hot-keys app.zstd --spark     # an event log: the SQL run here on your tables

A capture whose query kept its SQL (a run, a workload, a re-run) is planned again on Spark and
the keys counted with the exchange's own partitioning (:mod:`aqe_core.live.hot_keys`); an event
log (a job AQE Lens cannot re-run) gets the SQL to run on the user's own cluster, with the keys,
the partition count and the reducers filled in (:mod:`aqe_core.views.hot_keys`), which ``--spark``
runs here where this Spark has the tables (:mod:`aqe_core.live.hot_keys_sql`). Per skewed
reducer: shuffle, reducer, rows, bytes, keys ``[{key, rows, share}]``, the checks against what
Spark recorded, and the fixes (:mod:`aqe_core.advise.hot_key_fixes`).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from aqe_core.cli.common import add_budget_argument, budget_meter


def add_hot_keys_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="a capture (keys counted on Spark) or an event log (SQL to run on your cluster)")
    p.add_argument("--execution", help="only this query / SQL execution (its id)")
    p.add_argument("--top", type=int, default=5, help="keys per reducer (default 5)")
    p.add_argument("--time-limit", type=float, default=300.0, metavar="SECONDS",
                   help="stop counting after this many seconds (default 300)")
    p.add_argument("--no-spark", action="store_true", help="do not start Spark: give the SQL for your cluster instead")
    p.add_argument("--spark", action="store_true",
                   help="an event log or listener log: run the SQL written from its plan here, on the tables of the"
                        " same names this Spark has (the SQL guard applies unless --trusted)")
    p.add_argument("--master", default=None, help="Spark master URL for the count (default local[*])")
    p.add_argument("--trusted", action="store_true", help="skip the SQL guard for the capture's SQL and views")
    add_budget_argument(p)
    p.add_argument("--json", action="store_true", help="one JSON array, an entry per skewed reducer")


def hot_keys_doc(views: list[Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    """One entry per skewed reducer of ``views`` (:func:`aqe_core.views.hot_key_entries.hot_key_entries`):
    a capture's keys counted on its re-planned query unless ``args.no_spark``; a log's with the SQL
    written from its plan when ``args.spark``."""
    from aqe_core.views.hot_key_entries import capture_of, hot_key_entries, hot_key_targets, side_sql_targets
    from aqe_core.views.hot_keys import skewed_shuffles

    doc = []
    for view in views:
        skewed = skewed_shuffles(view)
        found, by_sql = None, None
        got = capture_of(view)
        targets = hot_key_targets(skewed)
        replannable = got is not None and bool(got[0].sql_of(got[1]))
        if skewed and targets and got is not None and not args.no_spark and (replannable or not getattr(args, "spark", False)):
            from aqe_core.live.hot_keys import hot_keys

            _runtime(args)
            found = hot_keys(got[0], got[1], targets, top=args.top, time_limit_s=args.time_limit,
                             trusted=True if args.trusted else None)
        elif skewed and getattr(args, "spark", False) and not args.no_spark and side_sql_targets(view, skewed):
            from aqe_core.live.hot_keys_sql import count_side_sql

            _runtime(args)
            by_sql = {i: count_side_sql(s, top=args.top, time_limit_s=args.time_limit,
                                        trusted=True if args.trusted else None)
                      for i, s in side_sql_targets(view, skewed).items()}
        doc += hot_key_entries(view, skewed, found, by_sql)
    return doc


def _runtime(args: argparse.Namespace) -> None:
    if args.master:
        from aqe_core.live.runtime import get_runtime

        get_runtime(args.master)


def _text(doc: list[dict[str, Any]]) -> str:
    if not doc:
        return "no skewed reducer: nothing to name the keys of"
    out = []
    for e in doc:
        what = "partition (post-AQE position)" if e["reducer_is_position"] else "reducer"
        if e.get("reducer_chosen_by_count"):
            what, e = "heaviest reducer counted", {**e, "splits": "?"}
        if e["reducer"] is None:
            what, e = "reducers", {**e, "reducer": "not named by the source"}
        size = f"{e['bytes']:,} B ({e['bytes_evidence']})" if e["bytes"] is not None else "? B"
        split = "" if e["splits"] == "?" else f", split into {e['splits']}" if e["splits"] else ", not split" if e["reducer"] != "not named by the source" else ""
        out.append(f"query {e['execution']}, shuffle {e['shuffle']} ({e['side']}), {what} {e['reducer']}: {size}{split}")
        if e["error"]:
            out.append(f"  keys not counted: {e['error']}")
        if e["keys"] is not None:
            trust = "verified against Spark's record" if e["verified"] else "UNVERIFIED (a check failed)"
            out.append(f"  {e['rows']:,} rows ({e['rows_evidence']}), {trust}; top keys of {', '.join(e['key_names'])}:")
            out += [f"    {k['key']!r}: {k['rows']:,} rows ({k['share']:.1%})"
                    + (f", ~{k['bytes_estimate']:,} B (estimate)" if k["bytes_estimate"] is not None else "")
                    for k in e["keys"]]
            out += [f"  check {c['name']}: {'ok' if c['passed'] else 'FAILED'} - {c['detail']}" for c in e["checks"]]
        out += [f"  note: {n}" for n in e["notes"]]
        for f in e["fixes"]:
            out.append(f"  fix ({f['kind']}): {f['text']}"
                       + (f" -> {', '.join(f'{k}={v}' for s in f['settings'] for k, v in s.items())}" if f["settings"] else ""))
            out += ["      " + line for line in f["code"].splitlines()]
        if e["code_for_your_cluster"]:
            out.append("  " + e["code_for_your_cluster"]["label"] + ":")
            out += ["    " + line for line in e["code_for_your_cluster"]["sql"].splitlines()]
    return "\n".join(out)


def cmd_hot_keys(args: argparse.Namespace) -> int:
    """Exit 0 with an answer, 2 for a bad source, 3 when Spark could not count the keys."""
    from aqe_core.opening import SourceError, load_source
    from aqe_core.views.answers import select_views

    try:
        src = load_source(args.source, meter=budget_meter(args), execution=args.execution)
    except SourceError as e:
        print(f"hot-keys: {args.source}: {e}", file=sys.stderr)
        return 2
    views = select_views(src.views, args.execution)
    if not views:
        print(f"hot-keys: no query {args.execution} in {args.source}", file=sys.stderr)
        return 2
    try:
        doc = hot_keys_doc(views, args)
    except Exception as e:  # noqa: BLE001 - Spark, the guard or the time limit: one line, not a trace
        from aqe_core.exception_text import reason_line

        print(f"hot-keys: {reason_line(e)}", file=sys.stderr)
        return 3
    sys.stdout.write((json.dumps(doc, indent=1, default=str) if args.json else _text(doc)) + "\n")
    return 0
