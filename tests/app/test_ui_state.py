"""Session-state keys (issue 9): named once in ``ui/state.py`` with the strings tests, links and
old sessions rely on; nothing else in ``ui/``, ``app.py`` or ``pages/`` spells one."""
from __future__ import annotations

import ast
from pathlib import Path

from ui import state

ROOT = Path(__file__).resolve().parents[2]


def test_key_strings_never_change():
    assert {n: getattr(state, n) for n in dir(state) if n.isupper() and isinstance(getattr(state, n), str)} == {
        "SOURCE_PATH": "source_path", "SOURCE_LABEL": "source_label", "SOURCE_REF": "source_ref",
        "QUERY_ID": "query_id", "QUERY_PICK": "query_pick", "COMPARE_PRESETS": "compare_presets", "WHATIF_OVERRIDES": "whatif_overrides",
        "REPORT_APPLIED": "_report_applied", "REPORT_ERROR": "_report_error", "SAMPLE_PICK": "sample_pick",
        "SOURCE_MODE": "source_mode_choice", "SOURCE_MODE_PICK": "source_mode", "SERVER_PATH": "server_path",
        "PICKERS_SOURCE": "_pickers_source",
        "NAVIGATION": "_navigation", "RUN_JOB": "run_job",
        "PLAN_EXPANDED": "_plan_expanded", "PLAN_BOXES": "plan_boxes",
        "RERUN_JOB": "rerun_job", "SHARE_ID": "share_id", "NAV_TARGET": "_nav_target",
        "RUNS_OPENED": "_runs_opened", "TRIAGE_TABLE": "triage_table",
        "GROUP_TABLE": "query_group_table", "OVERVIEW_LIST": "overview_list",
        "TRIAGE_OPENED": "_triage_opened",
        "FLEET_PATH": "fleet_path", "FLEET_TABLE": "fleet_table", "FLEET_QUERIES": "fleet_queries", "FLEET_DIR": "_fleet_dir", "VERIFY_JOBS": "verify_jobs",
        "RUNS_SAMPLE": "runs_sample", "RUNS_PATH": "runs_path", "RUNS_ONLY_CHANGED": "runs_only_changed",
        "RUNS_QUERY": "runs_query", "HOT_KEYS": "hot_keys",
        "LISTED_TABLE": "listed_query_table", "LISTED_GROUP": "listed_group", "LISTED_POSITION": "listed_position",
        "LISTED_ROW_POSITION": "listed_row_position",
        "LISTED_SYNCED": "_listed_synced",
    }
    assert state.opened_key("0123456789ab") == "_opened_0123456789ab"
    assert state.DEFAULT_COMPARE_PRESETS == ["actual", "spark-3.0.1-defaults", "spark-4.x-defaults"]


def _ui_files() -> list[Path]:
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py"))]
    return [p for p in files if p != ROOT / "ui" / "state.py"]


def _is_session_state(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "session_state") or (
        isinstance(node, ast.Name) and node.id == "session_state")


def _literal(node: ast.AST | None) -> bool:
    return isinstance(node, (ast.Constant, ast.JoinedStr)) and not (
        isinstance(node, ast.Constant) and not isinstance(node.value, str))


def _literal_keys(path: Path) -> list[str]:
    """``session_state["x"]``, ``session_state.get/pop/setdefault("x")`` and ``"x" in session_state``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        key = None
        if isinstance(node, ast.Subscript) and _is_session_state(node.value):
            key = node.slice
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and _is_session_state(node.func.value) and node.args):
            key = node.args[0]
        elif isinstance(node, ast.Compare) and any(_is_session_state(c) for c in node.comparators):
            key = node.left
        if _literal(key):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_session_key_spelled_outside_state():
    assert [hit for p in _ui_files() for hit in _literal_keys(p)] == []


def test_the_check_sees_literal_keys(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('import streamlit as st\nst.session_state["a"] = 1\nst.session_state.get(f"_{x}")\n'
                     '"b" in st.session_state\nst.session_state[state.A]\nst.session_state.get(state.B, "x")\n')
    assert [h.rpartition(":")[2] for h in _literal_keys(probe)] == ["2", "3", "4"]
