"""The change feed: every committed change, numbered, for subscribers (SSE, MCP, the GUI) to follow.

Changes are published by the writer only after COMMIT, so a subscriber never sees something that could still be
rolled back.  Each change gets a strictly increasing ``seq``; the feed keeps a bounded backlog so a client that
reconnects with the last ``seq`` it saw (SSE ``Last-Event-ID``) receives what it missed, or learns that the
backlog no longer reaches back that far and should reload.

Change types (the ``type`` field):

========================  =====================================================
``event.created``         an event was ingested (data: conversation_id)
``memory.created``        a fact was stored
``memory.updated``        a fact changed (edit, tier, standing, signals)
``memory.superseded``     a fact was replaced by a newer version
``memory.deleted``        a fact was soft-deleted or forgotten
``memory.restored``       a deleted fact was restored
``conflict.created``      a contradiction was found
``conflict.resolved``     a conflict was resolved
``episode.created``       an episode summary was made or revised
``document.*``            processing / ready / degraded / quarantined / deleted
``collection.changed``    collections or their membership changed
``job.failed``            a job failed (and is parked after its last attempt)
``ingest.progress``       progress of a long ingest (files done / total)
``forget.completed``      a scoped forget finished (data: receipt_id)
``settings.changed``      settings were saved
``proxy.warning``         the memory proxy forwarded a chat without memory (data: kind, warnings)
``proxy.captured``        the memory proxy recorded an exchange (data: model, protocol)
``import.completed``      a transcript import ended (data: importer, conversations, events, failed)
``vault.exported``        the vault was written to an archive (data: path, counts)
``backup.created``        a backup was made (data: path)
========================  =====================================================
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Change:
    """One committed change."""

    seq: int
    type: str
    object_id: int | None
    at: float
    data: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (SSE payloads, MCP notifications)."""
        return {"seq": self.seq, "type": self.type, "object_id": self.object_id, "at": self.at, **self.data}


Subscriber = Callable[[Sequence[Change]], None]


class ChangeFeed:
    """Numbered, bounded, thread-safe broadcast of changes."""

    def __init__(self, backlog: int = 10_000, *, first_seq: int = 0) -> None:
        self._lock = threading.Lock()
        self._seq = first_seq
        self._backlog: deque[Change] = deque(maxlen=backlog)
        self._subscribers: list[Subscriber] = []

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest change (0 when none yet)."""
        return self._seq

    def publish(self, items: Sequence[tuple[str, int | None, Mapping[str, Any]]]) -> list[Change]:
        """Number and record ``(type, object_id, data)`` items, then call every subscriber once with them."""
        now = time.time()
        with self._lock:
            changes = []
            for change_type, object_id, data in items:
                self._seq += 1
                change = Change(self._seq, change_type, object_id, now, dict(data))
                self._backlog.append(change)
                changes.append(change)
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(changes)
            except Exception:
                log.exception("change subscriber failed")
        return changes

    def emit(self, change_type: str, object_id: int | None = None, **data: Any) -> Change:
        """Publish one change that is not tied to a transaction (progress, settings)."""
        return self.publish([(change_type, object_id, data)])[0]

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber`` with every batch of new changes (from the publishing thread); returns unsubscribe.

        Subscribers must be quick and must not block: hand the changes to your own queue or thread.
        """
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def since(self, seq: int) -> tuple[list[Change], bool]:
        """Changes after ``seq`` and whether the backlog covered everything since then."""
        with self._lock:
            items = [c for c in self._backlog if c.seq > seq]
            oldest = self._backlog[0].seq if self._backlog else self._seq + 1
        complete = seq >= oldest - 1 or seq >= self._seq
        return items, complete
