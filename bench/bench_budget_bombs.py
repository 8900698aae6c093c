"""Peak memory beside the memory budget, for logs that are small on disk and hold huge strings
(issue 37): each kind of string bomb of ``tests/string_bombs.py`` opened the way the app opens a
source (``open_on_server``), in a fresh process, alone; then three at once from three threads.

Prints, per bomb: its size on disk, the server's budget, what the load was charged, the growth of
the process's peak RSS over its RSS before the load, and how the load ended (loaded or refused,
with the one line). The budget holds when every growth is under the budget.

    python -m bench.bench_budget_bombs [--budget-mb 512] [--mb 1024] [--kinds descriptions,...]
    python -m bench.bench_budget_bombs --task-bomb 400000000

``--task-bomb N``: instead, ``inspect --json`` (the CLI's own limits) on a log whose stages claim N
tasks each and end one task each, beside the same command on the same log claiming one task per
stage: both peak RSS figures (VmHWM) from one run, A B A B.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, os, sys, threading
paths = json.loads(sys.argv[1])
from aqe_core.opening import SourceError, open_on_server, server_budget

def rss_mb(field="VmRSS"):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
from aqe_core.opening import default_sample
open_on_server(default_sample().path)  # what a server has imported and built before any upload
import gc; gc.collect()
before = rss_mb()
out = [None] * len(paths)
keep = []

def one(i, p):
    try:
        src = open_on_server(p)
        keep.append(src)
        out[i] = {"ok": True, "charged_mb": src.memory_bytes / 2**20, "line": src.label[:100]}
    except SourceError as e:
        out[i] = {"ok": False, "charged_mb": 0, "line": str(e)[:200]}

threads = [threading.Thread(target=one, args=(i, p)) for i, p in enumerate(paths)]
for t in threads: t.start()
for t in threads: t.join()
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the forked parent (a big test
# process), while the high-water mark belongs to this program's own memory
peak = rss_mb("VmHWM")
print(json.dumps({"before_mb": before, "peak_mb": peak, "held_mb": rss_mb(), "budget_used_mb": server_budget().used / 2**20,
                  "loads": out}))
"""


def run(paths: list[Path], env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([str(p) for p in paths])], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


_INSPECT = r"""
import runpy, sys
sys.argv = ["aqe_core", "inspect", sys.argv[1], "--json", "--quiet"]
try:
    runpy.run_module("aqe_core", run_name="__main__")
except SystemExit:
    pass
with open("/proc/self/status") as f:
    print(next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:")) / 1024, file=sys.stderr)
"""


def task_bomb(claimed: int, rounds: int = 2) -> None:
    """Peak RSS of ``inspect --json`` on a log claiming ``claimed`` tasks per stage beside the
    same log claiming one (the tasks it ends: one per stage)."""
    from tests.budget_logs import inflated_tasks

    with tempfile.TemporaryDirectory() as tmp:
        bomb = inflated_tasks(Path(tmp) / "claims.gz", claimed, stages=3, index=0)
        plain = inflated_tasks(Path(tmp) / "plain.gz", 1, stages=3, index=0)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        peaks: dict[str, list[float]] = {"bomb": [], "plain": []}
        for _ in range(rounds):
            for label, p in (("bomb", bomb), ("plain", plain)):
                proc = subprocess.run([sys.executable, "-c", _INSPECT, str(p)], env=env, cwd=ROOT,
                                      capture_output=True, text=True, timeout=1800)
                peaks[label].append(float(proc.stderr.strip().splitlines()[-1]))
        b, a = min(peaks["bomb"]), min(peaks["plain"])
        print(f"inspect --json, 3 stages claiming {claimed:,} tasks each ({bomb.stat().st_size / 1024:.0f} KB gzip): "
              f"peak {b:.0f} MB; the same log claiming 1 task a stage: {a:.0f} MB; ratio {b / a:.2f}x "
              f"(best of {rounds} each, A B A B)")


def main() -> None:
    from tests import string_bombs

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget-mb", type=int, default=512)
    ap.add_argument("--mb", type=int, default=1024, help="decoded MiB of strings per bomb")
    ap.add_argument("--kinds", default=",".join(string_bombs.KINDS))
    ap.add_argument("--task-bomb", type=int, default=0, metavar="N",
                    help="instead: inspect --json on a log claiming N tasks per stage, beside one claiming 1")
    args = ap.parse_args()
    if args.task_bomb:
        task_bomb(args.task_bomb)
        return
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = {**os.environ, "AQE_LENS_HOME": str(home), "AQE_LENS_CONFIG": str(home / "none.toml"),
               "AQE_LENS_MEMORY_BUDGET_MB": str(args.budget_mb), "AQE_LENS_MAX_LOAD_S": "600",
               "AQE_LENS_MAX_DECOMPRESS_S": "600", "PYTHONPATH": str(ROOT)}
        kinds = args.kinds.split(",")
        paths = [string_bombs.write(k, home / k, args.mb) for k in kinds]
        print(f"budget {args.budget_mb} MB; each bomb holds {args.mb} MiB of strings decoded")
        print(f"{'bomb':<20} {'on disk':>9} {'charged':>9} {'RSS growth':>11}  outcome")
        for k, p in zip(kinds, paths):
            got = run([p], env)
            load = got["loads"][0]
            grow = got["peak_mb"] - got["before_mb"]
            print(f"{k:<20} {p.stat().st_size / 2**20:>7.1f}MB {load['charged_mb']:>7.0f}MB {grow:>9.0f}MB  "
                  f"{'loaded' if load['ok'] else 'refused'}: {load['line'][:110]}", flush=True)
        three = paths[:3]
        got = run(three, env)
        grow = got["peak_mb"] - got["before_mb"]
        print(f"three at once ({', '.join(kinds[:3])}): RSS growth {grow:.0f} MB against a budget of {args.budget_mb} MB;"
              f" held after {got['held_mb'] - got['before_mb']:.0f} MB; "
              + "; ".join(("loaded" if x["ok"] else "refused: " + x["line"][:80]) for x in got["loads"]))


if __name__ == "__main__":
    main()
