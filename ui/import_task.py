"""A transcript import running on the runner's writer, with progress signals and a cancel flag.

``vault.conversations.import_file(path)`` is a generator that yields after each conversation (each
one its own transaction).  The task iterates it on the writer thread, hands every progress item to
the GUI thread through :attr:`TranscriptImport.progressed`, and checks the cancel flag between
conversations, so cancelling never leaves half a conversation behind.  A shutting-down runner
counts as a cancel: closing the window does not wait for the rest of a large export.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from engine import Vault
from engine.conversations import ImportProgress
from ui.ops import OpRunner


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """How an import ended: the last progress seen and whether it was cancelled."""

    path: str
    last: ImportProgress | None
    cancelled: bool

    @property
    def summary(self) -> str:
        """One paragraph for the person: conversations, turns added, duplicates, errors."""
        name = Path(self.path).name
        last = self.last
        if last is None:
            return f"Nothing was imported from {name}."
        done = f"{last.conversations_done:,} of {last.conversations_total:,}"
        head = (
            f"Import of {name} cancelled after {done} conversations"
            if self.cancelled
            else f"Imported {name} ({last.importer}): {last.conversations_done:,} conversations"
        )
        errors = len(last.errors)
        tail = f"{errors} error{'' if errors == 1 else 's'}" if errors else "no errors"
        return f"{head} — {last.events_added:,} turns added, {last.duplicates:,} already there, {tail}."


class TranscriptImport(QObject):
    """One import of one file.

    Signals (on the GUI thread):
        progressed(ImportProgress): after each conversation (and once before the first).
        finished(ImportOutcome): the import ended, completely or by cancel.
        failed(BaseException): the file could not be imported at all (also reported by the
            runner).
    """

    progressed = Signal(object)
    finished = Signal(object)
    failed = Signal(object)

    def __init__(self, runner: OpRunner, path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self.path = Path(path)
        self._cancel = threading.Event()
        self.running = False

    def start(self) -> None:
        """Queue the import on the writer."""
        self.running = True
        self._runner.write(self._run, self._done, on_error=self._failed)

    def cancel(self) -> None:
        """Stop after the conversation being imported."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancel.is_set()

    def _run(self, vault: Vault) -> ImportOutcome:
        """On the writer thread: iterate the import, reporting progress, until done or cancelled."""
        last: ImportProgress | None = None
        stopped = False
        progress_items = vault.conversations.import_file(self.path)
        try:
            for progress in progress_items:
                last = progress
                self.progressed.emit(progress)  # queued to the GUI thread
                if self._cancel.is_set() or self._runner.is_shut_down:
                    stopped = last.conversations_done < last.conversations_total
                    break
        finally:
            close = getattr(progress_items, "close", None)  # a generator: end it where it stands
            if close is not None:
                close()
        return ImportOutcome(str(self.path), last, stopped)

    def _done(self, outcome: ImportOutcome) -> None:
        self.running = False
        self.finished.emit(outcome)

    def _failed(self, error: BaseException) -> None:
        self.running = False
        self.failed.emit(error)
        self._runner.report(error)
