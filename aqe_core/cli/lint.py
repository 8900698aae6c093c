"""``lint``: a query's AQE settings checked against a Spark release (keys Apache Spark does not
have, keys the release lacks, legacy names, values it rejects, defaults that differ)."""
from __future__ import annotations

import argparse
import json
import re
import sys

from aqe_core.cli.common import add_budget_argument, budget_meter, _kv
from aqe_core.versions import SparkVersion, as_version

_LINE = re.compile(r"^\s*(\d+)\.(\d+)(?:\.[xX*])?\s*$")


def release_arg(text: str) -> SparkVersion:
    """A release given on the command line: ``4.2.1``, or a line (``4.2.x``, ``4.2``) meaning the
    newest release of that line AQE Lens was checked against (``advise.releases.RELEASES``), since
    a line's patches may differ (3.4.2 added a setting)."""
    m = _LINE.match(text)
    if m is None:
        return as_version(text)
    from aqe_core.advise.releases import RELEASES

    line = (int(m.group(1)), int(m.group(2)))
    known = [as_version(r) for r in RELEASES if (as_version(r).major, as_version(r).minor) == line]
    if not known:
        raise ValueError(f"Spark {line[0]}.{line[1]} is not a release line AQE Lens was checked against"
                         f" (lines: {', '.join(sorted({r.rsplit('.', 1)[0] for r in RELEASES}, key=as_version))});"
                         " give a full release such as 4.2.1")
    return max(known)


def add_lint_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", nargs="?", help="an event log or a capture (its queries' settings); or use --conf")
    p.add_argument("--execution", help="only this SQL execution (its id)")
    add_budget_argument(p)
    p.add_argument("--conf", action="append", type=_kv, default=[], metavar="KEY=VALUE",
                   help="settings to check instead of a source's (repeatable)")
    p.add_argument("--source-version", help="with --conf: the release the settings were written for (4.1.4, or a"
                   " line: 4.1.x)")
    p.add_argument("--target", help="the release to check against (default: the query's own release); 4.2.1, or a"
                   " line (4.2.x: its newest release AQE Lens was checked against)")
    p.add_argument("--json", action="store_true", help="findings as JSON")


def cmd_lint(args: argparse.Namespace) -> int:
    """Exit 0 with no error finding, 1 with one, 2 for bad input."""
    from aqe_core.views.answers import lint_entry, lint_subject, select_views

    try:
        target = release_arg(args.target) if args.target else None
        given = release_arg(args.source_version) if args.source_version else None
    except ValueError as e:
        print(f"lint: {e}", file=sys.stderr)
        return 2
    subjects = []  # (label, settings, release)
    if args.conf:
        if target is None and given is None:
            print("lint: with --conf, give --target (and optionally --source-version)", file=sys.stderr)
            return 2
        subjects.append(("--conf", dict(args.conf), given))
    elif args.source:
        from aqe_core.opening import SourceError, load_source

        try:
            src = load_source(args.source, meter=budget_meter(args), execution=args.execution)
        except SourceError as e:
            print(f"lint: {args.source}: {e}", file=sys.stderr)
            return 2
        views = select_views(src.views, args.execution)
        if not views:
            print(f"lint: no SQL execution {args.execution} in {args.source}", file=sys.stderr)
            return 2
        subjects += [lint_subject(v) for v in views]
    else:
        print("lint: give a source or --conf KEY=VALUE", file=sys.stderr)
        return 2
    doc, errors = [], 0
    for label, settings, release in subjects:
        entry, n = lint_entry(label, settings, release, target)
        doc.append(entry)
        errors += n
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        return 1 if errors else 0
    out = []
    for d in doc:
        out.append(f"{d['query']}: {len(d['settings'])} setting(s), Spark {d['release'] or '?'} -> {d['target']}")
        out += [f"  {f['severity']}: {f['message']}" for f in d["findings"]] or ["  no finding"]
        if d["default_changes"]:
            out.append(f"  defaults that differ in Spark {d['target']} (not set by the query):")
            out += [f"    {c['message']}" for c in d["default_changes"]]
    sys.stdout.write("\n".join(out) + "\n")
    return 1 if errors else 0
