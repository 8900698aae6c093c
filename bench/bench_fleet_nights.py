#!/usr/bin/env python3
"""Benchmark: a nightly fleet scan's first night against an unchanged night (issue 39, req. 5).

    python -m bench.bench_fleet_nights [--logs N]

Copies N of the bundled sample logs into a fresh folder, starts one local[2] SparkSession (its
start is timed apart: every night pays it), then times ``run_scan`` into a fresh OUT (the first
night, which reads every log) and again into the same OUT with nothing changed (which should read
and write nothing). Prints both times, their ratio, and the files the unchanged night added to OUT.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_logs" / "eventlogs"


def _files(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=4, help="how many sample logs the fleet has (default 4)")
    args = ap.parse_args()
    from aqe_core.fleet.scan import run_scan
    from aqe_core.live.runtime import get_runtime, stop_runtime

    tmp = Path(tempfile.mkdtemp(prefix="aqe-lens-bench-nights-"))
    try:
        logs, out = tmp / "logs", tmp / "out"
        logs.mkdir()
        for p in sorted(p for p in SAMPLES.iterdir() if p.name.startswith("local-"))[:args.logs]:
            (shutil.copytree if p.is_dir() else shutil.copy)(p, logs / p.name)
        t0 = time.perf_counter()
        rt = get_runtime("local[2]", {}, app_name="bench fleet nights", log_level="OFF", event_log=False)
        jvm = time.perf_counter() - t0
        first = run_scan(rt.spark, [str(logs)], str(out), presets=False)
        before = _files(out)
        t1 = time.perf_counter()
        again = run_scan(rt.spark, [str(logs)], str(out), presets=False)
        unchanged = time.perf_counter() - t1
        added = sorted(_files(out) - before)
        print(f"Spark start            {jvm:6.2f} s")
        print(f"first night            {first.seconds:6.2f} s  ({first.files} logs read)")
        print(f"unchanged night        {unchanged:6.2f} s  ({again.files} read, {again.unchanged} unchanged,"
              f" {len(added)} files added to OUT)")
        print(f"unchanged / first      {unchanged / first.seconds:6.2f}")
        stop_runtime()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
