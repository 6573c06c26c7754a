"""The vault's periodic upkeep: one daemon thread that wakes every :data:`TICK_S` seconds.

What it does, and how often (in ticks):

* every tick: close conversation segments idle for ``episodes.idle_gap_minutes``, so they get summarised;
* every 20 (from the first): let unused hot facts cool down (:func:`engine.recall.usage.decay_sweep`);
* every 20 (from the second): an online backup when one is due (``backups.interval_hours``);
* every 10: fit the vectors' first search pass again as they grow;
* every 4 (from the third): a consolidation pass for each user whose evidence has been quiet for
  ``workspace.consolidate_after_quiet_minutes`` and is newer than their last pass;
* every 120: let SQLite refresh its planner statistics.

Readying the vectors for search when the vault opens (:func:`ready_vectors`) runs once, on a thread of its own.

Settings are read at each tick, so a change saved in the app applies at the next one.  A task that fails is logged
and the others go on: upkeep never takes the vault down.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.backups import backup_due
from engine.config import Settings
from engine.episodes import close_idle
from engine.recall.usage import decay_sweep
from engine.store import Store
from engine.vectors import VectorIndex
from engine.workspace import Workspace

log = logging.getLogger(__name__)

TICK_S = 30.0


@dataclass(frozen=True, slots=True)
class UpkeepTasks:
    """What upkeep works on (the vault hands these over; upkeep never reaches further)."""

    store: Store
    settings: Callable[[], Settings]
    notify_jobs: Callable[[], None]
    maintain_vectors: Callable[[], None]
    workspace: Workspace
    backups_dir: Path
    backup_now: Callable[[], object]


class Upkeep:
    """Runs :meth:`tick` every ``tick_s`` seconds on a daemon thread between :meth:`start` and :meth:`stop`."""

    def __init__(self, tasks: UpkeepTasks, *, tick_s: float = TICK_S) -> None:
        self._tasks = tasks
        self._tick_s = tick_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ticks = 0

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="vault-timer", daemon=True)
            self._thread.start()

    def request_stop(self) -> None:
        """Ask the thread to stop after the tick under way (returns at once)."""
        self._stop.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread, letting a tick under way finish (up to ``timeout`` seconds)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.wait(self._tick_s):
            self.tick()

    def tick(self) -> None:
        """One round of upkeep (the thread calls it; tests may too)."""
        self._ticks += 1
        ticks, tasks, settings = self._ticks, self._tasks, self._tasks.settings()
        try:
            if tasks.store.write(lambda tx: close_idle(tx, settings.episodes.idle_gap_minutes * 60)):
                tasks.notify_jobs()
            if ticks % 20 == 1:
                tasks.store.write(decay_sweep)
            if ticks % 120 == 0:
                tasks.store.optimize()
            if ticks % 10 == 0:
                tasks.maintain_vectors()
            quiet_min = settings.workspace.consolidate_after_quiet_minutes
            if ticks % 4 == 3 and quiet_min > 0:
                for user_id in tasks.workspace.due_for_consolidation(quiet_min * 60, now=time.time()):
                    tasks.workspace.request_consolidation(user_id=user_id)
            backups = settings.backups
            if ticks % 20 == 2 and backups.generations > 0 and backup_due(tasks.backups_dir, backups.interval_hours):
                tasks.backup_now()
        except Exception:
            log.exception("periodic upkeep failed")


def ready_vectors(vectors: VectorIndex, then: Callable[[int], object]) -> None:
    """Ready the search side of the vectors (the in-memory mirror, or the Chroma collection catching up), then call
    ``then`` with their count (the recall helpers start from it).  Until then searches use sqlite-vec directly, and
    a failure here only leaves it so."""
    try:
        count = vectors.load_mirror()
        log.info("vectors ready to search: %s (%s vectors)", vectors.backend, count)
        maintain_vectors(vectors)
    except Exception:
        log.exception("readying the vector search failed; searches keep using sqlite-vec")
        return
    then(count)


def maintain_vectors(vectors: VectorIndex) -> None:
    """Fit the vectors' first search pass again where they have grown enough to need it."""
    for stats in vectors.maintain():
        log.info(
            "vector first pass fitted: %s dims, pool %s, recall@30 %.3f on %s vectors, recall@60 %s on %s questions",
            stats.dims,
            stats.pool,
            stats.recall,
            stats.vectors,
            "—" if stats.question_recall is None else f"{stats.question_recall:.3f}",
            stats.questions,
        )
