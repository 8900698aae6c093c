#!/usr/bin/env python3
"""Benchmark: comparing two runs against loading them (issue 28, requirement 5).

    python -m bench.bench_diff                          # the largest bundled log against itself
    python -m bench.bench_diff A B [--json-out out.json]
    python -m bench.bench_diff --scale 22               # two ~1 GB logs (bench_eventlog's generated
                                                        # logs: real Spark runs, cached; slow the first time)

Goal: two logs diffed within 1.5x the time of loading them, memory as flat as loading. In a
fresh child process each (one core): both sources opened (``load_source``), then
``diff_views``; wall time of each step and the peak RSS (VmHWM) after each.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"

_CHILD = r"""
import json, sys, time

def peak_mb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024

from aqe_core.opening import load_source
from aqe_core.views.diff_runs import diff_views
t0 = time.perf_counter()
a, b = load_source(sys.argv[1]), load_source(sys.argv[2])
t1 = time.perf_counter(); rss_load = peak_mb()
d = diff_views(a.views, b.views)
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "diff_s": t2 - t1, "ratio": (t2 - t0) / (t1 - t0), "rss_load_mb": rss_load,
                  "rss_diff_mb": peak_mb(), "matched": len(d.matched), "queries": [len(a.views), len(b.views)]}))
"""


def measure(a: Path, b: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    pin = ["taskset", "-c", "0"] if sys.platform.startswith("linux") and os.path.exists("/usr/bin/taskset") else []
    out = subprocess.run(pin + [sys.executable, "-c", _CHILD, str(a), str(b)], capture_output=True, text=True,
                         env=env, check=True)
    return {"a": str(a), "b": str(b), "bytes": [a.stat().st_size, b.stat().st_size], **json.loads(out.stdout)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", nargs="?", default=str(DEFAULT))
    ap.add_argument("b", nargs="?")
    ap.add_argument("--scale", type=int, help="diff bench_eventlog's generated log scaled by this factor against itself")
    ap.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/aqe-lens/bench"))  # bench_eventlog's cache
    ap.add_argument("--json-out")
    args = ap.parse_args()
    if args.scale:
        from bench.bench_eventlog import ensure_logs

        a = b = ensure_logs(Path(args.cache_dir), [args.scale], 60, 40)[-1]
    else:
        a, b = Path(args.a), Path(args.b or args.a)
    got = measure(a, b)
    print(f"{a.name} vs {b.name}: load {got['load_s']:.2f} s, diff {got['diff_s']:.2f} s, (load+diff)/load"
          f" {got['ratio']:.2f} (goal <= 1.5); peak RSS {got['rss_load_mb']:.0f} MB loaded,"
          f" {got['rss_diff_mb']:.0f} MB after the diff; {got['matched']} queries matched")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(got, indent=1))
    return 0 if got["ratio"] <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
