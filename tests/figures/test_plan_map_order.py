"""An overview's tiles, critical path first (issue 40, requirement 3), on the recorded
TPC-DS-like plans: with the log's stage times the first chain of tiles is the root-to-leaf path
whose stages took longest (every path summed from Spark's stage durations, independently of the
map's own ordering); without times, the longest chain of boxes."""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core.figures.plan_map import plan_map_data
from aqe_core.figures.plan_paths import node_at
from aqe_core.opening import load_source
from aqe_core.views.plan_stages import plan_stage_times

BIG = Path(__file__).resolve().parents[2] / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"


@pytest.fixture(scope="module")
def src():
    return load_source(str(BIG))


def _tree(data: dict) -> dict[str, list[str]]:
    """Each box's child boxes, from the plan paths the boxes stand for (a box's parent holds the
    parent path of its head)."""
    owner = {p: b["key"] for b in data["boxes"] for p in b["paths"]}
    kids: dict[str, list[str]] = {}
    for b in data["boxes"]:
        head = b["paths"][0]
        if "." in head:
            kids.setdefault(owner[head.rsplit(".", 1)[0]], []).append(b["key"])
    return kids


def _first_chain(data: dict, kids: dict[str, list[str]]) -> list[str]:
    chain = [data["order"][0]]
    for k in data["order"][1:]:
        if k not in kids.get(chain[-1], []):
            break
        chain.append(k)
    return chain


def _paths(root: str, kids: dict[str, list[str]]) -> list[list[str]]:
    out, stack = [], [[root]]
    while stack:
        path = stack.pop()
        below = kids.get(path[-1], [])
        if not below:
            out.append(path)
        stack.extend(path + [c] for c in below)
    return out


@pytest.mark.parametrize("name", ["q72-like", "q88-like", "dozen-joins"])
def test_tiles_start_with_the_slowest_path_of_stages(src, name):
    view = next(v for v in src.views if v.description == name)
    plan = view.final_plan
    times = plan_stage_times(view, plan)
    assert times, f"{name}: the log has stage times"
    data = plan_map_data(plan, expanded=(), stage_ms=times.stage_ms)
    kids = _tree(data)
    ms = {b["key"]: sum(dict(t for t in (times.stage_ms(node_at(plan, p)) for p in b["paths"]) if t).values())
          for b in data["boxes"]}
    paths = _paths(data["order"][0], kids)
    slowest = max(sum(ms[k] for k in p) for p in paths)
    chain = _first_chain(data, kids)
    assert sum(ms[k] for k in chain) == slowest > 0, (chain, slowest)
    assert chain in paths, "the first tiles run from the root to a leaf"
    assert sorted(data["order"]) == sorted(ms), "every box is a tile once"
    assert "slowest path" in data["orderBy"]
    plain = plan_map_data(plan, expanded=())
    kids = _tree(plain)
    assert len(_first_chain(plain, kids)) == max(len(p) for p in _paths(plain["order"][0], kids))
    assert "longest chain" in plain["orderBy"]
