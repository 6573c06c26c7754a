"""Knowing when a window has first been painted: the moment the person sees the app.

Start-up defers work that nothing on the screen needs (the endpoint, the garbage collector's first
pass) until then (:class:`AfterFirstPaint`), and the start-up benchmark stops its clock then
(:class:`FirstPaint`), so both use this one definition of "painted".
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QWidget


class FirstPaint(QObject):
    """Watches ``widget`` for its first paint event; :attr:`painted` is emitted as it begins.

    A slot that should run after the paint (not before it) connects with a queued connection.
    """

    painted = Signal()

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.at: float | None = None
        """When the first paint began (``time.time()``), None until then."""
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Note the first paint (and let it happen)."""
        if self.at is None and event.type() == QEvent.Type.Paint:
            self.at = time.time()
            watched.removeEventFilter(self)
            self.painted.emit()
        return False


class AfterFirstPaint(QObject):
    """Runs ``action`` once, right after ``widget``'s first paint has been drawn, or after ``at_the_latest_ms``
    should ``widget`` not be painted by then (a window that starts hidden, say).

    It belongs to ``widget``: once ``widget`` is gone, ``action`` does not run.
    """

    def __init__(self, widget: QWidget, action: Callable[[], None], *, at_the_latest_ms: int | None = None) -> None:
        super().__init__(widget)
        self._action: Callable[[], None] | None = action
        self._deadline = QTimer(self)
        self._deadline.setSingleShot(True)
        self._deadline.timeout.connect(self._run)
        # Queued: the paint goes ahead first, then the action.
        FirstPaint(widget).painted.connect(self._run, Qt.ConnectionType.QueuedConnection)
        if at_the_latest_ms is not None:
            self._deadline.start(at_the_latest_ms)

    @property
    def done(self) -> bool:
        """True once ``action`` has run."""
        return self._action is None

    def _run(self) -> None:
        action, self._action = self._action, None
        self._deadline.stop()
        if action is not None:
            action()
