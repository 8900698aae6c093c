"""``run``: a query or workload on Spark, written as a capture (through the SQL and conf guards)."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Optional, TextIO

from aqe_core import config
from aqe_core.cli.common import _kv


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--sql", help="SQL text of the query to run")
    src.add_argument("--sql-file", help="file holding the SQL query")
    src.add_argument("--workload", help="a built-in workload (see --list-workloads)")
    src.add_argument("--list-workloads", action="store_true", help="list the built-in workloads and exit")
    p.add_argument("--conf", action="append", type=_kv, default=[], metavar="KEY=VALUE",
                   help=f"{config.SQL_PREFIX}* setting for the query (repeatable; overrides a workload's presets)")
    p.add_argument("--preset", action="append", default=None, help="only this preset of the workload (repeatable)")
    p.add_argument("--scale", type=float, default=1.0, help="workload data scale (1 = seconds on a laptop)")
    p.add_argument("--master", default=None, help="Spark master URL (default local[*]; spark://, yarn, k8s://...)")
    p.add_argument("--spark-conf", action="append", type=_kv, default=[], metavar="KEY=VALUE",
                   help="setting for a new SparkContext: memory sizes and core counts (spark.driver.memory,"
                        " spark.executor.memory, spark.executor.cores ...) and what --conf takes; any other"
                        " setting (spark.jars, extraJavaOptions ...) only with --trusted")
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="cancel the run after this many seconds (default: run_time_limit_s of the server settings,"
                        " 600; 0 = no limit)")
    p.add_argument("-o", "--output", help="capture file to write (.json or .json.gz)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--check", action="store_true", help="replay the capture and print the agreement")
    p.add_argument("--spark-log-level", default="OFF", metavar="LEVEL",
                   help="Spark's own log level once it started (default OFF: errors come as one line of ours)")
    p.add_argument("--trusted", action="store_true",
                   help="skip the SQL and settings guard (any SQL, including commands, runs as you)")


class ProgressBar:
    """One status line on a terminal (``\\r``-rewritten); one line per phase elsewhere."""

    def __init__(self, stream: Optional[TextIO] = None, width: int = 28) -> None:
        self.stream = stream or sys.stderr  # looked up now: sys.stderr may have been swapped since import
        self.width = width
        self.tty = stream is not None and hasattr(stream, "isatty") and stream.isatty()
        self._last = ""

    def __call__(self, p) -> None:  # p: aqe_core.live.runner.Progress
        frac = (p.tasks_done / p.tasks_total) if p.tasks_total else 0.0
        if p.phase == "done":
            frac = 1.0
        filled = int(frac * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        q = f"[{p.query_index + 1}/{p.query_count}] {p.label}"
        if p.phase == "running":
            text = (f"{q} [{bar}] tasks {p.tasks_done}/{p.tasks_total}  stages {p.stages_done}/{p.stages_total}"
                    f"  jobs {p.jobs_done}/{p.jobs_total}  {p.elapsed_s:.1f}s")
        else:
            text = f"{q} [{bar}] {p.phase}  {p.elapsed_s:.1f}s"
        if self.tty:
            self.stream.write("\r" + text[:160].ljust(len(self._last)))
            if p.phase == "done":
                self.stream.write("\n")
            self.stream.flush()
        elif p.phase != "running" and text != self._last:
            self.stream.write(text + "\n")
        self._last = text


def _time_limit(args: argparse.Namespace) -> Optional[float]:
    if args.time_limit is None:
        from aqe_core.server_settings import server_settings

        return server_settings().run_time_limit_s
    return args.time_limit if args.time_limit > 0 else None


def list_workloads(out: Optional[TextIO] = None) -> None:
    from aqe_core.live import workloads as wl

    out = out or sys.stdout
    for name in wl.names():
        w = wl.get(name)
        since = f" (Spark {w.min_version}+)" if w.min_version != "3.0.0" else ""
        out.write(f"{name}{since}\n    {w.doc}\n    presets: {', '.join(p.name for p in w.presets)}\n")


def _run_sql_text(args: argparse.Namespace) -> tuple[Optional[str], int]:
    """The SQL to run (``--sql`` or ``--sql-file``) and 0, or None and the exit code of a bad request."""
    sql: Optional[str] = args.sql
    if args.sql_file:
        try:
            with open(args.sql_file, encoding="utf-8") as fh:
                sql = fh.read()
        except (OSError, UnicodeDecodeError) as e:
            print(f"run: cannot read {args.sql_file}: {type(e).__name__}", file=sys.stderr)
            return None, 2
    if not sql and not args.workload:
        print("run: give --sql, --sql-file or --workload (or --list-workloads)", file=sys.stderr)
        return None, 2
    if not args.output:
        print("run: -o/--output is required", file=sys.stderr)
        return None, 2
    if args.workload:
        from aqe_core.live import workloads as wl

        try:
            wl.get(args.workload)
        except KeyError as e:
            print(f"run: {e.args[0]}", file=sys.stderr)
            return None, 2
    return sql, 0


def cmd_run(args: argparse.Namespace) -> int:
    if args.list_workloads:
        list_workloads()
        return 0
    sql, code = _run_sql_text(args)
    if code:
        return code

    from aqe_core.live.java import JavaNotFound
    from aqe_core.live.requests import RunRequest
    from aqe_core.live.runtime import SparkStartFailed
    from aqe_core.live.sql_guard import UnsafeSQL

    req = RunRequest(sql=sql, workload=args.workload, conf=dict(args.conf), presets=args.preset, scale=args.scale,
                     master=args.master, spark_conf=dict(args.spark_conf), trusted=args.trusted)
    try:  # what needs no Spark is refused before Spark starts; the runner checks the rest
        req.precheck()
    except UnsafeSQL as e:
        print(f"run: not run: {e} (--trusted lifts the guard for a single trusted user)", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    try:
        runner = req.start(time_limit_s=_time_limit(args))
    except (JavaNotFound, SparkStartFailed) as e:
        print(f"run: {e}", file=sys.stderr)
        return 3
    from aqe_core.live.requests import quiet

    quiet(runner, args.spark_log_level)
    rt = runner.rt
    java = rt.java.describe() if rt.java else "an already running JVM"
    print(f"Spark {rt.version} on {rt.master} ({java}); started in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return _run_and_write(req, runner, args)


def _run_and_write(req, runner, args: argparse.Namespace) -> int:
    """Run the request, write the capture, report (and with ``--check`` replay) it."""
    from aqe_core.readers.capture_file import save_capture
    from aqe_core.live.runner import RunCancelled, RunFailed
    from aqe_core.live.sql_guard import UnsafeSQL

    progress = None if args.no_progress else ProgressBar()
    try:
        cap = req.run(runner, progress)
    except UnsafeSQL as e:
        print(f"run: not run: {e}", file=sys.stderr)
        return 1
    except (RunFailed, ValueError, KeyError) as e:
        print(f"run: {e}", file=sys.stderr)
        return 1
    except RunCancelled as e:
        print(f"run: {e}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        runner.cancel()
        print("run: interrupted", file=sys.stderr)
        return 130
    path = save_capture(cap, args.output)
    n_reads = sum(len(q.reads) for q in cap.queries)
    print(f"wrote {path} ({path.stat().st_size} bytes): {len(cap.queries)} queries, {n_reads} adaptive reads",
          file=sys.stderr)
    for w in cap.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.check:
        from aqe_core.engine import simulate

        rep = simulate(cap)
        a = rep.agreement
        print(f"agreement: {a.summary()} ({a.percent:.1f}% of decisions)", file=sys.stderr)
        return 0 if a.complete else 1
    return 0
