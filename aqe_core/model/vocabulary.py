"""How a rule declares its vocabulary: its reason codes and its decision-trace conditions.

In the spirit of datasette's ``hookspecs.py`` (named, documented extension points): each rule
module (``aqe_core/rules/<spark_rule>.py``) opens a :class:`Vocabulary` and declares, beside its
math,

- its **reason codes** (:meth:`Vocabulary.code`): the stable string a :class:`Reason` carries
  (tests, the UI, the fix finder and the JSON switch on it), a docstring saying what it means, and
  the sentence template(s) the reason's ``message`` is rendered from. The rule gives a reason with
  ``CODE.reason(numbers=..., subject=..., **fields)``; :meth:`ReasonCode.say` is the one place a
  sentence is made. A code several rules give (``split``) is declared once and *reused* by the
  others with their own sentences (:meth:`Vocabulary.reuse`), so it keeps one meaning.
- its **trace conditions** (:meth:`Vocabulary.condition`, :meth:`Vocabulary.trace`): what a
  decision trace lists for the rule, each with a stable id, the sentence shown, the settings it
  reads (config registry handles) and the codes that fail it, show it met, or inform it.
  :mod:`aqe_core.engine.trace` walks them without knowing any rule.

``tests/rules/test_vocabulary.py`` checks the registry against the code: every code given is declared
with a sentence, every declared code and condition is used, one code has one meaning.

    >>> OFF = ReasonCode("example_off", "The rule's setting is false: it does nothing.", {"": "{key} is false"})
    >>> r = OFF.reason(config_keys=("spark.x",), key="spark.x")  # (Vocabulary.code would also register it)
    >>> r.code == OFF == "example_off", r.message, type(r.code) is str
    (True, 'spark.x is false', True)
    >>> OFF.__doc__
    "The rule's setting is false: it does nothing."
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from aqe_core.model.reasons import Reason

__all__ = ["Condition", "ReasonCode", "TraceSpec", "Vocabulary", "declared_codes", "declared_conditions", "trace_spec",
           "traces"]

#: every declaration, in import order (a code string may appear more than once: reuses)
_CODES: list["ReasonCode"] = []
_CONDITIONS: dict[str, "Condition"] = {}
_TRACES: dict[str, "TraceSpec"] = {}


class ReasonCode(str):
    """A reason code: equal to (and hashed as) its string, so ``reason.code == NO_SPLIT`` and the
    JSON are unchanged; it also knows who declared it, what it means and how it is said."""

    owner: str  # the module that declared it
    rule: str  # the Spark rule (or engine part) it speaks for
    forms: Mapping[str, str]  # sentence templates (``str.format``); "" is the usual one
    per_rule: bool  # the reason names the rule it stops in ``numbers["rule"]``

    def __new__(cls, code: str, doc: str = "", forms: Optional[Mapping[str, str]] = None, *, owner: str = "",
                rule: str = "", per_rule: bool = False) -> "ReasonCode":
        self = super().__new__(cls, code)
        self.__doc__ = doc
        self.forms = dict(forms or {})
        self.owner, self.rule, self.per_rule = owner, rule, per_rule
        return self

    @property
    def code(self) -> str:
        return str(self)

    def say(self, form: str = "", /, **fields: Any) -> str:
        """The sentence of this code in ``form``, from the rule's declared template and ``fields``."""
        return self.forms[form].format(**fields)

    def reason(self, *, numbers: Optional[Mapping[str, Any]] = None, config_keys: Iterable[str] = (),
               subject: Optional[Mapping[str, Any]] = None, form: str = "", about: Optional[Mapping[str, Any]] = None,
               **fields: Any) -> Reason:
        """A :class:`Reason` with this code and its sentence (``fields`` fill the template)."""
        return Reason(str(self), self.say(form, **fields), dict(numbers or {}), tuple(config_keys), dict(subject or {}),
                      dict(about or {}))


@dataclass(frozen=True)
class Condition:
    """One condition of a decision trace. ``fails``: codes whose reason means the condition does
    not hold (looked for in order, so the first named wins whatever the hash seed); ``meets``:
    codes that show it held; ``informs``: an information-only condition, shown with the first
    of these found and "not applicable" without one."""

    id: str  # stable: views switch on it, never on the sentence
    sentence: str  # as the trace prints it
    doc: str
    settings: tuple[str, ...] = ()  # config registry handles it reads (the trace shows their values)
    fails: tuple[str, ...] = ()
    meets: tuple[str, ...] = ()
    informs: tuple[str, ...] = ()
    owner: str = ""

    @property
    def codes(self) -> tuple[str, ...]:
        return self.fails + self.meets + self.informs


@dataclass(frozen=True)
class TraceSpec:
    """What a trace of ``name`` lists, in order; ``marks``: codes only this rule (or case) gives,
    and ``subject_mark`` a subject key only its reasons carry, so reasons with one are traced
    with this spec."""

    name: str
    conditions: tuple[Condition, ...]
    marks: frozenset[str] = frozenset()
    subject_mark: str = ""
    #: the verdict sentences, by outcome: "changed" (the rule changed the read or join as it
    #: does), "applied" (it ran but this read keeps its partitions), "unchanged"
    verdicts: Mapping[str, str] = field(default_factory=dict)
    label: str = ""  # what the trace is called when it is not a rule (``{side}``: a join side)

    @property
    def codes(self) -> frozenset[str]:
        return frozenset(c for cond in self.conditions for c in cond.codes)

    def marked(self, reasons: Iterable[Reason]) -> bool:
        """Whether one of ``reasons`` is this spec's own (see ``marks``)."""
        return any(r.code in self.marks or (self.subject_mark and r.subject.get(self.subject_mark)) for r in reasons)


class Vocabulary:
    """The declarations of one module (``owner``, usually ``__name__``) speaking for ``rule``."""

    def __init__(self, rule: str, owner: str) -> None:
        self.rule, self.owner = rule, owner

    def code(self, code: str, doc: str, text: str = "", *, per_rule: bool = False, **forms: str) -> ReasonCode:
        """Declare a new code: what it means (``doc``) and its sentence(s): ``text`` the usual one,
        ``forms`` named others (``CODE.reason(form="short")``)."""
        c = ReasonCode(code, doc, {"": text, **forms} if text else forms, owner=self.owner, rule=self.rule,
                       per_rule=per_rule)
        _CODES.append(c)
        return c

    def reuse(self, other: "ReasonCode | str", text: str = "", **forms: str) -> ReasonCode:
        """Give a code another module declared (same string, same meaning) with this module's
        sentences; ``other`` by name when that module is in a lower layer this one may not import
        (it must be declared by then: KeyError otherwise)."""
        if not isinstance(other, ReasonCode):
            other = _declared(other)
        return self.code(str(other), other.__doc__ or "", text, per_rule=other.per_rule, **forms)

    def condition(self, id: str, sentence: str, doc: str, *, settings: tuple[str, ...] = (), fails: tuple[str, ...] = (),
                  meets: tuple[str, ...] = (), informs: tuple[str, ...] = ()) -> Condition:
        """Declare a trace condition (ids are unique across the project)."""
        if id in _CONDITIONS:
            raise ValueError(f"trace condition {id!r} declared twice ({_CONDITIONS[id].owner}, {self.owner})")
        c = Condition(id, sentence, doc, tuple(settings), tuple(fails), tuple(meets), tuple(informs), self.owner)
        _CONDITIONS[id] = c
        return c

    def trace(self, name: str, *conditions: Condition, marks: Iterable[str] = (), subject_mark: str = "",
              verdicts: Optional[Mapping[str, str]] = None, label: str = "") -> TraceSpec:
        """Declare what a trace of ``name`` (a Spark rule, a case of one, or a part of a join's
        re-plan) lists, and its verdicts."""
        if name in _TRACES:
            raise ValueError(f"trace {name!r} declared twice")
        spec = TraceSpec(name, tuple(conditions), frozenset(marks), subject_mark, dict(verdicts or {}), label)
        _TRACES[name] = spec
        return spec


def _declared(code: str) -> ReasonCode:
    found = next((c for c in _CODES if c == code), None)
    if found is None:
        raise KeyError(f"reason code {code!r} is not declared (yet): import its module first")
    return found


def trace_spec(name: str) -> TraceSpec:
    """The declared trace of ``name`` (KeyError when no module declared it)."""
    return _TRACES[name]


def traces() -> dict[str, TraceSpec]:
    return dict(_TRACES)


def declared_codes() -> list[ReasonCode]:
    return list(_CODES)


def declared_conditions() -> dict[str, Condition]:
    return dict(_CONDITIONS)
