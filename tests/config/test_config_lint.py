"""The key registry and the config linter (issue 13) against what each release's own SQLConf
says (``tests/fixtures/sqlconf/<release>.json``, recorded by tools/record_sqlconf.py): the
same AQE keys, defaults and visibility, and a value is "invalid" exactly when the release's
``SQLConf.setConfString`` rejects it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from aqe_core import config
from aqe_core.advise.lint import default_changes, lint_settings
from aqe_core.versions import SparkVersion

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sqlconf"
RECORDS = {p.stem: json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.json"))}
EXTRA = ("spark.sql.shuffle.partitions", "spark.sql.autoBroadcastJoinThreshold", "spark.sql.join.preferSortMergeJoin")


def test_every_supported_release_is_recorded():
    from aqe_core.advise.releases import RELEASES

    assert set(RECORDS) >= set(RELEASES)


def _pairs() -> list[tuple[str, str]]:
    rel = sorted(RECORDS, key=SparkVersion.parse)
    return list(zip(rel, rel[1:]))


@pytest.mark.parametrize("a,b", _pairs(), ids=[f"{a}-{b}" for a, b in _pairs()])
def test_each_recorded_difference_is_reported_for_the_right_target(a, b):
    """What two neighbouring releases' SQLConf records differ in, the linter says against each:
    a key one of them lacks is "not_in_release" there only; a default that changed (as Spark
    parses it) is a default change; a value one accepts and the other rejects is "invalid" in
    the one that rejects it only."""
    ea, eb = RECORDS[a]["entries"], RECORDS[b]["entries"]
    for key in set(ea) ^ set(eb):
        has, lacks = (a, b) if key in ea else (b, a)
        value = config.keys_for(has)[key].default or "1"
        value = value if not config.keys_for(has)[key].fallback else "64m"
        assert [f.kind for f in lint_settings({key: value}, lacks)] == ["not_in_release"], (key, lacks)
        assert "not_in_release" not in [f.kind for f in lint_settings({key: value}, has)], (key, has)
        assert key in {f.key for f in default_changes(a, b, {key})}, key
    for key in set(ea) & set(eb):
        entry_a, entry_b = config.keys_for(a)[key], config.keys_for(b)[key]
        if entry_a.fallback or ea[key]["default"] == "<undefined>":
            changed = ea[key]["default"] != eb[key]["default"]
        else:
            da, db = config.parse_value(entry_a, ea[key]["default"]), config.parse_value(entry_b, eb[key]["default"])
            if entry_b.check == "log_level":  # Spark's entry upper-cases the value (4.1 wrote its default so)
                da, db = da.upper(), db.upper()
            changed = da != db
        assert (key in {f.key for f in default_changes(a, b, {key})}) == changed, (key, a, b)
    aa, ab = RECORDS[a]["accepts"], RECORDS[b]["accepts"]
    for key in set(aa) & set(ab):
        for value in set(aa[key]) & set(ab[key]):
            for release, accepted in ((a, aa[key][value]), (b, ab[key][value])):
                invalid = any(f.kind == "invalid" for f in lint_settings({key: value}, release))
                assert invalid == (not accepted), (key, value, release)


@pytest.mark.parametrize("release", sorted(RECORDS))
def test_registry_has_the_release_keys_defaults_and_visibility(release):
    rec = RECORDS[release]["entries"]
    ours = {k: e for k, e in config.keys_for(release).items() if k.startswith(config.ADAPTIVE_PREFIX) or k in EXTRA}
    assert sorted(ours) == sorted(rec)
    for key, e in ours.items():
        theirs = rec[key]
        assert e.internal == (not theirs["public"]), key
        if e.fallback:
            assert theirs["default"] == f"<value of {e.default}>", key
        elif e.default is None:
            assert theirs["default"] == "<undefined>", key
        else:
            assert config.parse_value(e, e.default) == config.parse_value(e, theirs["default"]), key


@pytest.mark.parametrize("release", sorted(RECORDS))
def test_invalid_exactly_where_spark_rejects_the_value(release):
    rec = RECORDS[release]
    checked, wrong = 0, []
    for key, row in rec["accepts"].items():
        for value, accepted in row.items():
            found = lint_settings({key: value}, release)
            if any(f.kind == "invalid" for f in found) == accepted:
                wrong.append((key, value, "Spark accepts" if accepted else "Spark rejects"))
            checked += 1
    assert wrong == [] and checked > 300


def test_names_that_are_not_spark_settings():
    found = lint_settings({"spark.sql.adaptive.skewedJoin.enabled": "true",
                           "spark.sql.adaptive.coalescePartitions.targetSize": "64m",
                           "spark.sql.session.timeZone": "UTC"}, "4.3.0")
    assert [(f.key, f.kind, f.suggestion) for f in found] == [
        ("spark.sql.adaptive.skewedJoin.enabled", "unknown", "spark.sql.adaptive.skewJoin.enabled"),
        ("spark.sql.adaptive.coalescePartitions.targetSize", "unknown", None)]


def test_release_differences():
    old = lint_settings({"spark.sql.adaptive.coalescePartitions.minPartitionSize": "1m",
                         "spark.sql.adaptive.shuffle.targetPostShuffleInputSize": "32m"}, "3.1.3")
    assert [f.kind for f in old] == ["not_in_release", "legacy_name"]
    assert "added in 3.2.0" in old[0].message
    typed = lint_settings({"spark.sql.adaptive.skewJoin.skewedPartitionFactor": "5"}, "3.4.4", source="3.3.4")
    assert [f.kind for f in typed] == ["type_changed"]
    changes = {f.key: f.message for f in default_changes("3.1.3", "4.3.0")}
    assert "default false in Spark 3.1.3, true in Spark 4.3.0" in changes["spark.sql.adaptive.enabled"]
    assert "not in Spark 3.1.3" in changes["spark.sql.adaptive.coalescePartitions.parallelismFirst"]


def test_cli_lint(capsys):
    from aqe_core.cli import main

    code = main(["lint", "--conf", "spark.sql.adaptive.skewJoin.skewedPartitionFactor=2.5", "--source-version", "3.5.9",
                 "--target", "3.3.4", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc[0]["findings"][0]["kind"] == "invalid"
    assert main(["lint", "--conf", "spark.sql.adaptive.skewJoin.skewedPartitionFactor=2.5", "--target", "3.4.4"]) == 0
    assert "no finding" in capsys.readouterr().out
    assert main(["lint", "--conf", "a=b"]) == 2
    assert main(["lint", "sample_logs/eventlogs/local-1795309249168", "--target", "4.3.0", "--execution", "2"]) == 0
    out = capsys.readouterr().out
    assert "Spark 3.0.1 -> 4.3.0" in out and "spark.sql.adaptive.enabled" not in out  # the query set it


def test_cli_lint_takes_release_lines(capsys):
    """``--target 4.2.x`` is the newest 4.2 release AQE Lens was checked against; a setting that
    starts in 4.3.0 or in 4.1.0 is reported against the lines before it, from the records."""
    from aqe_core.cli import main
    from aqe_core.advise.releases import RELEASES

    newest = {r.rsplit(".", 1)[0]: r for r in sorted(RELEASES, key=SparkVersion.parse)}
    for line in ("4.1", "4.2"):
        added = sorted(set(RECORDS[newest["4.3"]]["entries"]) - set(RECORDS[newest[line]]["entries"]))
        assert added
        args = ["lint", "--json", "--target", f"{line}.x"] + [a for k in added for a in ("--conf", f"{k}=true")]
        assert main(args) == 0
        doc = json.loads(capsys.readouterr().out)[0]
        assert doc["target"] == newest[line]
        assert {f["key"] for f in doc["findings"] if f["kind"] == "not_in_release"} == set(added)
    streaming = sorted(set(RECORDS[newest["4.1"]]["entries"]) - set(RECORDS[newest["4.0"]]["entries"]))
    assert streaming
    assert main(["lint", "--json", "--target", "4.0.x", "--source-version", "4.1.x", "--conf", f"{streaming[0]}=false"]) == 0
    doc = json.loads(capsys.readouterr().out)[0]
    assert (doc["release"], doc["target"]) == (newest["4.1"], newest["4.0"])
    assert [f["kind"] for f in doc["findings"]] == ["not_in_release"]
    assert main(["lint", "--target", "4.4.x", "--conf", "a=b"]) == 2
