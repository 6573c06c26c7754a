"""Concurrent single-event ingests (``POST /v6/ingest``) written together, as one batch.

The vault's writer already commits concurrent writes in one transaction (group commit), but every
write it is handed still costs a savepoint and its own bookkeeping.  Under many concurrent clients
that per-write cost, not the disk, is what limits acknowledgements per second.
:class:`IngestCoalescer` hands the vault one :meth:`~engine.ingest.EventsApi.submit` call for all
the single events that arrived meanwhile, and keeps at most :data:`MAX_IN_FLIGHT` such calls
uncommitted: one the writer is committing and one waiting behind it, into which the writer's next
transaction goes.  The requests that arrive while those two are busy form the next batch.  No
request waits for a timer, a lone request is written at once, and a busy endpoint writes bigger
batches.

It all happens on the request's own event loop: an arriving event is appended to the loop's
pending list, and the loop hands the list over in a callback once the requests that arrived in the
same turn of the loop have joined it; the writer's commit comes back as one callback per batch.
There is no thread of its own — handing events to a thread cost every request a thread wake-up and
a switch of the interpreter between threads, which on a busy endpoint is time the event loop could
have spent answering.

What a client sees does not change:

* An acknowledgement still means "committed": a request's future is settled only once the batch
  holding its event is committed.
* One bad event never fails another client's request: a batch the vault refuses (a validation
  error, or any other failure) is handed over again event by event, so each request gets its own
  answer and its own error, with the field named as for a single event (``content``, not
  ``events[3].content``).  A refused batch stored nothing (it is one transaction), so nothing is
  written twice.
* Events without ``occurred_at`` are stamped with their arrival time before they join a batch, as
  the vault would have stamped them; two identical turns sent at different moments therefore stay
  two events rather than becoming duplicates of one batch time.
* A client that leaves while its event is pending does not take the event with it: what was handed
  over is written; the answer just has nobody to go to.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

from engine.events import EventIn, IngestResult
from engine.vault import Vault

log = logging.getLogger(__name__)

#: Events written in one call at most (the batch route accepts 1000; smaller keeps latency even).
MAX_BATCH = 256
#: Batches handed to the vault and not yet committed, per event loop: one being committed, one waiting for the
#: next transaction.  More would only split what could have been one batch into several savepoints.
MAX_IN_FLIGHT = 2

_Waiting = tuple[EventIn, "asyncio.Future[IngestResult]"]


@dataclass(slots=True)
class _LoopState:
    """What one event loop has pending and in flight."""

    pending: list[_Waiting] = field(default_factory=list)
    in_flight: int = 0
    scheduled: bool = False


class IngestCoalescer:
    """Writes concurrently submitted events in batches; see the module docstring."""

    def __init__(self, vault: Vault, *, max_batch: int = MAX_BATCH, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self._vault = vault
        self._max_batch = max_batch
        self._max_in_flight = max_in_flight
        # The endpoint has one loop; tests and embedding apps may call from several.  A loop that is gone takes its
        # state with it.
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()
        #: Batches handed to the vault, and events in them (for tests and the load benchmark).
        self.batches = 0
        self.events = 0

    async def ingest(self, event: EventIn) -> IngestResult:
        """Store ``event``; returns once it is committed (or raises what the vault raised)."""
        if event.occurred_at is None:
            event = replace(event, occurred_at=time.time())
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            state = self._states[loop] = _LoopState()
        future: asyncio.Future[IngestResult] = loop.create_future()
        state.pending.append((event, future))
        if not state.scheduled and state.in_flight < self._max_in_flight:
            # after the requests already runnable in this turn of the loop, so they join the same batch
            state.scheduled = True
            loop.call_soon(self._hand_over, loop, state)
        return await future

    def pending(self) -> int:
        """Events waiting to be handed to the vault, on every loop (for tests)."""
        return sum(len(state.pending) for state in list(self._states.values()))

    # -- on the event loop ------------------------------------------------------------------------------------------
    def _hand_over(self, loop: asyncio.AbstractEventLoop, state: _LoopState) -> None:
        state.scheduled = False
        while state.pending and state.in_flight < self._max_in_flight:
            batch, state.pending = state.pending[: self._max_batch], state.pending[self._max_batch :]
            self._submit(loop, state, batch)

    def _submit(self, loop: asyncio.AbstractEventLoop, state: _LoopState, batch: list[_Waiting]) -> None:
        """Hand ``batch`` to the vault without waiting for its COMMIT."""
        self.batches += 1
        self.events += len(batch)
        try:
            events = [event for event, _ in batch]
            # one event alone is refused as a single ingest is: the field named ``content``, not ``events[0].content``
            committed = self._vault.events.submit(events[0] if len(events) == 1 else events)
        except Exception as exc:  # refused before anything was queued (a validation error, a closed vault)
            self._refused(loop, state, batch, exc)
            return
        state.in_flight += 1

        def done(finished: Future[list[IngestResult]]) -> None:  # on the writer thread: only hand back to the loop
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
                loop.call_soon_threadsafe(self._committed, loop, state, batch, finished)

        committed.add_done_callback(done)

    def _committed(
        self,
        loop: asyncio.AbstractEventLoop,
        state: _LoopState,
        batch: list[_Waiting],
        finished: Future[list[IngestResult]],
    ) -> None:
        state.in_flight -= 1
        error = finished.exception()
        if error is None:
            for (_, future), result in zip(batch, finished.result(), strict=True):
                _settle(future, result, None)
        else:
            self._refused(loop, state, batch, error)
        if state.pending and not state.scheduled:
            self._hand_over(loop, state)

    def _refused(
        self, loop: asyncio.AbstractEventLoop, state: _LoopState, batch: list[_Waiting], error: BaseException
    ) -> None:
        """A lone event's error is its request's answer; a batch stored nothing (one transaction), so each of its
        events is handed over again on its own, and each request gets its own answer."""
        if len(batch) == 1:
            _settle(batch[0][1], None, error)
            return
        log.debug("a coalesced batch was refused (%s); handing it over event by event", type(error).__name__)
        for one in batch:
            self._submit(loop, state, [one])


def _settle(future: asyncio.Future[IngestResult], result: IngestResult | None, error: BaseException | None) -> None:
    if future.done():  # the request was cancelled (its client left); nothing to tell
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert result is not None
        future.set_result(result)
