"""Loading real Spark event logs (3.0.1, 3.5.9, 4.3.0; every codec and layout)."""
from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import weakref
import zipfile
from pathlib import Path

import pytest

from aqe_core.api import EventLogError, Limits, load_event_log as load
from aqe_core.model.plan_walk import graph_nodes
from aqe_core.views.eventlog_summary import log_json
from aqe_core.model.plan import PlanNode

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs" / "eventlogs"
FIXTURES = REPO / "tests" / "fixtures" / "eventlogs"
MANIFEST = json.loads((SAMPLES / "MANIFEST.json").read_text())
FIX_MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
#: the samples of tools/generate_eventlogs.py's workload ("skewed join", ...); a sample with a
#: "workload" of its own (tools/record_big_plans.py) records other queries
WORKLOAD_SAMPLES = sorted(k for k, e in MANIFEST.items() if e.get("workload", "samples") == "samples")


def sample(key: str) -> Path:
    return SAMPLES / MANIFEST[key]["files"][0]


def by_desc(log, text):
    return [e for e in log.executions.values() if e.description == text]


@pytest.mark.parametrize("key", sorted(MANIFEST))
def test_every_sample_loads_completely(key):
    log = load(str(sample(key)))
    assert log.warnings == []
    assert log.complete
    assert log.application.spark_version == MANIFEST[key]["spark_version"]
    assert log.application.name == f"aqe-lens {key}"
    assert len(log.executions) >= 10
    expected_codec = {"spark430_rolling_zstd": "zstd", "spark430_lz4": "lz4", "spark430_snappy": "snappy",
                      "spark359_zstd": "zstd", "spark359_lzf": "lzf", "spark301_plain": "none",
                      "spark430_listener": "zstd", "spark430_tpcds_like": "zstd"}[key]
    assert log.codec == expected_codec


@pytest.mark.parametrize("key", WORKLOAD_SAMPLES)
def test_sample_workload_skewed_join(key):
    log = load(str(sample(key)))
    skew = by_desc(log, "skewed join")[0]
    assert skew.status == "COMPLETED" and skew.adaptive
    assert skew.initial_plan is not None and len(skew.plan_versions) >= 2
    assert "isFinalPlan=false" in skew.initial_plan.description
    assert "isFinalPlan=true" in skew.final_plan.description
    assert any(n.name == "SortMergeJoin(skew=true)" for n in skew.final_plan.walk())
    reads = skew.shuffle_reads
    assert len(reads) == 2
    skewed = [r for r in reads if r.skewed_partitions]
    assert len(skewed) == 1 and skewed[0].skewed_partitions >= 1
    for r in reads:
        assert r.partition_sizes and len(r.partition_sizes) == r.partitions
        assert all(s >= 0 for s in r.partition_sizes)


@pytest.mark.parametrize("key", [k for k in WORKLOAD_SAMPLES if MANIFEST[k]["spark_version"] != "3.0.1"])
def test_partition_sizes_come_from_driver_metrics(key):
    log = load(str(sample(key)))
    skew = by_desc(log, "skewed join")[0]
    r = next(r for r in skew.shuffle_reads if r.skewed_partitions)
    assert r.name == "AQEShuffleRead"
    assert r.partition_sizes_source == "driver_metrics"
    assert r.skew_splits and r.skew_splits > r.skewed_partitions - 1
    assert r.coalesced_partitions is not None
    # what the reduce tasks actually read is close to (a bit below) the MapStatus sizes
    assert r.bytes_read and len(r.bytes_read) == r.num_partitions
    assert 0.8 * sum(r.partition_sizes) <= sum(r.bytes_read) <= 1.05 * sum(r.partition_sizes)
    coal = by_desc(log, "coalescing aggregation")
    assert any(r.coalesced_partitions for e in coal for r in e.shuffle_reads)


def test_spark301_sizes_are_derived_from_task_reads():
    log = load(str(sample("spark301_plain")))
    skew = by_desc(log, "skewed join")[0]
    assert all(r.name == "CustomShuffleReader" for r in skew.shuffle_reads)
    for r in skew.shuffle_reads:
        assert r.partition_sizes_source == "task_shuffle_read"
        assert any("task metrics" in n for n in r.notes)
    assert any("3.0.x" in n for n in log.notes)
    # 3.0.1 writes the skew description instead of metrics
    assert any(r.skewed_partitions == 1 for r in skew.shuffle_reads)


def test_runtime_broadcast_join_change_is_seen():
    from aqe_core.views.eventlog_summary import join_changes

    for key in ("spark430_lz4", "spark359_zstd"):
        log = load(str(sample(key)))
        ex = by_desc(log, "runtime broadcast join")[0]
        assert any("BroadcastHashJoin" in c for c in join_changes(ex)), (key, join_changes(ex))


def test_effective_conf_layers():
    log = load(str(sample("spark430_lz4")))
    ex = by_desc(log, "runtime broadcast join")[0]
    # set with spark.conf.set before the query: a session conf, not a Spark property
    assert log.spark_properties["spark.sql.autoBroadcastJoinThreshold"] == "-1"
    assert ex.modified_configs.get("spark.sql.autoBroadcastJoinThreshold") == "100k"
    assert ex.aqe_conf is not None
    assert ex.aqe_conf.get("spark.sql.autoBroadcastJoinThreshold") == 100 * 1024
    assert ex.aqe_conf.get("spark.sql.adaptive.advisoryPartitionSizeInBytes") == 4096
    other = by_desc(log, "skewed join")[0]
    assert other.aqe_conf.get("spark.sql.autoBroadcastJoinThreshold") == -1
    # 3.0.1 has no modifiedConfigs: the session conf travels in the job properties
    log30 = load(str(sample("spark301_plain")))
    ex30 = by_desc(log30, "runtime broadcast join")[0]
    assert ex30.job_properties.get("spark.sql.autoBroadcastJoinThreshold") == "100k"
    assert ex30.aqe_conf.get("spark.sql.adaptive.enabled") is True


def test_nested_and_failed_executions():
    log = load(str(sample("spark430_lz4")))
    failed = by_desc(log, "failing query")[0]
    assert failed.status == "FAILED" and failed.error_message
    write = by_desc(log, "parquet write")
    assert write and all(e.root_execution_id is not None for e in write)


def test_inprogress_snapshots_load_partially():
    for f in sorted(FIXTURES.glob("*.inprogress")):
        log = load(str(f))
        assert not log.complete
        assert log.warnings == [], log.warnings
        assert any("ApplicationEnd" in n for n in log.notes)
        assert log.executions
        assert any(e.status == "RUNNING" for e in log.executions.values()) or len(log.executions) >= 3


def test_rolling_multi_part_with_attempt_suffix():
    d = next(FIXTURES.glob("eventlog_v2_application_*_1"))
    log = load(str(d))
    assert log.layout == "rolling" and len(log.parts) == 3
    assert [Path(p).name.split("_")[1] for p in log.parts] == ["1", "2", "3"]
    assert log.application.attempt_id == "1"
    assert log.application.id.startswith("application_")
    assert log.complete and log.warnings == []
    one_part = load(str(next(d.glob("events_2_*"))))  # a part given alone: the whole directory is read
    assert len(one_part.parts) == 3 and any("one part of a rolling log" in n for n in one_part.notes)
    ref = load(str(sample("spark430_lz4")))
    assert len(log.executions) == len(ref.executions)
    for eid, ex in ref.executions.items():
        assert [r.partition_sizes for r in log.executions[eid].shuffle_reads] == [r.partition_sizes for r in ex.shuffle_reads]


def test_compacted_rolling_directory():
    d = next(p for p in FIXTURES.glob("eventlog_v2_*") if any(x.name.endswith(".compact") for x in p.iterdir()))
    log = load(str(d))
    names = [Path(p).name for p in log.parts]
    assert names[0].endswith(".compact") and names[0].startswith("events_2_") and names[1].startswith("events_3_")
    assert any("compact" in n for n in log.notes)
    # executions whose SQL events were compacted away are known only through their jobs
    assert any(e.status == "UNKNOWN" for e in log.executions.values())
    assert any(e.status == "COMPLETED" and e.shuffle_reads for e in log.executions.values())


@pytest.mark.parametrize("name", ["shs_download_rolling_zstd.zip", "shs_download_lz4.zip"])
def test_history_server_zip_download(name):
    log = load(str(FIXTURES / name))
    assert log.complete and log.warnings == []
    assert len(log.executions) >= 10


def test_gzip_and_tar_wrappers_and_wrong_extension():
    gz = next(FIXTURES.glob("*.gz"), None)
    tgz = next(FIXTURES.glob("*.tar.gz"))
    plain = next(f for f in FIXTURES.glob("*.gz") if not f.name.endswith(".tar.gz"))
    assert gz is not None
    a, b = load(str(plain)), load(str(sample("spark301_plain")))
    assert [e.description for e in a.executions.values()] == [e.description for e in b.executions.values()]
    t = load(str(tgz))
    assert t.layout == "rolling" and t.complete
    wrong = next(f for f in FIXTURES.glob("*.lz4"))
    w = load(str(wrong))
    assert w.codec == "zstd" and any("name says lz4" in x for x in w.warnings)


def test_directory_with_one_log_and_with_many(tmp_path):
    one = tmp_path / "one"
    one.mkdir()
    shutil.copyfile(sample("spark359_zstd"), one / sample("spark359_zstd").name)
    assert load(str(one)).complete
    with pytest.raises(EventLogError, match="pass one of them"):
        load(str(SAMPLES))


def test_zip_with_rolling_directory(tmp_path):
    z = tmp_path / "logs.zip"
    d = sample("spark430_rolling_zstd")
    with zipfile.ZipFile(z, "w") as zf:
        for f in d.iterdir():
            zf.write(f, f"{d.name}/{f.name}")
    log = load(str(z))
    assert log.layout == "rolling" and log.complete


def test_progress_callback_reports_bytes():
    seen = []
    log = load(str(sample("spark430_snappy")), progress=lambda done, total: seen.append((done, total)))
    size = sample("spark430_snappy").stat().st_size
    assert seen and seen[-1][0] == size and seen[-1][1] == size
    assert log.bytes_read == size and log.bytes_decoded > size


def test_plan_node_ids_match_ui_numbering_and_roundtrip():
    log = load(str(sample("spark430_lz4")))
    ex = by_desc(log, "skewed join")[0]
    ids = [n.id for n in graph_nodes(ex.final_plan)]
    assert ids == list(range(len(ids)))
    d = ex.plan_with_values(ex.final_plan).to_dict()
    assert PlanNode.from_dict(d).to_dict() == d
    read = next(n for n in ex.final_plan.walk() if n.name == "AQEShuffleRead")
    assert {m["name"] for m in read.metrics} >= {"number of partitions", "partition data size"}


@pytest.mark.parametrize("key", ["spark430_lz4", "spark359_zstd", "spark301_plain"])
def test_a_plan_with_values_is_the_plan_the_json_output_writes(key):
    """Views copy a plan with its values node by node; JSON output writes the dicts: the same
    tree, the same metric values, the source plan untouched."""
    log = load(str(sample(key)))
    for ex in log.executions_by_id():
        for plan in (ex.initial_plan, *ex.plan_versions, ex.final_plan):
            before = plan.to_dict() if plan is not None else None
            got = ex.plan_with_values(plan)
            want = ex.plan_dict_with_values(plan)
            assert (got.to_dict() if got is not None else None) == want
            assert (plan.to_dict() if plan is not None else None) == before


@pytest.mark.parametrize("limits", [None, Limits(spill_after=0)], ids=["in memory", "spilled"])
def test_a_read_log_is_freed_as_soon_as_it_is_dropped(limits):
    """No reference cycle keeps a log alive for the cyclic collector to find: a fleet scan reads
    one log after another with the collector running seldom (fleet.rows)."""
    gc.collect()
    gc.disable()
    try:
        log = load(str(sample("spark430_lz4")), **({"limits": limits} if limits is not None else {}))
        assert log.executions_by_id()
        gone = weakref.ref(log)
        del log
        assert gone() is None
    finally:
        gc.enable()


def test_json_document_schema():
    log = load(str(sample("spark359_zstd")))
    doc = json.loads(json.dumps(log_json(log)))
    assert set(doc["application"]) >= {"id", "name", "spark_version", "attempt_id"}
    assert isinstance(doc["warnings"], list)
    for e in doc["executions"]:
        assert set(e) >= {"id", "description", "status", "adaptive", "plan_versions", "initial_plan",
                          "final_plan", "shuffle_reads"}
        for p in [e["initial_plan"], e["final_plan"], *e["plan_versions"]]:
            stack = [p]
            while stack:
                n = stack.pop()
                assert set(n) == {"id", "name", "description", "metrics", "children"}
                stack.extend(n["children"])
        for r in e["shuffle_reads"]:
            assert set(r) >= {"node_id", "num_partitions", "partition_sizes", "coalesced_partitions",
                              "skewed_partitions", "skew_splits"}
    assert doc["limitations"]["simulation"].startswith("approximate")


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "aqe_core", "inspect", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_cli_human_and_json():
    r = run_cli(str(sample("spark430_lz4")))
    assert r.returncode == 0, r.stderr
    assert "skewed join" in r.stdout and "skewed reducer split into" in r.stdout and "parts" in r.stdout
    assert "SortMergeJoin -> BroadcastHashJoin" in r.stdout
    r = run_cli(str(sample("spark301_plain")), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["application"]["spark_version"] == "3.0.1"


def test_cli_errors_are_one_line(tmp_path):
    r = run_cli(str(tmp_path / "missing"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    bad = tmp_path / "bad.zstd"
    bad.write_bytes(b"\x00\x01\x02 not a log at all")
    r = run_cli(str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.startswith("aqe_core inspect: error:")


@pytest.mark.parametrize("key", sorted(MANIFEST))
def test_task_end_fast_path_equals_json_parse(key):
    from aqe_core.readers.eventlog import codecs
    from aqe_core.readers.eventlog.loader import _Prepend
    from aqe_core.readers.eventlog.log_lines import parse_task_end_json
    from aqe_core.readers.eventlog.task_end import parse_task_end_fast
    from aqe_core.readers.eventlog.log_files import open_source

    n = 0
    with open_source(str(sample(key))) as src:
        for part in src.parts:
            with part.opener() as f:
                r = codecs.CountingReader(f)
                head = r.read_exact(16)
                data = b"".join(codecs.decode(codecs.sniff(head), _Prepend(head, r)))
            for line in data.split(b"\n"):
                if not line.startswith(b'{"Event":"SparkListenerTaskEnd"'):
                    continue
                fast = parse_task_end_fast(line)
                d = json.loads(line)
                slow = parse_task_end_json(d)
                assert fast is not None
                assert fast == slow
                sql = [x for a in d["Task Info"]["Accumulables"] if isinstance(a.get("Update"), str)
                       for x in (a["ID"], int(a["Update"]))]
                assert fast[5] == sql
                n += 1
    assert n > 20


def test_databricks_style_rolled_directory(tmp_path):
    import gzip

    lines = sample("spark301_plain").read_bytes().splitlines(keepends=True)
    a, b = len(lines) // 3, 2 * len(lines) // 3
    (tmp_path / "eventlog-2021-06-15--15-00.gz").write_bytes(gzip.compress(b"".join(lines[:a])))
    (tmp_path / "eventlog-2021-06-15--16-00.gz").write_bytes(gzip.compress(b"".join(lines[a:b])))
    (tmp_path / "eventlog").write_bytes(b"".join(lines[b:]))
    log = load(str(tmp_path))
    ref = load(str(sample("spark301_plain")))
    assert log.layout == "rolling" and [Path(p).name for p in log.parts][-1] == "eventlog"
    assert log.complete and not log.warnings
    assert {k: [r.partition_sizes for r in e.shuffle_reads] for k, e in log.executions.items()} == \
        {k: [r.partition_sizes for r in e.shuffle_reads] for k, e in ref.executions.items()}


def test_a_complete_last_event_without_its_newline_is_read(tmp_path):
    """A log whose last line is a whole event but has no trailing newline (copied, or closed by
    a tool that strips it): the event counts, so the execution it ends is not left RUNNING."""
    data = sample("spark301_plain").read_bytes()
    lines = data.split(b"\n")
    end = max(i for i, ln in enumerate(lines) if b"SparkListenerSQLExecutionEnd" in ln)
    cut = tmp_path / "local-1"
    cut.write_bytes(b"\n".join(lines[: end + 1]))  # no newline after the SQLExecutionEnd
    log = load(str(cut))
    last = max(log.executions)
    assert log.executions[last].status == "COMPLETED"
    assert not any("cut" in w for w in log.warnings + log.notes)
    half = tmp_path / "local-2"
    half.write_bytes(b"\n".join(lines[:end]) + b"\n" + lines[end][:40])  # really cut: dropped, and said
    log2 = load(str(half))
    assert log2.executions[last].status == "RUNNING"
    assert any("last line is cut" in n for n in log2.warnings + log2.notes)


def test_spark_fields_keep_spark_meaning_on_3_0_1():
    """3.0.1's CustomShuffleReader posts no "number of partitions": the field stays null, as the
    History Server shows it, and the count we derive is in its own field, saying from what."""
    log = load(str(sample("spark301_plain")))
    reads = [r for e in log.executions.values() for r in e.shuffle_reads if not r.local]
    assert reads and all(r.num_partitions is None for r in reads)
    assert all(r.derived_partitions == len(r.partition_sizes) and r.derived_partitions_from == "partition sizes"
               for r in reads if r.partition_sizes)
    assert all(r.partitions == (r.derived_partitions) for r in reads)
    d = reads[0].to_dict()
    assert d["num_partitions"] is None and d["num_partitions_derived"] == reads[0].derived_partitions


def test_events_parse_exactly_as_the_standard_parser_does():
    """orjson reads the events; whatever it refuses goes to the standard parser, so every line
    parses (or fails) as before."""
    import json

    from aqe_core.readers.eventlog.builder import parse_json

    lines = [b'{"Event":"x","n":18446744073709551616}', b'{"Event":"x","v":NaN}', b'{"Event":"x","s":"\\ud800"}',
             b'{"Event":"x","a":' + b"[" * 900 + b"]" * 900 + b"}", b'{"Event":"x","f":0.1,"d":1,"d":2}',
             '{"Event":"é"}'.encode()]
    for line in lines:
        assert parse_json(line) == json.loads(line) or repr(parse_json(line)) == repr(json.loads(line))
    for bad in (b'{"Event":"x"', b"\xff\xfe{}", b'{"Event":"x"} trailing'):
        with pytest.raises(ValueError):
            parse_json(bad)
        with pytest.raises(ValueError):
            json.loads(bad)
    deep = b'{"Event":"x","a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(RecursionError):  # the reader reports it as a bad line, as before
        parse_json(deep)


def test_the_physical_plan_text_is_the_latest_version_spark_logged():
    """Kept compressed once the execution ends, read back as Spark wrote it."""
    import json

    from aqe_core.api import load_event_log as load

    path = Path(__file__).resolve().parents[1] / "fixtures" / "eventlogs" / "spark301_plain_local-1795309249168.inprogress"
    latest: dict[int, str] = {}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d["Event"].endswith(("SQLExecutionStart", "SQLAdaptiveExecutionUpdate")):
            latest[d["executionId"]] = d["physicalPlanDescription"]
    log = load(str(path))
    from aqe_core.readers.eventlog.planinfo import physical_plan_description

    assert latest and {e: physical_plan_description(log.executions[e]) for e in latest} == latest
    assert all(isinstance(log.executions[e].physical_plan_z, bytes) for e in latest)


def test_a_loaded_log_survives_pickling():
    """Metric summaries and unbuilt plan versions come back the same from pickle and deepcopy
    (caches and worker processes copy models)."""
    import copy
    import pickle

    from aqe_core.api import load_event_log as load

    log = load(str(sample("spark359_zstd")))
    for other in (pickle.loads(pickle.dumps(log)), copy.deepcopy(log)):
        for e in log.executions.values():
            o = other.executions[e.id]
            assert {k: dict(v) for k, v in e.metric_values.items()} == {k: dict(v) for k, v in o.metric_values.items()}
            assert [p.to_dict() for p in e.plan_versions] == [p.to_dict() for p in o.plan_versions]
            assert (e.initial_plan.to_dict() if e.initial_plan else None) == (o.initial_plan.to_dict() if o.initial_plan else None)


def test_plan_versions_register_the_metrics_their_built_graph_has():
    """The reader registers each plan version's metrics from its JSON without building it: on
    every plan of every sample log, the same metrics (and exchange metrics, and shuffle-read size
    accumulators) as the built UI graph has."""
    import json

    from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES
    import zstandard
    from aqe_core.readers.eventlog.planinfo import build_plan, graph_nodes, plan_facts, plan_metrics

    plans = 0
    for key in ("spark301_plain", "spark359_zstd"):
        raw = sample(key).read_bytes()
        text = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read() if key.endswith(
            "zstd") else raw
        for line in text.splitlines():
            if b"sparkPlanInfo" not in line:
                continue
            info = json.loads(line)["sparkPlanInfo"]
            built = build_plan(info)
            facts = plan_facts(info)
            assert facts.metrics == plan_metrics(built)
            graph = graph_nodes(built)
            assert sorted(facts.exchange_metrics) == sorted(
                (m["name"], m["accumulator_id"]) for n in graph if "Exchange" in n.name for m in n.metrics)
            assert facts.size_accs == {m["accumulator_id"] for n in graph if n.name in SHUFFLE_READ_NAMES
                                       for m in n.metrics if m["name"] == "partition data size"}
            assert facts.adaptive == any(n.name == "AdaptiveSparkPlan" for n in built.walk())
            plans += 1
    assert plans > 30


def test_a_loaded_log_keeps_plans_packed_and_live_state_released():
    """Memory that does not grow with the log: every plan version, the final one too, stays
    packed in the model (a view builds it, recent builds are shared), and an execution that
    ended lets go of what only its aggregation read."""
    from aqe_core.model.eventlog import LazyPlan
    from aqe_core.readers.eventlog.builder import _Builder

    released = []
    update = _Builder._update

    def spy(self, ex):
        was_live = ex.live
        update(self, ex)
        if was_live and not ex.live and ex.aggregated:
            released.append((ex.types, ex.driver_updates))

    _Builder._update = spy
    try:
        log = load(str(sample("spark430_listener")))
    finally:
        _Builder._update = update
    adaptive = [ex for ex in log.executions.values() if ex.version_sources]
    assert adaptive and all(isinstance(src, LazyPlan) for ex in adaptive for src in ex.version_sources)
    ex = adaptive[0]
    assert ex.final_plan is ex.final_plan and ex.final_plan.name == "AdaptiveSparkPlan"
    assert released and all(types == {} and updates == [] for types, updates in released)


def test_packed_bytes_hold_their_own_size_only():
    import os
    import tracemalloc

    from aqe_core.readers.eventlog.packed import pack, unpack

    data = os.urandom(2000) * 20
    tracemalloc.start()
    try:
        blob = pack(data)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert unpack(blob) == data and held < 2 * len(blob) + 1024


def _spark_plan_sizes(path) -> dict[int, list[int]]:
    """Every node of every sparkPlanInfo tree Spark wrote, per execution and plan version (the
    tree as logged: codegen wrappers, and reused subtrees repeated under ReusedExchange)."""
    import zstandard

    def size(info):
        return 1 + sum(size(c) for c in info.get("children", []))

    sizes: dict[int, list[int]] = {}
    data = zstandard.ZstdDecompressor().stream_reader(path.open("rb")).read()
    for line in data.splitlines():
        if b"SQLExecutionStart" in line[:120] or b"SQLAdaptiveExecutionUpdate" in line[:120]:
            ev = json.loads(line)
            sizes.setdefault(ev["executionId"], []).append(size(ev["sparkPlanInfo"]))
    return sizes


def test_tpcds_like_sample_holds_production_scale_plans():
    """The big-plan sample (tools/record_big_plans.py): what Spark recorded, read back."""
    log = load(str(sample("spark430_tpcds_like")))
    sizes = _spark_plan_sizes(sample("spark430_tpcds_like"))

    def joins(plan):
        return sorted(n.name for n in plan.walk() if "Join" in n.name)

    q72 = by_desc(log, "q72-like")[0]
    assert q72.status == "COMPLETED" and q72.num_plan_versions >= 2
    assert len(sizes[q72.id]) == q72.num_plan_versions + 1
    assert joins(q72.initial_plan) == joins(q72.final_plan) == ["BroadcastHashJoin"] * 8 + ["SortMergeJoin"] * 2
    # 128 partitions, coalescing off for this query: AQE left every shuffle read alone
    assert not q72.final_plan.find(lambda n: n.name.startswith("AQEShuffleRead"))
    assert q72.aqe_conf.get("spark.sql.adaptive.coalescePartitions.enabled") is False
    q88 = by_desc(log, "q88-like")[0]
    assert sizes[q88.id][-1] >= 300
    assert joins(q88.final_plan).count("BroadcastNestedLoopJoin") == 7
    dozen = by_desc(log, "dozen-joins")[0]
    assert max(sizes[dozen.id][0], sizes[dozen.id][-1]) >= 300
    assert len(joins(dozen.initial_plan)) >= 12 and "SortMergeJoin(skew=true)" in joins(dozen.final_plan)
    assert any(r.skewed_partitions for r in dozen.shuffle_reads)
    assert all(r.partition_sizes_source == "driver_metrics" for r in dozen.shuffle_reads)
