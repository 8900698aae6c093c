"""The fleet scan on a local master without a JVM (issue 41): processes of this machine read the
real sample logs and write the tables a Spark job writes, which Spark and the Fleet page read back;
rescans, gone logs and what needs Spark go as before."""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs" / "eventlogs"
REPEATED = ROOT / "tests" / "fixtures" / "eventlogs" / "repeated" / "local-1795903609644.zstd"


def _table(out: Path, name: str) -> pd.DataFrame:
    df = pd.read_parquet(out / name).drop(columns=["scan"])
    keys = [c for c in ("file", "execution_id", "finding", "query") if c in df.columns]
    return df.sort_values(keys, kind="stable").reset_index(drop=True).astype(object).where(df.notna(), None)


@pytest.mark.slow
def test_a_scan_here_writes_the_tables_a_spark_job_writes(spark, tmp_path):
    from aqe_core.fleet.scan import read_history, run_scan
    from aqe_core.fleet.tables import spark_table

    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES, logs)
    shutil.copy(REPEATED, logs / REPEATED.name)
    (logs / "garbage.log").write_bytes(b"\x00\x01 not a log")
    by_spark = run_scan(spark, [str(logs)], str(tmp_path / "spark"))
    seen: list[tuple[int, int]] = []
    here = run_scan(None, [str(logs)], str(tmp_path / "here"), cores=2, progress=lambda d, t: seen.append((d, t)))
    assert (here.files, here.executions, here.findings, here.errors) == (
        by_spark.files, by_spark.executions, by_spark.findings, by_spark.errors)
    assert here.executions > 60 and here.errors >= 1 and seen[-1] == (here.files, here.files)
    assert here.queries == by_spark.queries > 0
    for name in ("executions", "findings", "logs", "queries"):
        a, b = _table(tmp_path / "spark", name), _table(tmp_path / "here", name)
        assert list(a.columns) == list(b.columns) and a.equals(b), name
    # Spark reads the files as its own: the same types, and the history a gate reads
    for name in ("executions", "findings", "logs", "queries"):
        assert (spark_table(spark, str(tmp_path / "here"), name, "parquet").schema
                == spark_table(spark, str(tmp_path / "spark"), name, "parquet").schema)
    assert len(read_history(spark, str(tmp_path / "here"))) == len(read_history(spark, str(tmp_path / "spark")))


def test_a_rescan_here_reads_only_new_logs_and_records_those_gone(tmp_path):
    from aqe_core.fleet.result import load_scan
    from aqe_core.fleet.scan import run_scan

    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    a, b = sorted(p for p in SAMPLES.iterdir() if p.name.startswith("local-"))[:2]
    shutil.copy(a, logs / a.name)
    first = run_scan(None, [str(logs)], str(out), presets=False, cores=2)
    assert (first.files, first.removed) == (1, 0) and first.scan_id
    assert run_scan(None, [str(logs)], str(out), presets=False, cores=2).scan_id == ""  # unchanged: nothing written
    shutil.copy(b, logs / b.name)
    (logs / a.name).unlink()
    night = run_scan(None, [str(logs)], str(out), presets=False, cores=2)
    assert (night.files, night.unchanged, night.removed) == (1, 0, 1)
    fleet = load_scan(str(out), roots=[str(tmp_path)])
    assert set(fleet.executions["file"]) == {str((logs / b.name).resolve())}


def test_what_needs_spark_is_said_before_anything_is_written(tmp_path):
    from aqe_core.fleet.scan import NeedsSpark, run_scan

    log = next(p for p in SAMPLES.iterdir() if p.name.startswith("local-"))
    for sources, kw in (([log.as_uri()], {}), ([str(log)], {"fmt": "csv"})):
        with pytest.raises(NeedsSpark):
            run_scan(None, sources, str(tmp_path / "out"), **kw)
    assert not (tmp_path / "out").exists()


def test_the_cli_reads_here_on_a_local_master_and_in_a_spark_job_when_asked(tmp_path, capsys, monkeypatch):
    from aqe_core.cli import main
    from aqe_core.fleet.scan import run_scan

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    called: list[object] = []

    def recorded(spark, *a, **kw):
        called.append(spark)
        return run_scan(spark, *a, **kw)

    monkeypatch.setattr("aqe_core.fleet.scan.run_scan", recorded)
    log = next(p for p in SAMPLES.iterdir() if p.name.startswith("local-"))
    assert main(["scan", str(log), "-o", str(tmp_path / "o"), "--master", "local[2]", "--no-presets"]) == 0
    err = capsys.readouterr().err
    assert called == [None] and "on this machine, 2 processes" in err and "scan: Spark" not in err
    assert "1 files" in err and list((tmp_path / "o" / "executions").glob("scan=*/part-*.parquet"))


@pytest.mark.parametrize("log", [REPEATED, REPEATED.parent / "streaming" / "local-1795905461316.zstd"],
                         ids=["repeated", "streaming"])
def test_the_queries_table_groups_each_logs_executions_as_explain_does(tmp_path, log):
    """Real recorded logs whose queries repeat (a query run 40, 20, 5 and 2 times; a stream-static
    join's micro-batches): one row per query, the executions, span and each decision's outcomes
    that explain's ``query_groups`` gives from the full views."""
    import json

    from aqe_core.fleet.scan import run_scan
    from aqe_core.opening import load_source
    from aqe_core.views.query_groups import group_views

    res = run_scan(None, [str(log)], str(tmp_path / "o"), presets=False)
    rows = pd.read_parquet(tmp_path / "o" / "queries").sort_values("executions", ascending=False, kind="stable")
    groups = group_views(load_source(str(log)).views)
    assert res.queries == len(rows) == len(groups) and len(groups) < res.executions
    for g, (_, r) in zip(groups, rows.iterrows()):
        assert (r["query"], r["name"], r["executions"]) == (g.query, g.name[:500], g.count)
        assert (r["first_execution"], r["last_execution"]) == (int(g.execution_ids[0]), int(g.execution_ids[-1]))
        assert r["span_ms"] == g.last_end_ms - g.first_start_ms and r["decisions"] == g.decisions_text()
        data = json.loads(r["decisions_json"])
        assert [(d["kind"], d["key"], [(x["value"], x["executions"]) for x in d["distribution"]]) for d in data] == [
            (d.kind, d.key, d.distribution()) for d in g.ordered_decisions()]
        assert r["changes"] == sum(d.changed for d in g.decisions.values())
        assert r["change_sentences"] == "\n".join(c.sentence for c in g.changes())
    assert rows["executions"].sum() == res.executions
    assert rows["executions"].max() >= 16  # a query that repeats is one row


def test_the_columns_are_the_arrays_pyarrow_builds():
    import pyarrow as pa

    from aqe_core.fleet.here import _column, arrow_type

    cases = {"string": [["a", None, "é", ""], [], [None], ["x" * 1000]],
             "long": [[1, None, 2**40, -3], [], [None, None], [True], [2**70]],
             "double": [[0.5, 2, None], [2**60], [float("nan")], []]}
    for kind, columns in cases.items():
        for values in columns:
            try:
                want = pa.array(values, type=arrow_type(kind))
            except (pa.ArrowException, OverflowError) as e:
                with pytest.raises(type(e)):
                    _column(values, kind)
                continue
            got = _column(values, kind)
            got.validate(full=True)
            assert got.type == want.type and got.null_count == want.null_count, (kind, values)
            assert str(got.to_pylist()) == str(want.to_pylist()), (kind, values)


def test_the_tables_are_written_without_pandas(tmp_path):
    """pyarrow.array imports pandas: the scan command's writes do not (0.3-0.4 s of its start)."""
    import subprocess
    import sys

    code = ("import sys; from aqe_core.fleet.here import EXECUTION_TYPES, write_parquet;"
            f"write_parquet([tuple(None for _ in EXECUTION_TYPES)], EXECUTION_TYPES, {str(tmp_path / 'e')!r});"
            "import aqe_core.cli.scan, aqe_core.fleet.reach;"
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"
    assert len(pd.read_parquet(tmp_path / "e")) == 1
