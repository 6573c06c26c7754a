"""The vault's activity history: what happened in the background that a person may want to read later.

The change feed tells live subscribers what happens, but it lives in memory: after a restart the desktop app's
Activity view had nothing to show.  :class:`ActivityLog` follows the feed and keeps the changes worth reading later —
imports, forgets (with their receipt), model warnings, jobs parked after their last try, chats the memory proxy
recorded or forwarded without memory, exports and backups — in the ``activity`` table (migration m009), keyed by the
change's ``seq`` (clock-based, so it keeps growing across restarts).

What it keeps is counts, kinds and ids, never content: nothing of a conversation or a document is written here, so
nothing here needs forgetting.  The newest :data:`KEEP` entries stay.

The feed calls subscribers on the thread that published (often the single writer, which must not wait on a
write of its own), so entries are queued and written by a small thread of their own, a batch at a time.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.changes import Change
from engine.store import Store, Tx
from engine.temporal import from_epoch

log = logging.getLogger(__name__)

#: Entries kept (older ones are dropped as new ones come).
KEEP = 2000
#: Work kinds as a person reads them.
KIND_NAMES = {
    "forget": "Forgetting",
    "import": "Import",
    "export": "Export",
    "backup": "Backup",
    "proxy": "Memory proxy",
    "vectors": "Vectors",
}


@dataclass(frozen=True, slots=True)
class ActivityEntry:
    """One thing that happened: when, what kind of work, how it went (``info``, ``warning``, ``failed``), in words."""

    seq: int
    at: datetime
    kind: str
    level: str
    text: str
    object_id: int | None = None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _forget(change: Change) -> tuple[str, str, str]:
    counts = change.data.get("counts") or {}
    gone = sum(int(v) for k, v in counts.items() if k not in ("backups", "jobs", "embeddings"))
    said = " ".join(str(n) for n in change.data.get("notes") or [])
    return "forget", "info", f"forgot {_plural(gone, 'item')} (receipt {change.object_id}). {said}".strip()


def _warning(change: Change) -> tuple[str, str, str]:
    warnings = change.data.get("warnings") or []
    return str(change.data.get("kind", "")), "warning", "; ".join(str(w) for w in warnings) or "warning"


def _failed(change: Change) -> tuple[str, str, str]:
    attempts = change.data.get("attempts")
    error = str(change.data.get("error") or "failed")
    text = f"parked after {attempts} attempts: {error}" if attempts else error
    return str(change.data.get("kind", "")), "failed", text


def _imported(change: Change) -> tuple[str, str, str]:
    d = change.data
    text = (
        f"imported {_plural(int(d.get('conversations', 0)), 'conversation')} "
        f"({_plural(int(d.get('events', 0)), 'new turn')}) from a {d.get('importer', 'transcript')} file"
    )
    failed = int(d.get("failed", 0))
    if failed:
        return "import", "warning", f"{text}; {_plural(failed, 'conversation')} could not be read"
    return "import", "info", text


def _captured(change: Change) -> tuple[str, str, str]:
    model = change.data.get("model") or "a model"
    return "proxy", "info", f"recorded a chat exchange with {model} ({change.data.get('protocol', 'chat')} client)"


def _exported(change: Change) -> tuple[str, str, str]:
    counts = change.data.get("counts") or {}
    return "export", "info", f"exported the vault ({_plural(int(counts.get('events', 0)), 'event')})"


#: The change types kept, and how each is put in words.
DESCRIBE: dict[str, Callable[[Change], tuple[str, str, str]]] = {
    "forget.completed": _forget,
    "job.warning": _warning,
    "proxy.warning": _warning,
    "job.failed": _failed,
    "import.completed": _imported,
    "proxy.captured": _captured,
    "vault.exported": _exported,
    "backup.created": lambda c: ("backup", "info", "a backup was made"),
    "vectors.migration_started": lambda c: ("vectors", "info", f"re-embedding with {c.data.get('to', 'a new model')}"),
    "vectors.migration_finished": lambda c: ("vectors", "info", "re-embedding finished"),
}


def describe(change: Change) -> ActivityEntry | None:
    """The entry a change makes, or None when it is not kept."""
    words = DESCRIBE.get(change.type)
    if words is None:
        return None
    kind, level, text = words(change)
    return ActivityEntry(change.seq, from_epoch(change.at), kind, level, text, change.object_id)


class ActivityLog:
    """``vault.activity``: calling it lists the newest entries; it records the feed's changes as they come."""

    def __init__(self, store: Store, subscribe: Callable[[Callable[[Sequence[Change]], None]], Callable[[], None]]):
        self._store = store
        self._queue: queue.SimpleQueue[ActivityEntry | threading.Event | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="vault-activity", daemon=True)
        self._thread.start()
        self._unsubscribe = subscribe(self._on_changes)

    def __call__(self, *, limit: int = 200, kind: str | None = None) -> list[ActivityEntry]:
        """The newest entries first (``kind``: only that kind of work)."""
        where, params = ("WHERE kind = ?", (kind,)) if kind else ("", ())
        rows = self._store.query(
            f"SELECT seq, at, kind, level, text, object_id FROM activity {where} ORDER BY seq DESC LIMIT ?",
            (*params, max(1, min(int(limit), KEEP))),
        )
        return [ActivityEntry(int(r[0]), from_epoch(r[1]), str(r[2]), str(r[3]), str(r[4]), r[5]) for r in rows]

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until what was queued so far is written (an export includes the history up to now)."""
        if not self._thread.is_alive():
            return True
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def close(self) -> None:
        """Stop following the feed and write what is queued (before the store closes)."""
        self._unsubscribe()
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _on_changes(self, changes: Sequence[Change]) -> None:
        for change in changes:
            if change.type in DESCRIBE:
                entry = describe(change)
                if entry is not None:
                    self._queue.put(entry)

    def _run(self) -> None:
        while True:
            items = [self._queue.get()]
            while True:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            batch = [i for i in items if isinstance(i, ActivityEntry)]
            if batch:
                self._write(batch)
            for item in items:
                if isinstance(item, threading.Event):
                    item.set()
            if any(i is None for i in items):
                return

    def _write(self, batch: list[ActivityEntry]) -> None:
        def op(tx: Tx) -> None:
            tx.executemany(
                "INSERT OR REPLACE INTO activity(seq, at, kind, level, text, object_id) VALUES (?, ?, ?, ?, ?, ?)",
                [(e.seq, e.at.timestamp(), e.kind, e.level, e.text, e.object_id) for e in batch],
            )
            tx.execute(
                "DELETE FROM activity WHERE seq <= (SELECT seq FROM activity ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                (KEEP,),
            )

        try:
            self._store.write(op)
        except Exception:  # a full disk or a closing store: the history misses these, nothing else does
            log.warning("could not record %d activity entries", len(batch), exc_info=True)


def entry_data(entry: ActivityEntry) -> Mapping[str, Any]:
    """An entry as JSON-friendly data (the endpoint's and the CLI's shape)."""
    return {
        "seq": entry.seq,
        "at": entry.at.isoformat(),
        "kind": entry.kind,
        "level": entry.level,
        "text": entry.text,
        "object_id": entry.object_id,
    }
