"""The plan text beside the graph (issue 40, requirement 5) is the tree Spark printed.

Spark logs its own text with every plan (``physicalPlanDescription``; the reader keeps the
latest one, :func:`~aqe_core.readers.eventlog.planinfo.physical_plan_description`): from 3.1 in
``formatted`` mode (operator names and explain ids, subqueries listed apart), in 3.0 as the
extended explain (``simpleString`` lines, subqueries inline). On every recorded log, our lines
carry the same operators in the same order, under the same tree marks, as Spark's text; the
numbers differ by design (ours are the SQL tab graph's node ids, formatted explain's count
bottom-up). The production-size log is checked version by version, straight from the log.
"""
from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path
from typing import Iterator, Optional

import pytest

from aqe_core import api
from aqe_core.figures.plan_paths import iter_paths, node_at
from aqe_core.model.plan import PlanNode
from aqe_core.readers.eventlog.planinfo import physical_plan_description
from aqe_core.views.plan_text import ELIDED, MAX_LEVELS, MAX_LINE_CHARS, PlanTextLine, line_of, plan_text, plan_text_lines

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs" / "eventlogs"
FIXTURES = ROOT / "tests" / "fixtures" / "eventlogs"
BIG = SAMPLES / "local-1795649029734.zstd"
LOGS = sorted([p for p in SAMPLES.iterdir() if p.name != "MANIFEST.json"]
              + list((FIXTURES / "listener").glob("*/*.zstd"))
              + [FIXTURES / "plain_cases" / "local-1795647456252.zstd",
                 FIXTURES / "sentence_cases" / "local-1795848637016.zstd",
                 *(FIXTURES / "retry_cases").glob("*/*.zstd")])

_MARKS = ("   ", ":  ", "+- ", ":- ")
_HEADER = re.compile(r"^\s*\+- == (\w+) Plan ==$")
_CODEGEN = re.compile(r"^(?:\* |\*\(\d+\) )")
_SUBQUERIES = ("Subquery", "SubqueryBroadcast", "SubqueryAdaptiveBroadcast", "ReusedSubquery")
_SUBQUERY_BLOCK = re.compile(r"^Subquery:\d+ Hosting operator id = ")


# --------------------------------------------------------------------------------------------
# Spark's text
# --------------------------------------------------------------------------------------------
def _tree_lines(block: str) -> list[str]:
    out = []
    for line in block.split("\n"):
        if not line.strip():
            break
        out.append(line)
    return out


def spark_tree(text: str) -> list[str]:
    """The printed tree under ``== Physical Plan ==`` (up to the first blank line)."""
    i = text.find("== Physical Plan ==\n")
    assert i >= 0, text[:200]
    return _tree_lines(text[i + len("== Physical Plan ==\n"):])


def spark_subqueries(text: str) -> list[list[str]]:
    """The trees of formatted explain's ``===== Subqueries =====`` list (a reused one has none)."""
    i = text.find("===== Subqueries =====")
    if i < 0:
        return []
    lines = text[i:].split("\n")
    return [t for k, line in enumerate(lines) if _SUBQUERY_BLOCK.match(line)
            for t in [_tree_lines("\n".join(lines[k + 1:]))] if t]


def _split(line: str) -> tuple[str, bool, str]:
    """(tree marks, codegen mark?, the operator's text)."""
    k = 0
    while line[k:k + 3] in _MARKS:
        k += 3
    rest = line[k:]
    m = _CODEGEN.match(rest)
    return line[:k], m is not None, rest[m.end() if m else 0:]


def sections(tree: list[str]) -> dict[str, list[str]]:
    """``""``: the lines before any header; ``"Final"``/``"Current"``/``"Initial"``: a header's
    line and the plan under it."""
    out: dict[str, list[str]] = {"": []}
    cur = ""
    for line in tree:
        m = _HEADER.match(line)
        if m:
            cur = m.group(1)
            out[cur] = []
        out[cur].append(line)
    return out


# --------------------------------------------------------------------------------------------
# ours, beside it
# --------------------------------------------------------------------------------------------
def _ours(plan: PlanNode, *, sections_: bool, formatted: bool) -> list[tuple[PlanTextLine, Optional[str]]]:
    """Our lines with each one's operator name (None: a header); formatted explain lists
    subqueries apart from the tree, so there they are left out."""
    lines = plan_text_lines(plan, sections=sections_)
    subs = [p for p, n in iter_paths(plan) if n.name in _SUBQUERIES] if formatted else []
    out: list[tuple[PlanTextLine, Optional[str]]] = []
    dropped = False
    for line in lines:
        inside = line.path is not None and any(line.path == s or line.path.startswith(s + ".") for s in subs)
        if inside or (line.path is None and dropped):  # (a header inside a left-out subquery)
            dropped = True
            continue
        dropped = False
        node = node_at(plan, line.path) if line.path is not None else None
        out.append((line, node.name if node is not None else None))
    return out


def mismatch(spark: list[str], ours: list[tuple[PlanTextLine, Optional[str]]], strip: int = 0) -> Optional[str]:
    """Why ``ours`` is not ``spark`` line for line (same tree marks, codegen marks where Spark
    has them, the same operator: Spark's text starts with its name), or None."""
    if len(spark) != len(ours):
        return f"{len(spark)} lines in Spark's text, {len(ours)} in ours"
    for s, (line, name) in zip(spark, ours):
        s_marks, s_codegen, s_text = _split(s)
        o_marks, o_codegen, o_text = _split(line.text)
        if s_marks[strip:] != o_marks[strip:] or s_codegen != o_codegen:
            return f"tree marks: {s!r} / {line.text!r}"
        if name is None:
            if s.strip() != line.text.strip():
                return f"header: {s!r} / {line.text!r}"
        elif not (s_text == name or s_text.startswith(name if name.endswith(" ") else (name + " ", name + "("))):
            return f"operator: {s!r} / {line.text!r} ({name!r})"
    return None


def check(text: str, current: PlanNode, initial: Optional[PlanNode]) -> Optional[str]:
    """Spark's text of one plan version against our lines of that version (and of the initial
    plan, for the ``== Initial Plan ==`` section)."""
    formatted = "== Parsed Logical Plan ==" not in text  # (3.0's extended explain otherwise)
    tree = sections(spark_tree(text))
    main = [*tree[""], *tree.get("Final", []), *tree.get("Current", [])]
    why = mismatch(main, _ours(current, sections_=formatted, formatted=formatted))
    if why or "Initial" not in tree:
        return why and f"current plan: {why}"
    assert initial is not None
    # Spark prints the initial plan under its header, where ours sits under the AdaptiveSparkPlan
    ours = _ours(initial, sections_=formatted, formatted=formatted)
    at = next(i for i, (line, name) in enumerate(ours) if name == "AdaptiveSparkPlan")
    below = [(line, name) for line, name in ours[at + 1:]
             if line.path is None or line.path.startswith(ours[at][0].path + ".")]
    why = mismatch(tree["Initial"][1:], below, strip=3 * ours[at][0].depth + 3)
    if why:
        return f"initial plan: {why}"
    return _subqueries_match(text, [current, initial]) if formatted else None


def _subqueries_match(text: str, plans: list[PlanNode]) -> Optional[str]:
    """Each subquery tree formatted explain lists is one of ours (the plan under a Subquery)."""
    pool = [_ours(sub.children[0], sections_=True, formatted=True)
            for plan in plans for sub in plan.walk() if sub.name in _SUBQUERIES[:3] and sub.children]
    for tree in spark_subqueries(text):
        tree = sections(tree)  # (a subquery's initial plan is not in the log's tree)
        tree = [*tree[""], *tree.get("Final", []), *tree.get("Current", [])]
        if not any(mismatch(tree, ours) is None for ours in pool):
            return f"subquery not among ours: {tree[:3]}"
    return None


def _lone_command(plan: Optional[PlanNode]) -> bool:
    """A command the log gives no tree for: Spark's text prints its logical plan under it."""
    return plan is not None and not plan.children and plan.name.startswith("Execute ")


# --------------------------------------------------------------------------------------------
# real logs
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_latest_version_reads_as_spark_printed_it(path: Path) -> None:
    """The text the reader keeps (the latest version's: final and initial plan) on every log."""
    log = api.load_event_log(str(path))
    compared, bad = 0, []
    for eid, ex in sorted(log.executions.items()):
        text = physical_plan_description(ex)
        if text is None or ex.final_plan is None or _lone_command(ex.final_plan):
            continue
        compared += 1
        why = check(text, ex.final_plan, ex.initial_plan)
        if why:
            bad.append(f"execution {eid}: {why}")
    assert compared and not bad, bad[:3]


def _raw_plan_texts(path: Path) -> Iterator[tuple[int, str, str]]:
    """(execution id, event, physicalPlanDescription) of each plan event, read from the log."""
    import zstandard

    with path.open("rb") as f:
        reader = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)
        for line in io.TextIOWrapper(reader, encoding="utf-8"):
            if '"physicalPlanDescription"' in line:
                d = json.loads(line)
                yield d["executionId"], d["Event"].rsplit(".", 1)[-1], d["physicalPlanDescription"]


@pytest.fixture(scope="module")
def big_views():
    return {v.query_id: v for v in api.load_source(str(BIG)).views}


def test_every_version_of_the_production_size_plans_reads_as_spark_printed_it(big_views) -> None:
    """The TPC-DS-like log (plans of 300+ nodes): the start event's text against the initial
    plan, each adaptive update's (``== Current Plan ==``, then ``== Final Plan ==``) against
    that version, read straight from the log."""
    updates: dict[int, int] = {}
    checked = 0
    for eid, event, text in _raw_plan_texts(BIG):
        view = big_views[str(eid)]
        if event == "SparkListenerSQLExecutionStart":
            plan = view.initial_plan
        else:
            plan = view.plan_versions[updates.get(eid, 0)]
            updates[eid] = updates.get(eid, 0) + 1
        if plan is None or _lone_command(plan):
            continue
        why = check(text, plan, view.initial_plan)
        assert why is None, f"execution {eid} ({event} #{updates.get(eid, 0)}): {why}"
        checked += 1
    assert updates and all(len(big_views[str(e)].plan_versions) == n for e, n in updates.items())
    assert checked > 30 and max(sum(1 for _ in v.final_plan.walk()) for v in big_views.values()) > 300


def test_each_node_finds_its_line_and_each_line_its_node(big_views) -> None:
    """Both ways of the link, on every node of every plan of the production-size log: a line's
    path is the node of that id, and every node's path finds a line (its own when it has one;
    a codegen wrapper's first member; the reuse above a copied exchange)."""
    for view in big_views.values():
        for plan in [view.initial_plan, *view.plan_versions]:
            if plan is None:
                continue
            lines = plan_text_lines(plan)
            for i, line in enumerate(lines):
                if line.path is not None:
                    assert node_at(plan, line.path).id == line.node_id
                    assert line_of(lines, line.path) == i
            for path, node in iter_paths(plan):
                i = line_of(lines, path)
                assert i is not None, path
                assert lines[i].path == path or node.name.startswith(("WholeStageCodegen", "InputAdapter")) \
                    or any(lines[i].path == p and node_at(plan, p).name.startswith("Reused")
                           for p in [path.rsplit(".", k)[0] for k in range(1, path.count(".") + 1)]), path


# --------------------------------------------------------------------------------------------
# the rules, on small plans
# --------------------------------------------------------------------------------------------
def _n(i: Optional[int], name: str, desc: str = "", *kids: PlanNode) -> PlanNode:
    return PlanNode(i, name, desc or name, [], list(kids))


def test_subqueries_come_first_and_codegen_marks_stop_where_spark_stops_them() -> None:
    sub = _n(5, "Subquery", "Subquery subquery#63, [id=#487]", _n(6, "LocalTableScan", "LocalTableScan [x#1]"))
    scan = _n(None, "InputAdapter", "", _n(None, "ShuffleQueryStage", "ShuffleQueryStage 0",
                                           _n(7, "Exchange", "Exchange SinglePartition")))
    filt = _n(3, "Filter", "Filter (a#0 > Subquery subquery#63, [id=#487])", scan, sub)
    plan = _n(0, "AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=false",
              _n(1, "WholeStageCodegen (2)", "", _n(2, "Project", "Project [a#0]", filt)))
    assert plan_text(plan_text_lines(plan)) == "\n".join([
        "AdaptiveSparkPlan isFinalPlan=false (0)",
        "+- == Current Plan ==",
        "   *(2) Project [a#0] (2)",
        "   +- *(2) Filter (a#0 > Subquery subquery#63, [id=#487]) (3)",
        "      :  +- Subquery subquery#63, [id=#487] (5)",
        "      :     +- LocalTableScan [x#1] (6)",
        "      +- ShuffleQueryStage 0",
        "         +- Exchange SinglePartition (7)",
    ])
    lines = plan_text_lines(plan, sections=False)
    assert [line.text for line in lines[:2]] == ["AdaptiveSparkPlan isFinalPlan=false (0)", "+- *(2) Project [a#0] (2)"]
    assert [line.depth for line in lines] == [0, 1, 2, 4, 5, 3, 4]
    assert line_of(lines, "0.0") == 1 and line_of(lines, "0.0.0.0.0") == 5  # codegen wrapper, stage input
    assert line_of(lines, "0.9") is None and line_of(lines, "") is None


def test_a_long_description_stays_whole_up_to_the_cap_and_on_one_line() -> None:
    wide = "Project [" + ", ".join(f"c{i}#{i}" for i in range(160)) + "]"
    assert len(wide) + 4 < MAX_LINE_CHARS < len(wide * 2)
    lines = plan_text_lines(_n(0, "Project", wide, _n(1, "Scan", "Scan\nparquet\r\nt")))
    assert lines[0].text == wide + " (0)" and lines[1].text == "+- Scan parquet t (1)"
    hostile = plan_text_lines(_n(0, "Project", wide * 100))
    assert len(hostile[0].text) == MAX_LINE_CHARS and hostile[0].text.endswith("…")


def test_a_plan_20000_levels_deep_prints_fast_down_to_the_level_cap() -> None:
    """A hostile log's plan: the text stops at MAX_LEVELS with one "…" line per hidden
    subtree, which a click on any node below finds."""
    node = _n(20_000, "Range", "Range (0, 1)")
    for i in range(19_999, -1, -1):
        node = _n(i, "Filter", f"Filter f{i}", node, _n(None, "ReusedExchange", "ReusedExchange [k], Exchange"))
    start = time.perf_counter()
    lines = plan_text_lines(node)
    assert time.perf_counter() - start < 5
    assert max(len(line.text) for line in lines) <= MAX_LINE_CHARS
    elided = [i for i, line in enumerate(lines) if line.text.endswith(ELIDED)]
    assert len(elided) == 2 and all(lines[i].node_id is None for i in elided)
    assert line_of(lines, "0" + ".0" * 20_000) == elided[0]
    assert lines[elided[0] - 1].text.endswith(f"Filter f{MAX_LEVELS - 1} ({MAX_LEVELS - 1})")
