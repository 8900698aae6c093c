"""``versions.PROFILES`` derived from the rules' version gates and the recorded releases.

A profile is a run of releases whose rules behave alike. Two sources say where a run ends:

* the code: every release the rules and the engine branch on (``SparkVersion(4, 2, 0)`` in a
  rule, ``as_version("4.3.0")``) and every registry key's ``since``/``until`` is where behaviour
  changes, so it must start a profile, and a profile must start at nothing else;
* the recordings: two recorded releases in one profile must have recorded the same thing:
  identical rule-oracle results, identical SQLConf entries and accepted values, and each one's
  catalogue captures replayed at 100% through the other's rules.

"3.5-4.2" failed the second check the day 4.2.1 was recorded (its ``runtime_broadcast`` capture
split a broadcast join's streamed side; 4.1.4's rules do not).
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from aqe_core import config
from aqe_core.engine.simulate import simulate
from aqe_core.readers.capture_file import load_capture
from aqe_core.versions import OLDEST, PROFILES, SparkVersion

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures"
_VERSION_CALLS = {"as_version", "parse", "at_least"}


def _literal_gates(path: Path) -> set[SparkVersion]:
    """Releases a module compares against: ``SparkVersion(a, b, c)`` and ``as_version("x.y.z")``
    (docstrings and comments are not code, so their examples do not count)."""
    gates: set[SparkVersion] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        args = [a.value for a in node.args if isinstance(a, ast.Constant)]
        if name == "SparkVersion" and len(args) == len(node.args) >= 2 and all(isinstance(a, int) for a in args):
            gates.add(SparkVersion(*args))
        elif name in _VERSION_CALLS and len(args) == 1 and isinstance(args[0], str) and args[0][:1].isdigit():
            gates.add(SparkVersion.parse(args[0]))
    return gates


def code_gates() -> dict[SparkVersion, list[str]]:
    """Every release the rules and the engine branch on, and the registry's key ranges, with
    where (a reader's or a view's version checks are about formats and words, not AQE)."""
    where: dict[SparkVersion, list[str]] = {}
    for path in sorted(p for d in ("rules", "engine") for p in (ROOT / "aqe_core" / d).rglob("*.py")):
        for v in _literal_gates(path):
            where.setdefault(v, []).append(str(path.relative_to(ROOT)))
    for key in config._KEYS:  # the registry's ranges are gates too
        for bound in (key.since, key.until):
            if bound is not None:
                where.setdefault(SparkVersion.parse(bound), []).append(f"config: {key.key}")
    where.pop(SparkVersion.parse(OLDEST), None)
    return where


def profile_starts() -> list[SparkVersion]:
    return sorted(SparkVersion.parse(first) for first in PROFILES.values())


def recorded_releases() -> list[str]:
    """Releases with an oracle, a SQLConf record and catalogue captures, oldest first."""
    sets = [{p.stem for p in (FIXTURES / "oracle").glob("*.json")},
            {p.stem for p in (FIXTURES / "sqlconf").glob("*.json")},
            {p.name for p in (FIXTURES / "captures").iterdir() if p.is_dir()}]
    return sorted(set.intersection(*sets), key=SparkVersion.parse)


def same_profile_pairs() -> list[tuple[str, str]]:
    rel = recorded_releases()
    return [(a, b) for a, b in zip(rel, rel[1:]) if SparkVersion.parse(a).profile == SparkVersion.parse(b).profile]


def test_profiles_start_exactly_at_the_code_gates():
    gates = code_gates()
    starts = profile_starts()
    assert starts[0] == SparkVersion.parse(OLDEST)
    missing = {str(v): w for v, w in gates.items() if v not in starts}
    assert not missing, f"the code branches on releases inside a profile (split PROFILES there): {missing}"
    idle = [str(s) for s in starts[1:] if s not in gates]
    assert not idle, f"profiles start where no rule changes (merge them): {idle}"


def test_profile_names_say_their_range():
    """"first" or "first-last"; a last of "M.m.x" (or "M.m") is the rest of that line."""
    starts = profile_starts()
    assert list(PROFILES.values()) == [str(s) for s in starts], "PROFILES is ordered oldest first"
    for i, (name, first) in enumerate(PROFILES.items()):
        lo, _, hi = name.partition("-")
        start = SparkVersion.parse(first)
        assert SparkVersion.parse(lo) == start, name
        nxt = starts[i + 1] if i + 1 < len(starts) else None
        if not hi:  # one whole line (or, for the newest, everything after)
            assert nxt is None or (nxt.major, nxt.minor) > (start.major, start.minor), name
            continue
        last = SparkVersion.parse(hi.replace(".x", ""))
        if hi.count(".") == 1 or hi.endswith(".x"):  # up to the end of the line of last
            assert (last.major, last.minor) >= (start.major, start.minor), name
            assert nxt is None or (nxt.major, nxt.minor) > (last.major, last.minor), name
        else:  # up to a patch release: the next profile starts right after it
            assert start <= last and nxt is not None and (nxt.major, nxt.minor, nxt.patch - 1) == \
                (last.major, last.minor, last.patch), name


def test_every_recorded_release_has_a_profile():
    for r in recorded_releases():
        v = SparkVersion.parse(r)
        assert SparkVersion.parse(PROFILES[v.profile]) <= v


def _oracle(version: str) -> dict[str, object]:
    cases = json.loads((FIXTURES / "oracle" / f"{version}.json").read_text())["cases"]
    return {c["name"]: c["result"] for c in cases}


def _sqlconf(version: str) -> tuple[dict, dict]:
    d = json.loads((FIXTURES / "sqlconf" / f"{version}.json").read_text())
    return d["entries"], d["accepts"]


@pytest.mark.parametrize("a,b", same_profile_pairs(), ids=[f"{a}~{b}" for a, b in same_profile_pairs()])
def test_releases_of_one_profile_recorded_the_same(a, b):
    assert _oracle(a) == _oracle(b), f"the rule oracle of {a} and {b} differs: they are not one profile"
    assert _sqlconf(a) == _sqlconf(b), f"the SQLConf of {a} and {b} differs: they are not one profile"
    for recorded, rules in ((a, b), (b, a)):
        for path in sorted((FIXTURES / "captures" / recorded).glob("*.json.gz")):
            agreement = simulate(load_capture(path), spark_version=rules).agreement
            assert agreement.complete, (f"{recorded}'s {path.name} through {rules}'s rules: "
                                        + "; ".join(agreement.mismatches))


def test_a_profile_that_hid_a_recorded_difference_is_caught():
    """The check above, on the pair "3.5-4.2" put together: 4.2.1's captures through 4.1.4's rules."""
    path = FIXTURES / "captures" / "4.2.1" / "runtime_broadcast.json.gz"
    if not path.exists():
        pytest.skip("4.2.1 not recorded")
    assert SparkVersion.parse("4.1.4").profile != SparkVersion.parse("4.2.1").profile
    assert not simulate(load_capture(path), spark_version="4.1.4").agreement.complete
