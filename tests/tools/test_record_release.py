"""tools/record_release.py's report, on the recorded fixtures (no Spark, no network): what differs
between a release and the one recorded before it, and whether that needs work."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from aqe_core.versions import SparkVersion

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
_spec = importlib.util.spec_from_file_location("record_release", ROOT / "tools" / "record_release.py")
rr = sys.modules.setdefault("record_release", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(rr)  # type: ignore[union-attr]

RELEASES = rr.recorded_releases()
PAIRS = list(zip(RELEASES, RELEASES[1:]))


def _sqlconf(v: str) -> dict:
    return json.loads((FIXTURES / "sqlconf" / f"{v}.json").read_text())


def test_previous_release_is_the_newest_recorded_before():
    assert rr.previous_release(RELEASES[0]) is None
    for a, b in PAIRS:
        assert rr.previous_release(b) == a
    newest = SparkVersion.parse(RELEASES[-1])
    assert rr.previous_release(f"{newest.major}.{newest.minor + 1}.0") == RELEASES[-1]


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_sqlconf_diff_names_every_key_that_differs(a, b):
    pa, pb = _sqlconf(a), _sqlconf(b)
    sec = rr.sqlconf_diff(pa, pb)
    text = "\n".join(sec.lines)
    ea, eb = pa["entries"], pb["entries"]
    for k in set(eb) - set(ea):
        assert f"added {k} " in text
    for k in set(ea) - set(eb):
        assert f"removed {k}" in text
    for k in set(ea) & set(eb):
        assert (ea[k] != eb[k]) <= (k in text), k
    if pa["entries"] == pb["entries"] and pa["accepts"] == pb["accepts"]:
        assert sec.lines == []


def test_sqlconf_4_1_to_4_2_and_4_0_to_4_1():
    """4.1.4 and 4.2.1 recorded the same SQLConf; 4.1 added the stateless-streaming switch and
    wrote the log level's default in capitals."""
    assert rr.sqlconf_diff(_sqlconf("4.1.4"), _sqlconf("4.2.1")).lines == []
    text = "\n".join(rr.sqlconf_diff(_sqlconf("4.0.0"), _sqlconf("4.1.4")).lines)
    assert "added spark.sql.adaptive.streaming.stateless.enabled (default true, internal, since 4.1.0)" in text
    assert "default changed spark.sql.adaptive.logLevel: debug -> DEBUG" in text


@pytest.mark.parametrize("release", RELEASES)
def test_the_registry_agrees_with_every_recorded_release(release):
    sec = rr.registry_check(_sqlconf(release))
    assert not sec.needs_work, sec.text()


def test_a_registry_gap_needs_work():
    rec = _sqlconf(RELEASES[-1])
    rec = {**rec, "entries": {**rec["entries"], "spark.sql.adaptive.someNewSetting": {
        "default": "true", "public": True, "since": "9.9.9"}}}
    sec = rr.registry_check(rec)
    assert sec.needs_work and "missing from the registry: spark.sql.adaptive.someNewSetting" in sec.lines[0]


def test_oracle_diff_between_4_2_and_4_3():
    same = rr.oracle_diff(FIXTURES / "oracle" / "4.1.4.json", FIXTURES / "oracle" / "4.2.1.json")
    assert same.lines == []
    changed = rr.oracle_diff(FIXTURES / "oracle" / "4.2.1.json", FIXTURES / "oracle" / "4.3.0.json")
    assert any(line.startswith("result changed: ") for line in changed.lines)


def test_profile_verdict():
    assert not rr.profile_verdict("4.2.1", "4.1.4", same=False).needs_work  # a profile of its own
    assert rr.profile_verdict("4.0.0", "3.5.9", same=False).needs_work  # a difference inside "3.5-4.0"
    assert not rr.profile_verdict("4.0.0", "3.5.9", same=True).needs_work


@pytest.mark.slow
def test_report_on_4_2_1():
    """The whole report on the recorded 4.2.1: nothing needs work, and replaying its captures
    through 4.1.4's rules shows SPARK-44065 (the local-read-off broadcast join split)."""
    sections = rr.report("4.2.1")
    assert not [s.title for s in sections if s.needs_work], "\n".join(s.text() for s in sections)
    cross = next(s for s in sections if s.title == "captures of 4.2.1 through 4.1.4's rules")
    assert any(line.startswith("runtime_broadcast.json.gz") for line in cross.lines)
    oracle = next(s for s in sections if s.title.startswith("our rules vs the rule oracle"))
    n = len(json.loads((FIXTURES / "oracle" / "4.2.1.json").read_text())["cases"])
    assert oracle.lines[0] == f"{n}/{n} cases agree"
