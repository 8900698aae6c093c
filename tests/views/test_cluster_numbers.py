"""Issue 38: the release and the cluster's numbers come from the log's own evidence.

Every log here is derived from one real recorded log (tests/fixtures/eventlogs/plain_cases,
recorded by PySpark 4.3.0 on ``local[2]``), edited as the vendor's or cluster manager's log
would differ, in Spark's own event-log format (docs/eventlog-json.md, /work/shared/spec/eventlog_format.md):

- a YARN-shaped log: ``spark.master`` = ``yarn`` and, in the driver's executor-added event's
  place, ``SparkListenerExecutorAdded`` events of the same shape with ``"Total Cores":4`` x 15
  (CoarseGrainedSchedulerBackend posts one per registered executor), or none at all;
- a Databricks log: no SparkListenerLogStart, Databricks' ``DBCEventLoggingListenerMetadata``
  event first (its fields "Spark Version", "Timestamp", "Rollover Number", "SparkContext Id" as
  public Databricks logs carry them, e.g. the tests of the open-source spark-log-parser) and the
  cluster tag ``spark.databricks.clusterUsageTags.sparkVersion`` = ``13.3.x-photon-scala2.12``
  (Databricks' runtime key form; DBR 13.3 LTS is Apache Spark 3.4.1 in Databricks' release
  notes, https://docs.databricks.com/release-notes/runtime/);
- an EMR log: SparkListenerLogStart's version ``3.5.0-amzn-1`` (EMR's builds carry "-amzn-N",
  as ``3.3.0-amzn-0`` in public EMR logs: /work/shared/spec/eventlog_format.md 1.2);
- a log with no version at all.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from aqe_core.advise.fix_estimate import NO_CORES, recommend_estimated
from aqe_core.advise.fixes import fix_notes
from aqe_core.advise.releases import compare_releases
from aqe_core.advise.whatif import query_what_if
from aqe_core.engine.estimate import PARALLELISM_UNKNOWN
from aqe_core.model.cluster import parallelism_of
from aqe_core.model.log_release import release_from
from aqe_core.opening import load_source
from aqe_core.views.answers import lint_entry, lint_subject
from aqe_core.readers.eventlog import load

BASE = Path(__file__).resolve().parents[1] / "fixtures" / "eventlogs" / "plain_cases" / "local-1795647456252.zstd"
DBR_TAG = "spark.databricks.clusterUsageTags.sparkVersion"


def _base_lines() -> list[str]:
    with open(BASE, "rb") as f:
        return zstandard.ZstdDecompressor().stream_reader(f).read().decode().splitlines()


def derive(out: Path, *, master: str = "yarn", executors=(), log_start="keep", dbc=None, props=None) -> str:
    """The real log, edited: its master, its executor-added events (``(cores, timestamp)``, the
    timestamp None: the driver's own), its LogStart version (None: left out), a Databricks
    metadata event, extra Spark properties."""
    res = []
    for line in _base_lines():
        d = json.loads(line)
        ev = d["Event"]
        if ev == "SparkListenerLogStart":
            if dbc is not None:
                res.append(json.dumps({"Event": "DBCEventLoggingListenerMetadata", "Spark Version": dbc,
                                       "Timestamp": 1795647456000, "Rollover Number": 0, "SparkContext Id": 1}))
            if log_start is None:
                continue
            if log_start != "keep":
                d["Spark Version"] = log_start
        elif ev == "SparkListenerExecutorAdded" and master != "keep":
            for i, (cores, t) in enumerate(executors):
                res.append(json.dumps({"Event": ev, "Timestamp": t or d["Timestamp"], "Executor ID": str(i + 1),
                                       "Executor Info": {**d["Executor Info"], "Host": f"192.0.2.{10 + i}",
                                                         "Total Cores": cores}}))
            continue
        elif ev == "SparkListenerEnvironmentUpdate":
            if master != "keep":
                d["Spark Properties"]["spark.master"] = master
            d["Spark Properties"].update(props or {})
        res.append(json.dumps(d))
    out.write_text("\n".join(res) + "\n")
    return str(out)


def _view(src, description: str):
    return next(v for v in src.views if v.description == description)


# -- the cluster's own numbers ------------------------------------------------------------------

def test_yarn_executors_give_the_default_parallelism_and_how_it_is_known(tmp_path):
    src = load_source(derive(tmp_path / "yarn.json", executors=[(4, None)] * 15))
    for v in src.views:
        assert v.default_parallelism == 60
        assert v.parallelism_how == "60 cores: 15 executors x 4 cores, from executor-added events"
    # the small-partitions finding is judged against those cores, and says how they are known
    fixes = recommend_estimated(_view(src, "no adaptive read"))
    assert fixes and all("60 cores: 15 executors x 4 cores" in f.why and "1 cores" not in f.why for f in fixes)


def test_unknown_cores_recommend_nothing_built_on_a_default(tmp_path):
    src = load_source(derive(tmp_path / "yarn_no_executors.json"))
    for v in src.views:
        assert v.default_parallelism is None and v.parallelism_how.startswith("unknown")
        assert not [f for f in recommend_estimated(v) if f.finding == "too many small partitions"]
    v = _view(src, "hot key, skew join off")
    assert NO_CORES in fix_notes(v)
    got = query_what_if(v, v.conf, "as is", lines=False)
    assert got.outcome is not None and PARALLELISM_UNKNOWN in got.outcome.note


def test_one_finding_one_box(tmp_path):
    """The two sides of a join read in one stage find the same small partitions: one fix."""
    src = load_source(derive(tmp_path / "dp1.json", props={"spark.default.parallelism": "1"}))
    v = _view(src, "hot key, skew join off")
    assert len({s.stage_id for s in v.shuffles}) == 1 < len(v.shuffles)  # (both sides in one stage)
    fixes = recommend_estimated(v)
    keys = [(f.stage_id, f.finding, tuple(sorted(f.settings.items()))) for f in fixes]
    assert keys and len(keys) == len(set(keys))
    assert "1: spark.default.parallelism = 1" in fixes[0].why


def test_local_star_takes_the_cores_of_the_executor_added_event(tmp_path):
    src = load_source(derive(tmp_path / "local_star.json", master="keep", props={"spark.master": "local[*]"}))
    assert {(v.default_parallelism, v.parallelism_how) for v in src.views} == {
        (2, "2 cores: master local[*], cores from the executor-added event")}


def test_executors_that_change_during_a_query_leave_the_parallelism_unknown(tmp_path):
    log = load(derive(tmp_path / "yarn.json", executors=[(4, None)] * 2))
    ex = next(iter(log.executions_by_id()))
    assert parallelism_of(log, ex.submission_time, ex.completion_time).value == 8
    span = log.application.executors["2"]
    span.added = ex.submission_time + 1  # (dynamic allocation adds it while the query runs)
    p = parallelism_of(log, ex.submission_time, ex.completion_time)
    assert p.value is None and "changed during the query (4 to 8 cores" in p.how


def test_configured_executors_when_the_log_has_no_executor_events(tmp_path):
    log = load(derive(tmp_path / "conf.json", props={"spark.executor.instances": "15", "spark.executor.cores": "4"}))
    p = parallelism_of(log)
    assert p.value == 60 and "spark.executor.instances = 15 x spark.executor.cores = 4" in p.how
    log.spark_properties["spark.dynamicAllocation.enabled"] = "true"
    assert parallelism_of(log).value is None


# -- the release, from the log's own evidence ---------------------------------------------------

def test_a_databricks_log_is_read_as_its_runtime(tmp_path):
    src = load_source(derive(tmp_path / "dbr.json", log_start=None, dbc="3.4.1",
                             props={DBR_TAG: "13.3.x-photon-scala2.12"}))
    want = "Spark 3.4.1 (Databricks Runtime 13.3 (photon); replayed as Apache Spark 3.4.1 rules)"
    assert src.label.endswith(want) and src.spark_version == "3.4.1"
    for v in src.views:
        assert str(v.spark_version) == "3.4.1" and v.release == want and v.release_known
        assert v.to_dict()["release"] == want
    comp = compare_releases(_view(src, "hot key, skew join off"))
    ran = [r.summary()["release"] for r in comp.rows if r.own]
    assert ran == ["3.4.1 (as run)"] and "none partitions" not in comp.note
    # the metadata event gave the release: it is not among the events "this reader does not use"
    assert not [n for n in src.notes if "DBCEventLoggingListenerMetadata" in n], src.notes
    # Photon's runtime, but no Photon operator in these plans: no query says Photon ran it
    assert not [v.engine for v in src.views if v.engine] and "run by" not in src.label


def test_a_databricks_tag_alone_names_the_apache_release_from_databricks_table(tmp_path):
    src = load_source(derive(tmp_path / "dbr_tag.json", log_start=None, props={DBR_TAG: "13.3.x-photon-scala2.12"}))
    assert all(str(v.spark_version) == "3.4.1" for v in src.views)
    assert "Databricks Runtime 13.3" in src.label


def test_a_log_without_a_version_says_the_release_is_unknown(tmp_path):
    src = load_source(derive(tmp_path / "nover.json", log_start=None))
    assert "release unknown: rules replayed as 4.3.0, the newest modelled" in src.label and src.spark_version is None
    v = _view(src, "hot key, skew join off")
    assert not v.release_known and v.release.startswith("release unknown")
    comp = compare_releases(v)
    labels = [r.summary()["release"] for r in comp.rows]
    assert labels[0] == "as run (release unknown)" and "4.3.0 (as run)" not in labels
    assert "does not say which release it ran on" in comp.note
    label, _, release = lint_subject(v)  # lint: the release is unknown, checked as the newest modelled
    entry, _ = lint_entry(label, {}, release, None)
    assert release is None and entry["release"] is None and entry["target"] == "4.3.0"


def test_an_emr_build_is_its_apache_release(tmp_path):
    src = load_source(derive(tmp_path / "emr.json", log_start="3.5.0-amzn-1"))
    assert src.label.endswith("Spark 3.5.0 (Amazon EMR build 3.5.0-amzn-1; replayed as Apache Spark 3.5.0 rules)")
    assert {str(v.spark_version) for v in src.views} == {"3.5.0"}


def test_a_query_without_an_adaptive_read_never_says_none_partitions(tmp_path):
    src = load_source(derive(tmp_path / "plain.json", master="keep"))
    bare = [v for v in src.views if not v.shuffles]
    assert bare
    for v in bare:
        assert "none partitions" not in compare_releases(v).note


@pytest.mark.parametrize("log_start, dbc, tag, apache, label", [
    ("3.5.1", None, None, "3.5.1", "Spark 3.5.1"),  # Dataproc's images log Apache's own version string
    # a vendor's build numbers after Apache's X.Y.Z (the form of Azure Synapse's and Fabric's
    # runtime builds, and of other distributions): read on the leading X.Y.Z, the build named
    ("3.4.1.5.3.20240509.1", None, None, "3.4.1",
     "Spark 3.4.1 (vendor build 3.4.1.5.3.20240509.1; replayed as Apache Spark 3.4.1 rules)"),
    ("3.3.1.5.2-109537307", None, None, "3.3.1",
     "Spark 3.3.1 (vendor build 3.3.1.5.2-109537307; replayed as Apache Spark 3.3.1 rules)"),
    (None, None, "14.3.x-scala2.12", "3.5.0", "Spark 3.5.0 (Databricks Runtime 14.3; replayed as Apache Spark 3.5.0 rules)"),
    (None, None, "99.1.x-scala2.12", None, "release unknown (Databricks Runtime 99.1): rules replayed as 4.3.0, the newest modelled"),
    ("4.4.0", None, None, "4.4.0", "Spark 4.4.0 (replayed as Apache Spark 4.3.0 rules, the nearest modelled)"),
    (None, None, None, None, "release unknown: rules replayed as 4.3.0, the newest modelled"),
])
def test_release_from_each_form(log_start, dbc, tag, apache, label):
    r = release_from(log_start, dbc, {DBR_TAG: tag} if tag else {})
    assert (r.apache, r.label) == (apache, label)


def test_bad_executor_events_are_left_out_without_a_traceback(tmp_path):
    """Untrusted input: executor events with a wrong type, a huge id or an id that is no string."""
    path = Path(derive(tmp_path / "bad.json", executors=[(4, None)]))
    bad = [{"Event": "SparkListenerExecutorAdded", "Timestamp": 1, "Executor ID": "2", "Executor Info": {"Total Cores": "4"}},
           {"Event": "SparkListenerExecutorAdded", "Timestamp": 1, "Executor ID": "x" * 100_000,
            "Executor Info": {"Total Cores": 4}},
           {"Event": "SparkListenerExecutorAdded", "Timestamp": 1, "Executor ID": 3, "Executor Info": {"Total Cores": 4}},
           {"Event": "SparkListenerExecutorRemoved", "Timestamp": 1, "Executor ID": {"a": 1}},
           {"Event": "DBCEventLoggingListenerMetadata", "Spark Version": ["3.4.1"]}]
    path.write_text("\n".join(json.dumps(b) for b in bad) + "\n" + path.read_text())
    log = load(str(path))
    assert list(log.application.executors) == ["1"] and log.application.dbc_spark_version is None
    assert parallelism_of(log).value == 4
