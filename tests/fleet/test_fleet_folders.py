"""Issue 39, requirement 5 (in part): a folder with subfolders is scanned recursively (a team's
logs by job or by day), the scan's own output under it is never read as logs, and a scan that
finds no log says where it looked and exits non-zero, before Spark starts. Before: a folder
whose logs sat in subfolders scanned 0 files with exit 0 and no word why."""
from __future__ import annotations

import shutil
from pathlib import Path

from aqe_core.cli import main
from aqe_core.cli.scan import NO_LOGS
from aqe_core.fleet.scan import expand_local

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "eventlogs"
LOG = SAMPLES / "local-1795309160158.zstd"
ROLLING = SAMPLES / "eventlog_v2_local-1795308995034"


def _tree(root: Path) -> dict[str, Path]:
    (root / "orders" / "2026-11-27").mkdir(parents=True)
    (root / "billing").mkdir()
    (root / ".hidden").mkdir()
    logs = {"deep": root / "orders" / "2026-11-27" / LOG.name, "rolling": root / "billing" / ROLLING.name,
            "hidden": root / ".hidden" / LOG.name, "out": root / "scans" / "executions" / "part-0.parquet"}
    shutil.copy(LOG, logs["deep"])
    shutil.copytree(ROLLING, logs["rolling"])
    shutil.copy(LOG, logs["hidden"])
    logs["out"].parent.mkdir(parents=True)
    logs["out"].write_bytes(b"PAR1")
    (root / "orders" / "loop").symlink_to(root, target_is_directory=True)
    return logs


def test_subfolders_are_scanned_and_the_output_is_not(tmp_path):
    logs = _tree(tmp_path / "logs")
    paths, missing = expand_local([str(tmp_path / "logs")], skip=[str(tmp_path / "logs" / "scans")])
    assert missing == []
    assert paths == [str(logs["rolling"].resolve()), str(logs["deep"].resolve())]  # (sorted: billing, orders)


def test_a_scan_that_finds_no_log_says_where_and_exits_non_zero(tmp_path, capsys):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    (tmp_path / "empty" / ".hidden.log").write_text("{}")
    code = main(["scan", str(tmp_path / "empty"), str(tmp_path / "none*"), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == NO_LOGS != 0
    assert f"no event log or capture found in {tmp_path / 'empty'}, {tmp_path / 'none*'}" in err
    assert "in subfolders too" in err and "Spark" not in err.split("no event log")[0]  # (no JVM was started)
