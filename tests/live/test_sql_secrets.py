"""No server secret through SQL (issue 37): Spark's parser substitutes ``${env:NAME}``,
``${system:prop}`` and ``${spark:key}`` into a query's text before it parses it, and neither
environment variables nor JVM properties are redacted. A made-up secret sits in the environment
of the test process and its JVM (``tests/conftest.py``, set before the JVM started) and in a JVM
system property: the attack works on an unguarded session, and on every guarded path (the guard,
the Run page, ``run --sql``, Re-run for real, Verify / ``verify_fix`` of a capture, ``check-sql``)
it is refused before Spark sees the text, guarded sessions have substitution off, and the secret
reaches no plan, capture, run list or page."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from aqe_core.config import VARIABLE_SUBSTITUTE
from aqe_core.live.sql_guard import UnsafeSQL, check_setup, check_text, guard_session, verdict
from tests.conftest import TEST_SECRET
from tests.live.test_run_jobs import _home  # noqa: F401 - autouse: a fresh home, no server settings, guarded

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "captures" / "4.3.0-skew_join_inner.json.gz"
HOSTILE = json.loads((Path(__file__).parents[1] / "fixtures" / "sql_guard" / "hostile.json").read_text(encoding="utf-8"))
#: the corpus's statements that read the server through substitution (ten spellings)
SUBSTITUTING = [h for h in HOSTILE if "${" in h["sql"]]
PROPERTY = "aqe.lens.test.secret"
ISSUE_SQL = 'SELECT id FROM range(3) WHERE cast(id AS string) <> "${env:AQE_LENS_TEST_SECRET}"'


@pytest.fixture(scope="module")
def jvm_secret(spark):
    """The secret as the server holds it: in the JVM's environment and in a system property."""
    system = spark.sparkContext._jvm.java.lang.System
    assert str(system.getenv("AQE_LENS_TEST_SECRET")) == TEST_SECRET  # inherited when the JVM started
    system.setProperty(PROPERTY, TEST_SECRET)
    system.setProperty("aqe.lens.test.number", "1")
    yield TEST_SECRET
    system.clearProperty(PROPERTY)
    system.clearProperty("aqe.lens.test.number")


def _nowhere_under(folder: Path, secret: str) -> None:
    """No file under ``folder`` (captures, the run index, spool files) holds the secret, gzip or not."""
    import gzip

    for f in folder.rglob("*") if folder.exists() else ():
        if f.is_file():
            data = f.read_bytes()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            assert secret.encode() not in data, f


def test_the_corpus_has_ten_substitution_spellings():
    assert len(SUBSTITUTING) == 10
    assert {p for h in SUBSTITUTING for p in ("env:", "system:", "spark:", "sparkconf:", "hiveconf:", "hivevar:")
            if "${" + p in h["sql"]} == {"env:", "system:", "spark:", "sparkconf:", "hiveconf:", "hivevar:"}


@pytest.mark.parametrize("item", SUBSTITUTING, ids=[h["trick"] for h in SUBSTITUTING])
def test_substitution_is_refused_without_spark_in_one_line(item):
    with pytest.raises(UnsafeSQL) as exc:
        check_text(item["sql"])
    assert "${" in str(exc.value) and "\n" not in str(exc.value) and TEST_SECRET not in str(exc.value)
    with pytest.raises(UnsafeSQL, match=r"\$\{"):
        check_setup(f"CREATE TEMPORARY VIEW v AS {item['sql']}")


@pytest.mark.slow
def test_an_unguarded_session_would_leak_and_a_guarded_one_does_not(spark, jvm_secret):
    """What the guard stops is real: Spark's default session puts the secret in the plan; a
    guarded session (substitution off) keeps the text as written, even if ``${`` got past."""
    sql = "SELECT '${env:AQE_LENS_TEST_SECRET}' AS e, '${system:" + PROPERTY + "}' AS p"
    open_ = spark.newSession()
    assert [tuple(r) for r in open_.sql(sql).collect()] == [(jvm_secret, jvm_secret)]
    guarded = guard_session(spark.newSession())
    assert guarded.conf.get(VARIABLE_SUBSTITUTE) == "false"
    df = guarded.sql(sql)
    plan = df._jdf.queryExecution().toString()
    assert jvm_secret not in plan
    assert [tuple(r) for r in df.collect()] == [("${env:AQE_LENS_TEST_SECRET}", "${system:" + PROPERTY + "}")]


@pytest.mark.slow
@pytest.mark.parametrize("item", SUBSTITUTING, ids=[h["trick"] for h in SUBSTITUTING])
def test_the_guard_on_spark_refuses_every_spelling(spark, jvm_secret, item):
    v = verdict(item["sql"], guard_session(spark.newSession()))
    assert not v.allowed and "${" in v.reason and jvm_secret not in v.reason


@pytest.mark.slow
def test_runs_reruns_and_verify_never_carry_the_secret(spark_runtime, jvm_secret, tmp_path):
    """The runner (CLI ``run --sql``, the Run page's queue), Re-run for real and Verify of a
    capture whose SQL or setup views substitute: refused, nothing written that holds the secret."""
    from aqe_core.cli.recommend import verify_fix
    from aqe_core.live.jobs import RunManager
    from aqe_core.live.runner import Runner
    from aqe_core.model.presets import Preset
    from aqe_core.opening import load_source
    from aqe_core.readers.capture_file import load_capture, save_capture

    runner = Runner(spark_runtime, trusted=False)
    for item in SUBSTITUTING:
        with pytest.raises(UnsafeSQL, match=r"\$\{"):
            runner.run_sql(item["sql"])
        with pytest.raises(UnsafeSQL, match=r"\$\{"):
            runner.rerun(item["sql"], [("p", {})])
        with pytest.raises(UnsafeSQL, match=r"\$\{"):
            runner.rerun("SELECT * FROM v", [("p", {})], setup=[f"CREATE TEMPORARY VIEW v AS {item['sql']}"])
    mgr = RunManager()
    with pytest.raises(UnsafeSQL, match=r"\$\{"):
        mgr.submit_sql(ISSUE_SQL)
    cap = load_capture(SAMPLE)
    cap.queries[0].sql = cap.run["sql"] = ISSUE_SQL
    path = save_capture(cap, tmp_path / "substituting.json.gz")
    job = mgr.submit_rerun(str(path), cap.queries[0].index, [Preset("p", "p", {"spark.sql.shuffle.partitions": "4"},
                                                                     builtin=False)])
    deadline = time.time() + 120
    while job.active and time.time() < deadline:
        time.sleep(0.2)
    assert job.state == "refused" and "${" in job.message and jvm_secret not in job.message
    view = load_source(str(path)).views[0]
    line, score = verify_fix(view, SimpleNamespace(settings={"spark.sql.shuffle.partitions": "4"}), "local[2]",
                             trusted=False)
    assert score is None and line.startswith("not verified") and "${" in line and jvm_secret not in line
    _nowhere_under(Path(os.environ["AQE_LENS_HOME"]), jvm_secret)


@pytest.mark.slow
def test_the_run_page_refuses_the_issues_query_and_shows_no_secret(spark_runtime, jvm_secret):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/run.py").run()
    at.segmented_control(key="run_kind").set_value("SQL").run()
    at.text_area(key="run_sql").set_value(ISSUE_SQL).run()
    at.button(key="run_start").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("Not run" in e and "would substitute" in e for e in errors), errors  # (markdown-escaped text)
    shown = [str(getattr(el, "value", "")) for kind in ("error", "text", "markdown", "caption", "info", "warning")
             for el in getattr(at, kind)]
    assert not any(jvm_secret in s for s in shown)
    _nowhere_under(Path(os.environ["AQE_LENS_HOME"]), jvm_secret)
