"""The server's load slots, shared fairly (issue 37, "fair loads"), with plain threads: loads
that "read" by sleeping between checkpoints, so the tests cost no CPU and take about a second."""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional

from aqe_core.readers.budget import LoadMeter
from aqe_core.readers.eventlog.errors import BudgetExceeded
from aqe_core.readers.load_slots import LoadSlots, Slot

QUANTUM = 0.05
STEP = 0.005  # work between two checkpoints


class Loads:
    """Loads run in threads; what each did and when, and how many read at once."""

    def __init__(self, slots: LoadSlots) -> None:
        self.slots = slots
        self.lock = threading.Lock()
        self.reading: dict[Optional[str], int] = {}
        self.peak = 0
        self.peak_per_owner = 0
        self.spans: dict[str, tuple[float, float]] = {}
        self.errors: dict[str, BaseException] = {}
        self.threads: list[threading.Thread] = []

    def _step(self, owner: Optional[str]) -> None:
        with self.lock:
            self.reading[owner] = self.reading.get(owner, 0) + 1
            self.peak = max(self.peak, sum(self.reading.values()))
            self.peak_per_owner = max(self.peak_per_owner, self.reading[owner])
        time.sleep(STEP)
        with self.lock:
            self.reading[owner] -= 1

    def start(self, name: str, owner: Optional[str], seconds: float, max_wait_s: float = 10.0,
              body: Optional[Callable[[Slot], None]] = None) -> None:
        """A load of ``seconds`` read in its slot (or ``body(slot)``), named ``name``."""
        def run() -> None:
            began = time.monotonic()
            try:
                with self.slots.load(owner, max_wait_s) as slot:
                    if body is not None:
                        body(slot)
                    while slot.served(time.monotonic()) < seconds:
                        self._step(owner)
                        slot.checkpoint()
            except BaseException as exc:  # noqa: BLE001 - kept for the test to look at
                self.errors[name] = exc
            self.spans[name] = (began, time.monotonic())

        t = threading.Thread(target=run, name=name)
        self.threads.append(t)
        t.start()

    def join(self) -> None:
        for t in self.threads:
            t.join(30)
            assert not t.is_alive()


def _record(slots: LoadSlots, owner: str):
    return next(r for r in slots.recent if r.owner == owner)


def test_no_more_loads_read_at_once_than_slots_and_every_one_ends():
    slots = LoadSlots(2, quantum_s=QUANTUM)
    loads = Loads(slots)
    for i in range(6):
        loads.start(f"l{i}", f"o{i}", 0.15)
    loads.join()
    assert loads.errors == {} and loads.peak == 2
    assert slots.running == slots.waiting == 0
    assert all(r.outcome == "done" and r.served >= 0.15 for r in slots.recent)


def test_a_small_load_gets_a_slot_within_a_quantum_behind_two_long_ones_and_keeps_it():
    slots = LoadSlots(2, quantum_s=QUANTUM)
    loads = Loads(slots)
    loads.start("bomb a", "a", 1.0)
    loads.start("bomb b", "b", 1.0)
    time.sleep(0.3)  # both slots held, both loads past their quantum
    loads.start("small", "c", 0.1)
    loads.join()
    assert loads.errors == {}
    small = _record(slots, "c")
    # one wait: a bomb gives its slot up at its next checkpoint (it has read longer), and the
    # small load is never asked to give it back (every waiter has read longer than it)
    assert len(small.waits) == 1 and small.longest_wait < 0.2
    began, ended = loads.spans["small"]
    assert ended - began < 0.6  # 0.1 s of reading, against the bombs' 1 s
    assert loads.peak == 2
    # the bombs took turns meanwhile: each gave its slot up at least once
    assert all(len(_record(slots, o).waits) >= 2 for o in ("a", "b"))


def test_loads_far_ahead_wait_while_a_new_one_reads_alone_even_with_a_slot_free():
    """Loads share one GIL: a second slot would let a bomb slow the new load down 3-8 times."""
    slots = LoadSlots(2, quantum_s=QUANTUM)
    loads = Loads(slots)
    loads.start("bomb a", "a", 0.8)
    loads.start("bomb b", "b", 0.8)
    time.sleep(0.4)
    loads.start("small", "c", 0.2)
    time.sleep(0.15)  # the bombs reach a checkpoint past their quantum and give way
    alone = []
    while loads.threads[2].is_alive():
        with loads.lock:
            alone.append(loads.reading.get("a", 0) + loads.reading.get("b", 0) == 0 and slots.running <= 1)
        time.sleep(0.01)
    loads.join()
    assert loads.errors == {} and len(alone) > 3 and all(alone)
    assert len(_record(slots, "c").waits) == 1


def test_long_loads_take_turns_by_quanta():
    slots = LoadSlots(1, quantum_s=QUANTUM)
    loads = Loads(slots)
    loads.start("a", "a", 0.4)
    loads.start("b", "b", 0.4)
    loads.join()
    a, b = _record(slots, "a"), _record(slots, "b")
    assert len(a.waits) + len(b.waits) >= 6  # ~8 turns of 0.05 s, not one load after the other
    assert max(a.longest_wait, b.longest_wait) < 0.2


def test_one_load_at_a_time_per_owner_and_the_second_takes_no_slot_meanwhile():
    slots = LoadSlots(2, quantum_s=QUANTUM)
    loads = Loads(slots)
    loads.start("first", "s", 0.3)
    time.sleep(0.05)
    loads.start("second", "s", 0.1)
    time.sleep(0.05)
    loads.start("other", "t", 0.1)  # the second slot is free for another session at once
    loads.join()
    assert loads.errors == {} and loads.peak_per_owner == 1
    assert loads.spans["second"][1] > loads.spans["first"][1]
    assert _record(slots, "t").longest_wait < 0.15  # not the first load's 0.3 s
    assert loads.spans["other"][1] < loads.spans["first"][1]


def test_loads_without_an_owner_have_no_per_owner_limit():
    slots = LoadSlots(2, quantum_s=QUANTUM)
    loads = Loads(slots)
    loads.start("a", None, 0.1)
    loads.start("b", None, 0.1)
    loads.join()
    assert loads.errors == {} and loads.peak == 2


def test_waiting_too_long_is_a_transient_refusal_naming_max_concurrent_loads():
    slots = LoadSlots(1, quantum_s=QUANTUM)
    loads = Loads(slots)
    hold = threading.Event()
    loads.start("holder", "a", 0.0, body=lambda slot: hold.wait(5))  # no checkpoint: the slot is not given up
    time.sleep(0.05)
    loads.start("late", "b", 0.1, max_wait_s=0.2)
    time.sleep(0.05)
    loads.start("same owner", "a", 0.1, max_wait_s=0.2)
    loads.threads[1].join(5)
    loads.threads[2].join(5)
    hold.set()
    loads.join()
    for name, text in (("late", "the server is opening 1 other source"), ("same owner", "one at a time per session")):
        exc = loads.errors[name]
        assert isinstance(exc, BudgetExceeded) and exc.transient and exc.setting == "max_concurrent_loads"
        assert text in str(exc) and "\n" not in str(exc)
    assert "holder" not in loads.errors
    assert slots.running == slots.waiting == 0  # the refused ones left nothing behind
    assert [r.outcome for r in slots.recent] == ["done", "refused", "refused"]


def test_time_waiting_for_a_slot_does_not_count_against_the_deadline():
    """Two loads of 0.4 s each on one slot, each with a 0.6 s deadline: by turns both end after
    more than 0.6 s of wall time, yet neither is refused, as each read only 0.4 s."""
    slots = LoadSlots(1, quantum_s=QUANTUM)
    loads = Loads(slots)
    meters: dict[str, LoadMeter] = {}
    made: dict[str, float] = {}

    def metered(name: str) -> Callable[[Slot], None]:
        def body(slot: Slot) -> None:
            made[name] = time.monotonic()
            meter = meters[name] = LoadMeter(None, max_seconds=0.6, pause=slot.checkpoint)
            while slot.served(time.monotonic()) < 0.4:
                loads._step(name)
                meter.check_time()
        return body

    loads.start("a", "a", 0.0, body=metered("a"))
    loads.start("b", "b", 0.0, body=metered("b"))
    loads.join()
    assert loads.errors == {}
    assert max(end - began for began, end in loads.spans.values()) > 0.65
    for name in ("a", "b"):  # each deadline moved by the load's waits once it had started reading
        moved = meters[name].deadline - made[name] - 0.6
        assert moved >= sum(_record(slots, name).waits[1:]) - 0.01 and moved > 0.1


def test_more_slots_start_waiting_loads_at_once():
    slots = LoadSlots(1, quantum_s=10.0)  # no turns: only resizing lets the second start
    loads = Loads(slots)
    loads.start("a", "a", 0.5)
    time.sleep(0.05)
    loads.start("b", "b", 0.05)
    time.sleep(0.05)
    assert slots.waiting == 1
    slots.resize(2)
    loads.join()
    assert loads.spans["b"][1] < loads.spans["a"][1]
