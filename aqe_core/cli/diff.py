"""``diff``: two runs of one job compared, query by query (issue 28).

    python -m aqe_core diff yesterday.zstd today.zstd               # one line per query
    python -m aqe_core diff a.json.gz b.json.gz --json              # docs/diff-json.md
    python -m aqe_core diff a.zstd b.zstd --threshold 20 --min-ms 5000   # exit 1: a query 20% and 5 s slower
    python -m aqe_core diff a.zstd b.zstd --html diff.html          # the shareable offline report

Exit codes: 0 no matched query slowed down by more than ``--threshold`` percent (default 10) and
at least ``--min-ms`` milliseconds (default 1000), commands left out unless ``--include-commands``;
1 at least one did (each named on stderr: the application, the query's id and description, its
durations); 2 a source that cannot be opened or a bad argument.
"""
from __future__ import annotations

import argparse
import json
import sys


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, got {text!r}") from None
    if not 0 <= value < 1e9:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0, got {text!r}")
    return value


def _min_ms(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected whole milliseconds, got {text!r}") from None
    if not 0 <= value <= 10**9:
        raise argparse.ArgumentTypeError(f"expected milliseconds from 0, got {text!r}")
    return value


def add_diff_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", help="the baseline run: an event log (any codec, rolling directory), listener log or capture")
    p.add_argument("b", help="the run to compare with it")
    p.add_argument("--json", action="store_true", help="the comparison as JSON (docs/diff-json.md)")
    p.add_argument("--html", metavar="OUT", help="also write the comparison as one offline HTML report")
    p.add_argument("--threshold", type=_threshold, default=10.0, metavar="PCT",
                   help="exit 1 when a matched query's duration grew by more than PCT percent (default 10)"
                        " and by at least --min-ms")
    p.add_argument("--min-ms", type=_min_ms, default=1000, metavar="MS",
                   help="a regression must also be this many milliseconds slower (default 1000)")
    p.add_argument("--include-commands", action="store_true",
                   help="gate commands too (createOrReplaceTempView, DDL, metadata: left out by default)")


def _ms(v: object) -> str:
    from aqe_core.units import human_ms

    return human_ms(v) if isinstance(v, (int, float)) else "?"


def cmd_diff(args: argparse.Namespace) -> int:
    from aqe_core.model.run_diff import Gate
    from aqe_core.opening import SourceError, load_source
    from aqe_core.views.diff_groups import group_diff_lines
    from aqe_core.views.diff_runs import diff_views

    loaded = []
    for path in (args.a, args.b):
        try:
            loaded.append(load_source(path))
        except SourceError as e:
            print(f"diff: {path}: {e}", file=sys.stderr)
            return 2
    a, b = loaded
    try:
        d = diff_views(a.views, b.views, source_a=args.a, source_b=args.b, kind=(a.kind, b.kind),
                       release=(a.spark_version or "", b.spark_version or ""), app=(a.app_name or "", b.app_name or ""))
    except Exception as e:  # noqa: BLE001 - two odd but readable sources: one line, never a traceback
        from aqe_core.readers.eventlog.errors import internal_cause

        print(f"diff: the two runs could not be compared (internal error: {internal_cause(e)})", file=sys.stderr)
        return 2
    gate = Gate(args.threshold, args.min_ms, args.include_commands)
    slower = d.regressions(gate)
    for q in slower:  # every failure named, on stderr, whatever the output format
        print(f"diff: regression: {gate.failure(q, d.app[1])}", file=sys.stderr)
    if args.html:
        from aqe_core.report import build_diff_report

        try:
            with open(args.html, "w", encoding="utf-8") as fh:
                fh.write(build_diff_report(d))
        except OSError as e:
            print(f"diff: {args.html}: {e.strerror or type(e).__name__}", file=sys.stderr)
            return 2
    if args.json:
        from aqe_core.views.answers import diff_entry

        doc = diff_entry(d, gate)
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        return 1 if slower else 0
    out = [f"a: {args.a} ({a.kind}, Spark {d.release[0] or '?'})", f"b: {args.b} ({b.kind}, Spark {d.release[1] or '?'})"]
    out.append(f"{len(d.matched)} queries matched, {len(d.only_a)} only in a, {len(d.only_b)} only in b")
    out += group_diff_lines(d.groups)
    if d.groups:
        out.append("\nexecution by execution:")
    for q in d.matched:
        pct = q.duration_change_pct
        flag = " SLOWER" if q in slower else ""
        out.append(f"\n#{q.a.query_id} -> #{q.b.query_id} {q.b.description[:70]}: {_ms(q.duration_ms[0])} -> "
                   f"{_ms(q.duration_ms[1])}" + (f" ({pct:+.0f}%)" if pct is not None else "") + flag)
        out.append(f"  {q.sentence}")
        out += [f"  note: {n}" for n in q.notes]
    for side, refs in (("a", d.only_a), ("b", d.only_b)):
        out += [f"only in {side}: #{r.query_id} {r.description[:70]}" for r in refs]
    out += [f"note: {n}" for n in d.notes]
    sys.stdout.write("\n".join(out) + "\n")
    return 1 if slower else 0
