"""Concurrent single-event ingests (``POST /v6/ingest``) written together, as one batch.

The vault's writer already commits concurrent writes in one transaction (group commit), but every
write it is handed still costs a savepoint and its own bookkeeping, and every waiting request holds
a worker thread.  Under many concurrent clients that per-write cost, not the disk, is what limits
acknowledgements per second.  :class:`IngestCoalescer` hands the vault one
:meth:`~engine.vault.Vault.submit_events` call for all the single events that arrived since it handed
over the previous batch, without waiting for that one's COMMIT: the writer commits every batch waiting
when it is free in one transaction, so the requests that arrive while the disk confirms one commit go
into the next.  No request waits for a timer, a lone request is written at once, and a busy endpoint
writes bigger batches.

What a client sees does not change:

* An acknowledgement still means "committed": a request's future is settled only once the batch
  holding its event is committed.
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
from concurrent.futures import Future
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
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()  # None: only wakes the thread
        self._retries: queue.SimpleQueue[list[_Item]] = queue.SimpleQueue()
        self._in_flight = 0  # batches handed to the vault and not yet committed
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
            retry = self._take_retries()
            if retry:
                self._write_one_by_one(retry)
                continue
            try:
                first = self._queue.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty() and self._retries.empty() and self._in_flight == 0:
                        self._thread = None  # nothing can be queued meanwhile: puts take the lock
                        return
                continue
            batch = [first] if first is not None else []
            while len(batch) < self._max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    batch.append(item)
            if batch:
                self._submit(batch)

    def _submit(self, batch: list[_Item]) -> None:
        """Hand ``batch`` to the vault without waiting for its COMMIT.

        The next batch is gathered meanwhile, and the writer commits whatever batches are waiting together: while
        one commit waits for the disk, the requests arriving form the next one instead of waiting in line.
        """
        self.batches += 1
        self.events += len(batch)
        try:
            future = self._vault.submit_events([item.event for item in batch])
        except Exception as exc:  # refused before anything was queued (a validation error, a closed vault)
            log.debug("a coalesced batch was refused (%s); writing it event by event", type(exc).__name__)
            self._write_one_by_one(batch)
            return
        with self._lock:
            self._in_flight += 1

        def done(finished: Future[list[IngestResult]]) -> None:  # on the writer thread: never write from here
            error = finished.exception()
            if error is None:
                _settle([(item, result, None) for item, result in zip(batch, finished.result(), strict=True)])
            else:
                # One transaction: nothing of the batch was stored.  Each event on its own, on the coalescer's
                # thread, so each request gets its own answer.  Queued before the count drops, so the thread
                # cannot end in between.
                log.debug("a coalesced batch was refused (%s); writing it event by event", type(error).__name__)
                self._retries.put(batch)
                self._queue.put(None)
            with self._lock:
                self._in_flight -= 1

        future.add_done_callback(done)

    def _take_retries(self) -> list[_Item]:
        items: list[_Item] = []
        while True:
            try:
                items.extend(self._retries.get_nowait())
            except queue.Empty:
                return items

    def _write_one_by_one(self, batch: Sequence[_Item]) -> None:
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
