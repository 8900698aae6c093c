#!/usr/bin/env python3
"""Benchmark: a log of 10^5 (10^6) small SQL executions, AQE Lens beside the History Server.

    python -m bench.bench_many_executions [--executions 100000] [--million] [--source LOG]
                                          [--workload small|commands] [--queries]
                                          [--skip-hs] [--skip-floor] [--cache-dir DIR]

Issue 41: Structured Streaming (AQE per micro-batch) and long-running Thrift servers write logs
of 10^5-10^6 small executions. The goal is ``inspect --json`` >= 10x faster than the History
Server lists the application and answers its SQL tab, at <= 200 MB peak.

1. The source (cached in ``~/.cache/aqe-lens/bench/``): a real Spark 4.3.0 log of one tiny
   adaptive query (a broadcast join and an aggregation) run 20 times
   (``tools/generate_eventlogs.py small``), or ``--source LOG`` (any real log, e.g. a streaming
   one). ``tools/scale_executions.py`` repeats its executions, with their jobs, stages and tasks,
   ids and times shifted, into logs of exactly N executions (cached under a name holding the
   source and N).
2. Ours: ``python -m aqe_core inspect LOG --json`` in a fresh child pinned to one core, its
   output drained from a pipe: wall time, CPU time, peak RSS (VmHWM of the child).
3. The History Server (the installed PySpark's jars) over a directory holding only that log,
   with the retention a deployment has by default (``spark.sql.ui.retainedExecutions`` 1000,
   jobs and stages 1000, tasks 100000; ``--hs-retain-all`` keeps everything): JVM start, the
   time until ``/api/v1/applications`` lists the log, the first
   ``/api/v1/applications/{id}/sql`` answer (its replay), and the JVM's peak RSS.
4. The parse floor: the same lines through ``json.loads`` and nothing else, pinned.
Everything is printed as one table (both sides from the same run) and, with --json-out, as JSON.
The helpers are bench_eventlog.py's (imported, not copied).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aqe_core import config
from bench.bench_eventlog import _PEAK, _child_env, _pinned, floor, timed_replay

REPO = Path(__file__).resolve().parent.parent

#: ``inspect --json`` as ``python -m aqe_core`` runs it, then the child's own figures on stderr
_INSPECT = _PEAK + r"""
import json, runpy, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
sys.argv = ["aqe_core", "inspect", sys.argv[1], "--json"] + sys.argv[2:]
code = 0
try:
    runpy.run_module("aqe_core", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code or 0
sys.stdout.flush()
sys.stderr.write("\n" + json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                                     "max_rss_mb": peak_mb(), "exit": code}) + "\n")
"""


#: the recorded sources: a tiny adaptive query run 20 times (116 KB an execution, jobs and tasks),
#: or 200 rounds of job-less statements (SET, SHOW TABLES, a literal SELECT: ~6 KB an execution)
WORKLOADS = {"small": ("small_q20_p4", ["--queries", "20", "--partitions", "4"]),
             "commands": ("commands_q200", ["--workload", "commands", "--queries", "200"])}


def ensure_source(cache: Path, source: str | None, workload: str = "small") -> Path:
    if source:
        return Path(source)
    cache.mkdir(parents=True, exist_ok=True)
    name, extra = WORKLOADS[workload]
    src = cache / name
    if not src.exists():
        part = src.with_name(src.name + ".partial")
        subprocess.run([sys.executable, str(REPO / "tools" / "generate_eventlogs.py"), "small", "--out", str(part)]
                       + extra, check=True)
        part.rename(src)
    return src


def ensure_scaled(cache: Path, src: Path, n: int) -> Path:
    out = cache / f"{src.name}_n{n}"
    if out.exists():
        return out
    sys.path.insert(0, str(REPO / "tools"))
    import scale_executions as se

    # refuse before filling the disk: the size is the source's bytes per execution times n
    probe = cache / f".{src.name}_probe"
    info = se.write(str(src), str(probe), max(1, len(se.plan(se.source_lines(str(src)))["starts"])), progress=False)
    probe.unlink()
    need = info["bytes"] / info["executions"] * n
    free = shutil.disk_usage(cache).free
    if need > free * 0.8:
        raise SystemExit(f"{n:,} executions of {src.name} need ~{need / 1e9:.1f} GB, {free / 1e9:.1f} GB free")
    part = out.with_name(out.name + ".partial")
    se.write(str(src), str(part), n)
    part.rename(out)
    return out


def ours(path: Path, queries: bool = False) -> dict:
    env = _child_env(PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-c", "import aqe_core.api, aqe_core.cli"], check=True, env=env)  # bytecode cache
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([sys.executable, "-c", _INSPECT, str(path)] + (["--queries"] if queries else []), stdout=subprocess.PIPE, stderr=err,
                             env=env, preexec_fn=_pinned())
        assert p.stdout is not None
        size = 0
        while block := p.stdout.read(1 << 16):
            size += len(block)
        rc = p.wait()
        took = time.perf_counter() - t0
        err.seek(0)
        tail = err.read().decode(errors="replace").strip().splitlines()
    if rc != 0 or not tail:
        raise SystemExit(f"inspect failed ({rc}): {tail[-5:]}")
    r = json.loads(tail[-1])
    r.update(outer_wall_s=took, json_mb=size / 1e6)
    return r


def history_server(path: Path, heap: str, retain_all: bool) -> dict:
    conf = {} if retain_all else {  # a deployment's defaults (HistoryServer raises them for tests)
        config.UI_RETAINED_EXECUTIONS: "1000", "spark.ui.retainedJobs": "1000",
        "spark.ui.retainedStages": "1000", "spark.ui.retainedTasks": "100000"}
    out, _ = timed_replay(path, heap, extra_conf=conf, timeout=7200)
    return {**out, "e2e_s": out["listed_s"] + out["sql_first_s"],
            "retained": "all" if retain_all else "defaults (1000 executions)"}


def report(results: list[dict]) -> None:
    print()
    print(f"{'log':<26}{'execs':>9}{'MB':>9}{'KB/ex':>7}{'ours s':>9}{'cpu s':>8}{'RSS MB':>8}{'JSON MB':>9}"
          f"{'json.loads s':>13}{'x':>7}{'SHS list s':>11}{'/sql s':>9}{'e2e s':>8}{'SHS RSS':>9}{'SHS/ours':>9}")
    for r in results:
        o, fl, hs = r["ours"], r.get("floor_json"), r.get("history_server")
        row = (f"{r['log']:<26}{r['executions']:>9,}{r['size_mb']:>9.0f}{r['size_mb'] * 1e3 / r['executions']:>7.1f}"
               f"{o['wall_s']:>9.1f}{o['cpu_s']:>8.1f}{o['max_rss_mb']:>8.0f}{o['json_mb']:>9.1f}")
        row += f"{fl['wall_s']:>13.1f}{o['wall_s'] / fl['wall_s']:>6.2f}x" if fl else f"{'-':>13}{'-':>7}"
        if hs:
            row += (f"{hs['listed_s']:>11.1f}{hs['sql_first_s']:>9.1f}{hs['e2e_s']:>8.1f}{hs['max_rss_mb']:>9.0f}"
                    f"{hs['e2e_s'] / o['wall_s']:>8.2f}x")
        print(row)
    for r in results:
        if r.get("history_server"):
            hs = r["history_server"]
            print(f"History Server on {r['log']}: retention {hs['retained']}, /sql listed {hs['executions']} executions, "
                  f"JVM start {hs['startup_s']:.1f} s, /sql CPU {hs['sql_first_cpu_s']:.1f} s")
    cmds = sorted({r["ours"].get("command", "inspect --json") for r in results})
    print(f"ours s / cpu s / RSS MB: `python -m aqe_core {' / '.join(cmds)} LOG` in a fresh child pinned to one core, "
          "output drained from a pipe (JSON MB);\njson.loads s: the same lines through json.loads and nothing else, "
          "pinned (x = ours / that floor);\nSHS list s: JVM start until /api/v1/applications lists the log; /sql s: "
          "its first /api/v1/applications/{id}/sql answer after that (the replay); e2e = list + /sql;\nSHS RSS: the "
          "JVM's peak RSS (VmHWM); SHS/ours: e2e / ours s (goal >= 10x at <= 200 MB ours).\n"
          f"Load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/aqe-lens/bench"))
    ap.add_argument("--source", help="a real event log whose executions are repeated (default: the recorded small log)")
    ap.add_argument("--executions", default="100000", help="comma separated Ns")
    ap.add_argument("--million", action="store_true", help="add 10^6 executions")
    ap.add_argument("--skip-hs", action="store_true")
    ap.add_argument("--skip-floor", action="store_true")
    ap.add_argument("--hs-heap", default="4g")
    ap.add_argument("--hs-retain-all", action="store_true", help="the History Server keeps every execution")
    ap.add_argument("--json-out")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="small", help="the recorded source (without --source)")
    ap.add_argument("--queries", action="store_true",
                    help="ours lists the log's queries (inspect --queries --json: each execution summarised and"
                         " forgotten) instead of writing every execution (inspect --json)")
    args = ap.parse_args()
    cache = Path(args.cache_dir)
    src = ensure_source(cache, args.source, args.workload)
    ns = [int(x) for x in args.executions.split(",") if x.strip()] + ([1_000_000] if args.million else [])
    results = []
    for n in ns:
        log = ensure_scaled(cache, src, n)
        size = log.stat().st_size
        print(f"[bench] {log.name}: {n:,} executions, {size / 1e6:,.0f} MB", file=sys.stderr)
        r = {"log": log.name, "executions": n, "size_mb": size / 1e6}
        print(f"[bench]   inspect --json{' --queries' if args.queries else ''} ...", file=sys.stderr)
        r["ours"] = ours(log, args.queries)
        r["ours"]["command"] = "inspect --queries --json" if args.queries else "inspect --json"
        if not args.skip_floor:
            print("[bench]   json.loads floor ...", file=sys.stderr)
            r["floor_json"] = floor(log, 1, "json")
        if not args.skip_hs:
            print("[bench]   History Server ...", file=sys.stderr)
            r["history_server"] = history_server(log, args.hs_heap, args.hs_retain_all)
        results.append(r)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(results, indent=2))
    report(results)


if __name__ == "__main__":
    main()
