"""The JSON Schema of every MCP tool's answer (published as each tool's ``outputSchema``,
written out in docs/mcp.md, checked by tests/mcp against real answers).

Every answer is one envelope: the tool, the source and query it speaks of, how its numbers are
known (``evidence``), a short ``summary``, the ``answer`` itself (for explain, recommend,
releases and lint: exactly the CLI's ``--json`` for the same question), the ``page`` of a paged
list and ``notes``.
"""
from __future__ import annotations

from typing import Any

from aqe_core.model.evidence import Evidence
from aqe_core.views.triage import FINDINGS

__all__ = ["EVIDENCE_LEVELS", "answer_schema", "envelope_schema", "TOOL_ANSWERS"]

EVIDENCE_LEVELS = [e.value for e in Evidence]

_S: dict[str, Any] = {"type": "string"}
_S0: dict[str, Any] = {"type": ["string", "null"]}
_I: dict[str, Any] = {"type": "integer"}
_I0: dict[str, Any] = {"type": ["integer", "null"]}
_N: dict[str, Any] = {"type": "number"}
_B: dict[str, Any] = {"type": "boolean"}
_STRS: dict[str, Any] = {"type": "array", "items": _S}
_EV: dict[str, Any] = {"enum": EVIDENCE_LEVELS}
#: the same levels as people read them (a field of its own, never in a level's field)
_LABEL: dict[str, Any] = {"enum": [e.label for e in Evidence]}


def _obj(required: dict[str, Any], **optional: Any) -> dict[str, Any]:
    return {"type": "object", "required": sorted(required), "properties": {**required, **optional}}


def _arr(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


_LINE = _obj({"kind": _S, "value": _I, "label": _S, "config_keys": _STRS, "evidence": _EV})
_PARTITION = _obj({"position": _I, "bytes": _I0, "kind": _S})
_READ = _obj({"node_id": _I0, "stage_id": _I0, "evidence": _EV, "partitions_before": _I0, "partitions": _arr(_PARTITION),
              "skewed_reducers": {"type": ["array", "null"]}, "lines": _arr(_LINE), "sentences": _STRS},
             trace=_arr({"type": "object"}), decided_in_version=_I0)
_EXECUTION = _obj({"id": _S, "description": _S, "spark_version": _S, "adaptive": _B, "reads": _arr(_READ),
                   "joins": _arr(_obj({"decision": _S, "trace": {"type": "array"}})), "join_changes": _STRS})
_FIX = _obj({"finding": _S, "evidence": {"enum": ["exact", "estimate"]}, "stage_id": _I0, "join_node": _I0, "why": _S,
             "settings": {"type": "object", "additionalProperties": _S}, "conf_lines": _STRS, "effects": _STRS,
             "alternatives": {"type": "array"}, "hints": _STRS, "assumes": _STRS, "application": _STRS,
             "partition_bytes_today": {"type": ["array", "null"]}, "partition_bytes_predicted": {"type": ["array", "null"]},
             "predicted_reads": {"type": "array"}})
_OUTCOME_READ = _obj({"key": _S, "label": _S, "partitions_before": _I0, "partitions_after": _I, "sizes_after": _arr(_I),
                      "skewed": _I0, "splits": _I0, "evidence": _EV})
_DECISION = _obj({"kind": {"enum": ["join", "partitions", "skew"]}, "key": _S, "label": _S,
                  "distribution": _arr(_obj({"value": {"type": ["string", "integer", "null"]}, "executions": _I})),
                  "changed": _I, "changes": _arr(_obj({"kind": _S, "key": _S, "execution": _S, "batch": _I0,
                                                       "previous_execution": _S, "before": {}, "after": {},
                                                       "sentence": _S}))})
_QUERY_GROUP = _obj({"query": _S, "name": _S, "executions": _I, "execution_ids": _STRS, "first_start_ms": _I0,
                     "last_end_ms": _I0, "evidence": {"anyOf": [_EV, _arr(_EV)]}, "not_final": _I,
                     "decisions": _arr(_DECISION),
                     "changes": _STRS})
_SPREAD = {"type": ["array", "null"], "items": _obj({"value": {"type": ["string", "integer", "null"]}, "executions": _I})}
_GROUP_SIDE = {"anyOf": [{"type": "null"}, _obj({"query": _S, "name": _S, "executions": _I, "execution_ids": _STRS,
                                                 "first_start_ms": _I0, "last_end_ms": _I0, "span_ms": _I0,
                                                 "not_final": _I, "not_adaptive": _I, "evidence": _arr(_EV),
                                                 "changed": _I, "changes": _STRS})]}
_GROUP_DIFF = _obj({"a": _GROUP_SIDE, "b": _GROUP_SIDE, "only": {"enum": ["a", "b", None]}, "how": _S0,
                    "decisions": _arr(_obj({"kind": {"enum": ["join", "partitions", "skew"]}, "key": _S, "label": _S,
                                            "a": _SPREAD, "b": _SPREAD,
                                            "changed": _obj({"a": _I0, "b": _I0})})),
                    "sentence": _S})
_LINT_FINDING = _obj({"key": _S, "kind": _S, "severity": {"enum": ["error", "warning", "info"]}, "message": _S,
                      "value": _S0, "suggestion": _S0})

#: tool -> the schema of its ``answer``
#: one skewed reducer of hot-keys --json (keys: None where they were not counted)
_HOT_KEY_ENTRY = _obj({"execution": _S, "shuffle": _I0, "stage": _I0, "side": _S, "reducer": _I0,
                       "bytes": _I0, "splits": _I0, "verified": _B, "error": _S0,
                       "keys": {"type": ["array", "null"], "items": _obj({"key": {}, "rows": _I, "share": _N},
                                                                         bytes_estimate=_I0)},
                       "fixes": _arr(_obj({"kind": _S, "text": _S})),
                       "code_for_your_cluster": {"type": ["object", "null"]}})

TOOL_ANSWERS: dict[str, dict[str, Any]] = {
    "open_source": _obj({"kind": {"enum": ["eventlog", "capture"]}, "label": _S, "spark_version": _S0, "app_id": _S0,
                         "app_name": _S0, "executions": _I, "exact_executions": _I,
                         "queries": _arr(_obj({"query": _S, "description": _S, "evidence": _EV})),
                         "warnings": _STRS, "notes": _STRS, "incomplete": _STRS, "load_seconds": _N, "cached": _B,
                         # a log past max_executions, listed by query: its queries (null: every view held)
                         "listed_queries": _I0}),
    "list_queries": _arr(_obj({"query": _S, "description": _S, "findings": _S,
                               "finding_codes": _arr({"enum": list(FINDINGS)}), "score": _N, "wasted_task_ms": _I,
                               "page": _S, "evidence": _EV, "partitions": _S, "duration (ms)": _I0,
                               "what AQE did": _S, "read stage tasks": _S, "next step": _S})),
    "list_query_groups": _arr(_QUERY_GROUP),
    "explain_query": _obj({"executions": {**_arr(_EXECUTION), "minItems": 1, "maxItems": 1}}),
    "histogram": _obj({"node_id": _I0, "stage_id": _I0, "evidence": _EV, "partitions_before": _I0,
                       "partitions": _arr(_PARTITION), "sizes_before": {"type": ["array", "null"], "items": _I},
                       "partitions_before_total": _I0, "largest_after_aqe": _I0, "median_after_aqe": _I0,
                       "lines": _arr(_LINE),
                       "sentences": _STRS}),
    "what_if": _obj({"query": _S, "description": _S, "settings": {"type": "object", "additionalProperties": _S},
                     "errors": _STRS, "note": _S0,
                     "outcomes": _arr(_obj({"preset": _S, "spark_version": _S, "exact": _B, "evidence": _EV, "note": _S,
                                            "summary": _obj({"evidence": _EV, "evidence_label": _LABEL}), "joins": _STRS,
                                            "reads": _arr(_OUTCOME_READ)})),
                     "lines": _arr(_obj({"key": _S, "stage_id": _I0, "evidence": _EV, "lines": _arr(_LINE)}))}),
    "recommend": _arr(_obj({"query": _S, "description": _S, "fixes": _arr(_FIX)})),
    "compare_releases": _arr(_obj({"query": _S, "description": _S, "exact": _B, "note": _S,
                                   "releases": _arr(_obj({"release": _S, "evidence": _EV, "evidence_label": _LABEL})),
                                   "lint": {"type": "object"},
                                   "differences": _arr(_obj({"from": _S, "to": _S, "changes": _STRS,
                                                             "rules_said": _STRS, "changed_between": _STRS}))})),
    "lint_settings": _arr(_obj({"query": _S, "release": _S0, "target": _S,
                                "settings": {"type": "object", "additionalProperties": _S},
                                "findings": _arr(_LINT_FINDING), "default_changes": _arr({"type": "object"})})),
    "diff_runs": _obj({"format": _S, "version": _I, "a": {"type": "object"}, "b": {"type": "object"},
                       "matched": _arr({"type": "object"}), "only_a": {"type": "array"}, "only_b": {"type": "array"},
                       "query_groups": _arr(_GROUP_DIFF), "notes": _STRS, "threshold_pct": _N, "min_ms": _I, "regressed": _STRS, "failures": _STRS}),
    "scan_summary": _obj({"path": _S, "scans": _STRS, "logs": _I, "executions": _I, "errors": _I,
                          "finding_counts": {"type": "object", "additionalProperties": _I},
                          "worse_since_last": _arr({"type": "object"}),
                          "rows": _arr(_obj({"file": _S0, "execution_id": _I0, "findings": _S0, "evidence": _S0}))}),
    "hot_keys": _arr(_HOT_KEY_ENTRY),
    "count_hot_keys": _arr(_HOT_KEY_ENTRY),
    "verify_fix": _obj({"query": _S, "fix": _FIX, "verified": _B, "result": _S,
                        "score": {"type": ["object", "null"]}}),
}

_PAGE = {"type": ["object", "null"], "required": ["offset", "limit", "total", "next_offset"],
         "properties": {"offset": _I, "limit": _I, "total": _I, "next_offset": _I0}}


def envelope_schema() -> dict[str, Any]:
    """What every tool answers, whatever its ``answer``."""
    return _obj({"tool": _S, "source": _S0, "query": _S0,
                 "evidence": _obj({"level": _EV, "label": _LABEL, "note": _S}),
                 "summary": _S, "answer": {}, "page": _PAGE, "notes": _STRS})


def answer_schema(tool: str) -> dict[str, Any]:
    """The full schema of ``tool``'s answer: the envelope with its ``answer``."""
    out = envelope_schema()
    out["properties"] = {**out["properties"], "tool": {"const": tool}, "answer": TOOL_ANSWERS[tool]}
    return out
