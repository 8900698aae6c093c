"""``simulate``: a capture (or a listener log) replayed through our rules."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, Optional, TextIO

from aqe_core.cli.common import _kv
from aqe_core.engine.codes import CANNOT_BUILD_SIDE, MIN_NUM_FROM_CONF, MIN_NUM_FROM_PARALLELISM, MIN_NUM_ONE
from aqe_core.engine.results import UNCHANGED


def add_simulate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("capture", help="capture file written by `run`, or an event log written with the AQE Lens listener")
    p.add_argument("--spark-version", help="apply this release's rules (default: the captured release)")
    p.add_argument("--conf", action="append", type=_kv, default=[], metavar="KEY=VALUE",
                   help="what-if setting on top of each query's captured settings (repeatable)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument("--specs", action="store_true", help="list every partition spec, not just counts")


def _spec_text(s) -> str:
    d = dict(s.__dict__)
    size = d.pop("data_size", None)
    kind = type(s).__name__.replace("PartitionSpec", "")
    args = ",".join(str(v) for v in d.values())
    return f"{kind}({args}{'' if size is None else f'; {size} B'})"


def _format_joins(w: Callable[[str], object], rep, qr) -> None:
    for j in qr.joins:
        sim = "" if j.simulated is None else f", simulated {j.simulated}{' (skew)' if j.simulated_skew else ''}"
        init = f"{j.initial} -> " if j.initial else ""
        mark = "" if not rep.is_replay else {"agrees": "  ok", "differs": "  DIFFERS"}.get(j.outcome, "  UNDECIDED")
        if not rep.is_replay and j.outcome == "undecided":
            mark = "  (undecided)"
        w(f"  join {j.join_type} on {j.keys}: {init}{j.spark}{' (skew)' if j.spark_skew else ''}{sim}{mark}\n")
        for r in j.reasons:
            if r.code not in (UNCHANGED, CANNOT_BUILD_SIDE):
                w(f"      - {r.message}\n")


def _format_reads(w: Callable[[str], object], rep, qr, specs: bool) -> None:
    from aqe_core.model.specs import PartialReducerPartitionSpec

    for r in qr.reads:
        n_sim = "no read" if r.simulated_specs is None else f"{len(r.simulated_specs)} specs"
        n_spark = "no read" if r.spark_specs is None else f"{len(r.spark_specs)} specs"
        split = {s.reducer_index for s in (r.simulated_specs or []) if isinstance(s, PartialReducerPartitionSpec)}
        extra = f", skewed reducers {sorted(split)}" if split else ""
        if rep.is_replay:
            verdict = "ok" if r.agrees else f"DIFFERS ({r.first_difference()})"
            w(f"  stage {r.stage_id} read [{r.description or '-'}]: Spark {n_spark}, rules {n_sim}{extra}: {verdict}\n")
        else:
            change = "same as captured" if r.agrees else f"captured run had {n_spark}"
            w(f"  stage {r.stage_id} read [{r.description or '-'}]: {n_sim}{extra} ({change})\n")
        seen = set()
        for reason in r.reasons:
            if reason.message in seen or reason.code in (MIN_NUM_FROM_PARALLELISM, MIN_NUM_FROM_CONF, MIN_NUM_ONE):
                continue
            seen.add(reason.message)
            w(f"      - {reason.message}\n")
        if specs and r.simulated_specs:
            w("      " + " ".join(_spec_text(s) for s in r.simulated_specs) + "\n")


def format_report(rep, cap, *, specs: bool = False, out: Optional[TextIO] = None) -> None:
    w = (out or sys.stdout).write  # looked up now: sys.stdout may have been replaced since import
    mode = "replay" if rep.is_replay else "what-if"
    w(f"Capture of Spark {cap.spark_version}; rules of Spark {rep.spark_version} ({mode})\n")
    if rep.overrides:
        w("  settings changed: " + ", ".join(f"{k}={v}" for k, v in rep.overrides.items()) + "\n")
    for n in rep.notes:
        w(f"  note: {n}\n")
    for q, qr in zip(cap.queries, rep.queries):
        w(f"\n== {qr.label}\n")
        for n in q.notes + qr.notes:
            w(f"  note: {n}\n")
        _format_joins(w, rep, qr)
        _format_reads(w, rep, qr, specs)
    a = rep.agreement
    w("\n")
    if rep.is_replay:
        w(f"Agreement with Spark: {a.agreeing}/{a.total} adaptive reads, {a.joins_agreeing}/{a.joins_total} join"
          f" decisions ({a.percent:.1f}% of decisions); simulated in {rep.elapsed_ms:.1f} ms\n")
        for u in a.undecided:
            w(f"  undecided (not agreement): {u}\n")
    else:
        changed = a.total - a.agreeing
        w(f"What-if: {changed} of {a.total} adaptive reads and {a.joins_differing} of {a.joins_total} join strategies"
          f" differ from the captured run; simulated in {rep.elapsed_ms:.1f} ms\n")
        if a.joins_undecided:
            w(f"  {a.joins_undecided} join strategies could not be re-decided (see the joins above)\n")


def cmd_simulate(args: argparse.Namespace) -> int:
    from aqe_core.config import ConfValueError
    from aqe_core.engine import simulate
    from aqe_core.opening import SourceError, load_exact
    from aqe_core.versions import UnsupportedSparkVersion

    try:
        cap = load_exact(args.capture)
    except SourceError as e:
        print(f"simulate: {args.capture}: {e}", file=sys.stderr)
        return 2
    try:
        rep = simulate(cap, dict(args.conf), args.spark_version)
    except (ConfValueError, UnsupportedSparkVersion) as e:
        print(f"simulate: {e}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(rep.to_dict(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        format_report(rep, cap, specs=args.specs)
    return 0 if (not rep.is_replay or rep.agreement.complete) else 1
