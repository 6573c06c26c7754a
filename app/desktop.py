"""The Qt half of the desktop app: QApplication, the window and its endpoint, the tray, signals.

:func:`app.gui.run_gui` imports this module only after the vault has begun opening on its own
thread, so that loading Qt and the interface overlaps the vault's integrity check (see
:mod:`app.gui`).  :class:`StartingWindow` builds and shows the window while the vault opens;
:class:`BackgroundEndpoint` starts the endpoint on a worker thread once the vault is open and the
window has been painted, and hands its address (or its problem and fix) to the window.
"""

from __future__ import annotations

import gc
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QSystemTrayIcon, QWidget

from app.composition import APP_NAME, VaultOpening, build_main_window
from app.runtime import make_endpoint
from app.single_instance import ACK, SHOW, socket_path
from engine.doctor import PortHolder, probe_port
from engine.errors import EnvironmentProblem, VaultError
from ui.context import EndpointInfo
from ui.first_paint import AfterFirstPaint
from ui.garbage import MainThreadGarbageCollector
from ui.main_window import MainWindow
from ui.ops import BugReporter
from ui.theme import fixed_icon

if TYPE_CHECKING:
    from engine import Vault
    from engine.api.server import EndpointServer

log = logging.getLogger(__name__)

SIGNAL_POLL_MS = 200
START_ANYWAY_MS = 3000
"""What waits for the window's first paint (the endpoint, the collector taking over) goes ahead after
this long even if the window has not been painted (a window that starts hidden, say): local apps
must not wait on the screen."""
PROBE_TIMEOUT_S = 5.0
"""How long whoever answers on the endpoint's port is waited for, to tell this vault's Cairn from another."""
STOP_WAIT_S = 30.0
"""How long shut-down waits for an endpoint that is still starting (loading, then binding and
serving: :meth:`EndpointServer.start` gives up after 10 s)."""

ServerFactory = Callable[["Vault", "int | None"], "EndpointServer"]
"""Builds the (not yet serving) endpoint of a vault on a port (None: the configured one)."""


# -- the endpoint ----------------------------------------------------------------------------------
class BackgroundEndpoint(QObject):
    """The vault's endpoint, loaded and started on a worker thread once the window has been painted.

    Loading the endpoint's web stack takes longer than opening the vault and building the window
    together, and nothing on the screen needs it, so the window is not kept waiting for it: the
    owner calls :meth:`start` once the window has been painted (:class:`StartingWindow`).
    :attr:`info` is what is known (starting, serving, or not and why); :attr:`ready` carries the
    outcome of the start, on the GUI thread.  :meth:`stop` stops it whatever its stage: an endpoint
    still starting is stopped as soon as it is up, never left serving.

    Create it, connect to it and call :meth:`stop` on the GUI thread.
    """

    ready = Signal(object)
    """The :class:`EndpointInfo` once the start has ended: the address, or the problem and fix."""

    # Emitted by the worker thread, queued to this object, which lives on the GUI thread.
    _outcome = Signal(object)

    def __init__(
        self,
        vault: Vault,
        port: int | None = None,
        *,
        make_server: ServerFactory = make_endpoint,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._vault = vault
        self._port = port
        self._make_server = make_server
        self._lock = threading.Lock()
        self._server: EndpointServer | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False
        token = vault.endpoint_token()
        if vault.settings.endpoint.enabled:
            self.info = EndpointInfo(None, token, starting=True)
        else:
            self.info = EndpointInfo(
                None,
                token,
                "Turned off in settings.",
                "Set endpoint.enabled = true in settings.toml and restart.",
            )
        self._outcome.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    @property
    def server(self) -> EndpointServer | None:
        """The serving endpoint (None while starting, after a failed start, and after :meth:`stop`)."""
        with self._lock:
            return self._server

    @property
    def started(self) -> bool:
        """True once the start has begun (it may still be under way, or over)."""
        return self._thread is not None

    def start(self) -> None:
        """Begin loading and starting the endpoint on a worker thread (once; never after :meth:`stop`)."""
        if self._thread is not None or self._stopped or not self.info.starting:
            return
        self._thread = threading.Thread(target=self._run, name="endpoint-start", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        server, info = serve_endpoint(self._vault, self._port, self._make_server, self.info.token)
        with self._lock:
            abandoned = self._stopped
            if not abandoned:
                self._server = server
        if abandoned:
            # stop() gave up waiting for this start: what it started is stopped here instead.
            if server is not None:
                server.stop()
            return
        self._outcome.emit(info)

    def _deliver(self, info: EndpointInfo) -> None:
        if self._stopped:
            return
        self.info = info
        self.ready.emit(info)

    def stop(self, timeout: float = STOP_WAIT_S) -> None:
        """Stop serving; an endpoint still starting is waited for (up to ``timeout`` s) and then stopped."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._lock:
            self._stopped = True
            server, self._server = self._server, None
        if thread is not None and thread.is_alive():
            log.warning("the endpoint was still starting at shut-down; it is stopped once it is up")
        if server is not None:
            server.stop()


def serve_endpoint(
    vault: Vault, port: int | None, make_server: ServerFactory, token: str
) -> tuple[EndpointServer | None, EndpointInfo]:
    """Build and start the endpoint (on the calling thread); on failure the app runs on without it.

    Returns the serving server, or None and what to tell the person.  Runs on a worker thread, so
    every failure becomes an :class:`EndpointInfo` rather than an exception nobody would see.
    """
    try:
        server = make_server(vault, port)
    except EnvironmentProblem as exc:
        log.warning("endpoint not started: %s", exc.message)
        chosen = vault.settings.endpoint.port if port is None else port
        holder = probe_port(chosen, timeout=PROBE_TIMEOUT_S)
        if holder.in_use and not holder.serves(vault.vault_id()):
            return None, _held(chosen, holder, token)
        return None, EndpointInfo(None, token, exc.message, exc.fix)
    except ImportError as exc:
        # A build without the endpoint's web stack still makes a usable desktop app.
        log.error("endpoint unavailable: %s", exc)
        return None, EndpointInfo(
            None,
            token,
            f"The endpoint could not be loaded ({exc}).",
            "Reinstall Cairn: make run (or pip install -e .).",
        )
    except Exception as exc:
        log.exception("the endpoint could not be built")
        return None, EndpointInfo(
            None, token, f"The endpoint could not start ({exc}).", "See the log in the vault's logs/ folder."
        )
    try:
        server.start()
    except Exception as exc:
        if isinstance(exc, EnvironmentProblem):
            log.warning("endpoint not started: %s", exc.message)
            info = EndpointInfo(None, token, exc.message, exc.fix)
        else:
            log.exception("the endpoint could not start")
            info = EndpointInfo(
                None, token, f"The endpoint could not start ({exc}).", "See the log in the vault's logs/ folder."
            )
        server.stop()  # releases the sockets it had bound
        return None, info
    # Binding is not proof: where the system lets two programs share a port (SO_REUSEADDR on Windows, a wildcard
    # listener on macOS), clients may reach someone else.  Whoever answers must be this vault's Cairn.  No answer
    # in time (a busy start) is no proof of the contrary: the endpoint is kept.
    holder = probe_port(server.port, timeout=PROBE_TIMEOUT_S)
    if holder.held_by_another(vault.vault_id()):
        log.warning("the endpoint's port %s answers for someone else; stopping this vault's endpoint", server.port)
        server.stop()
        return None, _held(server.port, holder, token)
    log.info("endpoint serving at %s", server.address)
    return server, EndpointInfo(server.address, token)


def _held(port: int, holder: PortHolder, token: str) -> EndpointInfo:
    """What to tell the person when another vault's Cairn, or another program, holds the endpoint's port."""
    fix = "choose another port: endpoint.port in Settings (or CAIRN_ENDPOINT_PORT), then restart Cairn."
    if holder.cairn:
        which = f" (vault id {holder.vault_id})" if holder.vault_id else ""
        return EndpointInfo(
            None,
            token,
            f"Port {port} is held by another Cairn, serving a different vault{which}; this vault's endpoint is not "
            "serving, and clients on that port reach the other vault.",
            f"Quit the other Cairn, or {fix}",
            held_by="another Cairn vault",
        )
    return EndpointInfo(
        None,
        token,
        f"Port {port} is held by another program; this vault's endpoint is not serving.",
        f"Stop that program, or {fix}",
        held_by="another program",
    )


class StartingWindow(QObject):
    """The main window built and shown while the vault is still opening; then given the vault and its endpoint.

    The window's first queries wait for the vault on the runner's threads, so it can be painted as
    soon as it is built: the vault's integrity check, and the rest of its opening, happen meanwhile.
    Once the vault is open (:attr:`vault_opened`), the window shows its endpoint, which starts once
    the window has been painted; ``collector`` takes over then too (:func:`collect_after_first_paint`;
    None leaves garbage collection as it is).
    Should the vault fail to open, :attr:`vault_failed` carries the error and the runner is stopped.
    :meth:`stop` stops everything and closes the vault, whatever the stage.

    Create it, connect to it and call :meth:`stop` on the GUI thread.
    """

    vault_opened = Signal()
    vault_failed = Signal(object)
    """The exception opening the vault raised (a :class:`VaultError`: locked, damaged…, unless a bug)."""

    # Emitted from the opening thread (or from here), queued to this object on the GUI thread.
    _opening_done = Signal()

    def __init__(
        self,
        opening: VaultOpening,
        collector: MainThreadGarbageCollector | None,
        *,
        port: int | None = None,
        report_bug: BugReporter | None = None,
    ) -> None:
        super().__init__()
        self._opening = opening
        self._port = port
        self._painted = False
        self._stopped = False
        self.vault: Vault | None = None
        self.endpoint: BackgroundEndpoint | None = None
        self.error: BaseException | None = None
        self.window, self.runner = build_main_window(
            opening, endpoint_address=None, token="", endpoint_starting=True, report_bug=report_bug
        )
        AfterFirstPaint(self.window, self._on_painted, at_the_latest_ms=START_ANYWAY_MS)
        if collector is not None:
            collect_after_first_paint(self.window, collector)
        self._opening_done.connect(self._on_opening_done, Qt.ConnectionType.QueuedConnection)
        opening.future.add_done_callback(lambda _future: self._opening_done.emit())

    @property
    def root(self) -> Path:
        """The folder of the vault being opened."""
        return self._opening.root

    def _on_painted(self) -> None:
        self._painted = True
        if self.endpoint is not None:
            self.endpoint.start()

    def _on_opening_done(self) -> None:
        if self._stopped:
            return
        try:
            vault = self._opening.result()
        except BaseException as exc:
            self.error = exc
            self.runner.shutdown()  # the queries waiting for the vault end; nothing more is asked
            self.vault_failed.emit(exc)
            return
        self.vault = vault
        self.endpoint = BackgroundEndpoint(vault, self._port)
        self.window.set_endpoint(self.endpoint.info)
        self.endpoint.ready.connect(self.window.set_endpoint)
        if self._painted:
            self.endpoint.start()
        self.vault_opened.emit()

    def stop(self) -> None:
        """Stop the endpoint and the runner, and close the vault (waiting for it if it is still opening)."""
        self._stopped = True
        if self.endpoint is not None:
            self.endpoint.stop()
        self.runner.shutdown()
        if self.vault is not None:
            self.vault.close()
        else:
            self._opening.abandon()


def application() -> QApplication:
    """The QApplication (created on first use) with Cairn's names and icon."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setWindowIcon(fixed_icon("cairn"))
    return app


def collect_after_first_paint(window: QWidget, collector: MainThreadGarbageCollector) -> None:
    """Once ``window`` has been painted, set aside what start-up made and let ``collector`` take over.

    Until then automatic collection is off (:func:`app.gui.collection_paused`), so no collection
    traverses the freshly loaded code and the new window, objects that live as long as the process
    and that ``gc.freeze`` keeps every later collection, on the GUI thread, from traversing again;
    nor does the collector's first pass hold up the first paint.
    """

    def take_over() -> None:
        gc.freeze()
        collector.start()

    AfterFirstPaint(window, take_over, at_the_latest_ms=START_ANYWAY_MS)


def run_desktop(opening: VaultOpening) -> int:
    """Run the app on the vault ``opening`` yields, from the QApplication to the last window's close.

    0 after a normal quit, 1 when the vault cannot be opened.
    """
    app = application()
    collector = MainThreadGarbageCollector()  # started once the window has been painted
    try:
        with _quit_on_signals(app) as stop_requested:
            starting = StartingWindow(opening, collector)
            _run_window(app, starting, stop_requested)
    finally:
        collector.stop()
    if starting.error is not None:
        if not isinstance(starting.error, VaultError):
            raise starting.error
        return 1
    log.info("the desktop app stopped cleanly")
    return 0


def _run_window(app: QApplication, starting: StartingWindow, stop_requested: Callable[[], bool]) -> None:
    """Show the window until it closes, a signal asks to stop, or the vault cannot be opened; then stop it all."""
    window = starting.window
    tray: TrayIcon | None = None

    def on_failed(error: BaseException) -> None:
        if isinstance(error, VaultError):
            # on stderr too: started from a terminal (a mistyped --vault, say), the answer belongs there as well
            print(f"error: {error.message}" + (f"\nfix: {error.fix}" if error.fix else ""), file=sys.stderr)
            _show_fatal(error, window)
        window.set_close_to_tray(False)
        window.close()
        app.quit()

    listener = InstanceListener(starting.root, app)  # a later launch on this vault brings this window forward
    listener.show_requested.connect(lambda: bring_to_front(window))
    try:
        starting.vault_failed.connect(on_failed)
        window.closed.connect(app.quit)
        tray = install_tray(window, app)
        window.show()
        log.info("main window shown")
        if not stop_requested():  # a signal before the loop starts: app.quit() alone would be lost
            with _quit_on_window_close(app):
                app.exec()
    finally:
        listener.close()
        if tray is not None:
            tray.hide()
            tray.deleteLater()
        window.set_close_to_tray(False)
        if window.isVisible():
            window.close()  # a quit by signal still saves the geometry and stops the runner
        window.deleteLater()  # freed by the collector's last pass, on the GUI thread
        starting.stop()


class InstanceListener(QObject):
    """Listens for later launches on the same vault; ``show_requested`` when one asks (GUI thread)."""

    show_requested = Signal()

    def __init__(self, root: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = socket_path(root)
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_connection)
        self._open: set[QLocalSocket] = set()
        self.listening = self._listen()

    def _listen(self) -> bool:
        if self._server.listen(str(self.path)):
            return True
        QLocalServer.removeServer(str(self.path))  # a file a killed Cairn left behind
        if self._server.listen(str(self.path)):
            return True
        log.warning("cannot listen for later launches: %s", self._server.errorString())
        return False

    def close(self) -> None:
        """Stop listening (the socket file goes)."""
        self._server.close()

    def _on_connection(self) -> None:
        """Take each launch's socket; it is answered when its line arrives (never by blocking this thread: the
        launch may need this very process to run before it writes)."""
        while self._server.hasPendingConnections():
            connection = self._server.nextPendingConnection()
            if connection is None:
                return
            self._open.add(connection)  # held here until dropped, and dropped once
            connection.readyRead.connect(self._on_ready)
            connection.disconnected.connect(self._on_gone)
            if connection.canReadLine():
                self._answer(connection)

    def _on_ready(self) -> None:
        sender = self.sender()
        if isinstance(sender, QLocalSocket) and sender.canReadLine():
            self._answer(sender)

    def _on_gone(self) -> None:
        sender = self.sender()
        if isinstance(sender, QLocalSocket):
            self._drop(sender)

    def _answer(self, connection: QLocalSocket) -> None:
        if connection not in self._open:
            return
        if bytes(connection.readLine(64).data()).startswith(SHOW.strip()):
            self.show_requested.emit()
            connection.write(ACK)
            connection.flush()  # out to the socket now: three bytes do not wait for the event loop
        self._drop(connection)

    def _drop(self, connection: QLocalSocket) -> None:
        """Stop hearing from the socket before it is let go, so no signal of it reaches Python once deleted."""
        if connection not in self._open:
            return
        self._open.discard(connection)
        connection.readyRead.disconnect(self._on_ready)
        connection.disconnected.disconnect(self._on_gone)
        connection.disconnectFromServer()  # after what was written has gone out
        connection.deleteLater()


def bring_to_front(window: QWidget) -> None:
    """Show ``window`` (from the tray or minimised) and raise it above the others."""
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()


def _show_fatal(error: VaultError, parent: QWidget | None = None) -> None:
    box = QMessageBox(
        QMessageBox.Icon.Critical, f"{APP_NAME} — the vault could not be opened", error.message, parent=parent
    )
    if error.fix:
        box.setInformativeText(f"Fix: {error.fix}")
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.exec()


@contextmanager
def _quit_on_window_close(app: QApplication) -> Iterator[None]:
    """Quit when the main window closes, not when the last window (a bug report, say) does."""
    before = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)
    try:
        yield
    finally:
        app.setQuitOnLastWindowClosed(before)


@contextmanager
def _quit_on_signals(app: QApplication) -> Iterator[Callable[[], bool]]:
    """Ctrl-C and SIGTERM quit the normal way, so the vault is closed and its lock released.

    Yields a function telling whether a signal has asked to stop.  Python runs a signal handler
    between any two bytecodes of the main thread, which in a Qt app can be in the middle of a paint
    (a model's ``rowCount``, say), so the handler only notes the request; a timer acts on it from
    the event loop, and also hands Python control now and then while the loop runs in C++.
    """
    requested: list[int] = []

    def handler(signum: int, _frame: Any) -> None:
        requested.append(signum)

    def act_on_request() -> None:
        if requested:
            app.quit()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    poll = QTimer()
    poll.timeout.connect(act_on_request)
    poll.start(SIGNAL_POLL_MS)
    try:
        yield lambda: bool(requested)
    finally:
        poll.stop()
        for sig, old in previous.items():
            signal.signal(sig, old)


# -- the tray --------------------------------------------------------------------------------------
class TrayIcon(QSystemTrayIcon):
    """Cairn's tray icon: "Show Cairn" and "Quit Cairn"; a click shows the window."""

    def __init__(self, window: MainWindow, parent: QObject | None = None) -> None:
        super().__init__(fixed_icon("cairn"), parent)
        self._window = window
        self._told = False
        self.menu = QMenu()
        self.show_action: QAction = self.menu.addAction("Show Cairn")
        self.show_action.triggered.connect(self.show_window)
        self.menu.addSeparator()
        self.quit_action: QAction = self.menu.addAction("Quit Cairn")
        self.quit_action.triggered.connect(self.quit)
        self.setContextMenu(self.menu)
        self.setToolTip(f"{APP_NAME}: the vault and its endpoint are running")
        self.activated.connect(self._on_activated)
        window.hidden_to_tray.connect(self._on_hidden)

    def show_window(self) -> None:
        """Bring the window back."""
        self._window.show()
        self._window.raise_()
        self._window.activateWindow()

    def quit(self) -> None:
        """Close the window for good, which quits the app."""
        self._window.set_close_to_tray(False)
        self._window.close()
        self.hide()

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.show_window()

    def _on_hidden(self) -> None:
        if not self._told and self.supportsMessages():
            self._told = True  # once per run is a hint; every time would be nagging
            self.showMessage(
                APP_NAME,
                "Cairn is still running, and local apps can still reach the vault. Quit from this icon's menu.",
                QSystemTrayIcon.MessageIcon.Information,
                6000,
            )


def install_tray(window: MainWindow, parent: QObject | None = None) -> TrayIcon | None:
    """Show the tray icon and make closing ``window`` hide it; None when there is no tray."""
    if not QSystemTrayIcon.isSystemTrayAvailable():
        return None
    tray = TrayIcon(window, parent)
    window.set_close_to_tray(True)
    tray.show()
    log.info("tray icon shown: closing the window keeps Cairn running")
    return tray
