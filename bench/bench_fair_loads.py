"""A small source's load time alone and behind two sessions' bombs (issue 37, "fair loads").

The attack it answers: two sessions opened zip-bomb variants that held both load slots for the
whole ``max_load_s`` (124 s), and a third user's small sample took 102 s instead of 8.9 s. Here,
in one process as the app opens sources (``open_on_server``, three owners as three sessions):

1. the small source alone (the best of ``--repeat``);
2. two bombs (a zip of task ends, a zip of empty gzip members) started, then after
   ``--head-start`` seconds the small source from a third owner;
3. with ``--semaphore``, the same with the plain semaphore the slots replaced, for contrast
   (the small source then waits until a bomb is refused: about ``--max-load-s``).

Prints each time, the ratio to the alone time, the small load's longest wait for a slot (as
the slots measured it) and how the bombs ended.

    python -m bench.bench_fair_loads [--max-load-s 20] [--head-start 5] [--repeat 3] [--semaphore]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SMALL = ROOT / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"  # the tpcds-like sample


def _timed(path: Path, owner: str) -> tuple[float, str]:
    from aqe_core.opening import SourceError, open_on_server

    began = time.perf_counter()
    try:
        src = open_on_server(str(path), owner=owner)
        what = f"loaded, {len(src.views)} queries"
    except SourceError as exc:
        what = str(exc)
    return time.perf_counter() - began, what


def behind_bombs(bombs: list[Path], head_start: float) -> tuple[float, list[str]]:
    """The small source's time, opened ``head_start`` s after the bombs; how the bombs ended."""
    ended: dict[int, str] = {}

    def bomb(i: int, path: Path) -> None:
        ended[i] = _timed(path, f"bomb-{i}")[1]

    threads = [threading.Thread(target=bomb, args=(i, p)) for i, p in enumerate(bombs)]
    for t in threads:
        t.start()
    time.sleep(head_start)
    took, what = _timed(SMALL, "small")
    assert what.startswith("loaded"), what
    for t in threads:
        t.join()
    return took, [ended[i] for i in range(len(bombs))]


@contextmanager
def plain_semaphore() -> Iterator[None]:
    """The slots as they were before issue 37: a semaphore, held for the whole load."""
    from aqe_core import opening
    from aqe_core.readers.eventlog.errors import BudgetExceeded

    sem = threading.BoundedSemaphore(opening.server_settings().max_concurrent_loads)

    @contextmanager
    def slot(n: int, wait_s: float, owner: Optional[str] = None) -> Iterator[None]:
        if not sem.acquire(timeout=wait_s):
            raise BudgetExceeded("the server is busy", "max_concurrent_loads", transient=True)
        try:
            yield None
        finally:
            sem.release()

    real = opening._load_slot
    opening._load_slot = slot  # type: ignore[assignment]
    try:
        yield
    finally:
        opening._load_slot = real


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-load-s", type=float, default=20.0, help="the server's max_load_s (bombs last this long)")
    ap.add_argument("--head-start", type=float, default=5.0, help="seconds the bombs read before the small source")
    ap.add_argument("--repeat", type=int, default=3, help="alone: the best of this many loads")
    ap.add_argument("--semaphore", action="store_true", help="also time the plain semaphore the slots replaced")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-fair-"))
    (tmp / "home").mkdir()
    os.environ.update({"AQE_LENS_HOME": str(tmp / "home"), "AQE_LENS_ROOTS": str(tmp),
                       "AQE_LENS_CONFIG": str(tmp / "none.toml"), "AQE_LENS_MAX_LOAD_S": f"{args.max_load_s:g}",
                       "AQE_LENS_MAX_CONCURRENT_LOADS": "2"})
    from aqe_core.opening import _SLOTS
    from tests.zip_bombs import empty_members_zip_bomb, task_zip_bomb

    bombs = [task_zip_bomb(tmp / "tasks.zip", 2000), empty_members_zip_bomb(tmp / "empty-members.zip")]
    print(f"bombs: {', '.join(f'{p.name} {p.stat().st_size / 2**20:.1f} MB' for p in bombs)};"
          f" max_load_s {args.max_load_s:g}, 2 load slots; small source: {SMALL.name}")
    alone = min(_timed(SMALL, "alone")[0] for _ in range(args.repeat))
    print(f"{'alone':<34} {alone:7.2f} s")
    took, ends = behind_bombs(bombs, args.head_start)
    wait = [r for r in _SLOTS.recent if r.owner == "small"][-1].longest_wait
    print(f"{'behind two bombs (fair slots)':<34} {took:7.2f} s  x{took / alone:.1f}  (longest wait for a slot {wait:.2f} s)")
    for end in ends:
        print(f"  bomb: {end}")
    if args.semaphore:
        with plain_semaphore():
            took, ends = behind_bombs(bombs, args.head_start)
        print(f"{'behind two bombs (plain semaphore)':<34} {took:7.2f} s  x{took / alone:.1f}")


if __name__ == "__main__":
    main()
