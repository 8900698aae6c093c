"""How long a Spark stage's tasks took, from its ``SparkListenerTaskEnd`` events.

A skewed reducer costs time in the stage that reads it: one task runs long while the others
wait. The stage page of Spark's UI shows the same numbers (task duration = Finish Time - Launch
Time of the successful attempt); the median is the middle of the sorted durations, as Spark's
SQL metrics take it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from aqe_core.units import human_ms


@dataclass(frozen=True)
class TaskTime:
    """Task durations of one Spark stage (Spark's own metric, from the event log)."""

    stage_id: int
    attempt: int
    tasks: int  # tasks with a known duration
    median_ms: int
    max_ms: int
    slowest_index: int
    slowest_task_id: int
    stage_ms: Optional[int] = None  # Completion Time - Submission Time
    slowest_bytes_read: Optional[int] = None
    total_ms: Optional[int] = None  # the known durations summed: the stage's task time

    @classmethod
    def of(cls, stage_id: int, attempt: int, durations: Sequence[int], task_ids: Sequence[int],
           stage_ms: Optional[int] = None, bytes_read: Optional[Sequence[int]] = None) -> Optional["TaskTime"]:
        """The summary of a stage's per-index durations (-1 where no successful task was seen).

        >>> t = TaskTime.of(5, 0, [200, 180, -1, 4100, 210], [40, 41, 42, 43, 44], 4400)
        >>> (t.tasks, t.median_ms, t.max_ms, t.slowest_index, t.slowest_task_id, t.total_ms)
        (4, 210, 4100, 3, 43, 4690)
        >>> t.text()
        'stage 5: 4.4 s; slowest task 4.1 s (index 3, task 43) vs median 210 ms (20x)'
        """
        known = [(ms, i) for i, ms in enumerate(durations) if ms >= 0]
        if not known:
            return None
        ordered = sorted(ms for ms, _ in known)
        max_ms, idx = max(known, key=lambda t: (t[0], -t[1]))
        read = bytes_read[idx] if bytes_read is not None and idx < len(bytes_read) and bytes_read[idx] >= 0 else None
        return cls(stage_id, attempt, len(known), ordered[len(ordered) // 2], max_ms, idx,
                   int(task_ids[idx]) if idx < len(task_ids) else -1, stage_ms, read, sum(ordered))

    @property
    def ratio(self) -> Optional[float]:
        """Slowest over median task time (None when the median is 0)."""
        return self.max_ms / self.median_ms if self.median_ms > 0 else None

    @property
    def wasted_ms(self) -> int:
        """How long the slowest task ran past the median one: the time a skewed reducer holds
        the stage (and its executors' other slots) open."""
        return max(0, self.max_ms - self.median_ms)

    def text(self) -> str:
        ratio = f" ({self.ratio:.0f}x)" if self.ratio is not None and self.ratio >= 1.5 else ""
        stage = f"stage {self.stage_id}" + (f".{self.attempt}" if self.attempt else "")
        took = f": {human_ms(self.stage_ms)}" if self.stage_ms is not None else ""
        return (f"{stage}{took}; slowest task {human_ms(self.max_ms)} (index {self.slowest_index}, task "
                f"{self.slowest_task_id}) vs median {human_ms(self.median_ms)}{ratio}")

    def short(self) -> str:
        """The triage column: slowest against median task of the stage.

        >>> TaskTime(4, 0, 40, 25, 171, 0, 80, 800).short()
        'stage 4: max 171 ms vs median 25 ms (7x)'
        """
        ratio = f" ({self.ratio:.0f}x)" if self.ratio is not None and self.ratio >= 1.5 else ""
        return f"stage {self.stage_id}: max {human_ms(self.max_ms)} vs median {human_ms(self.median_ms)}{ratio}"

    def to_dict(self) -> dict[str, Any]:
        return {"stage_id": self.stage_id, "attempt": self.attempt, "tasks": self.tasks, "median_ms": self.median_ms,
                "max_ms": self.max_ms, "slowest_index": self.slowest_index, "slowest_task_id": self.slowest_task_id,
                "stage_ms": self.stage_ms, "slowest_bytes_read": self.slowest_bytes_read}
