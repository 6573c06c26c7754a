"""The child process of :func:`bench.desktop.measure.startup_benchmark`: start as ``cairn`` does and say when.

``python -m bench.desktop.paint --vault PATH`` goes through the desktop app's own start-up calls in the
order of :func:`app.gui.run_gui`: the vault begins opening on its own thread
(:func:`app.gui.start_opening`); Qt and the interface load meanwhile (:mod:`app.desktop`), then the
QApplication and the window, shown while the vault is still opening (:class:`app.desktop.StartingWindow`);
the endpoint starts once the vault is open and the window has been painted — on a free port rather
than the configured one, so that a running Cairn does not get in the way.  It prints, in seconds since the epoch::

    FIRST_PAINT <time>       the main window's first paint event
    OVERVIEW_SHOWN <time>    the Overview's numbers on screen
    ENDPOINT_SERVING <time>  the endpoint accepting connections

and then shuts down as the app does.  Until the vault starts opening, this module imports nothing
but the standard library and :mod:`app.gui` (which imports no more), so nothing loads ahead of the
app's order.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.composition import VaultOpening

PAINT_MARK = "FIRST_PAINT"
CONTENT_MARK = "OVERVIEW_SHOWN"
ENDPOINT_MARK = "ENDPOINT_SERVING"
STATE_ENV = "CAIRN_BENCH_UI_STATE"
"""A folder for the window's saved state (QSettings): the benchmark gives each run an empty one, a first start."""
TIMEOUT_S = 60.0


def first_paint(vault_dir: Path) -> int:
    """Start on ``vault_dir``, print the marks, shut down; 0 when the window was painted."""
    from app.gui import collection_paused, start_opening

    with collection_paused():
        opening = start_opening(vault_dir)
        try:
            return _show_and_time(opening)
        finally:
            opening.abandon()


def _show_and_time(opening: VaultOpening) -> int:
    from PySide6.QtCore import QSettings

    from app.desktop import StartingWindow, application
    from ui.first_paint import FirstPaint
    from ui.garbage import MainThreadGarbageCollector

    state = os.environ.get(STATE_ENV)
    if state:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, state)
    app = application()
    collector = MainThreadGarbageCollector()
    marks: dict[str, float] = {}
    starting = StartingWindow(opening, collector, port=0)
    window = starting.window
    try:
        painted = FirstPaint(window)
        window.show()
        overview = window.view("overview")
        labels = getattr(overview, "count_labels", {})

        def note() -> bool:
            if PAINT_MARK not in marks and painted.at is not None:
                marks[PAINT_MARK] = painted.at
            numbers = "events" in labels and labels["events"].text() not in ("", "–")
            if CONTENT_MARK not in marks and PAINT_MARK in marks and numbers:  # on screen: painted, too
                marks[CONTENT_MARK] = time.time()
            endpoint = starting.endpoint
            if ENDPOINT_MARK not in marks and endpoint is not None and endpoint.info.running:
                marks[ENDPOINT_MARK] = time.time()
            shown = CONTENT_MARK in marks or "events" not in labels
            settled = endpoint is not None and not endpoint.info.starting
            return (PAINT_MARK in marks and shown and settled) or starting.error is not None

        _process_until(note, TIMEOUT_S)
        for mark, at in marks.items():
            sys.stdout.write(f"{mark} {at}\n")
        if starting.error is not None:
            sys.stdout.write(f"the vault did not open: {starting.error}\n")
        elif starting.endpoint is not None and starting.endpoint.info.problem:
            sys.stdout.write(f"endpoint not serving: {starting.endpoint.info.problem}\n")
        sys.stdout.flush()
        window.close()
        window.deleteLater()
    finally:
        starting.stop()
        collector.stop()
    assert app is not None
    return 0 if PAINT_MARK in marks and starting.error is None else 1


def _process_until(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Run a real event loop, as the app's, until ``condition()`` holds or ``timeout_s`` passes.

    The paint time is taken by the event filter itself, so how often this looks does not change it.
    """
    from PySide6.QtCore import QEventLoop, QTimer

    if condition():
        return True
    loop = QEventLoop()
    deadline = time.monotonic() + timeout_s
    poll = QTimer()
    poll.setInterval(2)
    poll.timeout.connect(lambda: loop.quit() if condition() or time.monotonic() > deadline else None)
    poll.start()
    loop.exec()
    poll.stop()
    return condition()


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.desktop.paint --vault PATH``: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--vault", type=Path, required=True, help="the vault folder")
    args = parser.parse_args(argv)
    return first_paint(args.vault)


if __name__ == "__main__":
    raise SystemExit(main())
