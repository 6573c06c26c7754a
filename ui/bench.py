"""GUI responsiveness benchmarks: scrolling, live ingest over the endpoint, and start-up.

* :func:`scroll_benchmark` drives the Memories table from the first row to the last at 60 steps a
  second (a fast fling, ~2 s for the whole list), the way a person dragging the scroll bar would,
  and measures the gaps between the timer's ticks: any gap longer than the tick interval is time
  the event loop could not paint or react.  Pages load in the background meanwhile; at the end it
  waits until the rows on screen have arrived.
* :func:`ingest_stall_benchmark` measures the same gaps while a background thread POSTs events to
  the real localhost endpoint at a steady rate (200 a second by default), with the Memories view
  shown: the acknowledgements, the enrichment they start and the live refreshes of the view all
  compete with the event loop.
* :func:`startup_benchmark` starts a fresh process that opens the vault and the endpoint and shows
  the main window the way the app does, and reports the time from launching that process to the
  window's first paint event (and to the Overview's numbers).

Run them on a real vault (the app must not have the vault open)::

    QT_QPA_PLATFORM=offscreen python -m ui.bench --vault ~/path/to/vault
    QT_QPA_PLATFORM=offscreen python -m ui.bench --ingest-stall --vault ~/path/to/vault
    QT_QPA_PLATFORM=offscreen python -m ui.bench --startup --vault ~/path/to/vault

The ingest benchmark adds events to the vault: run it on a copy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from PySide6.QtCore import QElapsedTimer, QEvent, QEventLoop, QObject, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from engine import Vault
from ui.context import EndpointInfo
from ui.garbage import MainThreadGarbageCollector
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.memories import MemoriesView

TICK_MS = 16
DEFAULT_STEPS = 120
SETTLE_TIMEOUT_MS = 30_000
DEFAULT_RATE = 200
DEFAULT_SECONDS = 10.0
SENDERS = 4
STARTUP_RUNS = 3
STARTUP_TIMEOUT_S = 300.0
PAINT_MARK = "FIRST_PAINT"
CONTENT_MARK = "OVERVIEW_SHOWN"


def _wait(condition: Callable[[], bool], timeout_ms: int) -> bool:
    """Run the event loop until ``condition()`` holds or ``timeout_ms`` passes."""
    clock = QElapsedTimer()
    clock.start()
    while not condition():
        if clock.elapsed() > timeout_ms:
            return False
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    return True


def _run_until(condition: Callable[[], bool], timeout_ms: int, poll_ms: int = 25) -> bool:
    """Run a real event loop (idle waits sleep, holding no lock) until ``condition()`` or the timeout.

    Unlike :func:`_wait`, which spins, this leaves the CPU and the interpreter to other threads while
    nothing happens, so it does not distort what they measure.
    """
    if condition():
        return True
    loop = QEventLoop()
    clock = QElapsedTimer()
    clock.start()
    poll = QTimer()
    poll.setInterval(poll_ms)

    def check() -> None:
        if condition() or clock.elapsed() > timeout_ms:
            loop.quit()

    poll.timeout.connect(check)
    poll.start()
    loop.exec()
    poll.stop()
    return condition()


def scroll_benchmark(window: MainWindow, vault: Vault, *, steps: int = DEFAULT_STEPS) -> float:
    """Scroll the Memories table of ``window`` top to bottom; return the longest stall in ms.

    ``vault`` is the vault the window shows; it is only used to report what was measured on.
    """
    window.show()
    window.show_view("memories")
    view = window.view("memories")
    assert isinstance(view, MemoriesView)
    view.filters.clear()
    _wait(lambda: view.model.loaded and not view.model.is_loading(), SETTLE_TIMEOUT_MS)
    bar = view.table.verticalScrollBar()
    gaps: list[int] = []
    clock = QElapsedTimer()
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(TICK_MS)
    position = {"step": 0}

    def tick() -> None:
        if clock.isValid():
            gaps.append(int(clock.elapsed()))
        clock.start()
        step = position["step"]
        bar.setValue(round(bar.maximum() * step / steps))
        position["step"] = step + 1
        if step >= steps:
            timer.stop()
            loop.quit()

    timer.timeout.connect(tick)
    timer.start()
    loop.exec()
    last_row = view.model.rowCount() - 1
    if last_row >= 0:
        _wait(lambda: view.model.cached_fact(view.model.fact_id_at(last_row)) is not None, 5000)
    stall = max((gap - TICK_MS for gap in gaps), default=0)
    count = view.model.rowCount()
    sys.stdout.write(
        f"{count:,} facts in {vault.paths.root}: longest stall {max(stall, 0)} ms over "
        f"{len(gaps)} steps; {len(view.model.requested_pages)} pages fetched\n"
    )
    return float(max(stall, 0))


class StallDetector(QObject):
    """A GUI-thread timer ticking every :data:`TICK_MS`; records how late each tick came.

    A tick that arrives ``gap`` ms after the previous one means the event loop was blocked for
    ``gap - TICK_MS`` ms: no painting, no input.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.gaps: list[int] = []
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        """Start ticking (clears earlier gaps)."""
        self.gaps.clear()
        self._clock.invalidate()
        self._timer.start()

    def stop(self) -> None:
        """Stop ticking."""
        self._timer.stop()

    def _tick(self) -> None:
        if self._clock.isValid():
            self.gaps.append(int(self._clock.elapsed()))
        self._clock.start()

    def stalls(self) -> list[int]:
        """Each tick's delay beyond the interval, in ms (0 for punctual ticks)."""
        return [max(gap - TICK_MS, 0) for gap in self.gaps]


@dataclass(frozen=True, slots=True)
class StallReport:
    """What :func:`ingest_stall_benchmark` measured."""

    longest_ms: int
    p99_ms: float
    ticks: int
    sent: int
    acknowledged: int
    seconds: float
    facts_shown: int

    @property
    def rate(self) -> float:
        """Events acknowledged per second."""
        return self.acknowledged / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        """One line for people."""
        return (
            f"{self.acknowledged:,}/{self.sent:,} events acknowledged in {self.seconds:.1f} s "
            f"({self.rate:.0f}/s): longest GUI stall {self.longest_ms} ms, p99 {self.p99_ms:.0f} ms over "
            f"{self.ticks:,} ticks; Memories showed {self.facts_shown:,} facts"
        )


TEMPLATES = (
    "My colleague {name} works as a {job}.",
    "I visited {place} last weekend with {name}.",
    "{name} prefers {thing} over coffee.",
    "Remind me that {name} lives in {place}.",
    "I bought a new {thing} for the kitchen.",
)
NAMES = ("Ada", "Bruno", "Chloe", "Dev", "Eli", "Farah", "Goran", "Hana", "Ines", "Jonas")
JOBS = ("baker", "pilot", "nurse", "teacher", "welder", "chemist", "architect")
PLACES = ("Lisbon", "Oslo", "Kyoto", "Quito", "Accra", "Perth", "Tallinn", "Bergen")
THINGS = ("green tea", "a kettle", "oat milk", "a toaster", "lemonade", "a blender")


def bench_sentence(n: int) -> str:
    """The ``n``-th of a varied, deterministic stream of chat turns with facts in them."""
    return TEMPLATES[n % len(TEMPLATES)].format(
        name=NAMES[n % len(NAMES)],
        job=JOBS[n % len(JOBS)],
        place=PLACES[(n // 3) % len(PLACES)],
        thing=THINGS[(n // 2) % len(THINGS)],
    )


def _post_events(
    address: str,
    token: str,
    rate: float,
    count: int,
    lane: int,
    lanes: int,
    outcome: dict[str, int],
    lock: threading.Lock,
) -> None:
    """Send every ``lanes``-th of ``count`` events on the shared schedule of ``rate`` a second."""
    host = address.split("://", 1)[-1].rstrip("/")
    headers = {"Authorization": f"Bearer {token}", "Host": host}
    start = outcome["start_ns"] / 1e9
    with httpx.Client(base_url=address, headers=headers, trust_env=False, timeout=10) as http:
        for n in range(lane, count, lanes):
            delay = start + n / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            try:
                response = http.post(
                    "/v6/ingest",
                    json={"conversation_id": f"bench-{n % 20}", "content": bench_sentence(n)},
                )
                accepted = response.status_code == 202
            except httpx.HTTPError:
                accepted = False
            with lock:
                outcome["sent"] = outcome.get("sent", 0) + 1
                outcome["acknowledged"] = outcome.get("acknowledged", 0) + int(accepted)


def ingest_stall_benchmark(
    window: MainWindow,
    address: str,
    token: str,
    *,
    rate: float = DEFAULT_RATE,
    seconds: float = DEFAULT_SECONDS,
) -> StallReport:
    """POST events to the endpoint at ``address`` while the Memories view is shown; measure GUI stalls.

    ``rate`` events a second for ``seconds``, on one schedule shared by :data:`SENDERS` background
    threads (keep-alive connections); meanwhile a :class:`StallDetector` on the GUI thread records how
    late its ticks come.
    """
    window.show()
    window.show_view("memories")
    view = window.view("memories")
    assert isinstance(view, MemoriesView)
    _wait(lambda: view.model.loaded and not view.model.is_loading(), SETTLE_TIMEOUT_MS)
    count = max(1, round(rate * seconds))
    lock = threading.Lock()
    outcome: dict[str, int] = {"start_ns": time.monotonic_ns()}
    # Several clients, as several chat apps would be: one slow acknowledgement does not hold up the schedule.
    senders = [
        threading.Thread(
            target=_post_events,
            args=(address, token, rate, count, lane, SENDERS, outcome, lock),
            name=f"bench-sender-{lane}",
            daemon=True,
        )
        for lane in range(SENDERS)
    ]
    detector = StallDetector()
    started = time.monotonic()
    detector.start()
    for sender in senders:
        sender.start()
    _run_until(lambda: not any(t.is_alive() for t in senders), int((seconds * 3 + 30) * 1000))
    detector.stop()
    elapsed = time.monotonic() - started
    stalls = detector.stalls()
    ordered = sorted(stalls)
    p99 = float(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]) if ordered else 0.0
    report = StallReport(
        longest_ms=max(stalls, default=0),
        p99_ms=p99,
        ticks=len(stalls),
        sent=outcome.get("sent", 0),
        acknowledged=outcome.get("acknowledged", 0),
        seconds=elapsed,
        facts_shown=view.model.rowCount(),
    )
    sys.stdout.write(report.line() + "\n")
    return report


# -- start-up ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StartupReport:
    """Milliseconds from launching the process to the first paint, and to the Overview's numbers."""

    first_paint_ms: list[float]
    content_ms: list[float]

    def line(self) -> str:
        """One line for people."""
        paint = ", ".join(f"{ms:.0f}" for ms in self.first_paint_ms)
        content = ", ".join(f"{ms:.0f}" for ms in self.content_ms)
        return (
            f"start-up to first paint: median {statistics.median(self.first_paint_ms):.0f} ms ({paint}); "
            f"to the Overview's numbers: median {statistics.median(self.content_ms):.0f} ms ({content})"
        )


def startup_benchmark(vault_dir: Path, *, runs: int = STARTUP_RUNS) -> StartupReport:
    """Launch ``python -m ui.bench --first-paint`` ``runs`` times on ``vault_dir`` and time each.

    The clock starts just before the process is launched (interpreter start and imports count) and
    stops at the main window's first paint event, as the child reports it.
    """
    paints: list[float] = []
    contents: list[float] = []
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="cairn-startup-") as state:
            command = [sys.executable, "-m", "ui.bench", "--first-paint", "--vault", str(vault_dir)]
            env["CAIRN_BENCH_UI_STATE"] = state  # a first start: no saved geometry or view
            launched = time.time()
            done = subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S, check=False
            )
        marks = dict(
            line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith((PAINT_MARK, CONTENT_MARK))
        )
        if done.returncode != 0 or PAINT_MARK not in marks:
            raise RuntimeError(f"the start-up run failed ({done.returncode}): {done.stderr[-2000:]}")
        paints.append((float(marks[PAINT_MARK]) - launched) * 1000)
        contents.append((float(marks.get(CONTENT_MARK, marks[PAINT_MARK])) - launched) * 1000)
    report = StartupReport(paints, contents)
    sys.stdout.write(f"{vault_dir}: {report.line()}\n")
    return report


class _FirstPaint(QObject):
    """Notes the time of the first paint event of the watched widget."""

    def __init__(self) -> None:
        super().__init__()
        self.at: float | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Record the first paint (and let it happen)."""
        if self.at is None and event.type() == QEvent.Type.Paint:
            self.at = time.time()
        return False


@contextmanager
def _served(vault: Vault) -> Iterator[EndpointInfo]:
    """The vault's endpoint on a free loopback port, as the app starts it before the window."""
    from engine.api.app import create_app
    from engine.api.server import EndpointServer

    token = vault.endpoint_token()
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    try:
        yield EndpointInfo(server.address, token)
    finally:
        server.stop()


def first_paint(vault_dir: Path) -> int:
    """The child of :func:`startup_benchmark`: open, serve, show, print the paint time, exit."""
    state = os.environ.get("CAIRN_BENCH_UI_STATE")
    if state:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, state)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    collector = MainThreadGarbageCollector()
    collector.start()
    vault = Vault.open(vault_dir)
    runner = OpRunner(vault)
    try:
        with _served(vault) as endpoint:
            window = MainWindow(runner, endpoint=endpoint, title=f"Cairn — {vault.paths.root}")
            marker = _FirstPaint()
            window.installEventFilter(marker)
            window.show()
            _run_until(lambda: marker.at is not None, SETTLE_TIMEOUT_MS, poll_ms=1)
            sys.stdout.write(f"{PAINT_MARK} {marker.at}\n")
            overview = window.view("overview")
            labels = getattr(overview, "count_labels", {})
            if "events" in labels:
                _run_until(lambda: labels["events"].text() not in ("", "–"), SETTLE_TIMEOUT_MS, poll_ms=5)
                sys.stdout.write(f"{CONTENT_MARK} {time.time()}\n")
            sys.stdout.flush()
            window.removeEventFilter(marker)
            window.close()
            window.deleteLater()
    finally:
        runner.shutdown()
        vault.close()
        collector.stop()
    assert app is not None
    return 0


# -- command line ------------------------------------------------------------------------------
def _open_window(vault: Vault, runner: OpRunner, endpoint: EndpointInfo) -> MainWindow:
    window = MainWindow(runner, endpoint=endpoint)
    window.resize(1120, 780)
    return window


def main(argv: list[str] | None = None) -> int:
    """``python -m ui.bench [--ingest-stall | --startup] --vault PATH``: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--vault", type=Path, required=True, help="the vault folder")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--ingest-stall", action="store_true", help="GUI stalls while events arrive")
    mode.add_argument("--startup", action="store_true", help="process start to the first paint")
    mode.add_argument("--first-paint", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="scroll steps")
    parser.add_argument("--rate", type=float, default=DEFAULT_RATE, help="events a second")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, help="how long to send")
    parser.add_argument("--runs", type=int, default=STARTUP_RUNS, help="start-up runs")
    args = parser.parse_args(argv)
    if args.startup:
        startup_benchmark(args.vault, runs=args.runs)
        return 0
    if args.first_paint:
        return first_paint(args.vault)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    collector = MainThreadGarbageCollector()  # as in the app: collections on the GUI thread
    collector.start()
    vault = Vault.open(args.vault, start_workers=args.ingest_stall)
    runner = OpRunner(vault)
    try:
        if args.ingest_stall:
            with _served(vault) as endpoint:
                window = _open_window(vault, runner, endpoint)
                ingest_stall_benchmark(
                    window, endpoint.address or "", endpoint.token, rate=args.rate, seconds=args.seconds
                )
                window.close()
                window.deleteLater()
        else:
            window = _open_window(vault, runner, EndpointInfo(None, "", "not started by the bench"))
            scroll_benchmark(window, vault, steps=args.steps)
            window.close()
            window.deleteLater()
    finally:
        runner.shutdown()
        vault.close()
        collector.stop()
    assert app is not None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
