"""``inspect``: the AQE decisions in an event log, as text or JSON."""
from __future__ import annotations

import argparse
import sys
import time

from aqe_core.units import GiB, MiB


def add_inspect_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="event log: file, rolling eventlog_v2_* directory, .zip/.gz/.tar, .inprogress")
    parser.add_argument("--json", action="store_true", help="print the JSON document (docs/eventlog-json.md)")
    parser.add_argument("--no-plans", action="store_true", help="with --json: leave out the plan trees")
    parser.add_argument("--tasks", action="store_true", help="with --json: add per-stage, per-task shuffle reads")
    parser.add_argument("--indent", type=int, default=None, help="with --json: indent the output")
    parser.add_argument("--queries", action="store_true",
                        help="list the log's queries only (executions grouped by query, AQE's decisions across"
                             " them), reading each execution once and keeping none: for logs of 10^5-10^6 executions")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--max-line-mb", type=int, default=64, help="skip lines longer than this (default 64)")
    parser.add_argument("--max-decompressed-gb", type=int, default=256,
                        help="stop after decoding this much (default 256)")


def _progress(enabled: bool):
    if not enabled:
        return None
    last = [0.0]

    def show(done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - last[0] < 0.5:
            return
        last[0] = now
        pct = f" ({100 * done / total:.0f}%)" if total else ""
        print(f"\rreading {done / MiB:.1f} MiB{pct}", end="", file=sys.stderr, flush=True)

    return show


def _clear(show) -> None:
    if show is not None:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr, flush=True)


def _inspect_load(args: argparse.Namespace, hand_over=None, on_final=None, packed: bool = True):
    """The event log, or the exit code after a one-line error (never a traceback)."""
    from aqe_core.readers.eventlog import loader as reader
    from aqe_core.readers.eventlog.errors import EventLogError, Limits

    limits = Limits(max_line_bytes=args.max_line_mb * MiB, max_decompressed_bytes=args.max_decompressed_gb * GiB)
    show = _progress(not args.quiet and sys.stderr.isatty())
    try:
        log = reader.load(args.path, progress=show, limits=limits, keep_task_metrics=args.tasks and hand_over is None,
                          hand_over=hand_over, on_final=on_final, packed=packed)
    except EventLogError as e:
        _clear(show)
        print(f"aqe_core inspect: error: {e}", file=sys.stderr)
        return 2
    except MemoryError:
        _clear(show)
        print("aqe_core inspect: error: out of memory while reading the log", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _clear(show)
        print("aqe_core inspect: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - never a traceback: one line, exit 2
        _clear(show)
        print(f"aqe_core inspect: error: unexpected {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    _clear(show)
    return log


def cmd_inspect(args: argparse.Namespace) -> int:
    from aqe_core.readers.eventlog.jsonfast import dump_json
    from aqe_core.views.encoded_executions import EncodedExecutions
    from aqe_core.views.execution_summary import FinalSummaries

    if args.max_line_mb <= 0 or args.max_decompressed_gb <= 0:
        print("aqe_core inspect: error: limits must be positive", file=sys.stderr)
        return 2
    if args.queries:
        return _list_queries(args)
    summaries = FinalSummaries()  # (each execution summarised, and encoded, as the reader finalises it)
    encoded = EncodedExecutions(dump_json, plans=not args.no_plans) if args.json and args.indent is None else None

    def on_final(log, ex) -> None:
        summaries(log, ex)
        if encoded is not None:
            encoded(log, ex)

    try:
        # (plans not compressed when each execution is encoded as it is finalised)
        log = _inspect_load(args, on_final=on_final, packed=encoded is None)
        return _inspect_report(args, log, summaries, encoded)
    finally:
        if encoded is not None:
            encoded.close()


def _inspect_report(args: argparse.Namespace, log, summaries, encoded) -> int:
    """``inspect``'s output (text, or ``--json``) of a log read, or the load's exit code."""
    from aqe_core.model.log_release import release_of
    from aqe_core.readers.eventlog.jsonfast import dump_json
    from aqe_core.views.eventlog_summary import outcome_line, spark_ids, write_log_json
    from aqe_core.views.execution_summary import log_summaries
    from aqe_core.views.query_groups import group_executions, groups_json, groups_lines

    if isinstance(log, int):
        return log
    try:
        if args.json:
            # orjson for each execution (the standard C encoder was ~30% of a big log's time)
            groups = groups_json(group_executions(log_summaries(log, summaries)))
            write_log_json(log, sys.stdout, plans=not args.no_plans, tasks=args.tasks, indent=args.indent,
                           encode=lambda v: dump_json(v).decode(), extra={"query_groups": groups}, known=encoded)
            sys.stdout.flush()
            return 0
        app = log.application
        state = "complete" if log.complete else "incomplete"
        print(f"{app.name or '?'}  {app.id or '?'}"
              + (f" attempt {app.attempt_id}" if app.attempt_id else "")
              + f"  {release_of(log).label}  {log.layout} {log.codec or ''} log, {state}, "
              f"{len(log.executions)} SQL executions")
        for ex in log.executions_by_id():
            ids = spark_ids(ex)  # (the root of a sub-execution, 4.2's query id)
            print(outcome_line(ex) + (f" | {ids}" if ids else ""))
            for retry in ex.stage_retries:
                print(f"      {retry}")
        lines = groups_lines(group_executions(log_summaries(log, summaries)))
        if lines:
            print("queries run more than once:")
            print("\n".join(lines))
        return _notes(log)
    except BrokenPipeError:
        return 0


def _notes(log) -> int:
    """The log's notes on stdout and its warnings on stderr, after the text; exit 0."""
    for n in log.notes:
        print(f"note: {n}")
    for w in log.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def _list_queries(args: argparse.Namespace) -> int:
    """``inspect --queries``: the log read in listing mode (each execution summarised as it ends,
    then forgotten), its queries as text or JSON."""
    from aqe_core.model.log_release import release_of
    from aqe_core.views.query_groups import groups_json, groups_lines
    from aqe_core.views.query_listing import QueryListing

    listing = QueryListing()
    log = _inspect_load(args, listing)
    if isinstance(log, int):
        return log
    groups = listing.groups()
    app = log.application
    try:
        if args.json:
            from aqe_core.readers.eventlog.jsonfast import dump_json

            doc = {"application": {"name": app.name, "id": app.id, "attempt_id": app.attempt_id,
                                   "spark_version": app.spark_version, "release": release_of(log).label},
                   "complete": log.complete, "executions": listing.executions, "queries": len(groups),
                   "query_groups": groups_json(groups), "notes": log.notes, "warnings": log.warnings}
            if args.indent:
                import json

                sys.stdout.write(json.dumps(doc, indent=args.indent) + "\n")
            else:
                sys.stdout.write(dump_json(doc).decode() + "\n")
            sys.stdout.flush()
            return 0
        print(f"{app.name or '?'}  {app.id or '?'}  {release_of(log).label}  {log.layout} {log.codec or ''} log,"
              f" {'complete' if log.complete else 'incomplete'}, {listing.executions:,} SQL executions of"
              f" {len(groups):,} queries")
        print("\n".join(groups_lines(groups, only_repeated=False)))
        return _notes(log)
    except BrokenPipeError:
        return 0
