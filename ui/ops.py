"""The one runner for engine calls from the GUI: off its thread, results delivered back on it.

Every :class:`engine.Vault` call the interface makes goes through :class:`OpRunner`.  Operations
that change things run one at a time on a single **writer** thread (the engine serialises writes
anyway, and ordering the user's actions keeps "edit, then delete" from arriving as "delete, then
edit"); queries run on a **reader** pool of two so a slow query never holds up a quick one.  When an
operation finishes, its result is handed to ``on_done`` **on the GUI thread**, through a queued
signal to this object (which lives in the GUI thread).

.. warning::

   An operation runs on a worker thread.  It must not touch any widget, model or other GUI object —
   not even to read from it: copy what it needs into plain values before submitting, and update the
   screen in ``on_done``. Qt widgets are not thread-safe and touching one from a worker crashes the
   app some of the time, which is worse than always.

Errors are split the way the engine's hierarchy splits them.  A :class:`~engine.errors.VaultError`
(a :class:`~engine.errors.UserError` or an :class:`~engine.errors.EnvironmentProblem`) is something
the person can act on: it becomes :attr:`OpRunner.user_error` with the message and the fix, shown in
the window's message area. Anything else is a bug: it is logged and shown in a bug-report dialog
with the traceback — never a crash.

The runner also bridges the engine's change feed, whose callbacks arrive on the engine's writer
thread, to :attr:`OpRunner.changes_arrived`, emitted on the GUI thread, so views refresh live.

The runner can be made before the vault is open, on a :class:`~concurrent.futures.Future` of it:
the app builds its window while the vault opens.  Operations submitted meanwhile wait for the vault
on their worker threads (never on the GUI thread) and then run; should it fail to open, they fail
with its error.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QWidget

from engine import Vault
from engine.changes import Change
from engine.errors import VaultError
from ui.bug_report import show_bug_report

log = logging.getLogger(__name__)

T = TypeVar("T")

BugReporter = Callable[[str, str], None]
"""Shows a bug to the person: ``(summary, traceback text)``."""

READER_THREADS = 2
SWITCH_INTERVAL_S = 0.001
"""How long a thread may keep the interpreter while another waits for it (Python's default is 5 ms).

Workers run Python (engine calls, turning rows into DTOs) while the GUI thread paints, and every paint
calls into Python hundreds of times (a model's ``data()``).  With 5 ms, each time a worker holds the
interpreter the GUI thread waits up to 5 ms per busy thread before it may go on; 1 ms keeps a paint of
the Memories table under load close to its unloaded time at a negligible cost in throughput."""


class OpRunner(QObject):
    """Runs Vault calls off the GUI thread and delivers their results on it.

    Signals (all emitted on the GUI thread):
        user_error(message, fix): an operation failed in a way the person can fix.
        bug_reported(summary, details): an operation failed with a bug (also shown in a dialog).
        changes_arrived(list[Change]): the engine committed changes.
        busy_changed(bool): True while at least one operation is in flight.

    Create it, and call :meth:`read`, :meth:`write` and :meth:`shutdown`, on the GUI thread.
    """

    user_error = Signal(str, str)
    bug_reported = Signal(str, str)
    changes_arrived = Signal(list)
    busy_changed = Signal(bool)

    # Emitted from worker threads, queued to slots of this object, which lives in the GUI thread.
    _finished = Signal(object)
    _feed_arrived = Signal(object)

    def __init__(
        self,
        vault: Vault | Future[Vault],
        parent: QObject | None = None,
        *,
        report_bug: BugReporter | None = None,
        readers: int = READER_THREADS,
    ) -> None:
        super().__init__(parent)
        if sys.getswitchinterval() > SWITCH_INTERVAL_S:
            sys.setswitchinterval(SWITCH_INTERVAL_S)  # for the whole process: see SWITCH_INTERVAL_S
        if not isinstance(vault, Future):
            opened: Future[Vault] = Future()
            opened.set_result(vault)
            vault = opened
        self._vault = vault
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ui-write")
        self._readers = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="ui-read")
        self._report_bug = report_bug or self._show_bug_dialog
        self._dialog_parent: QWidget | None = None
        self._bug_dialogs: dict[str, QMessageBox] = {}
        self._submit_lock = threading.Lock()
        self._closed = False
        self._in_flight = 0
        self._finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._feed_arrived.connect(self._relay_changes, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe: Callable[[], None] | None = None
        vault.add_done_callback(self._follow_changes)  # at once when the vault is open already

    # -- submitting --------------------------------------------------------------------------------
    def read(
        self,
        op: Callable[[Vault], T],
        on_done: Callable[[T], None] | None = None,
        *,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> Future[T]:
        """Run the query ``op(vault)`` on the reader pool; ``on_done(result)`` on the GUI thread.

        ``on_error``, when given, receives any exception instead of the default reporting.  After
        :meth:`shutdown` nothing runs and the returned future is already cancelled.
        """
        return self._submit(self._readers, op, on_done, on_error)

    def write(
        self,
        op: Callable[[Vault], T],
        on_done: Callable[[T], None] | None = None,
        *,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> Future[T]:
        """Run the change ``op(vault)`` on the writer thread, after all writes submitted before."""
        return self._submit(self._writer, op, on_done, on_error)

    def _submit(
        self,
        executor: ThreadPoolExecutor,
        op: Callable[[Vault], T],
        on_done: Callable[[T], None] | None,
        on_error: Callable[[BaseException], None] | None,
    ) -> Future[T]:
        with self._submit_lock:
            if self._closed:
                # A timer or a late click after the window closed: do nothing, quietly.
                cancelled: Future[T] = Future()
                cancelled.cancel()
                return cancelled
            future = executor.submit(self._call, op)
        self._set_in_flight(+1)
        future.add_done_callback(lambda done: self._post((on_done, on_error, done)))
        return future

    def _call(self, op: Callable[[Vault], T]) -> T:
        """Run ``op`` on this worker thread once the vault is open (at once, almost always)."""
        return op(self._vault.result())

    def _post(self, item: tuple[Any, Any, Future[Any]]) -> None:
        """Hand a finished future to the GUI thread (called on the worker that finished it)."""
        try:
            self._finished.emit(item)
        except RuntimeError:
            pass  # the Qt half of this object is already gone: the app is exiting

    # -- delivering (GUI thread) -------------------------------------------------------------------
    @Slot(object)
    def _deliver(self, item: tuple[Any, Any, Future[Any]]) -> None:
        on_done, on_error, future = item
        self._set_in_flight(-1)
        if self._closed or future.cancelled():
            return
        error = future.exception()
        if error is None:
            if on_done is not None:
                self._call_safely(on_done, future.result())
        elif on_error is not None:
            self._call_safely(on_error, error)
        else:
            self.report(error)

    def _call_safely(self, callback: Callable[[Any], None], value: Any) -> None:
        # A slot that raises would only print to stderr; route it through the same reporting as the
        # operation.
        try:
            callback(value)
        except Exception as exc:
            self.report(exc)

    def report(self, error: BaseException) -> None:
        """Show ``error``: a readable message for vault errors, the bug dialog for anything else."""
        if isinstance(error, VaultError):
            log.info("operation failed: %s (%s)", type(error).__name__, error.code)
            self.user_error.emit(error.message, error.fix)
            return
        summary = f"{type(error).__name__}: {error}"
        details = "".join(traceback.format_exception(error))
        log.error("bug in a background operation", exc_info=error)
        self.bug_reported.emit(summary, details)
        self._report_bug(summary, details)

    def _set_in_flight(self, delta: int) -> None:
        before = self._in_flight
        self._in_flight = max(0, before + delta)
        if (before == 0) != (self._in_flight == 0) and not self._closed:
            self.busy_changed.emit(self._in_flight > 0)

    # -- the change feed ---------------------------------------------------------------------------
    def _follow_changes(self, opened: Future[Vault]) -> None:
        """Subscribe to the vault's changes once it is open (on the thread that opened it, or here)."""
        if opened.cancelled() or opened.exception() is not None:
            return
        with self._submit_lock:
            if not self._closed:
                self._unsubscribe = opened.result().changes.subscribe(self._on_feed)

    def _on_feed(self, changes: Sequence[Change]) -> None:
        """Called by the engine on its writer thread: only hand the batch over, never block it."""
        if self._closed:
            return
        try:
            self._feed_arrived.emit(list(changes))
        except RuntimeError:
            pass

    @Slot(object)
    def _relay_changes(self, changes: list[Change]) -> None:
        if not self._closed:
            self.changes_arrived.emit(changes)

    # -- bug dialogs -------------------------------------------------------------------------------
    def set_dialog_parent(self, widget: QWidget | None) -> None:
        """Centre bug dialogs on ``widget`` (the main window) instead of the screen."""
        self._dialog_parent = widget

    @property
    def open_bug_reports(self) -> tuple[QMessageBox, ...]:
        """The bug dialogs currently shown by the default reporter."""
        return tuple(self._bug_dialogs.values())

    def _show_bug_dialog(self, summary: str, details: str) -> None:
        # The same bug repeating (say, in every refresh) shows one dialog, not a pile of them.
        existing = self._bug_dialogs.get(summary)
        if existing is not None:
            existing.raise_()
            return
        box = show_bug_report(summary, details, self._dialog_parent)
        self._bug_dialogs[summary] = box
        box.finished.connect(lambda _result, key=summary: self._bug_dialogs.pop(key, None))

    # -- lifecycle ---------------------------------------------------------------------------------
    @property
    def is_shut_down(self) -> bool:
        """True once :meth:`shutdown` has been called."""
        return self._closed

    @property
    def busy(self) -> bool:
        """True while an operation is in flight."""
        return self._in_flight > 0

    def shutdown(self) -> None:
        """Stop following changes, wait for running operations and join the threads (idempotent).

        Queued queries are cancelled: nobody will look at their results.  Queued writes still run,
        because each is something the person asked for and expects to be saved.  Results arriving
        afterwards are dropped.
        """
        with self._submit_lock:
            if self._closed:
                return
            self._closed = True
            unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()
        self._readers.shutdown(wait=True, cancel_futures=True)
        self._writer.shutdown(wait=True, cancel_futures=False)
        for box in list(self._bug_dialogs.values()):
            box.close()
        self._bug_dialogs.clear()
        log.info("operation runner stopped")
