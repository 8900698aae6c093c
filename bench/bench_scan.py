#!/usr/bin/env python3
"""Benchmark: fleet scan throughput (issue 14), ``run_scan`` on ``local[2]`` for growing fleets.

    python -m bench.bench_scan [--sizes 25,50,100,200,400] [--repeat 2] [--master local[2]] [--keep DIR]
    python -m bench.bench_scan --log-mb 30 --sizes 4,8,16      # a fleet of mid-size logs
    python -m bench.bench_scan --like LOG --sizes 8,16,32      # copies of one recorded log
    python -m bench.bench_scan --log-mb 30 --sizes 12 --cli 3  # the scan command as a process beside json.loads
    python -m bench.bench_scan --log-mb 30 --sizes 12 --cli 3 --spark  # the same, read in a Spark job
    python -m bench.bench_scan --log-mb 30 --sizes 12 --phases 2  # where a scan's CPU goes, beside json.loads

1. Generates ``max(sizes)`` event logs from the real sample logs in ``sample_logs/eventlogs``:
   each log's events (decoded with our own reader's codecs) get a new application id, and are
   written plain or as Spark-style zstd frames; every fifth is a scaled variant (its SQL part
   repeated three times with shifted ids, as ``tools/generate_eventlogs.py scale`` does). With
   ``--log-mb M`` every log is a scaled variant of about M MB of uncompressed events (the factor
   chosen per sample). Only ids change: every event is a real one. With ``--like LOG``: copies
   of one recorded log (the scaled samples are mostly plan events, a few hundred tasks in 25 MB;
   a recorded job's log, like a production one, is mostly task events).
2. Sequential baseline, one Python process, one core: our ``inspect`` on every log (the reader's
   load and the CLI's outcome line per execution), and ``scan_file`` on every log (the same work
   one scan task does per log: triage, findings, presets); and the parse floor, every log's event
   lines parsed with the standard ``json.loads`` and nothing else.
3. ``run_scan`` (Parquet out) on one SparkSession for the first N logs, the best of ``--repeat``
   scans per N, after one warm-up scan (JVM, Python workers and the shipped package are not counted against any N).

Prints N, total MB (on disk, and uncompressed: the events' bytes), wall seconds, logs/s, MB/s of
uncompressed log, growth (seconds per log at N over
seconds per log at the smallest N), the sequential times for the same N with the ratio, and the
floor's time with the scan's MB/s over the floor's (which holds on another machine, where MB/s does not).
Rows written by the scan are checked against the sequential ``scan_file`` rows.
"""
from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parent.parent

SAMPLES = REPO / "sample_logs" / "eventlogs"
_APP_RE = re.compile(rb"(local|app)-\d{8,}(?:-\d+)?")


def _sample_events() -> list[tuple[bytes, list[bytes]]]:
    """(application id, event lines) of every sample log."""
    from tools.generate_eventlogs import _events_of

    out = []
    for p in sorted(SAMPLES.iterdir()):
        if p.name.startswith(".") or p.name.endswith(".json"):
            continue
        lines = _events_of(p)
        out.append((_app_id(lines), lines))
    return out


def _scaled(lines: list[bytes], factor: int) -> list[bytes]:
    """The SQL part repeated ``factor`` times with shifted ids (``generate_eventlogs scale``)."""
    import argparse as _ap

    from tools.generate_eventlogs import cmd_scale

    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "src", Path(d) / "dst"
        src.write_bytes(b"".join(lines))
        err, sys.stderr = sys.stderr, io.StringIO()
        try:
            cmd_scale(_ap.Namespace(src=str(src), dst=str(dst), factor=factor))
        finally:
            sys.stderr = err
        return dst.read_bytes().splitlines(keepends=True)


def _app_id(lines: list[bytes]) -> bytes:
    """The application id a log's ApplicationStart event names."""
    return next(m.group(0) for ln in lines if b"ApplicationStart" in ln[:60] for m in [_APP_RE.search(ln)] if m)


def _write_fleet(out: Path, n: int, log_of: Callable[[int], tuple[bytes, list[bytes]]]) -> tuple[list[str], list[float]]:
    """``n`` logs under ``out``: log i is the events ``log_of(i)`` gives (its application id and
    lines) under a new application id, plain or zstd in turn; and each log's uncompressed MB."""
    from tools.generate_eventlogs import _zstd_frames

    out.mkdir(parents=True, exist_ok=True)
    paths, raw_mb = [], []
    for i in range(n):
        app, lines = log_of(i)
        new = f"local-{1900000000000 + i}".encode()
        lines = [ln.replace(app, new) for ln in lines]
        name = new.decode() + (".zstd" if i % 2 else "")
        data = _zstd_frames(lines) if i % 2 else b"".join(lines)
        (out / name).write_bytes(data)
        paths.append(str(out / name))
        raw_mb.append(sum(map(len, lines)) / 1e6)
    return paths, raw_mb


def generate(out: Path, n: int, log_mb: float = 0) -> tuple[list[str], list[float]]:
    """``n`` logs under ``out``: the samples with new application ids, plain or zstd, some scaled
    (``log_mb`` > 0: all, to about that many MB each); and each log's uncompressed MB."""
    samples = _sample_events()

    def factor(lines: list[bytes]) -> int:
        return max(1, round(log_mb * 1e6 / sum(map(len, lines)))) if log_mb > 0 else 3

    scaled = {i: _scaled(lines, factor(lines)) for i, (_, lines) in enumerate(samples)}

    def log_of(i: int) -> tuple[bytes, list[bytes]]:
        k = i % len(samples)
        app, lines = samples[k]
        return app, scaled[k] if i % 5 == 4 or log_mb > 0 else lines

    return _write_fleet(out, n, log_of)


def generate_like(out: Path, n: int, log: Path) -> tuple[list[str], list[float]]:
    """``n`` copies of one recorded log under ``out``, each with a new application id, plain or
    zstd in turn (a fleet of one job's nightly runs); and each copy's uncompressed MB."""
    from tools.generate_eventlogs import _events_of

    lines = _events_of(log)
    app = _app_id(lines)
    return _write_fleet(out, n, lambda i: (app, lines))


def json_floor(paths: list[str], cpu: Optional[list[float]] = None) -> list[float]:
    """Per-log seconds of the parse floor: the log's event lines (decoded first, untimed) parsed
    with the standard ``json.loads`` and nothing else, on this core. It is measured in the same
    run as the scan, so the scan's MB/s over the floor's holds from one machine to another where
    the MB/s alone does not."""
    import json

    from tools.generate_eventlogs import _events_of

    out = []
    for p in paths:
        lines = _events_of(Path(p))
        t, c = time.perf_counter(), time.process_time()
        for ln in lines:
            json.loads(ln)
        out.append(time.perf_counter() - t)
        if cpu is not None:
            cpu.append(time.process_time() - c)
    return out


def sequential(paths: list[str]) -> tuple[list[float], list[float], int]:
    """Per-log seconds of ``inspect`` and of ``scan_file``, and the scan_file execution rows."""
    from aqe_core.fleet.rows import scan_file
    from aqe_core.readers.eventlog import loader
    from aqe_core.views.eventlog_summary import outcome_line

    insp, scan, rows = [], [], 0
    sink = io.StringIO()
    for p in paths:
        t = time.perf_counter()
        log = loader.load(p)
        for ex in log.executions_by_id():
            sink.write(outcome_line(ex) + "\n")
        insp.append(time.perf_counter() - t)
        t = time.perf_counter()
        e, _ = scan_file(p)
        scan.append(time.perf_counter() - t)
        rows += len(e)
    return insp, scan, rows


def cli_vs_json(paths: list[str], raw: list[float], master: str, work: Path, rounds: int,
                extra: tuple[str, ...] = ()) -> int:
    """The ``scan`` command end to end (on a local master: processes of this machine, no JVM;
    with ``extra`` ``--spark``: the JVM's start, the workers' check, the job, the table writes;
    a fresh output each round, so every log is read) beside the ``json.loads`` pass over the same
    logs' lines, A B A B; wall seconds of both and the scan's throughput over the floor's."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    a: list[float] = []
    b: list[float] = []
    cpu_a: list[float] = []
    cpu_b: list[float] = []
    for i in range(rounds):
        out = work / f"cli-out-{i}"
        t, c = time.perf_counter(), _children_cpu()
        proc = subprocess.run([sys.executable, "-m", "aqe_core", "scan", *paths, "-o", str(out), "--master", master,
                               "--no-progress", *extra],
                              env=env, cwd=REPO, capture_output=True, text=True)
        a.append(time.perf_counter() - t)
        cpu_a.append(_children_cpu() - c)
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
            return 1
        floor_cpu: list[float] = []
        b.append(sum(json_floor(paths, floor_cpu)))
        cpu_b.append(sum(floor_cpu))
        print(f"round {i + 1}: scan {a[-1]:.2f} s ({cpu_a[-1]:.2f} s CPU), json.loads {b[-1]:.2f} s ({cpu_b[-1]:.2f} s CPU):"
              f" {b[-1] / a[-1]:.2f}x wall, {cpu_b[-1] / cpu_a[-1]:.2f}x CPU  ({proc.stderr.strip().splitlines()[-1][:120]})",
              file=sys.stderr)
    ma, mb = sorted(a)[len(a) // 2], sorted(b)[len(b) // 2]
    print(f"scan command{' ' + ' '.join(extra) if extra else ''} on {len(paths)} logs ({sum(raw[:len(paths)]):.0f} MB of events), {master}: {ma:.2f} s wall "
          f"(median of {rounds}); json.loads over their lines, one core: {mb:.2f} s; throughput scan/json {mb / ma:.2f}x; "
          "per round: " + ", ".join(f"{y / x:.2f}x" for x, y in zip(a, b)))
    print("CPU seconds (the scan process and the children it waited for: its reading processes; with --spark not the"
          " JVM nor its Python workers, so there the figure is no measure) per round, scan/json: " + ", ".join(f"{x:.1f}/{y:.1f} = {y / x:.2f}x" for x, y in zip(cpu_a, cpu_b))
          + f"; load average (1 min) at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (where other"
            " sessions keep every core busy, a session's processes share one session's slice: the wall ratio then"
            " falls toward the CPU ratio however many cores the scan uses)")
    return 0


#: the parts of a scan task's work per log (:func:`aqe_core.fleet.rows.scan_file`), in its order
PHASES = ("json.loads", "reader", "views", "rows", "queries", "scan_file")


def phases(paths: list[str], rounds: int) -> int:
    """Where a scan's CPU goes: per log, on one core, in one process, the parse floor (the log's
    lines through ``json.loads``), the reader's load, the views (:func:`view_from_execution`,
    ``plans=False``), the rows (triage, findings, what each preset would change), the query rows,
    and ``scan_file`` whole (about the sum of the four before it); process CPU seconds, the logs
    in turn ``rounds`` times, so a drifting machine moves every part alike. The parts are a plain
    event log's: a listener's exact executions (their capture read, replayed) are in ``scan_file``
    alone."""
    import json

    from aqe_core.fleet import rows as R
    from aqe_core.opening import LoadedSource, scan_limits
    from aqe_core.readers.eventlog import load
    from aqe_core.views.from_eventlog import view_from_execution
    from tools.generate_eventlogs import _events_of

    cpu = dict.fromkeys(PHASES, 0.0)
    for _ in range(rounds):
        for p in paths:
            lines = _events_of(Path(p))
            c = time.process_time()
            for ln in lines:
                json.loads(ln)
            c = _lap(cpu, "json.loads", c)
            with R._fewer_collections():
                log = load(p, limits=scan_limits())
                c = _lap(cpu, "reader", c)
                views = [view_from_execution(log, ex, plans=False) for ex in log.executions_by_id()]
                c = _lap(cpu, "views", c)
                src = LoadedSource("eventlog", "", p, None, views, app_id=log.application.id)
                confs: dict = {}
                for v in views:
                    R._row(p, src, v, True, confs)
                c = _lap(cpu, "rows", c)
                R.query_rows(p, src)
                c = _lap(cpu, "queries", c)
            del log, views, src
            R.scan_file(p, queries=[])
            _lap(cpu, "scan_file", c)
    floor = cpu["json.loads"]
    print(f"{len(paths)} logs x {rounds} rounds, one core, CPU seconds (x json.loads): "
          + ", ".join(f"{k} {v:.2f} ({v / floor:.2f}x)" for k, v in cpu.items())
          + f"; load average (1 min) at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


def _lap(cpu: dict[str, float], phase: str, since: float) -> float:
    now = time.process_time()
    cpu[phase] += now - since
    return now


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="25,50,100,200,400")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--repeat", type=int, default=2, help="scans per N, the best counted (default 2)")
    ap.add_argument("--keep", default=None, help="generate the logs here and keep them")
    ap.add_argument("--log-mb", type=float, default=0,
                    help="every log scaled to about this many MB uncompressed (default: the samples' own sizes)")
    ap.add_argument("--like", default=None,
                    help="a fleet of copies of this recorded log instead (e.g. the listener log bench_eventlog records"
                         " with Spark: task events the bulk of its bytes, as in production logs)")
    ap.add_argument("--cli", type=int, default=0, metavar="ROUNDS",
                    help="instead: 'python -m aqe_core scan' as a whole process on max(sizes) logs beside the"
                         " json.loads pass over their lines, ROUNDS rounds A B A B (issue 41: >= 0.5x)")
    ap.add_argument("--spark", action="store_true",
                    help="with --cli: the scan as a Spark job on a local master too (scan --spark)")
    ap.add_argument("--phases", type=int, default=0, metavar="ROUNDS",
                    help="instead: where a scan's CPU goes per log (reader, views, rows, query rows) beside json.loads,"
                         " one core, the logs in turn ROUNDS times")
    opts = ap.parse_args()
    sizes = sorted(int(s) for s in opts.sizes.split(","))

    work = Path(opts.keep) if opts.keep else Path(tempfile.mkdtemp(prefix="aqe-lens-bench-scan-"))
    try:
        t = time.perf_counter()
        paths, raw = (generate_like(work / "logs", sizes[-1], Path(opts.like)) if opts.like else
                      generate(work / "logs", sizes[-1], opts.log_mb))
        mb = [os.path.getsize(p) / 1e6 for p in paths]
        print(f"generated {len(paths)} logs ({sum(mb):.1f} MB on disk, {sum(raw):.1f} MB uncompressed) in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
        if opts.phases:
            return phases(paths[:sizes[-1]], opts.phases)
        if opts.cli:
            return cli_vs_json(paths[:sizes[-1]], raw, opts.master, work, opts.cli, ("--spark",) if opts.spark else ())
        return _measure(paths, mb, raw, sizes, opts.master, work, opts.repeat)
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)


def _measure(paths: list[str], mb: list[float], raw: list[float], sizes: list[int], master: str, work: Path,
             repeat: int) -> int:
    from bench.timing import timeit

    from aqe_core.fleet.scan import run_scan
    from aqe_core.live.runtime import get_runtime

    sequential(paths[:7])  # imports and caches warm, as in a long-lived process
    insp, seq_scan, seq_rows = sequential(paths)
    floor = json_floor(paths)
    rt = get_runtime(master, {"spark.ui.enabled": "false"}, app_name="AQE Lens bench_scan", log_level="OFF",
                     event_log=False)
    print(f"Spark {rt.version} on {rt.master}; sequential baseline on one core", file=sys.stderr)
    run_scan(rt.spark, paths[:7], str(work / "warm"))  # JVM, Python workers, the shipped package
    rows, ok = [], True
    for n in sizes:
        got = []
        # (not incremental: a repeat would find every log already read and read none)
        best, _ = timeit(lambda: got.append(run_scan(rt.spark, paths[:n], str(work / f"out-{n}"), incremental=False)),
                         repeat)
        res = got[-1]
        rows.append((n, sum(mb[:n]), sum(raw[:n]), best, sum(insp[:n]), sum(seq_scan[:n]), sum(floor[:n])))
        if n == len(paths):
            ok = res.executions == seq_rows and res.errors == 0 and res.files == n
            print(f"N={n}: scan rows {res.executions} executions, {res.findings} findings, {res.errors} errors;"
                  f" sequential scan_file rows {seq_rows}: {'same' if ok else 'DIFFERENT'}", file=sys.stderr)
    base = rows[0][3] / rows[0][0]
    print(f"{'N':>5} {'disk MB':>8} {'log MB':>8} {'wall s':>7} {'logs/s':>7} {'MB/s':>7} {'growth':>6} |"
          f" {'inspect s':>9} {'scan/insp':>9} | {'scan_file s':>11} {'MB/s':>7} {'scan/seq':>8} |"
          f" {'json.loads s':>12} {'MB/s':>7} {'scan/json':>9}")
    for n, m, r, s, i, f, j in rows:
        print(f"{n:>5} {m:>8.1f} {r:>8.1f} {s:>7.2f} {n / s:>7.1f} {r / s:>7.2f} {s / n / base:>6.2f} |"
              f" {i:>9.2f} {s / i:>8.2f}x | {f:>11.2f} {r / f:>7.2f} {s / f:>7.2f}x |"
              f" {j:>12.2f} {r / j:>7.2f} {j / s:>8.2f}x")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("MB/s: uncompressed log per second (the scan's, then the sequential scan_file's on one core). growth:"
          " seconds per log at N / at the smallest N (1.00 = linear). scan/insp, scan/seq: the Spark scan's wall"
          " time over the sequential time for the same logs (< 1: the scan is faster). json.loads: the same logs'"
          " event lines parsed with the standard json.loads and nothing else, one core (the parse floor);"
          " scan/json: the scan's MB/s over the floor's, a figure that holds from machine to machine.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
