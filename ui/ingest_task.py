"""Ingesting dropped or chosen files and folders on the runner's writer, with progress and Cancel.

``vault.watcher.ingest_paths(paths)`` is a generator that yields an
:class:`~engine.documents.ingest.IngestProgress` after each file.  :class:`PathIngest` iterates it on
the writer thread, hands progress to the GUI thread through :attr:`PathIngest.progressed` (at most
every :data:`PROGRESS_INTERVAL_S`, and always the last), and asks the generator to stop between
files once Cancel was pressed or the runner is shutting down.  A file is always ingested whole.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from engine import Vault
from engine.documents.ingest import IngestProgress
from ui.ops import OpRunner

PROGRESS_INTERVAL_S = 0.05
OUTCOMES = ("ok", "degraded", "quarantined", "unchanged", "skipped", "failed")


@dataclass(frozen=True, slots=True)
class IngestOutcome:
    """How an ingest ended: what was asked, the last progress and whether it was cancelled."""

    paths: tuple[str, ...]
    collection_id: int | None
    last: IngestProgress | None
    cancelled: bool

    @property
    def counts(self) -> dict[str, int]:
        """Files per outcome (``ok``, ``degraded``, ``quarantined``, ``unchanged``, ``skipped``,
        ``failed``)."""
        return {key: getattr(self.last, key) if self.last else 0 for key in OUTCOMES}

    @property
    def problems(self) -> tuple[str, ...]:
        """One line per file that failed or was quarantined."""
        return self.last.problems if self.last else ()

    @property
    def document_ids(self) -> tuple[int, ...]:
        """The documents added or updated."""
        return self.last.document_ids if self.last else ()

    @property
    def summary(self) -> str:
        """One line: what was ingested and the count of each outcome."""
        what = _what(self.paths)
        last = self.last
        if last is None or last.total == 0:
            return f"Nothing to ingest in {what}: no files of a supported type."
        counts = " · ".join(f"{n:,} {key}" for key, n in self.counts.items())
        if self.cancelled:
            return f"Ingest of {what} cancelled after {last.done:,} of {last.total:,} files: {counts}."
        return f"Ingested {what} ({last.total:,} files): {counts}."


def _what(paths: Sequence[str]) -> str:
    if len(paths) == 1:
        return Path(paths[0]).name or paths[0]
    return f"{len(paths)} dropped items"


class PathIngest(QObject):
    """One ingest of some files and folders, optionally into a collection.

    Signals (on the GUI thread):
        progressed(IngestProgress): after files (throttled; once before the first).
        finished(IngestOutcome): the ingest ended, completely or by Cancel.
        failed(BaseException): the ingest could not run at all (also reported by the runner).
    """

    progressed = Signal(object)
    finished = Signal(object)
    failed = Signal(object)

    def __init__(
        self,
        runner: OpRunner,
        paths: Sequence[str | Path],
        *,
        collection_id: int | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._runner = runner
        self.paths = tuple(str(p) for p in paths)
        self.collection_id = collection_id
        self._cancel = threading.Event()
        self.running = False

    def start(self) -> None:
        """Queue the ingest on the writer."""
        self.running = True
        self._runner.write(self._run, self._done, on_error=self._failed)

    def cancel(self) -> None:
        """Stop after the file being ingested."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancel.is_set()

    def _should_stop(self) -> bool:
        return self._cancel.is_set() or self._runner.is_shut_down

    def _run(self, vault: Vault) -> IngestOutcome:
        """On the writer thread: iterate the ingest, reporting progress, until done or cancelled."""
        last: IngestProgress | None = None
        emitted = 0.0
        items = vault.watcher.ingest_paths(
            list(self.paths), collection_id=self.collection_id, should_stop=self._should_stop
        )
        try:
            for progress in items:
                last = progress
                now = time.monotonic()
                if now - emitted >= PROGRESS_INTERVAL_S or progress.finished:
                    emitted = now
                    self.progressed.emit(progress)  # queued to the GUI thread
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()
        stopped = last is not None and not last.finished and self._should_stop()
        return IngestOutcome(self.paths, self.collection_id, last, stopped)

    def _done(self, outcome: IngestOutcome) -> None:
        self.running = False
        self.finished.emit(outcome)

    def _failed(self, error: BaseException) -> None:
        self.running = False
        self.failed.emit(error)
        self._runner.report(error)


class IngestQueue(QObject):
    """Runs ingests one after another: a drop made while one runs waits its turn.

    Signals (on the GUI thread):
        started(tuple, int): an ingest of these paths started; this many more wait.
        waiting(int): how many ingests wait after the running one.
        progressed(IngestProgress, bool): progress of the running ingest, and whether Cancel was
            pressed.
        finished(IngestOutcome): an ingest ended (completely or by Cancel).
        failed(str): an ingest could not run at all (the message; the runner reported it).
    """

    started = Signal(tuple, int)
    waiting = Signal(int)
    progressed = Signal(object, bool)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, runner: OpRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._waiting: list[tuple[tuple[str, ...], int | None]] = []
        self.task: PathIngest | None = None
        self.last_outcome: IngestOutcome | None = None

    @property
    def running(self) -> bool:
        """True while an ingest runs."""
        return self.task is not None and self.task.running

    def submit(self, paths: Sequence[str | Path], collection_id: int | None = None) -> bool:
        """Ingest ``paths`` now, or after the running ingest; True when it started now."""
        batch = tuple(str(p) for p in paths)
        if not batch:
            return False
        if self.running:
            self._waiting.append((batch, collection_id))
            self.waiting.emit(len(self._waiting))
            return False
        self._start(batch, collection_id)
        return True

    def cancel(self) -> None:
        """Stop the running ingest after its current file, and drop the waiting ones."""
        self._waiting.clear()
        self.waiting.emit(0)
        if self.task is not None and self.task.running:
            self.task.cancel()

    def _start(self, paths: tuple[str, ...], collection_id: int | None) -> None:
        task = PathIngest(self._runner, paths, collection_id=collection_id, parent=self)
        task.progressed.connect(lambda progress: self.progressed.emit(progress, task.cancel_requested))
        task.finished.connect(self._on_finished)
        task.failed.connect(self._on_failed)
        self.task = task
        self.started.emit(paths, len(self._waiting))
        task.start()

    def _on_finished(self, outcome: IngestOutcome) -> None:
        self.last_outcome = outcome
        self.finished.emit(outcome)
        self._next()

    def _on_failed(self, error: BaseException) -> None:
        self.failed.emit(getattr(error, "message", str(error)))
        self._next()

    def _next(self) -> None:
        if self._waiting:
            paths, collection_id = self._waiting.pop(0)
            self._start(paths, collection_id)
