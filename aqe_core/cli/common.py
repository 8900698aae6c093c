"""What several commands share."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from aqe_core.readers.budget import LoadMeter

#: how a refusal names the command line's memory budget (the server's is ``memory_budget_mb``)
BUDGET_FLAG = "--budget"


def add_budget_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(BUDGET_FLAG, type=float, metavar="MB",
                   help="memory for the source, as a shared server counts it (every string included): past it the"
                        " source is refused in one line instead of read")


def budget_meter(args: argparse.Namespace) -> "Optional[LoadMeter]":
    """A meter charged to a budget of ``--budget`` MB (None without the flag: the user's own files)."""
    mb = getattr(args, "budget", None)
    if mb is None:
        return None
    from aqe_core.readers.budget import LoadMeter, MemoryBudget

    if not mb > 0:
        raise SystemExit(f"{BUDGET_FLAG} must be a number of MB above 0")
    return LoadMeter(MemoryBudget(int(mb * (1 << 20)), setting=BUDGET_FLAG))


def _kv(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    k, v = text.split("=", 1)
    return k.strip(), v.strip()
