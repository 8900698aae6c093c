#!/usr/bin/env python3
"""Benchmark: the MCP server on a big event log, first open against later tool calls (issue 29
goal: a call on an already opened 470 MB log answers within 100 ms).

    python -m bench.bench_mcp [LOG] [--factor 40] [--rounds 5]

Without LOG, writes a big log from a real sample (``tools/generate_eventlogs.py scale``: its SQL
executions, jobs, stages and tasks repeated with shifted ids). Starts ``python -m aqe_core mcp``
with the log's folder as a root, connects the SDK's client over stdio (the way an assistant
does), and times, wall clock at the client: ``open_source`` (the one read), then ``--rounds``
times each of ``open_source`` again, ``list_queries``, ``explain_query``, ``histogram``,
``recommend`` and ``lint_settings`` on the top-ranked execution, then ``recommend`` and
``explain_query`` once on each of the ``--spread`` top-ranked executions (a first question on
each: nothing kept from an earlier one). Prints the first open and each call's median and worst.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_logs" / "eventlogs" / "local-1795309249168"  # Spark 3.0.1, plain text (scale reads it)


def _big_log(folder: Path, factor: int) -> Path:
    out = folder / f"scaled-x{factor}.json"
    subprocess.run([sys.executable, str(REPO / "tools" / "generate_eventlogs.py"), "scale", str(SAMPLE), str(out),
                    "--factor", str(factor)], check=True, cwd=REPO)
    return out


async def _timed(client, name: str, args: dict) -> tuple[float, object]:
    start = time.perf_counter()
    got = await client.call_tool(name, args)
    took = time.perf_counter() - start
    if got.is_error:
        raise SystemExit(f"{name} failed: {got.content[0].text}")
    return took, got.structured_content


async def _run(log: Path, rounds: int, spread: int) -> None:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "aqe_core", "mcp", "--root", str(log.parent)],
                                   cwd=str(REPO))
    async with Client(params, read_timeout_seconds=900) as client:
        first, opened = await _timed(client, "open_source", {"path": str(log)})
        top = (await _timed(client, "list_queries", {"source": str(log), "limit": 1}))[1]["answer"][0]["query"]
        reads = (await _timed(client, "explain_query", {"source": str(log), "execution": top}))[1]
        node = next((r["node_id"] for r in reads["answer"]["executions"][0]["reads"]), None)
        calls = {"open_source (again)": ("open_source", {"path": str(log)}),
                 "list_queries": ("list_queries", {"source": str(log), "limit": 50}),
                 "explain_query": ("explain_query", {"source": str(log), "execution": top}),
                 "recommend": ("recommend", {"source": str(log), "execution": top}),
                 "lint_settings": ("lint_settings", {"source": str(log), "execution": top, "target": "4.3.0"})}
        if node is not None:
            calls["histogram"] = ("histogram", {"source": str(log), "execution": top, "node_id": node})
        times: dict[str, list[float]] = {k: [] for k in calls}
        for _ in range(rounds):
            for label, (name, args) in calls.items():
                times[label].append((await _timed(client, name, args))[0])
        # a first question on each of the top executions: nothing about it asked before
        ranked = (await _timed(client, "list_queries", {"source": str(log), "limit": spread}))[1]["answer"]
        for name in ("recommend", "explain_query"):
            label = f"{name} ({len(ranked)} executions, once each)"
            times[label] = [(await _timed(client, name, {"source": str(log), "execution": r["query"]}))[0]
                            for r in ranked]
    size = log.stat().st_size / 1e6 if log.is_file() else sum(p.stat().st_size for p in log.rglob("*") if p.is_file()) / 1e6
    print(f"log: {log} ({size:.0f} MB, {opened['answer']['executions']} SQL executions)")
    print(f"first open_source: {first * 1000:8.0f} ms (the one read)")
    for label, ts in times.items():
        print(f"{label:<40} median {statistics.median(ts) * 1000:7.1f} ms   worst {max(ts) * 1000:7.1f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log", nargs="?", help="an event log (default: a sample scaled by --factor)")
    ap.add_argument("--factor", type=int, default=40, help="without LOG: the sample's size multiple (default 40)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--spread", type=int, default=40, help="then recommend and explain_query once on each of the"
                    " top SPREAD executions (default 40)")
    opts = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        log = Path(opts.log).resolve() if opts.log else _big_log(Path(tmp), opts.factor)
        asyncio.run(_run(log, opts.rounds, opts.spread))
    return 0


if __name__ == "__main__":
    sys.exit(main())
