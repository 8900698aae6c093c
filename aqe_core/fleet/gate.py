"""``scan --fail-on``: a pipeline fails when the fleet gets worse (issue 27).

A rule is ``METRIC > VALUE`` (or ``>=``), checked for every application with a run read in the
latest scan (see :mod:`aqe_core.fleet.history`):

* ``wasted_task_time_increase``: its wasted task time against its run before, in percent
  (``20%``) or seconds (``30s``, ``500ms``);
* ``wasted_task_time``: the run's own wasted task time (``s`` or ``ms``);
* ``findings_increase``: more findings than its run before;
* ``findings``: the run's own findings;
* ``unreadable``: logs or executions of the latest scan that could not be read (fleet-wide).

>>> [str(r) for r in parse_rules(["wasted_task_time_increase>20%", "findings_increase >= 1"])]
['wasted_task_time_increase>20%', 'findings_increase>=1']
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Optional

from aqe_core.fleet.history import SCAN_COLUMN, app_runs, changes, current_rows

if TYPE_CHECKING:  # pandas where a history is judged: a scan parses its rules before it reads any log
    import pandas as pd

__all__ = ["GateRule", "RuleError", "breaches", "parse_rules"]

METRICS = ("wasted_task_time_increase", "wasted_task_time", "findings_increase", "findings", "unreadable")
_RULE = re.compile(r"^\s*([a-z_]+)\s*(>=|>)\s*([0-9]+(?:\.[0-9]+)?)\s*(%|s|ms)?\s*$")


class RuleError(ValueError):
    """A ``--fail-on`` rule that does not parse, in words for people."""


@dataclass(frozen=True)
class GateRule:
    metric: str
    op: str
    value: float
    unit: str = ""  # "%", "s", "ms" or "" (a count)

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}{self.unit}"

    def over(self, measured: float) -> bool:
        return measured > self.value if self.op == ">" else measured >= self.value


def parse_rules(texts: Iterable[str]) -> list[GateRule]:
    """Rules from ``--fail-on`` values (each may hold several, comma separated)."""
    out = []
    for text in texts:
        for part in (p for p in text.split(",") if p.strip()):
            m = _RULE.match(part)
            if not m or m.group(1) not in METRICS:
                raise RuleError(f"--fail-on {part.strip()!r}: write METRIC>VALUE, METRIC one of {', '.join(METRICS)}"
                                " (e.g. wasted_task_time_increase>20%)")
            metric, op, value, unit = m.group(1), m.group(2), float(m.group(3)), m.group(4) or ""
            timed = metric.startswith("wasted_task_time")
            if (unit == "%" and metric != "wasted_task_time_increase") or (unit in ("s", "ms") and not timed) \
                    or (timed and not unit):
                raise RuleError(f"--fail-on {part.strip()!r}: {metric} takes "
                                + ("a time (s, ms) or a percentage (%)" if metric == "wasted_task_time_increase"
                                   else "a time (s, ms)" if timed else "a count"))
            if unit == "ms":
                value, unit = value / 1000, "s"
            out.append(GateRule(metric, op, value, unit))
    return out


def breaches(history: pd.DataFrame, rules: list[GateRule], scan: Optional[str] = None) -> list[str]:
    """One line per rule broken by the runs that ``scan`` read (default: the latest scan with
    rows), naming the application and the numbers. A scan that read nothing new breaks nothing."""
    out: list[str] = []
    if history is None or history.empty:
        return out
    latest = scan or history[SCAN_COLUMN].max()
    runs = app_runs(history)
    runs = runs[runs[SCAN_COLUMN] == latest]
    moved = changes(history, [latest])
    now = current_rows(history)
    for rule in rules:
        if rule.metric == "unreadable":
            bad = int((history[history[SCAN_COLUMN] == latest]["error"].notna()).sum())
            if rule.over(bad):
                out.append(f"{rule}: {bad} logs or executions of the latest scan could not be read")
        elif rule.metric in ("wasted_task_time", "findings"):
            column = "wasted_task_s" if rule.metric == "wasted_task_time" else "findings"
            for r in runs.itertuples():
                got = float(getattr(r, column))
                if rule.over(got):
                    out.append(f"{rule}: {r.app} ({r.app_id or r.file}) {got:g}{rule.unit}"
                               + _queries(now, str(r.file), None, rule.metric == "findings"))
        else:
            for c in moved:
                if rule.metric == "findings_increase":
                    got, said = c.findings_after - c.findings_before, f"{c.findings_before} -> {c.findings_after} findings"
                elif rule.unit == "%":
                    pct = c.wasted_increase_pct
                    got, said = (pct if pct is not None else 0.0), _wasted(c) + (f" ({pct:+.0f}%)" if pct not in (None, float("inf"))
                                                                               else "")
                else:
                    got, said = c.wasted_after_s - c.wasted_before_s, _wasted(c)
                if rule.over(got):
                    out.append(f"{rule}: {c.app}: {said}"
                               + _queries(now, c.after_file, c.before_file, rule.metric == "findings_increase"))
    return out


def _ms(value: object) -> int:
    """A row's milliseconds (a missing value, NaN in pandas, as 0)."""
    import pandas as pd

    return 0 if value is None or pd.isna(value) else int(value)  # type: ignore[call-overload]


#: the queries a breach names, at most
NAMED = 3


def _queries(now: pd.DataFrame, after: str, before: Optional[str], findings: bool) -> str:
    """The queries behind an application's breach, by id and description: those with findings
    their run before did not have, or those that wasted the most task time more than before; so
    a failed night names what to open, not only the job. A query is its run before's query of the
    same description and place among those (:func:`_keyed`: PySpark names many ``sql at ...``)."""
    rows = now[(now["file"] == after) & now["execution_id"].notna()]
    old = now[(now["file"] == before) & now["execution_id"].notna()] if before is not None else rows.iloc[0:0]
    mine, theirs = _keyed(rows), _keyed(old)
    if findings:
        def fs(r) -> list[str]:
            return [f for f in str(r.findings or "").split(",") if f]

        named = [(r, [f for f in fs(r) if f not in (fs(theirs[k]) if k in theirs else [])]) for k, r in mine.items()]
        said = [f"query #{int(r.execution_id)} ({str(r.description)[:60]}): {', '.join(new)}" for r, new in named if new]
    else:
        grew = sorted(((_ms(r.wasted_task_ms) - (_ms(theirs[k].wasted_task_ms) if k in theirs else 0), k, r)
                       for k, r in mine.items()), key=lambda x: -x[0])
        said = [f"query #{int(r.execution_id)} ({str(r.description)[:60]}): wasted"
                + (f" {_ms(theirs[k].wasted_task_ms) / 1000:g} s ->" if k in theirs else "")
                + f" {_ms(r.wasted_task_ms) / 1000:g} s" for d, k, r in grew if d > 0]
    if not said:
        return ""
    more = f"; and {len(said) - NAMED} more" if len(said) > NAMED else ""
    return "; " + ("new findings in " if findings else "") + "; ".join(said[:NAMED]) + more


def _keyed(rows: pd.DataFrame) -> dict[tuple[str, int], Any]:
    """An application's query rows by (description, n): the n-th query of that description in
    execution order, as a job runs its queries in order."""
    out: dict[tuple[str, int], Any] = {}
    seen: dict[str, int] = {}
    for r in rows.sort_values("execution_id").itertuples():
        d = str(r.description)
        out[(d, seen.get(d, 0))] = r
        seen[d] = seen.get(d, 0) + 1
    return out


def _wasted(c) -> str:
    return f"wasted task time {c.wasted_before_s:g} s -> {c.wasted_after_s:g} s"
