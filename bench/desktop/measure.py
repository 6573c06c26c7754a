"""GUI responsiveness benchmarks: scrolling, live ingest over the endpoint, and start-up.

* :func:`scroll_benchmark` drives the Memories table from the first row to the last at 60 steps a
  second (a fast fling, ~2 s for the whole list), the way a person dragging the scroll bar would,
  and measures the gaps between the timer's ticks: any gap longer than the tick interval is time
  the event loop could not paint or react.  Pages load in the background meanwhile; at the end it
  waits until the rows on screen have arrived.
* :func:`ingest_stall_benchmark` measures the same gaps while another process (:mod:`bench.desktop.load`,
  as a chat app would be) POSTs events to the real localhost endpoint at a steady rate (200 a second
  by default), with the Memories view shown: the acknowledgements, the enrichment they start and the
  live refreshes of the view all compete with the event loop.
* :func:`startup_benchmark` starts a fresh process (:mod:`bench.desktop.paint`) that opens the vault,
  shows the main window and starts the endpoint with the app's own start-up calls in the app's order,
  and reports the time from launching that process to the window's first paint event (and to the
  Overview's numbers, and to the endpoint serving).

Run them on a real vault (the app must not have the vault open)::

    QT_QPA_PLATFORM=offscreen python -m bench.desktop.measure --vault ~/path/to/vault
    QT_QPA_PLATFORM=offscreen python -m bench.desktop.measure --ingest-stall --vault ~/path/to/vault
    QT_QPA_PLATFORM=offscreen python -m bench.desktop.measure --startup --vault ~/path/to/vault

The ingest benchmark adds events to the vault: run it on a copy.  ``--json FILE`` also writes the
figures, with the machine, the load average at the start and the vault's size, to ``FILE``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QEventLoop, QObject, QTimer
from PySide6.QtWidgets import QApplication

from bench.desktop.load import READY
from bench.desktop.paint import CONTENT_MARK, ENDPOINT_MARK, PAINT_MARK, STATE_ENV
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
SENDER_CLIENTS = 16
STARTUP_RUNS = 3
STARTUP_TIMEOUT_S = 300.0


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
    offered_rate: float = 0.0
    ack_p50_ms: float = 0.0
    ack_p99_ms: float = 0.0
    max_slip_ms: float = 0.0
    facts_before: int = 0

    @property
    def rate(self) -> float:
        """Events acknowledged per second."""
        return self.acknowledged / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        """One line for people."""
        return (
            f"{self.acknowledged:,}/{self.sent:,} events acknowledged in {self.seconds:.1f} s "
            f"({self.rate:.0f}/s of {self.offered_rate:.0f}/s offered; acknowledgement p50 {self.ack_p50_ms:.0f} ms, "
            f"p99 {self.ack_p99_ms:.0f} ms): longest GUI stall {self.longest_ms} ms, p99 {self.p99_ms:.0f} ms over "
            f"{self.ticks:,} ticks; Memories showed {self.facts_before:,} → {self.facts_shown:,} facts"
        )


def _child_env() -> dict[str, str]:
    """This environment with the repository on the path: the children run ``python -m bench.desktop.…`` from
    wherever the benchmark was started (``bench`` is not an installed package)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def _start_sender(address: str, token: str, rate: float, count: int, clients: int) -> subprocess.Popen[str]:
    """The sender process (:mod:`bench.desktop.load`), connected and waiting for the word to start."""
    command = [sys.executable, "-m", "bench.desktop.load", "--rate", str(rate), "--count", str(count)]
    command += ["--clients", str(clients), "--go", "--", address, token]  # "--": a token may start with "-"
    sender = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_child_env())
    assert sender.stdout is not None
    if sender.stdout.readline().strip() != READY:
        sender.kill()
        raise RuntimeError("the event sender did not start")
    return sender


def ingest_stall_benchmark(
    window: MainWindow,
    address: str,
    token: str,
    *,
    rate: float = DEFAULT_RATE,
    seconds: float = DEFAULT_SECONDS,
    clients: int = SENDER_CLIENTS,
) -> StallReport:
    """POST events to the endpoint at ``address`` while the Memories view is shown; measure GUI stalls.

    ``rate`` events a second for ``seconds``, sent by a separate process (:mod:`bench.desktop.load`, as chat apps are
    separate processes) over ``clients`` keep-alive connections; meanwhile a :class:`StallDetector` on the GUI
    thread records how late its ticks come.  The detector runs until the sender is done (every event answered).
    """
    window.show()
    window.show_view("memories")
    view = window.view("memories")
    assert isinstance(view, MemoriesView)
    _wait(lambda: view.model.loaded and not view.model.is_loading(), SETTLE_TIMEOUT_MS)
    facts_before = view.model.rowCount()
    count = max(1, round(rate * seconds))
    sender = _start_sender(address, token, rate, count, clients)
    detector = StallDetector()
    started = time.monotonic()
    detector.start()
    assert sender.stdin is not None and sender.stdout is not None
    sender.stdin.write("go\n")
    sender.stdin.flush()
    done = _run_until(lambda: sender.poll() is not None, int((seconds * 3 + 30) * 1000))
    detector.stop()
    elapsed = time.monotonic() - started
    if not done:
        sender.kill()
    result = json.loads(sender.stdout.read().strip().splitlines()[-1] or "{}") if done else {}
    sender.wait()
    stalls = detector.stalls()
    ordered = sorted(stalls)
    p99 = float(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]) if ordered else 0.0
    report = StallReport(
        longest_ms=max(stalls, default=0),
        p99_ms=p99,
        ticks=len(stalls),
        sent=int(result.get("sent", 0)),
        acknowledged=int(result.get("acknowledged", 0)),
        seconds=float(result.get("seconds", elapsed)),
        facts_shown=view.model.rowCount(),
        offered_rate=rate,
        ack_p50_ms=float(result.get("ack_p50_ms", 0.0)),
        ack_p99_ms=float(result.get("ack_p99_ms", 0.0)),
        max_slip_ms=float(result.get("max_slip_ms", 0.0)),
        facts_before=facts_before,
    )
    sys.stdout.write(report.line() + "\n")
    return report


# -- start-up ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StartupReport:
    """Milliseconds from launching the process to the first paint, to the Overview's numbers and to the endpoint
    serving (empty when it did not serve)."""

    first_paint_ms: list[float]
    content_ms: list[float]
    endpoint_ms: list[float] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)  # children killed by a signal before their first paint

    def line(self) -> str:
        """One line for people."""
        paint = ", ".join(f"{ms:.0f}" for ms in self.first_paint_ms)
        content = ", ".join(f"{ms:.0f}" for ms in self.content_ms)
        line = (
            f"start-up to first paint: median {statistics.median(self.first_paint_ms):.0f} ms ({paint}); "
            f"to the Overview's numbers: median {statistics.median(self.content_ms):.0f} ms ({content})"
        )
        if self.endpoint_ms:
            serving = ", ".join(f"{ms:.0f}" for ms in self.endpoint_ms)
            line += f"; to the endpoint serving: median {statistics.median(self.endpoint_ms):.0f} ms ({serving})"
        if self.crashes:
            line += f"; {len(self.crashes)} start(s) killed by a signal before painting and run again"
        return line


def startup_benchmark(
    vault_dir: Path, *, runs: int = STARTUP_RUNS, child: Sequence[str] = ("-m", "bench.desktop.paint")
) -> StartupReport:
    """Launch ``python -m bench.desktop.paint`` (``child``: the interpreter's arguments) ``runs`` times on
    ``vault_dir``.

    The clock starts just before the process is launched (interpreter start and imports count) and
    stops at the main window's first paint event, as the child reports it.

    A child killed by a signal before it painted anything is run once more, and the report says so
    (``crashes``, with the start of its stderr, where Python names the fatal error): one such death of
    PySide6's import was seen on a machine loaded far beyond its cores.  Any other failure, or a second
    death in a row, ends the benchmark with the child's stderr.
    """
    paints: list[float] = []
    contents: list[float] = []
    serving: list[float] = []
    crashes: list[str] = []
    env = _child_env()
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    for _ in range(runs):
        for attempt in (1, 2):
            with tempfile.TemporaryDirectory(prefix="cairn-startup-") as state:
                command = [sys.executable, *child, "--vault", str(vault_dir)]
                env[STATE_ENV] = state  # a first start: no saved geometry or view
                launched = time.time()
                done = subprocess.run(
                    command, env=env, capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S, check=False
                )
            marks = dict(
                line.split(" ", 1)
                for line in done.stdout.splitlines()
                if line.startswith((PAINT_MARK, CONTENT_MARK, ENDPOINT_MARK))
            )
            if done.returncode < 0 and not marks and attempt == 1:
                crashes.append(f"signal {-done.returncode}: {done.stderr[:600]}")
                sys.stderr.write(f"a start-up run was killed by signal {-done.returncode} before painting; once more\n")
                continue
            if done.returncode != 0 or PAINT_MARK not in marks:
                stderr = done.stderr if len(done.stderr) <= 3000 else f"{done.stderr[:1500]}\n…\n{done.stderr[-1500:]}"
                raise RuntimeError(f"the start-up run failed ({done.returncode}): {stderr}")
            break
        paints.append((float(marks[PAINT_MARK]) - launched) * 1000)
        contents.append((float(marks.get(CONTENT_MARK, marks[PAINT_MARK])) - launched) * 1000)
        if ENDPOINT_MARK in marks:
            serving.append((float(marks[ENDPOINT_MARK]) - launched) * 1000)
    report = StartupReport(paints, contents, serving if len(serving) == runs else [], crashes)
    sys.stdout.write(f"{vault_dir}: {report.line()}\n")
    return report


@contextmanager
def _served(vault: Vault) -> Iterator[EndpointInfo]:
    """The vault's endpoint on a free loopback port, serving before the window is built."""
    from engine.api.app import create_app
    from engine.api.server import EndpointServer

    token = vault.endpoint_token()
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    try:
        yield EndpointInfo(server.address, token)
    finally:
        server.stop()


# -- command line ------------------------------------------------------------------------------
def machine() -> str:
    """One line describing this machine (recorded with every figure)."""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def _load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not on this platform
        return []


def _facts_in(vault_dir: Path) -> int:
    with Vault.open(vault_dir, start_workers=False) as vault:
        return vault.counts().facts


def _write_json(path: Path | None, payload: dict[str, object]) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        sys.stdout.write(f"results written to {path}\n")


def _open_window(vault: Vault, runner: OpRunner, endpoint: EndpointInfo) -> MainWindow:
    window = MainWindow(runner, endpoint=endpoint)
    window.resize(1120, 780)
    return window


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.desktop.measure [--ingest-stall | --startup] --vault PATH [--json FILE]``: see the module
    docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--vault", type=Path, required=True, help="the vault folder")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--ingest-stall", action="store_true", help="GUI stalls while events arrive")
    mode.add_argument("--startup", action="store_true", help="process start to the first paint")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="scroll steps")
    parser.add_argument("--rate", type=float, default=DEFAULT_RATE, help="events a second")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, help="how long to send")
    parser.add_argument("--clients", type=int, default=SENDER_CLIENTS, help="sender connections")
    parser.add_argument("--runs", type=int, default=STARTUP_RUNS, help="start-up runs")
    parser.add_argument("--json", type=Path, default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    payload: dict[str, object] = {
        "command": " ".join(["python -m bench.desktop.measure", *(argv if argv is not None else sys.argv[1:])]),
        "machine": machine(),
        "load_average_at_start": _load_average(),
        "vault": str(args.vault),
    }
    sys.stdout.write(f"machine: {payload['machine']}; load average {payload['load_average_at_start']}\n")
    if args.startup:
        payload["facts"] = _facts_in(args.vault)
        report = startup_benchmark(args.vault, runs=args.runs)
        payload["startup"] = {
            "first_paint_ms": [round(ms) for ms in report.first_paint_ms],
            "first_paint_median_ms": round(statistics.median(report.first_paint_ms)),
            "overview_numbers_ms": [round(ms) for ms in report.content_ms],
            "overview_numbers_median_ms": round(statistics.median(report.content_ms)),
            "endpoint_serving_ms": [round(ms) for ms in report.endpoint_ms],
            "endpoint_serving_median_ms": round(statistics.median(report.endpoint_ms)) if report.endpoint_ms else None,
        }
        _write_json(args.json, payload)
        return 0
    app = QApplication.instance() or QApplication(sys.argv[:1])
    collector = MainThreadGarbageCollector()  # as in the app: collections on the GUI thread
    collector.start()
    vault = Vault.open(args.vault, start_workers=args.ingest_stall)
    runner = OpRunner(vault)
    try:
        payload["facts"] = vault.counts().facts
        if args.ingest_stall:
            with _served(vault) as endpoint:
                window = _open_window(vault, runner, endpoint)
                stall = ingest_stall_benchmark(
                    window,
                    endpoint.address or "",
                    endpoint.token,
                    rate=args.rate,
                    seconds=args.seconds,
                    clients=args.clients,
                )
                payload["ingest_stall"] = {
                    "longest_stall_ms": stall.longest_ms,
                    "p99_stall_ms": stall.p99_ms,
                    "ticks": stall.ticks,
                    "offered_per_s": stall.offered_rate,
                    "acknowledged_per_s": round(stall.rate, 1),
                    "sent": stall.sent,
                    "acknowledged": stall.acknowledged,
                    "seconds": round(stall.seconds, 2),
                    "ack_p50_ms": stall.ack_p50_ms,
                    "ack_p99_ms": stall.ack_p99_ms,
                    "sender_max_slip_ms": stall.max_slip_ms,
                    "facts_shown_before": stall.facts_before,
                    "facts_shown_after": stall.facts_shown,
                }
                window.close()
                window.deleteLater()
        else:
            window = _open_window(vault, runner, EndpointInfo(None, "", "not started by the bench"))
            scroll = scroll_benchmark(window, vault, steps=args.steps)
            memories = window.view("memories")
            assert isinstance(memories, MemoriesView)
            payload["scroll"] = {
                "longest_stall_ms": scroll,
                "steps": args.steps,
                "rows": memories.model.rowCount(),
                "pages_fetched": len(memories.model.requested_pages),
            }
            window.close()
            window.deleteLater()
    finally:
        runner.shutdown()
        vault.close()
        collector.stop()
    assert app is not None
    _write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
