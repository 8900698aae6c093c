"""Night after night into one scan directory (issue 39, requirement 5): after each night the
fleet (its current rows) is the one a scan from scratch of the same folder gives, a night with
nothing new writes nothing, a deleted log leaves the fleet (with ``--full`` too), and a finished
application's ``.inprogress`` log gives way to its complete log. Before: deleted and completed
logs stayed (a finished application was listed twice), and an unchanged night cost as much as the
first and added empty partitions."""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from aqe_core.fleet.history import app_runs
from aqe_core.fleet.result import load_scan
from aqe_core.fleet.scan import ScanResult, read_history, run_scan

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "eventlogs"
SAMPLES = ROOT / "sample_logs" / "eventlogs"
A = SAMPLES / "local-1795309160158.zstd"
B = FIXTURES / "sentence_cases" / "local-1795848637016.zstd"
B2 = FIXTURES / "plain_cases" / "local-1795647456252.zstd"  # B rewritten: other content, same name
C = SAMPLES / "local-1795309209855.lzf"
PARTIAL = FIXTURES / "spark301_plain_local-1795309249168.inprogress"  # the first part of COMPLETE
COMPLETE = SAMPLES / "local-1795309249168"


def _files(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*")}


def _now(out: Path, roots: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fleet's current executions and findings, without the scan they came from."""
    scan = load_scan(str(out), roots=roots)
    keys = ["file", "execution_id"]
    ex = scan.executions.drop(columns="scan").sort_values(keys, kind="stable").reset_index(drop=True)
    fi = scan.findings.drop(columns="scan").sort_values([*keys, "finding"], kind="stable").reset_index(drop=True)
    return ex, fi


class Nights:
    """One folder of logs scanned into one OUT night after night, each night checked against a
    scan from scratch of the same folder into a fresh OUT."""

    def __init__(self, spark, tmp: Path) -> None:
        self.spark, self.tmp, self.n = spark, tmp, 0
        self.logs, self.out = tmp / "logs", tmp / "out"
        self.logs.mkdir()

    def night(self, *, full: bool = False) -> ScanResult:
        self.n += 1
        res = run_scan(self.spark, [str(self.logs)], str(self.out), presets=False, incremental=not full)
        fresh = self.tmp / f"fresh{self.n}"
        run_scan(self.spark, [str(self.logs)], str(fresh), presets=False)
        roots = [str(self.tmp)]
        got, want = _now(self.out, roots), _now(fresh, roots)
        pd.testing.assert_frame_equal(got[0], want[0], check_dtype=False)  # (values; a column with a gap in another scan is float)
        pd.testing.assert_frame_equal(got[1], want[1], check_dtype=False)
        return res

    def path(self, name: str) -> str:
        return str((self.logs / name).resolve())


@pytest.mark.slow
def test_nights_keep_the_fleet_a_scan_from_scratch_gives(spark, tmp_path):
    n = Nights(spark, tmp_path)
    for log in (A, B):
        shutil.copy(log, n.logs / log.name)
    shutil.copy(PARTIAL, n.logs / "app-1.inprogress")
    first = n.night()
    assert (first.files, first.removed) == (3, 0) and first.scan_id

    before = _files(n.out)  # unchanged: nothing read, nothing written
    same = n.night()
    assert (same.files, same.unchanged, same.removed, same.scan_id) == (0, 3, 0, "")
    assert _files(n.out) == before

    shutil.copy(C, n.logs / C.name)  # added
    added = n.night()
    assert (added.files, added.unchanged) == (1, 3)

    shutil.copy(B2, n.logs / B.name)  # replaced: the same name, other content
    replaced = n.night()
    assert (replaced.files, replaced.unchanged) == (1, 3)

    (n.logs / A.name).unlink()  # deleted
    deleted = n.night()
    assert (deleted.files, deleted.removed) == (0, 1) and deleted.scan_id
    assert sorted(p.name for p in (n.out / "removed").iterdir()) == [f"scan={deleted.scan_id}"]
    assert n.path(A.name) not in set(read_history(spark, str(n.out))["file"])  # (what the gate reads)
    assert n.path(A.name) not in set(app_runs(load_scan(str(n.out), roots=[str(tmp_path)]).history)["file"])

    (n.logs / C.name).unlink()  # deleted, read with --full: still gone
    full = n.night(full=True)
    assert (full.files, full.removed) == (2, 1)  # (B and app-1.inprogress read again)

    shutil.copy(COMPLETE, n.logs / "app-1")  # the application finished: Spark renames its log
    (n.logs / "app-1.inprogress").unlink()
    completed = n.night()
    assert (completed.files, completed.removed) == (1, 1)
    runs = app_runs(load_scan(str(n.out), roots=[str(tmp_path)]).history)
    assert list(runs["file"]).count(n.path("app-1")) == 1 and n.path("app-1.inprogress") not in set(runs["file"])
    assert runs["app_id"].is_unique

    shutil.copy(A, n.logs / A.name)  # a deleted log put back: in the fleet again
    back = n.night()
    assert (back.files, back.removed) == (1, 0)


def test_the_cli_records_a_folder_emptied_and_says_an_unchanged_night_wrote_nothing(spark, tmp_path, capsys, monkeypatch):
    from aqe_core.cli import main
    from aqe_core.cli.scan import NO_LOGS

    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path / "home"))
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    shutil.copy(B, logs / B.name)
    args = ["scan", str(logs), "-o", str(out), "--no-presets", "--no-progress", "--fail-on", "findings>0"]
    main(args)
    capsys.readouterr()
    before = _files(out)
    assert main(args) == 0  # unchanged: no gate on the scan before, nothing written
    assert "nothing new or gone" in capsys.readouterr().err and _files(out) == before
    (logs / B.name).unlink()  # every log gone: recorded (not "no log found" before Spark)
    assert main(args) == 0
    assert "1 log gone since the last scan" in capsys.readouterr().err
    assert load_scan(str(out), roots=[str(tmp_path)]).executions.empty
    assert main(args) == NO_LOGS  # and then nothing is known or found


def test_hadoop_uri_logs_and_csv_tables_go_the_same_way(spark, tmp_path):
    """Logs read through Hadoop (``file:`` here, as ``hdfs:``) and CSV tables: an unchanged night
    writes nothing, a deleted log is found gone and leaves the fleet."""
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    for log in (A, B):
        shutil.copy(log, logs / log.name)
    source = [logs.resolve().as_uri()]
    first = run_scan(spark, source, str(out), fmt="csv", presets=False)
    assert first.files == 2
    before = _files(out)
    same = run_scan(spark, source, str(out), fmt="csv", presets=False)
    assert (same.files, same.unchanged, same.scan_id) == (0, 2, "") and _files(out) == before
    (logs / A.name).unlink()
    gone = run_scan(spark, source, str(out), fmt="csv", presets=False)
    assert (gone.files, gone.removed) == (0, 1)
    files = set(load_scan(str(out), roots=[str(tmp_path)]).executions["file"])
    assert len(files) == 1 and files.pop().endswith(B.name)
    again = run_scan(spark, source, str(out), fmt="csv", presets=False)  # (the removal read back from CSV)
    assert (again.files, again.removed, again.scan_id) == (0, 0, "")


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_an_unchanged_night_into_a_hadoop_uri_runs_no_spark_job(spark, tmp_path, fmt):
    """An output given as a Hadoop URI (``file:`` here, as ``hdfs:`` or ``s3a:``): the next night
    reads its small tables through Hadoop's FileSystem on the driver, so a night with nothing new
    or gone starts no Spark job and writes nothing."""
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    for log in (A, B):
        shutil.copy(log, logs / log.name)
    source, uri = [str(logs)], out.resolve().as_uri()
    assert run_scan(spark, source, uri, fmt=fmt, presets=False).files == 2
    before, store = _files(out), spark.sparkContext._jsc.sc().statusStore()
    jobs = store.jobsList(None).size()  # every job the application ran, of any group
    same = run_scan(spark, source, uri, fmt=fmt, presets=False)
    assert (same.files, same.unchanged, same.scan_id) == (0, 2, "") and _files(out) == before
    assert store.jobsList(None).size() == jobs
    (logs / A.name).unlink()
    assert run_scan(spark, source, uri, fmt=fmt, presets=False).removed == 1
    again = run_scan(spark, source, uri, fmt=fmt, presets=False)  # the removal read back through Hadoop
    assert (again.files, again.removed, again.scan_id) == (0, 0, "")
