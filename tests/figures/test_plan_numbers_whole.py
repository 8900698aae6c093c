"""Numbers whole (issue 40, requirement 4): every line of every plan box of real recorded logs,
stage boxes and every operator box, is checked against what Spark logged.

The box text is the figure's own (:func:`_box_lines`, what the labels trace draws); the numbers
are compared with the metric totals of the nodes each box stands for, read from the log, never
with numbers typed here. The production-size log is the TPC-DS-like recording (q72-like,
q88-like and a dozen-join query); every other bundled sample runs the same checks.
"""
from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Iterator

import pytest

from aqe_core import api
from aqe_core.figures.plan_blocks import Box, box_graph
from aqe_core.figures.plan_figure import _box_lines, node_kind, plan_figure
from aqe_core.figures.plan_search import node_details
from aqe_core.figures.plan_numbers import box_numbers
from aqe_core.figures.plan_paths import node_at
from aqe_core.model.plan import PlanNode
from aqe_core.opening import sample_sources

REPO = Path(__file__).resolve().parents[2]
BIG = REPO / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"

_ROWS = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?: ([KMBT]))? rows?\b")
_WRITTEN = re.compile(r"\bwritten (\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB)\b")
_UNIT = {"": 1, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
_BYTES = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_WRAPPERS = ("InputAdapter", "WholeStageCodegen")


def _plans(path: Path) -> Iterator[tuple[str, PlanNode]]:
    """Every plan of a log: initial, each version AQE made, final (each object once)."""
    seen: set[int] = set()
    for view in api.load_source(str(path)).views:
        for i, plan in enumerate([view.initial_plan, *view.plan_versions, view.final_plan]):
            if plan is not None and id(plan) not in seen:
                seen.add(id(plan))
                yield f"{path.name}#{view.query_id}/{i}", plan


def _boxes(path: Path) -> Iterator[tuple[str, PlanNode, Box, list[str]]]:
    """(name, plan, box, its drawn lines as plain text) for stage boxes and operator boxes."""
    for name, plan in _plans(path):
        for expanded in ((), "all"):
            bg = box_graph(plan, expanded, numbers=box_numbers(), kind_of=node_kind)
            for box in bg.boxes.values():
                lines, _width = _box_lines(box, [])
                yield f"{name}/{expanded or 'stages'}/{box.key}", plan, box, [_plain(x) for x in lines]


def _plain(line: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", line))


def _totals(plan: PlanNode, box: Box, metric: str) -> list[float]:
    """Spark's totals of ``metric`` over the nodes the box stands for."""
    out = []
    for path in box.members:
        for m in node_at(plan, path).metrics:
            if str(m.get("name", "")).strip() == metric and isinstance(m.get("total"), (int, float)):
                out.append(float(m["total"]))
    return out


def _matches(value: str, unit: float, totals: list[float]) -> bool:
    """Does the drawn ``value`` (in ``unit``) round from one of Spark's totals?"""
    decimals = len(value.split(".", 1)[1]) if "." in value else 0
    shown = float(value.replace(",", "")) * unit
    slack = 0.5 * 10 ** -decimals * unit * (1 + 1e-9)
    return any(abs(t - shown) <= slack for t in totals)


def _check_box(name: str, plan: PlanNode, box: Box, lines: list[str], counts: dict[str, int]) -> None:
    for line in lines:
        assert not re.search(r"[\d,.]…", line), (name, line)  # a number cut
        assert "click to expand" not in line, (name, line)
        assert not re.search(r"#\d", line), (name, line)  # expression ids stay in the hover
        assert not line.lstrip().startswith(_WRAPPERS), (name, line)
    assert not box.title.startswith(_WRAPPERS), name
    if not box.collapsed:
        assert not (node_at(plan, box.head).name or "").startswith(_WRAPPERS), name
    builds = sum(len(re.findall(r"\bBuild(?:Left|Right)\b", x)) for x in lines)
    joins = sum("Join" in x for x in lines)
    assert builds <= (joins if box.collapsed else 1), (name, lines)  # a join's build side once
    text = "\n".join(lines)
    rows = _totals(plan, box, "number of output rows")
    for value, unit in _ROWS.findall(text):
        assert _matches(value, _UNIT[unit], rows), (name, value, unit, rows)
        assert unit or float(value.replace(",", "")) < 10_000, (name, value)
        counts["rows" + ("_abbreviated" if unit else "")] += 1
    written = _totals(plan, box, "shuffle bytes written")
    for value, unit in _WRITTEN.findall(text):
        assert _matches(value, _BYTES[unit], written), (name, value, unit, written)
        counts["written"] += 1
    _check_keys(name, plan, box, lines, counts)


def _check_keys(name: str, plan: PlanNode, box: Box, lines: list[str], counts: dict[str, int]) -> None:
    """A drawn hash partitioning names its first keys and counts the rest: together as many
    keys as Spark's plan has for one of the box's exchanges."""
    joined = " ".join(x.strip() for x in lines)
    spark = [len(_top_level(m.group(1))) - 1 for p in box.members
             for m in [re.search(r"hashpartitioning\((.*)\)", node_at(plan, p).description or "")]
             if m and (node_at(plan, p).name or "").endswith("Exchange")]
    for drawn in re.findall(r"hashpartitioning\(([^)]*), \d+\)", joined):
        more = re.search(r" \+(\d+) more$", drawn)
        alone = re.fullmatch(r"(\d+) keys?", drawn)
        n = int(alone.group(1)) if alone else len(drawn.split(", ")) + (int(more.group(1)) if more else 0)
        assert n in spark, (name, drawn, spark)
        counts["keys" + ("_counted" if more or alone else "")] += 1


def _top_level(s: str) -> list[str]:
    """Spark's argument list split at its top-level commas (a key may be an expression)."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def test_every_box_line_of_the_production_size_log_keeps_numbers_whole():
    """No number cut, no build side twice, no wrapper box, no click promised; every drawn row
    count and bytes written rounds from Spark's metric, every key list counts Spark's keys."""
    counts: dict[str, int] = dict.fromkeys(("rows", "rows_abbreviated", "written", "keys", "keys_counted"), 0)
    n = 0
    for name, plan, box, lines in _boxes(BIG):
        _check_box(name, plan, box, lines, counts)
        n += 1
    assert n > 1000, n
    # the checks bite: the log has row counts over 10,000, bytes and multi-key partitionings
    assert counts["rows"] > 500 and counts["rows_abbreviated"] > 100, counts
    assert counts["written"] > 100 and counts["keys"] > 100 and counts["keys_counted"] > 10, counts


@pytest.mark.parametrize("sample", [s for s in sample_sources() if Path(s.path) != BIG], ids=lambda s: s.label)
def test_every_box_line_of_every_other_sample(sample):
    counts: dict[str, int] = dict.fromkeys(("rows", "rows_abbreviated", "written", "keys", "keys_counted"), 0)
    for name, plan, box, lines in _boxes(Path(sample.path)):
        _check_box(name, plan, box, lines, counts)
    assert counts["rows"] > 0 or sample.kind != "eventlog", counts  # (a capture's plans carry no row counts)


def test_the_exact_values_stay_in_the_details_and_the_drawn_labels_are_these_lines():
    """A box writes ``100 K rows``; the node's details keep Spark's exact total. The figure's
    labels trace draws the very lines checked above."""
    name, plan = next((n, p) for n, p in _plans(BIG) if any(
        m.get("name") == "number of output rows" and (m.get("total") or 0) >= 10_000
        for node in p.walk() for m in node.metrics))
    fig = plan_figure(plan, expanded="all", numbers=box_numbers())
    labels = next(t for t in fig.data if t.name == "labels")
    bg = box_graph(plan, "all", numbers=box_numbers(), kind_of=node_kind)
    checked = 0
    for key, text in zip(labels.customdata, labels.text):
        assert text.split("<br>") == _box_lines(bg.boxes[key], [])[0], (name, key)
        rows = next((m for m in node_at(plan, key).metrics if m.get("name") == "number of output rows"), None)
        if rows is not None and (rows.get("total") or 0) >= 10_000:
            detail = next(r for r in node_details(plan, key)["metrics"] if r["name"] == "number of output rows")
            assert detail["value"] == f"{int(rows['total']):,}" and detail["value"] not in _plain(text), (name, key)
            checked += 1
    assert checked > 0
    legend = [t.name for t in plan_figure(plan, expanded=(), numbers=box_numbers()).data]
    assert "query stage" in legend and not any("click" in (x or "") for x in legend)
