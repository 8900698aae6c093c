"""Command line: ``python -m aqe_core <command> ...``.

Each command lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``;
this dispatcher only wires them so one broken command never breaks the others.
"""
from __future__ import annotations

import argparse
import importlib
import sys

#: command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "inspect": ("aqe_core.eventlog.cli", "summarise the AQE decisions in a Spark event log"),
    "run": ("aqe_core.capture.cli_run", "run a query or workload on Spark and write a capture"),
    "simulate": ("aqe_core.capture.cli_simulate", "replay a capture through AQE Lens's rules"),
    "check-sql": ("aqe_core.cli_check_sql", "vet SQL statements (JSON array on stdin) with the SQL guard"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m aqe_core", description="AQE Lens engine")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        try:
            importlib.import_module(module).add_arguments(p)
        except ImportError:
            p.set_defaults(_missing=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "_missing", False):
        print(f"aqe_core: the '{args.command}' command is not available in this build", file=sys.stderr)
        return 2
    return int(importlib.import_module(args._module).run(args) or 0)
