"""A fleet scan result is read from a folder others may write: whatever its tables hold (types
a CSV guessed, values of the wrong type, broken JSON, infinities, missing columns), the Fleet
page's reads give rows or one SourceError, never a TypeError, KeyError or OverflowError."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from aqe_core.fleet.result import load_scan, preset_impact
from aqe_core.opening import SourceError


def _scan(tmp_path, executions: dict, findings: dict) -> str:
    out = tmp_path / "scan"
    for name, cols in (("executions", executions), ("findings", findings)):
        (out / name).mkdir(parents=True)
        pd.DataFrame(cols).to_csv(out / name / "part-0.csv", index=False)
    return str(out)


def test_hostile_csv_tables_give_rows_of_the_expected_types(tmp_path):
    path = _scan(tmp_path, {
        "file": [1, "/logs/a", "/logs/b"], "execution_id": ["x", "inf", "1e300"],
        "findings": [7, "skew_split", None], "error": [None, None, None],
        "preset_changes": ["{not json", "[1, 2]", '{"default": 5}'], "wasted_task_ms": ["lots", 1, 2],
        "description": [123, 456, 789],  # all numbers: a CSV reads them as ints
    }, {"finding": [1, 2, 3], "file": ["a", "b", "c"]})
    scan = load_scan(path, roots=[str(tmp_path)])
    rows = scan.rows(["skew_split"], text="4")
    assert list(rows["description"]) == ["456"]
    assert all(isinstance(x, str) for x in scan.rows()["file"])
    assert all(math.isnan(x) for x in scan.executions["execution_id"])  # never int(inf) later
    for sort in ("wasted task time", "triage score", "duration", "file"):
        scan.rows(sort=sort)
    counts, changed = preset_impact(scan, "default")
    assert counts["executions"] == 3 and counts["changed"] == 0
    assert scan.finding_counts() == {}


def test_a_findings_table_without_its_column_is_one_message(tmp_path):
    path = _scan(tmp_path, {"file": ["a"], "execution_id": [1], "findings": [""], "error": [None],
                            "preset_changes": ["{}"], "wasted_task_ms": [0]}, {"other": [1]})
    with pytest.raises(SourceError, match="findings table lacks"):
        load_scan(path, roots=[str(tmp_path)])


def test_a_csv_as_spark_writes_it_reads_back(tmp_path):
    """Spark's CSV writer escapes a quote inside a quoted value as \\" (the preset changes JSON)."""
    out = tmp_path / "scan"
    (out / "executions").mkdir(parents=True)
    (out / "findings").mkdir()
    (out / "executions" / "part-00000-x-c000.csv").write_text(
        "file,execution_id,findings,error,preset_changes,wasted_task_ms\n"
        '/logs/a,3,skew_split,,"{\\"default\\":\\"partitions 200 -> 12\\"}",40\n')
    (out / "findings" / "part-00000-x-c000.csv").write_text("file,execution_id,finding\n/logs/a,3,skew_split\n")
    scan = load_scan(str(out), roots=[str(tmp_path)])
    counts, changed = preset_impact(scan, "default")
    assert counts["changed"] == 1 and changed["change"].iloc[0] == "partitions 200 -> 12"
