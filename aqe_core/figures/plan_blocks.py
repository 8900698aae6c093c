"""What a plan graph draws: boxes, each one operator or one whole query stage, and their edges.

AQE acts on query stages: it cuts the plan at every exchange, runs the stage below it, then
re-plans what is above with the stage's statistics. So the picture a Spark engineer reads
first is the stage graph: one box per stage (the operators between two exchanges), with the
stage's reads, joins, aggregates, scans and exchange listed inside it, Spark's numbers beside
them and AQE's changes on top. Any stage can be *expanded* into its operators, one box each
(``WholeStageCodegen`` and ``InputAdapter`` wrappers folded, as Spark's UI clusters codegen).

A stage (here: a *block*) starts at a stage boundary (an exchange, a query-stage wrapper, a
subquery, a nested ``AdaptiveSparkPlan``) and holds everything below it down to the next
boundary; a chain of boundaries (``ShuffleQueryStage`` over ``Exchange``) is one block. Path
ids (``"0"``, ``"0.1.0"``) address nodes of the unfolded plan, as everywhere else; a collapsed
block's box is keyed ``"stage:<path of its head>"``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Collection, Optional

from aqe_core.model.engines import STAGE_PARTS
from aqe_core.model.plan import PlanNode
from aqe_core.figures.box_text import drop_ids
from aqe_core.figures.plan_paths import cross_links
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, STAGE_WRAPPERS
from aqe_core.views.plan_match import base_name, is_join

STAGE_KEY = "stage:"
#: operators a collapsed stage does not list (they move no data that AQE decides on)
_QUIET = ("Project", "Filter", "ColumnarToRow", "RowToColumnar", "InputAdapter", "WholeStageCodegen",
          "AdaptiveSparkPlan", "ReusedExchange")
_SUBQUERIES = ("Subquery", "SubqueryBroadcast", "ReusedSubquery")
_JOIN_TYPE = re.compile(r"\b(Inner|Cross|LeftOuter|RightOuter|FullOuter|LeftSemi|LeftAnti|ExistenceJoin\([^)]*\))\b")
_BUILD = re.compile(r"\b(BuildLeft|BuildRight)\b")
_PARTITIONING = re.compile(r"^(?:Exchange|ShuffleExchange)\s+(.*?)(?:,\s*[A-Z_]+\s*(?:,\s*\[[^\]]*\])?)?\s*$")
_STAGE_ID = re.compile(r"^(?:Shuffle|Broadcast|TableCache|Result)QueryStage\s+(\d+)")
_SCAN_TABLE = re.compile(r"^(?:Scan|FileScan|BatchScan)\s+\S+\s+(\S+)")
_SCAN_LOCATION = re.compile(r"Location: \w+\(\d+ paths?\)\[([^\],]*)")

#: how many operator lines a collapsed stage lists before "+ N more"
MAX_STAGE_LINES = 7
#: an operator line this short takes its first number on the same line ("HashAggregate · 8 rows")
INLINE_CHARS = 26


def is_boundary(node: PlanNode, is_root: bool) -> bool:
    """Does ``node`` start a query stage of its own (or continue the one its parent starts)?"""
    name = node.name or ""
    return (name in STAGE_WRAPPERS or base_name(name).endswith("Exchange") or name in _SUBQUERIES
            or name in STAGE_PARTS  # (an engine's exchange in Spark's terms: aqe_core/model/engines.py)
            or (name == "AdaptiveSparkPlan" and not is_root))


@dataclass
class Block:
    """One query stage of the drawn plan: ``head`` is the path of its topmost node."""

    head: str
    members: list[str] = field(default_factory=list)
    title: str = ""


@dataclass
class Box:
    """One drawn box: a single operator (``key`` = its path) or a collapsed stage."""

    key: str
    head: str
    block: str
    collapsed: bool
    members: tuple[str, ...]
    title: str
    lines: list[str]
    kind: str


@dataclass
class BoxGraph:
    """Boxes in plan pre-order, tree edges (parent key, child key) and reuse / subquery links."""

    boxes: dict[str, Box]
    edges: list[tuple[str, str]]
    links: list[tuple[str, str, str]]
    blocks: dict[str, Block]
    #: any plan path -> the key of the box that stands for it
    box_of: dict[str, str]

    def __len__(self) -> int:
        return len(self.boxes)


def changed_operator(box: Box, path: str, node: Optional[PlanNode]) -> str:
    """The operator an AQE change names inside a collapsed stage box ("" when the change is the
    stage itself: its head or a boundary of it), so a change to one operator never reads as a
    change to the whole stage.

    >>> b = Box("stage:0", "0", "0", True, ("0", "0.0", "0.0.0"), "Stage", [], "join")
    >>> changed_operator(b, "0.0", PlanNode(5, "Sort", "Sort [k#1 ASC NULLS FIRST], false, 0"))
    'Sort #5'
    >>> changed_operator(b, "0", PlanNode(4, "Exchange", "Exchange hashpartitioning(k#1, 4)"))
    ''
    """
    if not box.collapsed or path == box.head or node is None or len(box.members) < 2:
        return ""
    if is_boundary(node, False) and path.startswith(box.head + ".") and path.count(".") == box.head.count(".") + 1:
        return ""  # (a stage wrapper over its exchange: the stage itself)
    return node.name + (f" #{node.id}" if node.id is not None else "")


def split_blocks(plan: PlanNode) -> tuple[dict[str, Block], dict[str, str], dict[str, PlanNode]]:
    """(blocks by head path, path -> block head, path -> node) in pre-order.

    >>> ex = PlanNode(3, "Exchange", "Exchange hashpartitioning(k#1, 4)", children=[PlanNode(4, "Range", "Range (0, 9)")])
    >>> root = PlanNode(1, "HashAggregate", "HashAggregate", children=[PlanNode(2, "ShuffleQueryStage", "ShuffleQueryStage 0", children=[ex])])
    >>> blocks, block_of, _ = split_blocks(root)
    >>> {h: b.members for h, b in blocks.items()}
    {'0': ['0'], '0.0': ['0.0', '0.0.0', '0.0.0.0']}
    """
    blocks: dict[str, Block] = {}
    block_of: dict[str, str] = {}
    nodes: dict[str, PlanNode] = {}
    # (path, node, parent block, parent continues its block into a boundary child)
    stack: list[tuple[str, PlanNode, Optional[str], bool]] = [("0", plan, None, False)]
    while stack:
        path, node, parent_block, chain = stack.pop()
        nodes[path] = node
        boundary = is_boundary(node, parent_block is None)
        if parent_block is None or (boundary and not chain):
            blocks[path] = Block(path)
            blk = path
        else:
            blk = parent_block
        blocks[blk].members.append(path)
        block_of[path] = blk
        kids = node.children
        # a stage wrapper over its exchange is one stage; so is the root's AdaptiveSparkPlan over
        # its ResultQueryStage
        keeps_chain = (boundary or (parent_block is None and node.name == "AdaptiveSparkPlan")) and len(kids) == 1
        for i in range(len(kids) - 1, -1, -1):
            stack.append((f"{path}.{i}", kids[i], blk, keeps_chain))
    for block in blocks.values():
        block.title = block_title(nodes, block)
    return blocks, block_of, nodes


def block_title(nodes: dict[str, PlanNode], blk: Block) -> str:
    """A stage's name: its query stage and id (adaptive plans), else what its exchange makes of
    it (the initial plan: the stage AQE will run), else its subquery, else the result stage.

    >>> n = {"0": PlanNode(1, "Project", ""), "0.0": PlanNode(2, "BroadcastExchange", "BroadcastExchange HashedRelationBroadcastMode")}
    >>> block_title(n, Block("0.0", ["0.0"])), block_title(n, Block("0", ["0"]))
    ('Broadcast stage', 'Result stage')
    """
    chain = [nodes[p] for p in _head_chain(nodes, blk)]
    reused = " (reused)" if any(n.name == "ReusedExchange" for n in chain) else ""
    for n in chain:
        m = _STAGE_ID.match(n.description or n.name or "")
        if m:
            return f"{n.name} {m.group(1)}{reused}"
    name = nodes[blk.head].name or "?"
    if blk.head == "0":
        return "Result stage"
    if name == "BroadcastExchange":
        return "Broadcast stage"
    if name == "ReusedExchange":
        return "Reused exchange"
    if name.endswith("Exchange"):
        return "Shuffle stage"
    return name


def operator_text(node: PlanNode) -> str:
    """One operator as a line: its name and the qualifier that matters (join type and build
    side, a scan's table, an exchange's partitioning without expression ids, a read's description).

    >>> operator_text(PlanNode(1, "BroadcastHashJoin", "BroadcastHashJoin [k#1], [k#2], LeftOuter, BuildRight, false"))
    'BroadcastHashJoin LeftOuter BuildRight'
    >>> operator_text(PlanNode(2, "Exchange", "Exchange hashpartitioning(ss_item_sk#3, 128), ENSURE_REQUIREMENTS, [plan_id=71]"))
    'Exchange hashpartitioning(ss_item_sk, 128)'
    """
    name = node.name or "?"
    desc = " ".join((node.description or "").split())
    if is_join(base_name(name)):
        jt, build = _JOIN_TYPE.search(desc), _BUILD.search(desc)
        return " ".join(x for x in (name, jt.group(1) if jt else "", build.group(1) if build else "") if x)
    if name in SHUFFLE_READ_NAMES:
        return desc if desc.startswith(name) else f"{name} {desc}".strip()
    if name.endswith("Exchange") and name != "ReusedExchange":
        m = _PARTITIONING.match(desc)
        return f"{name} {drop_ids(m.group(1))}" if m and name in ("Exchange", "ShuffleExchange") else name
    if name.startswith(("Scan ", "FileScan", "BatchScan")):
        table = scan_table(node)
        return f"{name.split()[0]} {name.split()[1]} {table}" if table and len(name.split()) > 1 else name
    m = _STAGE_ID.match(desc or name)
    if m:
        return f"{name} {m.group(1)}"
    return name


def scan_table(node: PlanNode) -> str:
    """The table a scan reads: its catalog name's last part, else its location's last folder.

    >>> scan_table(PlanNode(1, "Scan parquet spark_catalog.default.date_dim", ""))
    'date_dim'
    >>> scan_table(PlanNode(2, "Scan parquet ", "FileScan parquet [d#1] Location: InMemoryFileIndex(1 paths)[file:/d/item], X"))
    'item'
    """
    m = _SCAN_TABLE.match(node.name or "")
    if m:
        return m.group(1).rsplit(".", 1)[-1]
    m = _SCAN_LOCATION.search(node.description or "")
    return m.group(1).rstrip("/").rsplit("/", 1)[-1] if m else ""


def _listed(node: PlanNode) -> bool:
    name = node.name or ""
    return not (name.startswith("WholeStageCodegen") or base_name(name) in _QUIET or name in STAGE_WRAPPERS)


def _folded(node: PlanNode) -> bool:
    """A wrapper drawn as the operator below it (Spark's UI folds codegen the same way)."""
    name = node.name or ""
    return (name.startswith("WholeStageCodegen") or name == "InputAdapter") and len(node.children) == 1


def box_graph(plan: PlanNode, expanded: Collection[str] | str = (), *,
              numbers: Optional[Callable[[PlanNode], list[str]]] = None,
              kind_of: Callable[[PlanNode], str] = lambda n: "other",
              keep: Collection[str] = ()) -> BoxGraph:
    """The boxes to draw: every block collapsed into one box except those whose head path is
    in ``expanded`` (``"all"``: every block drawn operator by operator). ``numbers(node)`` gives
    Spark's numbers for a node (a read's partitions, bytes written, its stage's task times).

    A broadcast stage with no stage below it (a dimension table's scan) is written as a line
    of the closed stage that joins it, not drawn as a box of its own: a TPC-DS query joins a
    dozen of them, and as boxes they made its stage graph thousands of pixels wide. One holding
    a path of ``keep`` (an AQE change) keeps its box."""
    blocks, block_of, nodes = split_blocks(plan)
    every = expanded == "all"
    open_blocks = set(blocks) if every else {h for h in expanded if h in blocks}
    numbers = numbers or (lambda n: [])
    joined = {h: parent for h, parent in _broadcast_leaves(blocks, block_of, nodes, set(keep)).items()
              if parent not in open_blocks and h not in open_blocks}
    into: dict[str, list[str]] = {}  # a closed stage's listed member -> the broadcast stages it joins
    for h in joined:
        at = h.rsplit(".", 1)[0]
        while not _listed(nodes[at]) and "." in at and block_of[at.rsplit(".", 1)[0]] == block_of[at]:
            at = at.rsplit(".", 1)[0]  # past an InputAdapter to its join
        into.setdefault(at, []).append(h)
    boxes: dict[str, Box] = {}
    box_of: dict[str, str] = {}
    pending: dict[str, list[str]] = {}
    for path, node in nodes.items():
        blk = block_of[path]
        blk = joined.get(blk, blk)
        if blk not in open_blocks:
            key = STAGE_KEY + blk
            box_of[path] = key
            if key not in boxes:
                boxes[key] = _stage_box(blocks[blk], nodes, numbers, kind_of, into, blocks)
            continue
        if _folded(node) and block_of[f"{path}.0"] == blk:
            pending.setdefault(f"{path}.0", []).extend([*pending.pop(path, ()), path])
            continue
        if _folded(node) and _fold_up(path, pending, boxes, box_of):
            continue
        folded = tuple(pending.pop(path, ()))
        for f in folded:
            box_of[f] = path
        box_of[path] = path
        lines = [f"{x}" for x in numbers(node)]
        boxes[path] = Box(path, path, blk, False, folded + (path,), operator_text(node), lines, kind_of(node))
    edges: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for path in nodes:
        if "." not in path:
            continue
        parent = path.rsplit(".", 1)[0]
        a, b = box_of[parent], box_of[path]
        if a != b and (a, b) not in seen:
            seen.add((a, b))
            edges.append((a, b))
    written = {p for h in joined for p in blocks[h].members}
    return BoxGraph(boxes, edges, _links(nodes, box_of, written), blocks, box_of)


def _fold_up(path: str, pending: dict[str, list[str]], boxes: dict[str, Box], box_of: dict[str, str]) -> bool:
    """Fold a wrapper whose child starts another stage (an ``InputAdapter`` over a query stage)
    into the operator above it, as Spark's UI draws it inside that operator's codegen cluster;
    False when nothing of its stage is above it (then it keeps a box of its own)."""
    chain = [*pending.pop(path, ()), path]
    key = box_of.get(chain[0].rsplit(".", 1)[0]) if "." in chain[0] else None
    if key is None or key not in boxes:
        pending[path] = chain[:-1]
        return False
    for p in chain:
        box_of[p] = key
    boxes[key].members += tuple(chain)
    return True


def _broadcast_leaves(blocks: dict[str, Block], block_of: dict[str, str], nodes: dict[str, PlanNode],
                      keep: set[str]) -> dict[str, str]:
    """Broadcast stages with no stage below them and no AQE change: head -> the joining stage."""
    parent_of = {h: block_of[h.rsplit(".", 1)[0]] for h in blocks if h != "0"}
    has_child = set(parent_of.values())
    out: dict[str, str] = {}
    for h, parent in parent_of.items():
        blk = blocks[h]
        chain = _head_chain(nodes, blk)
        if (h not in has_child and any(nodes[p].name in _BROADCASTS for p in chain)
                and not any(p in keep for p in blk.members)):
            out[h] = parent
    return out


_BROADCASTS = ("BroadcastQueryStage", "BroadcastExchange")
#: words a join line drops once it names the broadcast it joins
_QUIET_WORDS = ("Inner", "BuildLeft", "BuildRight")
_REPEATS = re.compile(r" ×(\d+)$")


def _base_line(line: str) -> str:
    return _REPEATS.sub("", line)


def _repeats(line: str) -> int:
    m = _REPEATS.search(line)
    return int(m.group(1)) if m else 1
_SCANS = ("Scan ", "FileScan", "BatchScan")


def _head_chain(nodes: dict[str, PlanNode], blk: Block) -> list[str]:
    """The block's head and the stage boundaries right under it (a wrapper over its exchange)."""
    chain = []
    for p in blk.members:
        if p != blk.head and not is_boundary(nodes[p], p == "0"):
            break
        chain.append(p)
    return chain


def _broadcast_line(nodes: dict[str, PlanNode], blk: Block) -> str:
    """What a joined broadcast stage carries: its tables (or its title), and if it is reused."""
    tables = [scan_table(nodes[p]) for p in blk.members if (nodes[p].name or "").startswith(_SCANS)]
    tables = [t for t in tables if t]
    reused = " (reused)"
    what = ", ".join(dict.fromkeys(tables)) or blk.title.removesuffix(reused)  # (each fact once)
    return f"⟵ {what}" + (reused if reused in blk.title else "")


def _stage_box(blk: Block, nodes: dict[str, PlanNode], numbers: Callable[[PlanNode], list[str]],
               kind_of: Callable[[PlanNode], str], into: dict[str, list[str]], blocks: dict[str, Block]) -> Box:
    """A collapsed stage: its exchange first (what the stage writes), then the operators that
    matter in plan order, each with Spark's numbers; a join names the broadcasts it joins."""
    lines: list[str] = []
    listed = [p for p in blk.members if _listed(nodes[p])]
    shown = listed if len(listed) <= MAX_STAGE_LINES else listed[: MAX_STAGE_LINES - 1]
    for p in shown:
        node = nodes[p]
        nums = numbers(node)
        text = operator_text(node)
        joins = [_broadcast_line(nodes, blocks[h]) for h in into.get(p, ())]
        if joins:  # "BroadcastHashJoin ⟵ date_dim": the table is what the line is for
            text = " ".join(w for w in text.split() if w not in _QUIET_WORDS) + " " + " ".join(joins)
            nums = [x for x in nums if x not in _QUIET_WORDS]
        inline = nums[:1] if len(text) <= INLINE_CHARS else []  # a long line keeps its numbers below it
        line = text + (" · " + inline[0] if inline else "")
        if lines and _base_line(lines[-1]) == line:  # "Sort", "Sort" -> "Sort ×2"
            lines[-1] = f"{line} ×{_repeats(lines[-1]) + 1}"
        else:
            lines.append(line)
        lines.extend(f"   {x}" for x in nums[len(inline):])
    if len(shown) < len(listed):
        lines.append(f"+ {len(listed) - len(shown)} more operators")  # (the offline report cannot expand)
    head = nodes[blk.head]
    kinds = [kind_of(nodes[p]) for p in listed] or [kind_of(head)]
    kind = next((k for k in ("join", "shuffle read", "aggregate", "scan") if k in kinds), kinds[0])
    members = tuple(blk.members) + tuple(m for p in blk.members for h in into.get(p, ()) for m in blocks[h].members)
    return Box(STAGE_KEY + blk.head, blk.head, blk.head, True, members, blk.title, lines, kind)


def _links(nodes: dict[str, PlanNode], box_of: dict[str, str], written: set[str]) -> list[tuple[str, str, str]]:
    """Reuse / subquery references between boxes, as (source box, target box, kind); a
    broadcast written into its joining stage's box says "(reused)" there instead."""
    paths = list(nodes)
    index = {p: i for i, p in enumerate(paths)}
    children: list[list[int]] = [[] for _ in paths]
    for p in paths:
        if "." in p:
            children[index[p.rsplit(".", 1)[0]]].append(index[p])
    out: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for lk in cross_links(paths, [nodes[p] for p in paths], children):
        a, b = box_of[lk.source], box_of[lk.target]
        if a != b and lk.source not in written and (a, b) not in seen:
            seen.add((a, b))
            out.append((a, b, lk.kind))
    return out
