"""``scan``: many event logs as a Spark job, written as Parquet (or CSV) tables of executions and
findings (:mod:`aqe_core.fleet.scan`).

Exit codes: 0 done; 1 the scan failed; 2 a bad argument; 3 Spark did not start; 4 a ``--fail-on``
rule broke; 5 no log found (the line says where it looked), before Spark starts where every
source is local."""
from __future__ import annotations

import argparse
import os
import sys

from typing import TYPE_CHECKING, Any, Callable

from aqe_core.cli.common import _kv
from aqe_core.exception_text import reason_line

if TYPE_CHECKING:
    from aqe_core.fleet.scan import ScanResult


def add_scan_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="event logs or captures: files, directories, globs, or Hadoop URIs (file:, hdfs:, s3a: ...)")
    p.add_argument("-o", "--output", required=True, help="directory for the executions/ and findings/ tables")
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    p.add_argument("--spark-conf", action="append", type=_kv, default=[], metavar="KEY=VALUE",
                   help="setting for the SparkContext (spark.executor.memory, Hadoop credentials ...); not guarded:"
                        " a scan runs as you, on files you name")
    p.add_argument("--ship-python", action="store_true",
                   help="for a cluster whose nodes' Python lacks the reader's packages: ship a venv of them with"
                        " spark.archives (this Python's version; its interpreter must be at the same path on every"
                        " node, as with venv-pack)")
    p.add_argument("--csv", action="store_true", help="CSV (with a header) instead of Parquet")
    p.add_argument("--spark", action="store_true",
                   help="read the logs in a Spark job on a local master too (default there, for local logs and output"
                        " in Parquet with no --spark-conf: processes of this machine, no JVM; the same tables)")
    p.add_argument("--no-presets", action="store_true",
                   help="skip what each built-in preset would change (faster)")
    p.add_argument("--no-progress", action="store_true", help="no progress line")
    p.add_argument("--full", action="store_true",
                   help="read every log again (default: only logs new or changed since this OUT's last scan)")
    p.add_argument("--fail-on", action="append", default=[], metavar="RULE",
                   help="exit 4 when the latest scan breaks RULE, e.g. wasted_task_time_increase>20%%,"
                        " findings_increase>0, wasted_task_time>60s, unreadable>0 (per application, against its run"
                        " before; see aqe_core/fleet/gate.py)")


def reach_warnings(sources: list[str], output: str) -> list[str]:
    """What the app on this machine will not open from the scan's result, said before the scan:
    logs outside its roots (their Fleet rows open nothing) and an output folder outside them
    (the Fleet page cannot read it). A scan runs as the user; the roots only bound the app."""
    from aqe_core.fleet.reach import unopenable
    from aqe_core.fleet.scan import expand_local, is_uri

    paths, _ = expand_local([s for s in sources if not is_uri(s)], skip=[output])
    out = [f"scan: {t}" for t in unopenable(paths + [s for s in sources if is_uri(s)]).sentences()]
    if unopenable([os.path.abspath(output)]):
        out.append(f"scan: the output folder {output} is outside this server's roots: the Fleet page will not open it"
                   " (add it, or a folder above it, to roots in the server settings, AQE_LENS_ROOTS)")
    return out


#: exit code of a scan that found no log to read
NO_LOGS = 5


def no_logs_line(sources: list[str], output: str) -> str:
    """Where a scan that found nothing looked, and what it looks for."""
    return (f"scan: no event log or capture found in {', '.join(sources)} (looked for files and rolling"
            f" eventlog_v2_ folders, in subfolders too; hidden names and the output {output} left out): exit {NO_LOGS}")


def cmd_scan(args: argparse.Namespace) -> int:
    from aqe_core.fleet.scan import read_history
    from aqe_core.live.java import JavaNotFound
    from aqe_core.live.requests import _quiet_pyspark_logger
    from aqe_core.live.runtime import SparkStartFailed, get_runtime

    from aqe_core.fleet.gate import RuleError, breaches, parse_rules

    try:
        rules = parse_rules(args.fail_on)
    except RuleError as e:
        print(f"scan: {e}", file=sys.stderr)
        return 2
    for line in reach_warnings(list(args.sources), args.output):
        print(line, file=sys.stderr)
    spark_conf = dict(args.spark_conf)
    if args.ship_python:
        shipped = _ship_python(args.master, spark_conf)
        if isinstance(shipped, str):
            print(f"scan: {shipped}", file=sys.stderr)
            return 2
        spark_conf = shipped
    from aqe_core.fleet.scan import expand_local, is_uri

    if (not any(is_uri(s) for s in args.sources) and not expand_local(args.sources, skip=[args.output])[0]
            and not _has_logs_table(args.output)):  # (an output that knows logs: they may be gone, to record)
        print(no_logs_line(list(args.sources), args.output), file=sys.stderr)  # (before the JVM starts)
        return NO_LOGS
    fmt = "csv" if args.csv else "parquet"
    session: list[Any] = []

    def spark() -> Any:  # (started once, when a step needs it)
        if not session:
            rt = get_runtime(args.master, spark_conf, app_name="AQE Lens fleet scan", log_level="OFF", event_log=False)
            _quiet_pyspark_logger()
            print(f"scan: Spark {rt.version} on {rt.master}", file=sys.stderr)
            session.append(rt.spark)
        return session[0]

    try:
        res = _run(args, spark, fmt, spark_conf)
        # a scan that read nothing breaks nothing (and wrote no scan to judge)
        broken = breaches(read_history(spark(), args.output, fmt), rules, res.scan_id) if rules and res.files else []
    except (JavaNotFound, SparkStartFailed) as e:
        print(f"scan: {e}", file=sys.stderr)
        return 3
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        print(f"\nscan: failed: {reason_line(e)}", file=sys.stderr)
        return 1
    for m in res.missing:
        print(f"\nscan: nothing matches {m}", file=sys.stderr)
    print("\n" + summary_line(res), file=sys.stderr)
    if not res.files and not res.unchanged and not res.removed:
        print(no_logs_line(list(args.sources), args.output), file=sys.stderr)
        return NO_LOGS
    for line in broken:
        print(f"scan: FAILED {line}", file=sys.stderr)
    if broken:
        print(f"scan: {len(broken)} --fail-on breach{'es' if len(broken) != 1 else ''}: exit 4", file=sys.stderr)
        return 4
    return 0


def _run(args: argparse.Namespace, spark: Callable[[], Any], fmt: str, spark_conf: dict[str, str]) -> ScanResult:
    """The scan: on a local master, for local logs and output in Parquet (and no Spark setting
    given), in processes of this machine without a JVM (:mod:`aqe_core.fleet.here`); else, or
    where that needs Spark after all (a known log on a Hadoop URI), as a Spark job."""
    from aqe_core.fleet.here import local_cores, workers_run_this_python
    from aqe_core.fleet.scan import NeedsSpark, run_scan
    from aqe_core.live.runtime import DEFAULT_MASTER

    master = args.master or os.environ.get("AQE_LENS_MASTER") or DEFAULT_MASTER
    cores = local_cores(master)

    def progress(done: int, total: int) -> None:
        sys.stderr.write(f"\rscan: {'logs' if here else 'tasks'} {done}/{total}")
        sys.stderr.flush()

    kw: dict[str, Any] = dict(fmt=fmt, presets=not args.no_presets, progress=None if args.no_progress else progress,
                              incremental=not args.full)
    here = cores is not None and not (args.spark or spark_conf or fmt != "parquet") and workers_run_this_python()
    if here:
        print(f"scan: on this machine, {cores} process{'es' if cores != 1 else ''} ({master}; --spark for a Spark job)",
              file=sys.stderr)
        try:
            return run_scan(None, list(args.sources), args.output, cores=cores or 1, **kw)
        except NeedsSpark as e:
            print(f"scan: {e}: as a Spark job", file=sys.stderr)
            here = False
    return run_scan(spark(), list(args.sources), args.output, **kw)


def summary_line(res: ScanResult) -> str:
    """What a scan read, left alone, found gone and wrote."""
    again = f" ({res.unchanged} unchanged since the last scan, not read again)" if res.unchanged else ""
    gone = (f"; {res.removed} log{'s' if res.removed != 1 else ''} gone since the last scan (deleted or completed):"
            " out of the fleet now" if res.removed else "")
    wrote = f" -> {res.out} (scan {res.scan_id})" if res.scan_id else f": nothing new or gone, {res.out} left as it was"
    queries = f" of {res.queries} queries" if res.queries else ""
    return (f"scan: {res.files} files, {res.executions} SQL executions{queries}, {res.findings} findings, {res.errors} files or"
            f" executions with an error, in {res.seconds:.1f}s{again}{gone}{wrote}")


def _has_logs_table(output: str) -> bool:
    from aqe_core.fleet.history import LOGS_TABLE

    return os.path.isdir(os.path.join(output, LOGS_TABLE))


def _ship_python(master: str | None, spark_conf: dict[str, str]) -> dict[str, str] | str:
    """The settings that ship the executors' Python (``--ship-python``), or why not. Sets
    ``PYSPARK_PYTHON`` for this process: PySpark reads it once, when the scan's SparkContext starts."""
    from aqe_core.fleet.ship_env import pack_executor_env, ship_settings
    from aqe_core.server_settings import lens_home

    if not master or master.startswith("local"):
        return "--ship-python is for a cluster master: local workers run this Python already"
    if os.environ.get("PYSPARK_PYTHON"):
        return "--ship-python sets the executors' Python: unset PYSPARK_PYTHON, or drop --ship-python"
    try:
        archive = pack_executor_env(lens_home() / "executor-env")
    except (OSError, RuntimeError) as e:
        return f"could not pack the executors' Python: {e}"
    conf, python = ship_settings(archive, spark_conf)
    os.environ["PYSPARK_PYTHON"] = python
    print(f"scan: shipping the executors' Python ({archive.stat().st_size / 2**20:.0f} MiB) with spark.archives",
          file=sys.stderr)
    return conf
