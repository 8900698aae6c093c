"""Whatever an assistant passes (the SDK checks types first; these bypass it), every tool gives
an answer or ToolInputError with one line: never another exception."""
from __future__ import annotations

import pytest

from aqe_core.mcp.advice_tools import AdviceTools
from aqe_core.mcp.tools import ToolInputError
from aqe_core.server_settings import SAMPLES_DIR

CAPTURE = str(SAMPLES_DIR / "captures" / "3.0.1-skew_join_inner.json.gz")
BAD = [None, "", "x", -1, 10**12, 1.5, True, [], {}, ["a"], [[]], {"a": 1}, {"a": {}}, "0", 0, "999",
       "../../etc/passwd", "\x00", "0" * 30]
PARAMS = {
    "open_source": ["path"], "list_queries": ["source", "text", "findings", "offset", "limit"],
    "list_query_groups": ["source", "offset", "limit"],
    "explain_query": ["source", "execution", "offset", "limit"],
    "histogram": ["source", "execution", "node_id", "offset", "limit"],
    "what_if": ["source", "settings", "execution"], "recommend": ["source", "execution"],
    "compare_releases": ["source", "execution"],
    "lint_settings": ["source", "execution", "settings", "target", "source_version"],
    "scan_summary": ["path", "findings", "text", "sort", "offset", "limit"],
    "diff_runs": ["a", "b", "threshold"],
}
GOOD = {"path": CAPTURE, "source": CAPTURE, "execution": "0", "node_id": 12, "a": CAPTURE, "b": CAPTURE,
        "settings": {"spark.sql.adaptive.skewJoin.skewedPartitionFactor": "4"}}


@pytest.mark.parametrize("tool", sorted(PARAMS))
def test_every_argument_any_value_is_an_answer_or_one_line(tool, monkeypatch, tmp_path):
    monkeypatch.setenv("AQE_LENS_HOME", str(tmp_path))
    monkeypatch.setenv("AQE_LENS_CONFIG", str(tmp_path / "none.toml"))
    t = AdviceTools()
    for param in PARAMS[tool]:
        for value in BAD:
            args = {"path": str(SAMPLES_DIR)} if tool == "scan_summary" else \
                {k: GOOD[k] for k in PARAMS[tool] if k in GOOD}
            args[param] = value
            try:
                getattr(t, tool)(**args)
            except ToolInputError as exc:
                assert str(exc) and "\n" not in str(exc), (tool, param, value)
