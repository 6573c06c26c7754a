"""Python's cyclic garbage collection, kept on the GUI thread.

Python collects reference cycles in whichever thread happens to allocate when a threshold is
crossed.  A cycle holding a Qt object (a window whose child keeps a bound method of the window, say)
that is collected on a worker thread (the runner's readers, the engine's writer, the endpoint's
server) destroys that object off the GUI thread, and Qt crashes.  So while the app runs, automatic
collection is off and a timer on the GUI thread collects instead, using the thresholds ``gc`` itself
would have used.  The tests use the same collector around every GUI test.
"""

from __future__ import annotations

import gc
import logging

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer

log = logging.getLogger(__name__)

CHECK_INTERVAL_MS = 500


class MainThreadGarbageCollector(QObject):
    """Turns automatic collection off on :meth:`start` and collects from a GUI-thread timer."""

    def __init__(self, parent: QObject | None = None, *, interval_ms: int = CHECK_INTERVAL_MS) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)

    @property
    def active(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._timer.isActive()

    def start(self) -> None:
        """Collect what is already garbage (here, on the GUI thread), then take over from ``gc``."""
        self._was_enabled = gc.isenabled()
        self.collect_now()
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Collect one last time on this thread and hand collection back to ``gc``."""
        self._timer.stop()
        self.collect_now()
        if self._was_enabled:
            gc.enable()

    def check(self) -> None:
        """Collect the generations whose allocation counts passed ``gc``'s thresholds."""
        counts = gc.get_count()
        generation = -1
        for level, (count, threshold) in enumerate(zip(counts, self._thresholds, strict=False)):
            if threshold and count > threshold:
                generation = level
        if generation >= 0:
            gc.collect(generation)

    @staticmethod
    def collect_now() -> int:
        """Delete widgets waiting for ``deleteLater``, then collect every generation."""
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        return gc.collect()
