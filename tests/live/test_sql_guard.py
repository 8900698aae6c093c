"""The SQL and settings guard, on the real Spark: a corpus of hostile statements is refused with a
reason on every path that runs SQL (the guard itself, the Run page's RunManager, CLI ``run`` and
``check-sql``, Re-run for real, capture setup statements), harmless queries pass, refusals run
nothing, guarded failures do not leak data, and ``trusted`` turns the guard off."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqe_core.live.conf_guard import UnsafeConf, check_conf
from aqe_core.live.sql_guard import ALLOWED_REASON, MAX_SQL_CHARS, UnsafeSQL, check_setup, check_sql, check_text, guard_session, verdict

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parents[1] / "fixtures" / "sql_guard"
HOSTILE = json.loads((CORPUS / "hostile.json").read_text(encoding="utf-8"))
HARMLESS = json.loads((CORPUS / "harmless.json").read_text(encoding="utf-8"))
SAMPLE = ROOT / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz"
VIEWS = ("facts", "dims", "df_view", "py_view")
SECRET = "s3cr3t-token-value"


def _fill(sql: str, where: Path) -> str:
    """Hostile statements name a marker file and a directory: put both under ``where``."""
    return sql.replace("{marker}", str(where / "marker")).replace("{dir}", str(where / "dir"))


def _nothing_under(where: Path) -> bool:
    return not where.exists() or not any(where.iterdir())


@pytest.fixture(scope="module")
def guarded(spark):
    """A session like a guarded run's, with the views the harmless corpus queries: views made
    by setup statements, by a DataFrame (``spark.range``) and by local Python data."""
    s = guard_session(spark.newSession())
    s.sql("CREATE OR REPLACE TEMPORARY VIEW facts AS SELECT id, id % 10 AS k, id % 7 AS v FROM range(0, 100, 1, 2)")
    s.sql("CREATE OR REPLACE TEMPORARY VIEW dims AS SELECT id % 10 AS k, id AS dim_id, concat('n', id) AS name "
          "FROM range(10)")
    s.range(5).createOrReplaceTempView("df_view")
    s.createDataFrame([(1, "a")], ["x", "y"]).createOrReplaceTempView("py_view")
    return s


# ------------------------------------------------------------------------------------------
# without Spark


def test_corpus_is_big_enough():
    assert len(HOSTILE) >= 60 and len(HARMLESS) >= 30
    assert len({h["sql"] for h in HOSTILE}) == len(HOSTILE)


@pytest.mark.parametrize("sql,why", [
    ("", "empty"),
    ("   \n ", "empty"),
    ("SELECT 1" + " " * MAX_SQL_CHARS + "+ 1", "longer than"),
    ("SELECT '\x00'", "NUL"),
    (None, "text"),
])
def test_text_checks_need_no_spark(sql, why):
    with pytest.raises(UnsafeSQL, match=why):
        check_text(sql)


def test_conf_guard_allows_registry_keys_and_refuses_the_rest():
    ok = check_conf({"spark.sql.shuffle.partitions": 8, "spark.sql.autoBroadcastJoinThreshold": "-1",
                     "spark.sql.adaptive.enabled": True, "spark.sql.adaptive.advisoryPartitionSizeInBytes": "64m",
                     "spark.sql.ansi.enabled": "false"})
    assert ok["spark.sql.shuffle.partitions"] == "8" and ok["spark.sql.adaptive.enabled"] == "true"
    for key, value, why in [
        ("spark.sql.catalog.evil", "com.example.Evil", "cannot be set here"),
        ("spark.sql.runSQLOnFiles", "true", "cannot be set here"),
        ("spark.sql.extensions", "com.example.Ext", "cannot be set here"),
        ("spark.jars", "/tmp/x.jar", "cannot be set here"),
        ("spark.sql.adaptive.customCostEvaluatorClass", "com.example.Cost", "Java class"),
        ("spark.sql.shuffle.partitions", "lots", "should be int"),
        ("spark.sql.shuffle.partitions", "0", "positive"),
        ("spark.sql.session.timeZone", "x" * 300, "too long"),
    ]:
        with pytest.raises(UnsafeConf, match=why):
            check_conf({key: value})
    with pytest.raises(UnsafeConf):
        check_conf(["spark.sql.shuffle.partitions"])  # type: ignore[arg-type]


def test_conf_guard_ignores_what_the_caller_says_cannot_matter():
    conf = {"spark.sql.warehouse.dir": "file:/elsewhere", "spark.sql.shuffle.partitions": "40"}
    assert check_conf(conf, ignore=lambda k, v: k == "spark.sql.warehouse.dir") == {"spark.sql.shuffle.partitions": "40"}


def test_workload_and_preset_settings_pass_the_conf_guard():
    from aqe_core.live import workloads
    from aqe_core.model.presets import BUILTIN_PRESETS

    for w in workloads.WORKLOADS.values():
        for p in w.presets:
            check_conf(w.conf_for(p, 1.0))
    for p in BUILTIN_PRESETS:
        check_conf(p.settings)


# ------------------------------------------------------------------------------------------
# the guard on Spark

@pytest.mark.slow
@pytest.mark.parametrize("item", HOSTILE, ids=[h["trick"] for h in HOSTILE])
def test_hostile_statement_is_refused_with_a_reason(guarded, item, tmp_path):
    v = verdict(_fill(item["sql"], tmp_path), guarded)
    assert not v.allowed and len(v.reason) > 10, (item["trick"], v.reason)
    assert _nothing_under(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("sql", HARMLESS)
def test_harmless_query_is_allowed(guarded, sql):
    assert check_sql(sql, guarded) == sql.strip()


@pytest.mark.slow
@pytest.mark.parametrize("sql,why", [
    ("SELECT reflect('java.lang.System', 'getProperty', 'user.home')", "reflection"),
    ("SELECT builtin.`reflect`('java.lang.System', 'getProperty', 'user.home')", "reflection"),
    ("SELECT IDENTIFIER('java_method')('java.lang.System', 'getProperty', 'user.home')", "IDENTIFIER"),
    ("SELECT TRANSFORM(id) USING 'cat' AS (x string) FROM range(1)", "runs a program"),
    ("SELECT * FROM `text`.`/etc/passwd`", "by path"),
    ("INSERT OVERWRITE DIRECTORY '/tmp/x' USING csv SELECT 1", "writes files"),
    ("SET spark.sql.catalog.x=a.B", "command"),
    ("EXECUTE IMMEDIATE 'SELECT 1'", "EXECUTE IMMEDIATE"),
    ("SELECT 1; SELECT 2", "one statement"),
    ("SELECT my_udf(1)", "built-in"),
    ("SELECT * FROM no_such_table", "cannot analyse"),
])
def test_reasons_name_what_was_refused(guarded, sql, why):
    with pytest.raises(UnsafeSQL, match=why):
        check_sql(sql, guarded)


@pytest.mark.slow
def test_the_analysed_plan_is_checked_too(spark, tmp_path):
    """Views made by code (not SQL) are only seen after analysis: a view over a file read by
    path and a view calling a Python UDF are refused there."""
    from pyspark.sql.functions import udf

    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    s = guard_session(spark.newSession())
    s.read.text(str(secret)).createOrReplaceTempView("file_view")
    s.range(3).select(udf(lambda x: x, "long")("id").alias("y")).createOrReplaceTempView("udf_view")
    with pytest.raises(UnsafeSQL, match="files by path"):
        check_sql("SELECT * FROM file_view", s)
    with pytest.raises(UnsafeSQL, match="PythonUDF"):
        check_sql("SELECT y FROM udf_view", s)
    assert check_sql("SELECT 1", s)


@pytest.mark.slow
def test_every_workload_query_passes_with_its_views(spark):
    from aqe_core.live import workloads

    for w in workloads.WORKLOADS.values():
        if not w.supports(spark.version):
            continue
        s = guard_session(spark.newSession())
        for stmt in w.views(s, 0.01).values():
            check_setup(stmt, s)  # the form captures record
        check_sql(w.sql, s)


@pytest.mark.slow
def test_setup_statements_are_temporary_views_of_allowed_queries(guarded, tmp_path):
    stmt = check_setup("CREATE TEMPORARY VIEW v1 AS SELECT id FROM range(3)", guarded)
    assert stmt == "CREATE OR REPLACE TEMPORARY VIEW v1 AS SELECT id FROM range(3)"
    for bad, why in [
        ("CREATE TEMPORARY VIEW v USING text OPTIONS (path '/etc/passwd')", "only be CREATE TEMPORARY VIEW"),
        ("CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1", "only be CREATE TEMPORARY VIEW"),
        ("CREATE VIEW v AS SELECT 1", "only be CREATE TEMPORARY VIEW"),
        ("CREATE TEMPORARY VIEW v(a) AS SELECT 1", "only be CREATE TEMPORARY VIEW"),
        ("CREATE TEMPORARY VIEW v AS SELECT 1; DROP TABLE t", "one statement"),
        ("CREATE TEMPORARY VIEW v AS SELECT * FROM text.`/etc/passwd`", "setup view v: .*by path"),
        ("SELECT 1", "only be CREATE TEMPORARY VIEW"),
    ]:
        with pytest.raises(UnsafeSQL, match=why):
            check_setup(bad, guarded)
    for item in HOSTILE:
        with pytest.raises(UnsafeSQL):
            check_setup(f"CREATE TEMPORARY VIEW v AS {_fill(item['sql'], tmp_path)}", guarded)
    assert _nothing_under(tmp_path)


# ------------------------------------------------------------------------------------------
# the statements are dangerous for real, and the guarded runner runs none of them


@pytest.mark.slow
def test_hostile_statements_act_when_unguarded_and_not_when_guarded(spark_runtime, tmp_path):
    from aqe_core.live.runner import Runner

    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    guarded_dir, trusted_dir = tmp_path / "guarded", tmp_path / "trusted"
    guarded_dir.mkdir()
    trusted_dir.mkdir()
    shell = "SELECT TRANSFORM(id) USING 'sh -c \"touch {marker}; cat\"' AS (l string) FROM range(1)"
    write = "INSERT OVERWRITE DIRECTORY '{dir}/out' USING csv SELECT 1 AS x"
    read = f"SELECT raise_error(first(value)) FROM text.`{secret}`"
    guard = Runner(spark_runtime, trusted=False)
    for sql in (shell, write, read):
        with pytest.raises(UnsafeSQL):
            guard.run_sql(_fill(sql, guarded_dir))
    assert _nothing_under(guarded_dir)

    # the same statements on the same Spark, unguarded: a program ran, files were written, a file was read
    trusted = spark_runtime.spark.newSession()
    trusted.sql(_fill(shell, trusted_dir)).collect()
    assert (trusted_dir / "marker").exists()
    trusted.sql(_fill(write, trusted_dir)).collect()
    assert any((trusted_dir / "dir" / "out").glob("part-*"))
    with pytest.raises(Exception, match=SECRET):
        trusted.sql(read).collect()
    home = trusted.sql("SELECT reflect('java.lang.System', 'getProperty', 'user.home')").collect()[0][0]
    assert home and Path(home).is_dir()  # any Java method, called from SQL


@pytest.mark.slow
def test_guarded_failures_do_not_carry_data(spark_runtime):
    from aqe_core.live.runner import RunFailed, Runner

    leak = f"SELECT raise_error(concat('{SECRET[:6]}', '{SECRET[6:]}')) FROM range(1)"
    with pytest.raises(RunFailed) as exc:
        Runner(spark_runtime, trusted=False).run_sql(leak)
    assert SECRET not in str(exc.value) and "USER_RAISED_EXCEPTION" in str(exc.value)
    assert exc.value.__cause__ is None and exc.value.__suppress_context__  # Spark's exception is not chained
    cast = f"SELECT CAST(concat('{SECRET[:6]}', '{SECRET[6:]}', CAST(id AS STRING)) AS INT) FROM range(1)"
    with pytest.raises(RunFailed) as exc:
        Runner(spark_runtime, trusted=False).run_sql(cast, {"spark.sql.ansi.enabled": "true"})
    assert SECRET not in str(exc.value) and "CAST_INVALID_INPUT" in str(exc.value)
    with pytest.raises(RunFailed, match=SECRET):  # trusted: Spark's own message
        Runner(spark_runtime, trusted=True).run_sql(leak)


@pytest.mark.slow
def test_trusted_turns_the_guard_off(spark_runtime, monkeypatch, tmp_path):
    from aqe_core.live.runner import Runner
    from aqe_core.live.jobs import RunManager

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path))
    monkeypatch.delenv("AQE_LENS_TRUSTED", raising=False)
    assert Runner(spark_runtime).trusted is False and RunManager().trusted is False
    with pytest.raises(UnsafeSQL, match="command"):
        Runner(spark_runtime).run_sql("SET spark.sql.shuffle.partitions=7")
    cap = Runner(spark_runtime, trusted=True).run_sql("SET spark.sql.shuffle.partitions=7",
                                                      {"spark.sql.legacy.timeParserPolicy": "CORRECTED"})
    assert cap.queries and cap.run["sql"].startswith("SET")
    monkeypatch.setenv("AQE_LENS_TRUSTED", "1")
    assert Runner(spark_runtime).trusted is True and RunManager().trusted is True


# ------------------------------------------------------------------------------------------
# every path that runs SQL


def _wait(job, seconds: float = 300):
    deadline = time.time() + seconds
    while job.active and time.time() < deadline:
        time.sleep(0.2)
    return job


@pytest.mark.slow
def test_run_page_refuses_with_the_reason(spark_runtime, monkeypatch, tmp_path):
    from aqe_core.live.jobs import RunManager

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AQE_LENS_TRUSTED", raising=False)
    mgr = RunManager()
    with pytest.raises(UnsafeSQL, match="empty"):
        mgr.submit_sql("  ")
    with pytest.raises(UnsafeConf, match="spark.sql.catalog.x"):
        mgr.submit_sql("SELECT 1", {"spark.sql.catalog.x": "com.example.Evil"})
    job = _wait(mgr.submit_sql(_fill(HOSTILE[0]["sql"], tmp_path)))
    assert job.state == "refused" and "runs a program" in job.message
    job = _wait(mgr.submit_sql(f"SELECT raise_error('{SECRET}')"))
    assert job.state == "failed" and SECRET not in job.message
    job = _wait(mgr.submit_sql("SELECT id % 3 AS k, count(*) FROM range(30) GROUP BY 1", {"spark.sql.shuffle.partitions": "4"}))
    assert job.state == "done", job.message
    assert not (tmp_path / "marker").exists()


def _cli(argv: list[str]) -> int:
    from aqe_core.cli import main

    return main(argv)


@pytest.mark.slow
def test_cli_run_refuses_the_hostile_corpus_without_running_it(spark_runtime, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("AQE_LENS_TRUSTED", raising=False)
    out = tmp_path / "never.json"
    where = tmp_path / "w"
    for item in HOSTILE:
        sql = _fill(item["sql"], where)
        if not sql.strip():
            continue  # `--sql ""` is a usage error (exit 2), covered below
        rc = _cli(["run", f"--sql={sql}", "-o", str(out), "--no-progress"])
        err = capsys.readouterr().err
        assert rc == 1 and "run: not run:" in err, (item["trick"], rc, err[-300:])
    assert not out.exists() and _nothing_under(where)
    sql_file = tmp_path / "q.sql"
    sql_file.write_text(_fill(HOSTILE[0]["sql"], where))
    assert _cli(["run", "--sql-file", str(sql_file), "-o", str(out)]) == 1
    assert _cli(["run", "--sql", "SELECT 1", "--conf", "spark.sql.catalog.x=com.example.Evil", "-o", str(out)]) == 1
    assert "spark.sql.catalog.x" in capsys.readouterr().err
    assert _cli(["run", "--sql", "", "-o", str(out)]) == 2
    assert not out.exists() and _nothing_under(where)


@pytest.mark.slow
def test_cli_run_trusted_runs_a_command(spark_runtime, tmp_path, monkeypatch):
    monkeypatch.delenv("AQE_LENS_TRUSTED", raising=False)
    out = tmp_path / "set.json"
    assert _cli(["run", "--sql", "SET spark.sql.shuffle.partitions=5", "-o", str(out), "--no-progress"]) == 1
    assert _cli(["run", "--trusted", "--sql", "SET spark.sql.shuffle.partitions=5", "-o", str(out), "--no-progress"]) == 0
    assert out.exists()


@pytest.mark.slow
def test_check_sql_cli_judges_the_corpus_in_one_session(tmp_path):
    """One subprocess (its own JVM) for the whole corpus; harmless queries that need the test's
    views are left out (the CLI's session has none)."""
    hostile = [_fill(h["sql"], tmp_path / "w") for h in HOSTILE]
    harmless = [q for q in HARMLESS if not re.search(r"\b(" + "|".join(VIEWS) + r")\b", q)]
    assert len(harmless) >= 30
    env = {**os.environ, "AQE_LENS_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-m", "aqe_core", "check-sql"], input=json.dumps(hostile + harmless),
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    assert len(got) == len(hostile) + len(harmless)
    for sql, v in zip(hostile, got):
        assert v["allowed"] is False and v["reason"], sql
    for sql, v in zip(harmless, got[len(hostile):]):
        assert v == {"allowed": True, "reason": ALLOWED_REASON}, sql
    assert _nothing_under(tmp_path / "w")


@pytest.mark.parametrize("stdin,why", [
    ("", "not JSON"),
    ("SELECT 1", "not JSON"),
    ('{"sql": "SELECT 1"}', "JSON array"),
    ('["SELECT 1", 2]', "item 1"),
])
def test_check_sql_cli_bad_input_exits_2(stdin, why, monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    assert _cli(["check-sql"]) == 2
    err = capsys.readouterr().err
    assert why in err and "Traceback" not in err


def _hostile_capture(tmp_path: Path, *, sql=None, views=None, conf=None) -> tuple[Path, int]:
    from aqe_core.readers.capture_file import load_capture, save_capture

    cap = load_capture(SAMPLE)
    q = cap.queries[0]
    if sql is not None:
        q.sql = sql
        cap.run["sql"] = sql
    if views is not None:
        cap.run["views"] = views
    if conf is not None:
        q.conf = {**q.conf, **conf}
    path = save_capture(cap, tmp_path / f"hostile-{len(list(tmp_path.glob('hostile-*')))}.json.gz")
    return path, q.index


@pytest.mark.slow
def test_rerun_for_real_refuses_a_hostile_capture(spark_runtime, tmp_path, monkeypatch):
    from aqe_core.model.presets import Preset
    from aqe_core.user_presets import get_preset
    from aqe_core.live.jobs import RunManager

    if not spark_runtime.version.startswith("4.3"):
        pytest.skip("the sample capture is from Spark 4.3")
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AQE_LENS_TRUSTED", raising=False)
    where = tmp_path / "w"
    mgr = RunManager()
    actual = [get_preset("actual")]
    cases = [
        (dict(sql=_fill("INSERT OVERWRITE DIRECTORY '{dir}/out' USING csv SELECT 1", where)), actual, "DIRECTORY"),
        (dict(views={"facts": _fill("INSERT OVERWRITE DIRECTORY '{dir}/out' USING csv SELECT 1", where)}), actual,
         "setup statement"),
        (dict(views={"facts": "CREATE TEMPORARY VIEW facts AS SELECT * FROM text.`/etc/passwd`"}), actual, "by path"),
        (dict(views={"facts": _fill("CREATE TEMPORARY VIEW facts AS SELECT TRANSFORM(id) USING "
                                    "'sh -c \"touch {marker}\"' AS (l string) FROM range(1)", where)}), actual, "program"),
        (dict(conf={"spark.sql.catalog.evil": "com.example.Evil"}), actual, "spark.sql.catalog.evil"),
        ({}, [Preset("mine", "user preset", {"spark.sql.runSQLOnFiles": "true"}, builtin=False)], "runSQLOnFiles"),
    ]
    for change, presets, why in cases:
        path, index = _hostile_capture(tmp_path, **change)
        job = _wait(mgr.submit_rerun(str(path), index, presets))
        assert job.state == "refused" and why in job.message, (change, job.state, job.message)
    assert _nothing_under(where)
    runs = tmp_path / "home" / "runs"  # no capture written: nothing ran (the run index lists the refusals)
    assert not runs.exists() or not list(runs.glob("*.json.gz"))


@pytest.mark.slow
def test_a_guarded_sql_run_can_be_run_again(spark_runtime, tmp_path, monkeypatch):
    """A guarded SQL run records the guard's own spark.sql.runSQLOnFiles=false in its capture;
    re-running that capture keeps it (the guarded session already has it), it is not refused."""
    from aqe_core.live.jobs import RunManager
    from aqe_core.user_presets import get_preset
    from aqe_core.readers.capture_file import load_capture

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AQE_LENS_TRUSTED", raising=False)
    mgr = RunManager()
    run = _wait(mgr.submit_sql("SELECT id % 10 AS k, count(*) AS n FROM range(0, 10000, 1, 4) GROUP BY id % 10"))
    assert run.state == "done", run.message
    assert load_capture(run.result_path).queries[0].conf.get("spark.sql.runSQLOnFiles") == "false"
    again = _wait(mgr.submit_rerun(run.result_path, 0, [get_preset("actual")]))
    assert again.state == "done", again.message


@pytest.mark.slow
def test_rerun_refuses_the_whole_hostile_corpus(spark_runtime, tmp_path):
    from aqe_core.live.runner import Runner

    runner = Runner(spark_runtime, trusted=False)
    setup = ["CREATE TEMPORARY VIEW facts AS SELECT id, id % 10 AS k FROM range(10)"]
    for item in HOSTILE:
        with pytest.raises(UnsafeSQL):
            runner.rerun(_fill(item["sql"], tmp_path), [("p", {"spark.sql.shuffle.partitions": "4"})], setup=setup)
    assert _nothing_under(tmp_path)
