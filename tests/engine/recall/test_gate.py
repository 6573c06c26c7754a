"""The recall gate: a few recalls at once, the rest let in first come, first served."""

from __future__ import annotations

import threading
import time

import pytest

from engine.recall.gate import FairGate, default_slots


def test_default_slots_are_between_two_and_four() -> None:
    assert 2 <= default_slots() <= 4


def test_a_gate_needs_a_slot() -> None:
    with pytest.raises(ValueError):
        FairGate(0)


def test_at_most_slots_holders_at_once() -> None:
    gate = FairGate(2)
    inside = 0
    most = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal inside, most
        with gate:
            with lock:
                inside += 1
                most = max(most, inside)
            time.sleep(0.005)
            with lock:
                inside -= 1

    threads = [threading.Thread(target=work) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 2
    assert gate.inside == 0


def test_waiters_get_in_in_arrival_order_even_against_a_busy_holder() -> None:
    """A holder that leaves and at once asks again queues behind those already waiting (no barging)."""
    gate = FairGate(1)
    order: list[str] = []
    gate.__enter__()
    waiting: list[threading.Thread] = []

    def waiter(name: str) -> None:
        with gate:
            order.append(name)

    for name in ("a", "b", "c"):
        t = threading.Thread(target=waiter, args=(name,))
        t.start()
        waiting.append(t)
        deadline = time.monotonic() + 5
        while len(gate._line) < len(waiting) and time.monotonic() < deadline:
            time.sleep(0.001)
    gate.__exit__(None, None, None)
    with gate:  # the first holder comes back at once: it must wait for a, b and c
        order.append("again")
    for t in waiting:
        t.join()
    assert order == ["a", "b", "c", "again"]
    assert gate.inside == 0


def test_inside_counts_the_holders() -> None:
    gate = FairGate(3)
    with gate as g:
        assert g.inside == 1
        with gate:
            assert gate.inside == 2
    assert gate.inside == 0


def test_an_error_inside_frees_the_slot() -> None:
    gate = FairGate(1)
    with pytest.raises(RuntimeError), gate:
        raise RuntimeError("boom")
    with gate:  # would block forever if the slot were lost
        assert gate.inside == 1


def test_widening_lets_in_those_waiting_and_never_narrows() -> None:
    gate = FairGate(1)
    gate.__enter__()
    entered = threading.Event()

    def wait_in_line() -> None:
        with gate:
            entered.set()

    waiter = threading.Thread(target=wait_in_line)
    waiter.start()
    time.sleep(0.05)
    assert not entered.is_set(), "one slot, held: the second waits"
    gate.widen(2)
    assert entered.wait(5), "the new slot goes to the one waiting"
    waiter.join(5)
    gate.widen(1)  # never fewer
    with gate:
        assert gate.inside == 2  # the first holder and this one
    gate.__exit__(None, None, None)
    assert gate.inside == 0
