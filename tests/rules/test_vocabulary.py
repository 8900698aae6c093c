"""The rules' vocabulary (aqe_core/model/vocabulary.py) against the code that uses it.

Every reason is given through a declared code whose sentence the call fills exactly; every
declared code, sentence form, condition and trace is used; a code means one thing wherever it is
declared; and code compares codes and condition ids, never sentences, and only ones declared.
"""
from __future__ import annotations

import ast
import importlib
import string
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from aqe_core.model.vocabulary import ReasonCode, declared_codes, declared_conditions, traces

ROOT = Path(__file__).resolve().parents[2]
#: where codes are given and compared (the layers above read them: ui, pages)
SOURCES = sorted([*ROOT.joinpath("aqe_core").rglob("*.py"), *ROOT.joinpath("ui").rglob("*.py"),
                  *ROOT.joinpath("pages").rglob("*.py"), ROOT / "app.py"])
#: the mechanism itself and the doctests' own examples
EXEMPT = {"aqe_core/model/reasons.py", "aqe_core/model/vocabulary.py"}
#: ``CODE.reason(...)`` keywords that are not sentence fields
_NOT_FIELDS = {"numbers", "config_keys", "subject", "form", "about"}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _trees() -> Iterator[tuple[str, ast.AST]]:
    for path in SOURCES:
        if path.exists() and _rel(path) not in EXEMPT:
            yield _rel(path), ast.parse(path.read_text(encoding="utf-8"))


def _module(rel: str) -> Optional[str]:
    return rel[:-3].replace("/", ".") if rel.startswith("aqe_core/") else None


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _resolve(path: str, ns: dict[str, Any]) -> Any:
    first, *rest = path.split(".")
    obj = ns.get(first)
    for part in rest:
        obj = getattr(obj, part, None)
    return obj


def _given() -> list[tuple[str, int, ReasonCode, str, Optional[set[str]]]]:
    """Every ``CODE.reason(...)`` call: where, the code object, the form and the fields passed
    (None when a ``**mapping`` passes some)."""
    out = []
    for rel, tree in _trees():
        mod = _module(rel)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "reason"]
        if not calls or mod is None:
            continue
        ns = vars(importlib.import_module(mod))
        for call in calls:
            code = _resolve(_dotted(call.func.value) or "", ns)
            if not isinstance(code, ReasonCode):
                continue
            form = next((k.value.value for k in call.keywords if k.arg == "form" and isinstance(k.value, ast.Constant)), "")
            star = any(k.arg is None for k in call.keywords)
            fields = None if star else {k.arg for k in call.keywords if k.arg not in _NOT_FIELDS}
            out.append((rel, call.lineno, code, form, fields))
    return out


GIVEN = _given()


def _fields(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_reason_is_given_through_a_declared_code():
    """No ``Reason("code", "sentence")`` outside the model: the code's declaration says it."""
    bare = [f"{rel}:{n.lineno}" for rel, tree in _trees() for n in ast.walk(tree)
            if isinstance(n, ast.Call) and (_dotted(n.func) or "").split(".")[-1] == "Reason"]
    assert bare == []


def test_every_call_fills_its_declared_sentence():
    """The form a call asks for is declared, and the call passes exactly the sentence's fields."""
    problems = []
    for rel, line, code, form, fields in GIVEN:
        if form not in code.forms:
            problems.append(f"{rel}:{line}: {code!s} has no sentence {form!r} (declared: {sorted(code.forms)})")
        elif fields is not None and fields != _fields(code.forms[form]):
            problems.append(f"{rel}:{line}: {code!s} {form!r} wants {sorted(_fields(code.forms[form]))}, gets {sorted(fields)}")
    assert problems == []


def test_every_declared_code_and_sentence_is_used():
    """A declared code nobody gives, or a sentence form nobody asks for, is dead vocabulary."""
    used = {(id(code), form) for _, _, code, form, _ in GIVEN}
    unused = [f"{c.owner}: {c!s} form {form!r}" for c in declared_codes() for form in c.forms if (id(c), form) not in used]
    assert unused == []


def test_every_declared_code_has_a_sentence_and_a_meaning():
    """(A shared code, aqe_core/model/shared_vocabulary.py, may declare only its meaning: the rules
    that give it reuse it with their sentences.)"""
    said = {str(c) for c in declared_codes() if c.forms}
    missing = [f"{c.owner}: {c!s}" for c in declared_codes() if str(c) not in said or not (c.__doc__ or "").strip()]
    assert missing == []


def test_one_code_one_meaning():
    """A code several modules declare is the same code (one declared it, the others reuse it)."""
    meanings: dict[str, set[str]] = {}
    for c in declared_codes():
        meanings.setdefault(str(c), set()).add(c.__doc__ or "")
    assert {k: v for k, v in meanings.items() if len(v) > 1} == {}


def test_conditions_name_declared_codes_and_every_condition_is_traced():
    codes = {str(c) for c in declared_codes()}
    unknown = [f"{cond.id}: {c}" for cond in declared_conditions().values() for c in cond.codes if c not in codes]
    traced = {cond.id for spec in traces().values() for cond in spec.conditions}
    assert unknown == []
    assert sorted(set(declared_conditions()) - traced) == []


def test_every_trace_is_read_by_the_engine():
    """A trace is looked up by name (``trace_spec("...")``) or is a rule of a release's pipeline."""
    from aqe_core.engine.pipeline import pipeline_for
    asked = {n.args[0].value for _, tree in _trees() for n in ast.walk(tree)
             if isinstance(n, ast.Call) and _dotted(n.func) == "trace_spec" and n.args
             and isinstance(n.args[0], ast.Constant)}
    releases = ("3.0.1", "3.1.3", "3.2.4", "3.3.4", "3.4.1", "3.4.4", "3.5.1", "4.0.0", "4.1.0", "4.2.1", "4.3.0")
    rules = {r for v in releases for r in pipeline_for(v).rules}
    assert sorted(set(traces()) - asked - rules) == []


def _compared(tree: ast.AST, attr: str) -> Iterator[tuple[int, str]]:
    """String constants compared with ``x.<attr>`` (==, !=, in, not in a literal collection)."""
    for n in ast.walk(tree):
        if not isinstance(n, ast.Compare) or len(n.comparators) != 1:
            continue
        left, right = n.left, n.comparators[0]
        for a, b in ((left, right), (right, left)):
            if isinstance(a, ast.Attribute) and a.attr == attr:
                items = b.elts if isinstance(b, (ast.Tuple, ast.List, ast.Set)) else [b]
                yield from ((n.lineno, i.value) for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str))


def test_code_compared_is_declared():
    codes = {str(c) for c in declared_codes()}
    bad = [f"{rel}:{line}: {value!r}" for rel, tree in _trees() for line, value in _compared(tree, "code")
           if value not in codes]
    assert bad == []


def test_condition_ids_compared_are_declared_and_sentences_never():
    """Consumers switch on a check's condition id; a sentence (``.condition``) is for people."""
    ids = set(declared_conditions())
    bad = [f"{rel}:{line}: {value!r}" for rel, tree in _trees() for line, value in _compared(tree, "id")
           if value not in ids]
    sentences = [f"{rel}:{line}" for rel, tree in _trees() for line, _ in _compared(tree, "condition")]
    assert bad == [] and sentences == []


def test_no_sentence_matching_on_reasons_or_checks():
    """``"..." in reason.message`` / ``check.condition.startswith(...)``: the sentence may change."""
    bad = []
    for rel, tree in _trees():
        for n in ast.walk(tree):
            if (isinstance(n, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops)
                    and any(isinstance(c, ast.Attribute) and c.attr in ("message", "condition", "detail")
                            for c in n.comparators)):
                bad.append(f"{rel}:{n.lineno}")
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("startswith", "endswith") and isinstance(n.func.value, ast.Attribute)
                    and n.func.value.attr in ("message", "condition", "detail")):
                bad.append(f"{rel}:{n.lineno}")
    assert bad == []


@pytest.mark.parametrize("code", [c for c in declared_codes() if c.owner.startswith("aqe_core.rules.")], ids=str)
def test_rule_codes_are_constants_of_their_module(code: ReasonCode):
    """A rule's code is a named constant of the rule module, so a reader finds it there."""
    ns = vars(importlib.import_module(code.owner))
    assert any(v is code for k, v in ns.items() if k.isupper())
