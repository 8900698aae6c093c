"""The CLI's JSON answers on every sample and fixture, written to a folder or compared with one.

A refactoring that should not change behaviour is checked by this: write the answers before,
then compare after (byte for byte, exit codes included)::

    python tools/cli_json_golden.py write /tmp/golden-before
    python tools/cli_json_golden.py compare /tmp/golden-before

It imports the package of the checkout it is in (put first on ``sys.path``), and refuses one
installed from another checkout: it checks the code beside it.

Each command runs in this process (``aqe_core.cli.main``) with stdout captured; stderr is not
compared (progress and warnings). Nothing here starts Spark (no ``--verify``, no ``run``).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the code beside this script, without PYTHONPATH

import aqe_core  # noqa: E402
from aqe_core.cli import main  # noqa: E402

_TIMING = re.compile(r'"(elapsed_ms)": [0-9.e+-]+')
_SKIP = {"MANIFEST.json"}
_GROUPS = {"listener", "plain_cases", "retry_cases"}


def sources() -> list[Path]:
    """Every sample and fixture source: captures, event logs (files, rolling folders), listener logs."""
    out: list[Path] = []
    for folder in (ROOT / "sample_logs" / "captures", ROOT / "sample_logs" / "eventlogs",
                   ROOT / "tests" / "fixtures" / "eventlogs"):
        for p in sorted(folder.iterdir()):
            if p.name in _SKIP or p.name.startswith("."):
                continue
            if p.is_dir() and p.name in _GROUPS:
                for q in sorted(p.iterdir()):
                    if q.name in _SKIP or q.name.startswith("."):
                        continue
                    # a release's folder of listener logs holds several sources: each on its own
                    out += sorted(q.iterdir()) if p.name == "listener" and q.is_dir() else [q]
            else:
                out.append(p)
    out += sorted(p for p in (ROOT / "tests" / "fixtures" / "captures").glob("*/*") if p.is_file())
    return out


def _is_capture(p: Path) -> bool:
    return "captures" in p.parts


def commands(p: Path) -> list[list[str]]:
    s = p.relative_to(ROOT).as_posix()  # relative: the answers name no checkout's folder
    cmds = [["explain", s, "--json"], ["recommend", s, "--json"], ["releases", s, "--json"], ["lint", s, "--json"]]
    if _is_capture(p):
        cmds.append(["simulate", s, "--json"])
    else:
        cmds.append(["inspect", s, "--json"])
    return cmds


def answer(argv: list[str]) -> bytes:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    text = _TIMING.sub(r'"\1": 0', out.getvalue())  # a replay's own duration is not its answer
    return f"exit {code}\n".encode() + text.encode()


def _name(p: Path, argv: list[str]) -> str:
    rel = p.relative_to(ROOT).as_posix()
    return f"{argv[0]}--{rel.replace('/', '__')}.out"


def run(folder: Path, compare: bool) -> int:
    os.chdir(ROOT)
    folder.mkdir(parents=True, exist_ok=True)
    differ, n = [], 0
    for p in sources():
        for argv in commands(p):
            got = answer(argv)
            n += 1
            target = folder / _name(p, argv)
            if compare:
                want = target.read_bytes() if target.exists() else None
                if want != got:
                    differ.append(target.name)
            else:
                target.write_bytes(got)
    if compare:
        print(f"{n} answers compared, {len(differ)} differ" + "".join(f"\n  {d}" for d in differ))
        return 1 if differ else 0
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in sorted(folder.glob("*.out")))).hexdigest()[:16]
    print(f"{n} answers written to {folder} (sha256 {digest})")
    return 0


def _check_checkout() -> None:
    """A golden compare of another checkout's code would pass or fail for the wrong reason."""
    where = Path(aqe_core.__file__).resolve().parent.parent
    if where != ROOT:
        sys.exit(f"aqe_core is imported from {where}, not from this checkout {ROOT}: run this checkout's venv "
                 f"(.venv/bin/python) or PYTHONPATH={ROOT}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["write", "compare"])
    ap.add_argument("folder", type=Path)
    a = ap.parse_args()
    _check_checkout()
    sys.exit(run(a.folder, a.mode == "compare"))
