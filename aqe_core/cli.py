"""Command line: ``python -m aqe_core <command> ...``.

    python -m aqe_core inspect app.lz4 [--json]                 # the AQE decisions in an event log
    python -m aqe_core run --workload skew_join_inner -o skew.json.gz
    python -m aqe_core run --sql "SELECT ..." --conf spark.sql.shuffle.partitions=50 -o q.json
    python -m aqe_core run --workload aggregate_coalesce --master spark://host:7077 --scale 100 -o agg.json.gz
    python -m aqe_core run --list-workloads
    python -m aqe_core simulate skew.json.gz                    # decisions + agreement with Spark
    python -m aqe_core simulate skew.json.gz --conf spark.sql.adaptive.skewJoin.skewedPartitionFactor=2
    python -m aqe_core simulate skew.json.gz --spark-version 3.0.1 --json
    echo '["SELECT 1", "ADD JAR /tmp/x.jar"]' | python -m aqe_core check-sql

One thin layer of argument handling over the core: each command is an ``add_*_arguments(parser)``
and a ``cmd_*(args) -> int`` here; the work lives in :mod:`aqe_core.live` (running Spark, the
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
import json
import sys
import time
from typing import Callable, Optional, TextIO

from aqe_core import config
from aqe_core.units import GiB, MiB

# ----------------------------------------------------------------------------------------
# inspect


def add_inspect_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="event log: file, rolling eventlog_v2_* directory, .zip/.gz/.tar, .inprogress")
    parser.add_argument("--json", action="store_true", help="print the JSON document (docs/eventlog-json.md)")
    parser.add_argument("--no-plans", action="store_true", help="with --json: leave out the plan trees")
    parser.add_argument("--tasks", action="store_true", help="with --json: add per-stage, per-task shuffle reads")
    parser.add_argument("--indent", type=int, default=None, help="with --json: indent the output")
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


def _inspect_load(args: argparse.Namespace):
    """The event log, or the exit code after a one-line error (never a traceback)."""
    from aqe_core.readers.eventlog import loader as reader
    from aqe_core.readers.eventlog.errors import EventLogError, Limits

    limits = Limits(max_line_bytes=args.max_line_mb * MiB, max_decompressed_bytes=args.max_decompressed_gb * GiB)
    show = _progress(not args.quiet and sys.stderr.isatty())
    try:
        log = reader.load(args.path, progress=show, limits=limits, keep_task_metrics=args.tasks)
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
    except Exception as e:  # never a traceback: one line, exit 2
        _clear(show)
        print(f"aqe_core inspect: error: unexpected {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    _clear(show)
    return log


def cmd_inspect(args: argparse.Namespace) -> int:
    from aqe_core.views.eventlog_summary import log_json, outcome_line

    if args.max_line_mb <= 0 or args.max_decompressed_gb <= 0:
        print("aqe_core inspect: error: limits must be positive", file=sys.stderr)
        return 2
    log = _inspect_load(args)
    if isinstance(log, int):
        return log
    try:
        if args.json:
            doc = log_json(log, plans=not args.no_plans, tasks=args.tasks)
            json.dump(doc, sys.stdout, indent=args.indent)
            sys.stdout.write("\n")
            return 0
        app = log.application
        state = "complete" if log.complete else "incomplete"
        print(f"{app.name or '?'}  {app.id or '?'}"
              + (f" attempt {app.attempt_id}" if app.attempt_id else "")
              + f"  Spark {app.spark_version or '?'}  {log.layout} {log.codec or ''} log, {state}, "
              f"{len(log.executions)} SQL executions")
        for ex in sorted(log.executions.values(), key=lambda e: e.id):
            print(outcome_line(ex))
        for n in log.notes:
            print(f"note: {n}")
        for w in log.warnings:
            print(f"warning: {w}", file=sys.stderr)
        return 0
    except BrokenPipeError:
        return 0


# ----------------------------------------------------------------------------------------
# run


def _kv(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    k, v = text.split("=", 1)
    return k.strip(), v.strip()


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
                   help="setting for a new SparkContext (spark.driver.memory, spark.executor.*)")
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="cancel the run after this many seconds (default: run_time_limit_s of the server settings,"
                        " 600; 0 = no limit)")
    p.add_argument("-o", "--output", help="capture file to write (.json or .json.gz)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--check", action="store_true", help="replay the capture and print the agreement")
    p.add_argument("--trusted", action="store_true",
                   help="skip the SQL and settings guard (any SQL, including commands, runs as you)")


class ProgressBar:
    """One status line on a terminal (``\\r``-rewritten); one line per phase elsewhere."""

    def __init__(self, stream: Optional[TextIO] = None, width: int = 28) -> None:
        self.stream = stream or sys.stderr  # looked up now: sys.stderr may have been swapped since import
        self.width = width
        self.tty = hasattr(stream, "isatty") and stream.isatty()
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
        print(f"run: not run: {e}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    try:
        runner = req.start(time_limit_s=_time_limit(args))
    except (JavaNotFound, SparkStartFailed) as e:
        print(f"run: {e}", file=sys.stderr)
        return 3
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


# ----------------------------------------------------------------------------------------
# simulate


def add_simulate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("capture", help="capture file written by `run`, or an event log written with the AQE Lens listener")
    p.add_argument("--spark-version", help="apply this release's rules (default: the captured release)")
    p.add_argument("--conf", action="append", type=_kv, default=[], metavar="KEY=VALUE",
                   help="what-if setting on top of each query's captured settings (repeatable)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument("--specs", action="store_true", help="list every partition spec, not just counts")


def _spec_text(s) -> str:
    d = dict(s.__dict__)
    size = d.pop("data_size", None)
    kind = type(s).__name__.replace("PartitionSpec", "")
    args = ",".join(str(v) for v in d.values())
    return f"{kind}({args}{'' if size is None else f'; {size} B'})"


def _format_joins(w: Callable[[str], object], rep, qr) -> None:
    for j in qr.joins:
        sim = "" if j.simulated is None else f", simulated {j.simulated}{' (skew)' if j.simulated_skew else ''}"
        init = f"{j.initial} -> " if j.initial else ""
        mark = "" if not rep.is_replay else {"agrees": "  ok", "differs": "  DIFFERS"}.get(j.outcome, "  UNDECIDED")
        if not rep.is_replay and j.outcome == "undecided":
            mark = "  (undecided)"
        w(f"  join {j.join_type} on {j.keys}: {init}{j.spark}{' (skew)' if j.spark_skew else ''}{sim}{mark}\n")
        for r in j.reasons:
            if r.code not in ("unchanged", "cannot_build_side"):
                w(f"      - {r.message}\n")


def _format_reads(w: Callable[[str], object], rep, qr, specs: bool) -> None:
    from aqe_core.model.specs import PartialReducerPartitionSpec

    for r in qr.reads:
        n_sim = "no read" if r.simulated_specs is None else f"{len(r.simulated_specs)} specs"
        n_spark = "no read" if r.spark_specs is None else f"{len(r.spark_specs)} specs"
        split = {s.reducer_index for s in (r.simulated_specs or []) if isinstance(s, PartialReducerPartitionSpec)}
        extra = f", skewed reducers {sorted(split)}" if split else ""
        if rep.is_replay:
            verdict = "ok" if r.agrees else f"DIFFERS ({r.first_difference()})"
            w(f"  stage {r.stage_id} read [{r.description or '-'}]: Spark {n_spark}, rules {n_sim}{extra}: {verdict}\n")
        else:
            change = "same as captured" if r.agrees else f"captured run had {n_spark}"
            w(f"  stage {r.stage_id} read [{r.description or '-'}]: {n_sim}{extra} ({change})\n")
        seen = set()
        for reason in r.reasons:
            if reason.message in seen or reason.code in ("min_num_from_parallelism", "min_num_from_conf", "min_num_one"):
                continue
            seen.add(reason.message)
            w(f"      - {reason.message}\n")
        if specs and r.simulated_specs:
            w("      " + " ".join(_spec_text(s) for s in r.simulated_specs) + "\n")


def format_report(rep, cap, *, specs: bool = False, out: Optional[TextIO] = None) -> None:
    w = (out or sys.stdout).write  # looked up now: sys.stdout may have been replaced since import
    mode = "replay" if rep.is_replay else "what-if"
    w(f"Capture of Spark {cap.spark_version}; rules of Spark {rep.spark_version} ({mode})\n")
    if rep.overrides:
        w("  settings changed: " + ", ".join(f"{k}={v}" for k, v in rep.overrides.items()) + "\n")
    for n in rep.notes:
        w(f"  note: {n}\n")
    for q, qr in zip(cap.queries, rep.queries):
        w(f"\n== {qr.label}\n")
        for n in q.notes + qr.notes:
            w(f"  note: {n}\n")
        _format_joins(w, rep, qr)
        _format_reads(w, rep, qr, specs)
    a = rep.agreement
    w("\n")
    if rep.is_replay:
        w(f"Agreement with Spark: {a.agreeing}/{a.total} adaptive reads, {a.joins_agreeing}/{a.joins_total} join"
          f" decisions ({a.percent:.1f}% of decisions); simulated in {rep.elapsed_ms:.1f} ms\n")
        for u in a.undecided:
            w(f"  undecided (not agreement): {u}\n")
    else:
        changed = a.total - a.agreeing
        w(f"What-if: {changed} of {a.total} adaptive reads and {a.joins_differing} of {a.joins_total} join strategies"
          f" differ from the captured run; simulated in {rep.elapsed_ms:.1f} ms\n")
        if a.joins_undecided:
            w(f"  {a.joins_undecided} join strategies could not be re-decided (see the joins above)\n")


def cmd_simulate(args: argparse.Namespace) -> int:
    from aqe_core.config import ConfValueError
    from aqe_core.engine import simulate
    from aqe_core.sources import SourceError, load_exact
    from aqe_core.versions import UnsupportedSparkVersion

    try:
        cap = load_exact(args.capture)
    except SourceError as e:
        print(f"simulate: {args.capture}: {e}", file=sys.stderr)
        return 2
    try:
        rep = simulate(cap, dict(args.conf), args.spark_version)
    except (ConfValueError, UnsupportedSparkVersion) as e:
        print(f"simulate: {e}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(rep.to_dict(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        format_report(rep, cap, specs=args.specs)
    return 0 if (not rep.is_replay or rep.agreement.complete) else 1


# ----------------------------------------------------------------------------------------
# check-sql


def add_check_sql_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--master", default=None, help="Spark master URL for the checking session (default local[*])")


_JSON_TYPES = {dict: "object", list: "array", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _statements(raw: str) -> list[str]:
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"stdin is not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(data, list):
        raise ValueError(f"stdin must hold a JSON array of SQL strings, not a JSON {_JSON_TYPES.get(type(data), 'value')}")
    bad = next((i for i, x in enumerate(data) if not isinstance(x, str)), None)
    if bad is not None:
        raise ValueError(f"item {bad} of the array is a JSON {_JSON_TYPES.get(type(data[bad]), 'value')}, not a string")
    return data


def cmd_check_sql(args: argparse.Namespace) -> int:
    try:
        statements = _statements(sys.stdin.read())
    except UnicodeDecodeError:
        print("check-sql: stdin is not UTF-8 text", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"check-sql: {e}", file=sys.stderr)
        return 2

    from aqe_core.live.java import JavaNotFound
    from aqe_core.live.requests import judge_statements

    try:
        out = judge_statements(statements, args.master)
    except JavaNotFound as e:
        print(f"check-sql: {e}", file=sys.stderr)
        return 3
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0


# ----------------------------------------------------------------------------------------
# explain


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
    sys.stdout.write("\n".join(out) + "\n")
    return 0


# ----------------------------------------------------------------------------------------
# listener


def add_listener_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--spark-conf", action="store_true",
                   help="print key=value lines for a SparkSession builder or spark-submit --conf (the default)")
    p.add_argument("--submit", action="store_true", help="print them as spark-submit arguments")


def cmd_listener(args: argparse.Namespace) -> int:
    from aqe_core.listener import JAR_PATH, spark_conf

    if not JAR_PATH.exists():
        print(f"listener: the jar is missing ({JAR_PATH}); rebuild it with tools/build_listener.sh", file=sys.stderr)
        return 2
    conf = spark_conf()
    if args.submit:
        sys.stdout.write(" ".join(f"--conf {k}={v}" for k, v in conf.items()) + "\n")
    else:
        sys.stdout.write("".join(f"{k}={v}\n" for k, v in conf.items()))
    return 0


# ----------------------------------------------------------------------------------------
# dispatch

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
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m aqe_core", description="AQE Lens engine")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, add_arguments, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_run=run)
        add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args._run(args) or 0)
