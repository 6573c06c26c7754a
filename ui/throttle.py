"""A throttle for change-driven refreshes: at most one call per interval, never a lost last one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QObject, QTimer


class Throttle(QObject):
    """Calls ``callback`` at most once every ``interval_ms``.

    The first :meth:`trigger` after a quiet period calls at once (the screen reacts without delay);
    triggers during the interval collapse into one call at its end, so a burst of a thousand
    ingested events costs two refreshes and the last state is always shown.  Lives in, and calls
    back on, the GUI thread.
    """

    def __init__(self, interval_ms: int, callback: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._interval_ms = interval_ms
        self._callback = callback
        self._since_last = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._fire)

    @property
    def interval_ms(self) -> int:
        """The shortest gap between two calls."""
        return self._interval_ms

    @property
    def pending(self) -> bool:
        """True while a trailing call is scheduled."""
        return self._timer.isActive()

    def trigger(self) -> None:
        """Ask for a call: now if the last was long enough ago, else at the end of the interval."""
        if self._timer.isActive():
            return
        if not self._since_last.isValid() or self._since_last.elapsed() >= self._interval_ms:
            self._fire()
        else:
            self._timer.start(self._interval_ms - int(self._since_last.elapsed()))

    def cancel(self) -> None:
        """Drop a scheduled trailing call."""
        self._timer.stop()

    def _fire(self) -> None:
        self._since_last.start()
        self._callback()
