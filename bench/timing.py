"""Timing helper shared by the benchmark scripts."""
from __future__ import annotations

import statistics
import time
from typing import Callable


def timeit(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(best, median) wall seconds of ``fn`` over ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)
