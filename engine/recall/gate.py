"""How many recalls run at once, and in what order the rest start: a first-come, first-served gate.

Recall is mostly interpreter work (ranking, fusion, building the answer) around short stretches of SQLite and
numpy that release the interpreter lock.  Two recalls side by side keep two cores busy; eight side by side do not
finish sooner — they take turns at the lock, and every turn costs a hand-off between threads.  Measured on the
100k-fact benchmark vault (two cores): eight threads recalling at once did 53 recalls/s at 28 ms of CPU each,
the same eight through a two-slot gate 83 recalls/s at 20 ms each.

The gate is fair: a recall that finds every slot taken waits in line, and a finishing recall hands its slot to the
first in line rather than back to whoever grabs it next (``threading.Semaphore`` lets a busy thread take it again
at once, which starves the others and turns a fair queue into a few very slow answers).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from types import TracebackType


def default_slots() -> int:
    """One recall per core, at least two (one may be waiting on SQLite while the other ranks), at most four."""
    return max(2, min(4, os.cpu_count() or 2))


class FairGate:
    """At most ``slots`` holders at once; the others are let in first come, first served."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("a gate needs at least one slot")
        self._slots = slots
        self._free = slots  # a slot handed straight to a waiter never becomes free: holders = slots - free
        self._lock = threading.Lock()
        self._line: deque[threading.Lock] = deque()

    def widen(self, slots: int) -> None:
        """Allow up to ``slots`` holders (never fewer than now), letting in those waiting for the new slots."""
        with self._lock:
            while self._slots < slots:
                self._slots += 1
                if self._line:
                    self._line.popleft().release()
                else:
                    self._free += 1

    @property
    def inside(self) -> int:
        """How many hold a slot now (a snapshot: it may change right after)."""
        return self._slots - self._free

    def __enter__(self) -> FairGate:
        with self._lock:
            if self._free > 0 and not self._line:
                self._free -= 1
                return self
            ticket = threading.Lock()
            ticket.acquire()
            self._line.append(ticket)
        try:
            ticket.acquire()  # released by the holder who hands this waiter its slot
        except BaseException:  # interrupted while waiting: leave the line, or pass on a slot already handed over
            with self._lock:
                if ticket in self._line:
                    self._line.remove(ticket)
                    raise
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with self._lock:
            if self._line:
                self._line.popleft().release()  # the slot passes straight to the first in line
            else:
                self._free += 1
