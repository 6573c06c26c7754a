"""Concurrent single-event ingests (``POST /v6/ingest``) written together, as one batch.

The vault's writer already commits concurrent writes in one transaction (group commit), but every
write it is handed still costs a savepoint and its own bookkeeping, and every waiting request holds
a worker thread.  Under many concurrent clients that per-write cost, not the disk, is what limits
acknowledgements per second.  :class:`IngestCoalescer` hands the vault one
:meth:`~engine.vault.Vault.ingest_events` call for all the single events that arrived while the
previous call was being written: no request waits for a timer, a lone request is written at once,
and a busy endpoint writes bigger batches.

What a client sees does not change:

* An acknowledgement still means "committed": a request's future is settled only after the batch
  holding its event returned from the vault, which returns after COMMIT.
* One bad event never fails another client's request: a batch the vault refuses (a validation
  error, or any other failure) is written again event by event, so each request gets its own
  answer and its own error, with the field named as for a single event (``content``, not
  ``events[3].content``).  A refused batch stored nothing (it is one transaction), so nothing is
  written twice.
* Events without ``occurred_at`` are stamped with their arrival time before they join a batch, as
  the vault would have stamped them; two identical turns sent at different moments therefore stay
  two events rather than becoming duplicates of one batch time.

The work runs on one thread, started on first use and ended after a few idle seconds; requests
wait on an asyncio future that the thread settles on the request's own event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.events import EventIn, IngestResult
from engine.vault import Vault

log = logging.getLogger(__name__)

#: Events written in one call at most (the batch route accepts 1000; smaller keeps latency even).
MAX_BATCH = 256
#: Seconds without work after which the thread ends (it starts again on the next request).
IDLE_S = 2.0


@dataclass(slots=True)
class _Item:
    event: EventIn
    future: asyncio.Future[IngestResult]
    loop: asyncio.AbstractEventLoop


class IngestCoalescer:
    """Writes concurrently submitted events in batches; see the module docstring."""

    def __init__(self, vault: Vault, *, max_batch: int = MAX_BATCH, idle_s: float = IDLE_S) -> None:
        self._vault = vault
        self._max_batch = max_batch
        self._idle_s = idle_s
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        #: Batches written, and events in them (for tests and the load benchmark).
        self.batches = 0
        self.events = 0

    async def ingest(self, event: EventIn) -> IngestResult:
        """Store ``event``; returns once it is committed (or raises what the vault raised)."""
        if event.occurred_at is None:
            event = replace(event, occurred_at=time.time())
        loop = asyncio.get_running_loop()
        item = _Item(event, loop.create_future(), loop)
        with self._lock:
            self._queue.put(item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ingest-coalescer", daemon=True)
                self._thread.start()
        return await item.future

    @property
    def running(self) -> bool:
        """Whether the thread is alive (it ends after :data:`IDLE_S` without work)."""
        with self._lock:
            return self._thread is not None

    def _run(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():  # nothing can be queued meanwhile: puts take the lock
                        self._thread = None
                        return
                continue
            batch = [first]
            while len(batch) < self._max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._write(batch)

    def _write(self, batch: Sequence[_Item]) -> None:
        self.batches += 1
        self.events += len(batch)
        if len(batch) > 1:
            try:
                results = self._vault.ingest_events([item.event for item in batch])
            except Exception as exc:
                # One transaction: nothing of the batch was stored.  Each event on its own, so
                # each request gets its own answer.
                log.debug(
                    "a coalesced batch was refused (%s); writing it event by event",
                    type(exc).__name__,
                )
            else:
                _settle([(item, result, None) for item, result in zip(batch, results, strict=True)])
                return
        answers: list[tuple[_Item, IngestResult | None, BaseException | None]] = []
        for item in batch:
            try:
                answers.append((item, self._vault.ingest_event(item.event), None))
            except Exception as exc:
                answers.append((item, None, exc))
        _settle(answers)


def _settle(answers: Sequence[tuple[_Item, IngestResult | None, BaseException | None]]) -> None:
    """Answer each request on its own event loop: one wake-up per loop for the whole batch, not one per request."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Item, IngestResult | None, BaseException | None]]] = {}
    for answer in answers:
        by_loop.setdefault(answer[0].loop, []).append(answer)

    def apply(group: list[tuple[_Item, IngestResult | None, BaseException | None]]) -> None:
        for item, result, error in group:
            if item.future.done():  # the request was cancelled (its client left); nothing to tell
                continue
            if error is not None:
                item.future.set_exception(error)
            else:
                item.future.set_result(result)  # type: ignore[arg-type]

    for loop, group in by_loop.items():
        with contextlib.suppress(RuntimeError):  # the request's loop has closed: nobody is waiting
            loop.call_soon_threadsafe(apply, group)
