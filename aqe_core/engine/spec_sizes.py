"""What each partition spec of a read reads: its bytes and the reducers it covers.

Replays, views and advice size a read the same way: a coalesced spec is the sum of its
reducers' bytes, a part of a split reducer the sum of its map outputs (or the data size Spark
recorded with either); a local read's per-task sizes are not what AQE sized, so none are given.
"""
from __future__ import annotations

from typing import Any, Optional

from aqe_core.model.capture import QueryCapture
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, CoalescedPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
)

__all__ = ["spec_reducers", "spec_sizes"]


def spec_sizes(specs: list[Any], bytes_: Optional[list[int]], q: QueryCapture,
               shuffle_id: Optional[int]) -> Optional[list[int]]:
    """Bytes each spec reads (data sizes where Spark recorded them, else summed from the statistics)."""
    if bytes_ is None:
        return None
    sh = q.shuffle(shuffle_id)
    out: list[int] = []
    for s in specs:
        if isinstance(s, CoalescedPartitionSpec):
            out.append(s.data_size if s.data_size is not None else sum(bytes_[s.start_reducer_index:s.end_reducer_index]))
        elif isinstance(s, PartialReducerPartitionSpec):
            if s.data_size is not None:
                out.append(s.data_size)
            else:
                maps = sh.map_sizes.for_reducer(s.reducer_index) if (sh and sh.map_sizes) else None
                if maps is None:
                    return None
                out.append(sum(maps[s.start_map_index:s.end_map_index]))
        elif isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)):
            return None  # local reads: per-task sizes are not what AQE sized
    return out


def spec_reducers(specs: Optional[list[Any]], n: int) -> tuple[Optional[list[tuple[int, int]]], Optional[list[bool]]]:
    """Per spec: the reducers it reads ``(start, end)`` and whether it is a part of a split
    reducer; (None, None) unless every spec is a reducer-side one and there are ``n`` of them."""
    if not specs or len(specs) != n or not all(isinstance(x, (CoalescedPartitionSpec, PartialReducerPartitionSpec))
                                               for x in specs):
        return None, None
    return ([(x.start_reducer_index, x.end_reducer_index) if isinstance(x, CoalescedPartitionSpec)
             else (x.reducer_index, x.reducer_index + 1) for x in specs],
            [isinstance(x, PartialReducerPartitionSpec) for x in specs])
