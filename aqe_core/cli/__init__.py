"""Command line: ``python -m aqe_core <command> ...``.

    python -m aqe_core inspect app.lz4 [--json]                 # the AQE decisions in an event log
    python -m aqe_core run --workload skew_join_inner -o skew.json.gz
    python -m aqe_core run --sql "SELECT ..." --conf spark.sql.shuffle.partitions=50 -o q.json
    python -m aqe_core run --workload aggregate_coalesce --master spark://host:7077 --scale 100 -o agg.json.gz
    python -m aqe_core run --list-workloads
    python -m aqe_core simulate skew.json.gz                    # decisions + agreement with Spark
    python -m aqe_core simulate skew.json.gz --conf spark.sql.adaptive.skewJoin.skewedPartitionFactor=2
    python -m aqe_core simulate skew.json.gz --spark-version 3.0.1 --json
    python -m aqe_core hot-keys skew.json.gz --json             # the keys of every skewed reducer
    python -m aqe_core diff yesterday.zstd today.zstd --threshold 20   # exit 1: a query 20% slower
    echo '["SELECT 1", "ADD JAR /tmp/x.jar"]' | python -m aqe_core check-sql

One thin layer of argument handling over the core: each command is an ``add_*_arguments(parser)``
and a ``cmd_*(args) -> int`` in its own module here; the work lives in :mod:`aqe_core.live` (running Spark, the
guards), :mod:`aqe_core.engine` (replay) and the event log reader. Every command imports what it
needs when it runs, so one broken command never breaks the others.

``run``: SQL and ``--conf`` settings pass the SQL guard (:mod:`aqe_core.live.sql_guard`) and the
conf guard before anything runs, as on a shared server; ``--trusted`` (or ``AQE_LENS_TRUSTED=1``)
turns both off for a single trusted user. ``simulate`` exits 1 when a plain replay (no --conf,
the captured release) does not agree 100% with what Spark did, 2 for a file that is not a
capture. ``check-sql`` reads a JSON array of statements on stdin and prints a JSON array of
``{"allowed", "reason"}``, one per statement, in order (nothing is executed); exit codes: 0 all
judged, 2 bad input, 3 no Java for Spark.
"""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Callable

from aqe_core.cli.check_sql import add_check_sql_arguments, cmd_check_sql
from aqe_core.cli.diff import add_diff_arguments, cmd_diff
from aqe_core.cli.explain import add_explain_arguments, cmd_explain
from aqe_core.cli.hot_keys import add_hot_keys_arguments, cmd_hot_keys
from aqe_core.cli.inspect_log import add_inspect_arguments, cmd_inspect
from aqe_core.cli.lint import add_lint_arguments, cmd_lint
from aqe_core.cli.listener import add_listener_arguments, cmd_listener
from aqe_core.cli.mcp import add_mcp_arguments, cmd_mcp
from aqe_core.cli.recommend import add_recommend_arguments, cmd_recommend
from aqe_core.cli.releases import add_releases_arguments, cmd_releases
from aqe_core.cli.run import add_run_arguments, cmd_run, list_workloads
from aqe_core.cli.scan import add_scan_arguments, cmd_scan
from aqe_core.cli.simulate import add_simulate_arguments, cmd_simulate, format_report

__all__ = ["COMMANDS", "add_run_arguments", "build_parser", "cmd_run", "format_report", "list_workloads", "main"]


Command = tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]

#: command name -> (one-line help, add_arguments, run)
COMMANDS: dict[str, Command] = {
    "inspect": ("summarise the AQE decisions in a Spark event log", add_inspect_arguments, cmd_inspect),
    "run": ("run a query or workload on Spark and write a capture", add_run_arguments, cmd_run),
    "simulate": ("replay a capture through AQE Lens's rules", add_simulate_arguments, cmd_simulate),
    "check-sql": ("vet SQL statements (JSON array on stdin) with the SQL guard", add_check_sql_arguments,
                  cmd_check_sql),
    "explain": ("every adaptive read: its partitions, skewed reducers, lines and how each is known",
                add_explain_arguments, cmd_explain),
    "listener": ("the settings that add the AQE Lens listener to any Spark job", add_listener_arguments, cmd_listener),
    "recommend": ("each finding's smallest setting change, replayed on the whole query and application",
                  add_recommend_arguments, cmd_recommend),
    "releases": ("a query through every supported release's rules, side by side, with what differs and why",
                 add_releases_arguments, cmd_releases),
    "scan": ("many event logs as a Spark job: Parquet tables of every SQL execution's AQE outcome and findings",
             add_scan_arguments, cmd_scan),
    "lint": ("check AQE settings against a Spark release (unknown keys, rejected values, changed defaults)",
             add_lint_arguments, cmd_lint),
    "mcp": ("serve AQE Lens's tools to AI assistants over the Model Context Protocol (stdio, or --http on 127.0.0.1)",
            add_mcp_arguments, cmd_mcp),
    "hot-keys": ("which key made each skewed reducer heavy (counted on Spark for a capture; SQL for your cluster"
                 " for an event log), with the fix for that key", add_hot_keys_arguments, cmd_hot_keys),
    "diff": ("two runs of one job compared query by query: what AQE did differently, and whether the data, the"
             " settings or the release caused it", add_diff_arguments, cmd_diff),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m aqe_core", description="AQE Lens engine")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, add_arguments, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_run=run)
        add_arguments(p)
    return parser


def _not_an_interrupt(record: logging.LogRecord) -> bool:
    """Py4J logs a Ctrl-C that lands in a JVM call, and the errors of the calls PySpark makes to
    clean up after it, with their tracebacks on the root logger, and raises them as well: the
    command reports them once, in one line."""
    if not record.exc_info:
        return True
    return record.exc_info[0] is not KeyboardInterrupt and "py4j" not in record.pathname.replace("\\", "/").split("/")


def _quiet_interrupt_logs() -> None:
    """Put the filter where every printed record passes: a logger's own filter never sees the
    records its children propagate (Py4J logs on `py4j.clientserver`), a handler's does. With no
    handler on the way, Python prints through `logging.lastResort`."""
    root = logging.getLogger()
    for where in (root, *root.handlers, logging.lastResort):
        if where is not None and _not_an_interrupt not in where.filters:
            where.addFilter(_not_an_interrupt)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _quiet_interrupt_logs()
    before = _children()
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:  # Ctrl-C before a command's own handler (imports, Spark starting): one line
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while we stop (PySpark's handler raises again)
        _stop(_children() - before)
        print(f"python -m aqe_core {args.command}: interrupted", file=sys.stderr)
        return 130


def _children() -> set[int]:
    """This process's child processes (Linux; empty elsewhere)."""
    from pathlib import Path

    out: set[int] = set()
    for task in Path("/proc/self/task").glob("*/children"):
        try:
            out.update(int(x) for x in task.read_text().split())
        except (OSError, ValueError):
            continue
    return out


def _stop(pids: set[int]) -> None:
    """Stop the processes this command started: a Spark driver JVM being launched ignores Ctrl-C,
    as PySpark starts it, and would print Java's stack trace after we exit. Best effort."""
    import os
    import signal

    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
