"""Checked access to untrusted capture JSON: every value is checked for type and range where it
is read, so a malformed file gives a :class:`CaptureFormatError` naming the field, never a
``TypeError`` deep inside the simulator. Shared by the capture dataclasses' ``from_dict``.
"""
from __future__ import annotations

import json
import math
from typing import Any, Optional

from aqe_core.model.specs import ShufflePartitionSpec, spec_from_dict


class CaptureFormatError(ValueError):
    """The file is not an AQE Lens capture, or a version this release cannot read, or it is
    malformed (a value of the wrong type or out of range). The message is one line and never
    quotes the file's content."""



#: partitions / maps / plan nodes one capture may describe (the simulator allocates per item)
MAX_COUNT = 1_000_000
_I64 = (-(2 ** 63), 2 ** 63 - 1)


def _bad(where: str, what: str) -> CaptureFormatError:
    return CaptureFormatError(f"malformed capture: {where} {what}")


def _dict(v: Any, where: str, optional: bool = False) -> dict[str, Any]:
    if v is None and optional:
        return {}
    if not isinstance(v, dict):
        raise _bad(where, "should be an object")
    return v


def _list(v: Any, where: str, optional: bool = True) -> list[Any]:
    if v is None and optional:
        return []
    if not isinstance(v, list):
        raise _bad(where, "should be a list")
    return v


def _int(v: Any, where: str, lo: int = _I64[0], hi: int = _I64[1], optional: bool = False) -> Optional[int]:
    if v is None and optional:
        return None
    if isinstance(v, float) and v.is_integer() and abs(v) < 2 ** 53:
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _bad(where, "should be an integer")
    if not lo <= v <= hi:
        raise _bad(where, f"is out of range ({lo}..{hi})")
    return v


def _count(v: Any, where: str, optional: bool = False) -> Optional[int]:
    return _int(v, where, 0, MAX_COUNT, optional)


def _size(v: Any, where: str, optional: bool = False) -> Optional[int]:
    return _int(v, where, -1, _I64[1], optional)  # -1: Spark's "unknown" (missing map status)


def _float(v: Any, where: str) -> Optional[float]:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or abs(v) > 1e18 or not math.isfinite(v):
        raise _bad(where, "should be a finite number")
    return float(v)


def _str(v: Any, where: str, optional: bool = False) -> Optional[str]:
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise _bad(where, "should be a string")
    return v


def _bool(v: Any, where: str, optional: bool = False) -> Optional[bool]:
    if v is None and optional:
        return None
    if not isinstance(v, bool):
        raise _bad(where, "should be true or false")
    return v


def _ints(v: Any, where: str, check=None) -> list[int]:
    check = check or _size
    rows = _list(v, where, optional=False)
    if len(rows) > MAX_COUNT:
        raise _bad(where, f"has more than {MAX_COUNT} entries")
    bounds = _BOUNDS.get(check)
    if bounds is not None and set(map(type, rows)) <= {int} and (not rows or bounds[0] <= min(rows) and max(rows) <= bounds[1]):
        return list(rows)  # every entry a plain int in range: what the check of each would return
    return [check(x, f"{where}[{i}]") for i, x in enumerate(rows)]


#: the range each item check allows, for the whole-list test of :func:`_ints` (a capture holds a
#: size per map and reducer: hundreds of thousands of entries, checked one by one in Python
#: only when some entry is not a plain int in range, to name it)
_BOUNDS = {_size: (-1, _I64[1]), _count: (0, MAX_COUNT), _int: _I64}


def _str_dict(v: Any, where: str) -> dict[str, str]:
    d = _dict(v, where, optional=True)
    return {str(k): (x if isinstance(x, str) else json.dumps(x) if isinstance(x, (int, float, bool)) or x is None else "")
            for k, x in d.items() if isinstance(x, (str, int, float, bool)) or x is None}


#: keys of a capture's ``run`` that code reads, and what each must hold (docs/capture-format.md)
_RUN_STRINGS = ("kind", "workload", "doc", "sql", "tag", "action", "log", "listener_version", "source", "verify_of")


def _run(v: Any, where: str) -> dict[str, Any]:
    """A capture's ``run``: what the Re-run, Verify and labels read is checked (``views`` maps
    a view name to its ``CREATE TEMPORARY VIEW`` statement); other keys are kept as they are."""
    d = _dict(v, where, optional=True)
    for k in _RUN_STRINGS:
        _str(d.get(k), f"{where}.{k}", optional=True)
    views = _dict(d.get("views"), f"{where}.views", optional=True)
    if not all(isinstance(stmt, str) for stmt in views.values()):
        raise _bad(f"{where}.views", "should map each view name to its SQL text")
    presets = _list(d.get("presets"), f"{where}.presets")
    if not all(isinstance(p, str) for p in presets):
        raise _bad(f"{where}.presets", "should be a list of preset names")
    if d.get("scale") is not None:
        _float(d.get("scale"), f"{where}.scale")
    for k in ("conf", "conf_overrides"):
        _dict(d.get(k), f"{where}.{k}", optional=True)
    return d


_INFO_TYPES: dict[str, Any] = {
    "is_final": bool, "is_subquery": bool, "skew": bool, "read": bool, "can_change_num_partitions": bool,
    "stage_id": int, "shuffle_id": int, "num_partitions": int,
    "origin": str, "partitioning": str, "join_type": str, "left_keys": str, "right_keys": str, "build_side": str,
}


def _info(v: Any, where: str) -> dict[str, Any]:
    """A node's ``info``: known keys must have their type (else dropped), unknown keys are kept
    only as plain scalars, so the rules never see a value they cannot use."""
    out: dict[str, Any] = {}
    for k, x in _dict(v, where, optional=True).items():
        want = _INFO_TYPES.get(k)
        if k == "req":
            if isinstance(x, list) and all(isinstance(r, str) for r in x):
                out[k] = list(x)
        elif k == "row_sizes":  # [output row width, child row width] (EstimationUtils.getSizePerRow)
            if isinstance(x, list) and len(x) == 2 and all(
                    isinstance(r, int) and not isinstance(r, bool) and 0 < r < 2 ** 31 for r in x):
                out[k] = list(x)
        elif want is int:
            if isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_COUNT * 1000:
                out[k] = x
        elif want is not None:
            if isinstance(x, want):
                out[k] = x
        elif isinstance(x, (str, bool)) or x is None:
            out[k] = x
    return out


def _metric(m: Any, where: str) -> dict[str, Any]:
    d = _dict(m, where)
    out = {k: x for k, x in d.items() if isinstance(x, (str, bool)) or x is None
           or (isinstance(x, (int, float)) and not isinstance(x, bool) and abs(x) < 2 ** 63 and math.isfinite(x))}
    out["name"] = str(out.get("name", "")) if isinstance(out.get("name", ""), str) else ""
    acc = out.get("accumulator_id")
    if acc is not None and (isinstance(acc, bool) or not isinstance(acc, int)):
        out["accumulator_id"] = None
    return out


def _plan_dict(data: Any, where: str) -> dict[str, Any]:
    """A checked copy of a ``PlanNode.to_dict()`` tree (iterative: deep plans are fine)."""
    root: dict[str, Any] = {}
    stack = [(data, root, where)]
    n = 0
    while stack:
        src, out, at = stack.pop()
        n += 1
        if n > MAX_COUNT:
            raise _bad(where, f"has more than {MAX_COUNT} nodes")
        d = _dict(src, at)
        nid = d.get("id")
        out["id"] = nid if isinstance(nid, int) and not isinstance(nid, bool) and _I64[0] <= nid <= _I64[1] else None
        out["name"] = _str(d.get("name", ""), f"{at}.name")
        out["description"] = _str(d.get("description", ""), f"{at}.description")
        out["metrics"] = [_metric(m, f"{at}.metrics[{i}]") for i, m in enumerate(_list(d.get("metrics"), f"{at}.metrics"))]
        if "info" in d:
            out["info"] = _info(d.get("info"), f"{at}.info")
        kids: list[dict[str, Any]] = []
        out["children"] = kids
        for i, c in enumerate(_list(d.get("children"), f"{at}.children")):
            k: dict[str, Any] = {}
            kids.append(k)
            stack.append((c, k, f"{at}.children[{i}]"))
    return root


_SPEC_FIELDS = {
    "CoalescedPartitionSpec": (("start_reducer_index", "end_reducer_index"), ("data_size",)),
    "PartialReducerPartitionSpec": (("reducer_index", "start_map_index", "end_map_index"), ("data_size",)),
    "PartialMapperPartitionSpec": (("map_index", "start_reducer_index", "end_reducer_index"), ()),
    "CoalescedMapperPartitionSpec": (("start_map_index", "end_map_index", "num_reducers"), ()),
}


def _spec(v: Any, where: str) -> ShufflePartitionSpec:
    d = _dict(v, where)
    kind = d.get("type")
    if not isinstance(kind, str) or kind not in _SPEC_FIELDS:
        raise _bad(f"{where}.type", "is not a known shuffle partition spec")
    required, optional = _SPEC_FIELDS[kind]
    fields_: dict[str, Any] = {"type": kind}
    for f in required:
        fields_[f] = _count(d.get(f), f"{where}.{f}")
    for f in optional:
        fields_[f] = _int(d.get(f), f"{where}.{f}", 0, _I64[1], optional=True)
    for a, b in (("start_reducer_index", "end_reducer_index"), ("start_map_index", "end_map_index")):
        if a in fields_ and fields_[a] > fields_[b]:
            raise _bad(where, f"has {a} after {b}")
    return spec_from_dict(fields_)

