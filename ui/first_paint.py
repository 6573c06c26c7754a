"""Knowing when a window has first been painted: the moment the person sees the app.

Start-up defers work that nothing on the screen needs (the endpoint) until then, and the start-up
benchmark stops its clock then, so both use this one definition of "painted".
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject, Signal
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
