#!/usr/bin/env python3
"""Where the time and memory of a many-execution log go (docs/many-executions.md).

    python -m bench.profile_many_executions LOG [--mode inspect|source] [--cprofile] [--tracemalloc]

``inspect``: what ``inspect --json`` does (aqe_core.readers.eventlog.loader.load, then
write_log_json into /dev/null); ``source``: what the app does (aqe_core.opening.load_source,
which also builds a QueryView per execution and keeps them all in LoadedSource.views).

Always: RSS sampled every 20 ms from /proc/self/status on a thread, printed per phase (peak and
end). ``--cprofile``: the top functions by own time and by cumulative time, and own time summed
per module. ``--tracemalloc``: the live Python allocations at the end of the load (what stays), by
file and by line, and tracemalloc's peak. Run the three separately: each slows the others.
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import io
import os
import pstats
import sys
import threading
import time


def _rss_mb() -> tuple[float, float]:
    with open("/proc/self/status") as f:
        d = {ln.split(":")[0]: int(ln.split()[1]) for ln in f if ln.startswith(("VmRSS", "VmHWM"))}
    return d["VmRSS"] / 1024, d["VmHWM"] / 1024


class Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.peak = 0.0
        self.stop = False

    def run(self):
        while not self.stop:
            self.peak = max(self.peak, _rss_mb()[0])
            time.sleep(0.02)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--mode", choices=("inspect", "source"), default="inspect")
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start(1)
    import aqe_core.api  # noqa: F401 - imports outside the phases
    from aqe_core.readers.eventlog import loader
    from aqe_core.readers.eventlog.jsonfast import dump_json
    from aqe_core.views.eventlog_summary import write_log_json

    print(f"imports: RSS {_rss_mb()[0]:.0f} MB", file=sys.stderr)
    prof = cProfile.Profile() if args.cprofile else None
    s = Sampler()
    s.start()
    phases = []
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    if args.mode == "inspect":
        log = loader.load(args.log)
        phases.append(("load", time.perf_counter() - t0, s.peak, _rss_mb()[0]))
        n = len(log.executions)
        if args.tracemalloc:
            snap = tracemalloc.take_snapshot()
        t1 = time.perf_counter()
        with open(os.devnull, "w") as out:
            write_log_json(log, out, encode=lambda v: dump_json(v).decode())
        phases.append(("write_log_json", time.perf_counter() - t1, s.peak, _rss_mb()[0]))
    else:
        from aqe_core.opening import load_source

        src = load_source(args.log)
        n = len(src.views)
        phases.append(("load_source", time.perf_counter() - t0, s.peak, _rss_mb()[0]))
        if args.tracemalloc:
            snap = tracemalloc.take_snapshot()
    if prof:
        prof.disable()
    s.stop = True
    print(f"{n} executions; {args.mode}", file=sys.stderr)
    for name, took, peak, now in phases:
        print(f"  {name:<16}{took:8.1f} s  RSS peak so far {peak:6.0f} MB, after {now:6.0f} MB", file=sys.stderr)
    print(f"  VmHWM {_rss_mb()[1]:.0f} MB", file=sys.stderr)
    if prof:
        st = pstats.Stats(prof)
        for key in ("tottime", "cumulative"):
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats(key).print_stats(args.top)
            print(buf.getvalue().split("\n", 6)[-1])
        per_module: dict[str, float] = collections.Counter()
        for (file, _line, _fn), (_cc, _nc, tt, _ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
            mod = file.split("site-packages/")[-1].split("/aqe_core/")[-1] if "aqe_core" in file or "site-packages" in file else file
            per_module[mod] += tt
        total = sum(per_module.values())
        print(f"own time by file (of {total:.1f} s profiled):")
        for mod, tt in sorted(per_module.items(), key=lambda kv: -kv[1])[: args.top]:
            print(f"  {tt:8.2f} s {tt / total:6.1%}  {mod}")
    if args.tracemalloc:
        import tracemalloc

        cur, peak = tracemalloc.get_traced_memory()
        print(f"tracemalloc: live at the end of the load {snap_total(snap) / 1e6:.1f} MB; peak {peak / 1e6:.1f} MB, "
              f"now {cur / 1e6:.1f} MB")
        for group in ("filename", "lineno"):
            print(f"live at the end of the load, by {group}:")
            for stat in snap.statistics(group)[: args.top]:
                print(f"  {stat.size / 1e6:8.2f} MB {stat.count:9d} blocks  {stat.traceback}")


def snap_total(snap) -> int:
    return sum(s.size for s in snap.statistics("filename"))


if __name__ == "__main__":
    main()
