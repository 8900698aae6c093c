"""``mcp``: AQE Lens as a Model Context Protocol server for AI assistants (docs/mcp.md)."""
from __future__ import annotations

import argparse
import os
import sys


def add_mcp_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 (default: stdio)")
    p.add_argument("--port", type=int, default=8765, help="with --http: the port (default 8765)")
    p.add_argument("--allow-runs", action="store_true",
                   help="serve verify_fix, which reruns a captured query on Spark with a fix (SQL and settings through"
                   " the guards even when trusted is on; run_time_limit_s; one run at a time)")
    p.add_argument("--root", action="append", default=[], metavar="DIR",
                   help="another folder the tools may open (repeatable; added to server.toml's roots and"
                   " AQE_LENS_ROOTS)")


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve until the client closes stdio (or Ctrl-C with --http); 2 when the SDK is missing."""
    if not 0 < args.port < 65536:
        print("mcp: --port must be 1-65535", file=sys.stderr)
        return 2
    if args.root:
        roots = [os.path.abspath(os.path.expanduser(r)) for r in args.root]
        os.environ["AQE_LENS_ROOTS"] = os.pathsep.join([x for x in [os.environ.get("AQE_LENS_ROOTS", "")] if x] + roots)
    try:
        from aqe_core.mcp.server import serve
        import mcp.server  # noqa: F401 - the SDK, checked before serving
    except ImportError as exc:
        print(f"mcp: the Model Context Protocol SDK is not installed ({exc}); pip install -r requirements.txt",
              file=sys.stderr)
        return 2
    try:
        serve(http=args.http, port=args.port, allow_runs=args.allow_runs)
    except KeyboardInterrupt:
        pass
    return 0
