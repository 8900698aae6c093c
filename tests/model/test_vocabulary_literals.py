"""The vocabulary owns every code: no reason code or trace-condition id is written as a bare string
outside its declaration (``Vocabulary.code`` / ``condition`` / ``trace``).

A code compared, listed or given to ``Reason`` as a literal keeps working when the rule renames it
(it silently stops matching) and hides who owns its meaning; the declared constant does neither.
Codes are common words ("split", "coalesced", "adaptive") that are also JSON field names, verdict
keys and Spark's own read descriptions, so for codes the scan looks only where a string is used as
a code: an operand of a comparison, an item of a tuple/list/set, the code given to ``Reason``.
Condition ids (dotted: "skew.enabled") mean nothing else and are looked for everywhere.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

from aqe_core.model.vocabulary import declared_codes, declared_conditions, traces

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("aqe_core", "ui", "pages", "app.py")
DECLARING = {"code", "condition", "trace", "reuse"}

#: (file, string): a code's word used in another meaning, with that meaning
ALLOWED = {
    ("aqe_core/model/eventlog.py", "adaptive"): "a __slots__ attribute name",
    ("aqe_core/model/eventlog.py", "coalesced"): "a word of Spark's AQEShuffleRead description",
    ("aqe_core/views/plan_diff.py", "coalesced"): "a word of Spark's AQEShuffleRead description",
    ("aqe_core/views/plan_diff.py", "skewed"): "a word of Spark's AQEShuffleRead description",
    ("aqe_core/engine/estimate.py", "split"): "an attribute name left out of to_dict",
    ("aqe_core/live/workloads.py", "runtime_broadcast"): "a workload's name and a decision kind the capture"
                                                         " agreement test checks, not a reason code",
    ("aqe_core/live/workloads.py", "demote_broadcast"): "a workload's name and a decision kind the capture"
                                                        " agreement test checks, not a reason code",
}


def _declarations() -> tuple[set[str], set[str]]:
    # every module that opens a Vocabulary (only those: the scan should not depend on the rest importing)
    for path in sorted((ROOT / "aqe_core").rglob("*.py")):
        if "Vocabulary(" in path.read_text(encoding="utf-8") and path.name != "vocabulary.py":
            importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return {str(c) for c in declared_codes()}, set(declared_conditions())


def _files(root: Path) -> list[Path]:
    out: list[Path] = []
    for name in SCANNED:
        p = root / name
        if p.exists():
            out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def _code_like(node: ast.Constant, parent: ast.AST | None) -> bool:
    """Whether the string is used as a reason code here (compared, listed, or given to Reason)."""
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
        return True
    if isinstance(parent, ast.Call):
        fn = parent.func
        name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
        return name == "Reason" and bool(parent.args) and parent.args[0] is node
    if isinstance(parent, ast.keyword):
        return parent.arg == "code"
    return False


def _literals(codes: set[str], conditions: set[str], root: Path = ROOT) -> list[str]:
    found = []
    for path in _files(root):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), rel)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            s = node.value
            if s not in codes and s not in conditions:
                continue
            parent = parents.get(node)
            if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute)
                    and parent.func.attr in DECLARING and parent.args and parent.args[0] is node):
                continue  # the declaration itself
            if (rel, s) in ALLOWED:
                continue
            if s in conditions or _code_like(node, parent):
                found.append(f"{rel}:{node.lineno}: {s!r}")
    return found


def test_no_code_or_condition_is_a_bare_string():
    codes, conditions = _declarations()
    assert codes and conditions and traces()
    found = _literals(codes, conditions)
    assert not found, ("reason codes / condition ids written as strings; import the declared constant from its"
                       " owner:\n" + "\n".join(found))


def test_the_scan_sees_a_literal(tmp_path):
    """The scan is not vacuous: a comparison against a code's string is found."""
    codes, conditions = _declarations()
    src = tmp_path / "aqe_core"
    src.mkdir()
    (src / "m.py").write_text('def f(r):\n    return r.code == "coalesced" or r.id in ("skew.enabled",)\n')
    assert _literals(codes, conditions, tmp_path) == ["aqe_core/m.py:2: 'coalesced'", "aqe_core/m.py:2: 'skew.enabled'"]
