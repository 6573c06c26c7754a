"""Start-up and shut-down of the desktop app: display, QApplication, vault, endpoint, window, tray.

The composition itself is :func:`build_main_window`, used by :func:`run_gui` and by the tests, so
what the tests check is what people run.  Shut-down happens in one order: the window closes and its
runner finishes the operations in flight, the endpoint stops taking requests, then the vault drains
its writer and releases its lock.

Where the desktop has a system tray, a tray icon (:func:`install_tray`) keeps the app running when
the window is closed: the vault keeps learning and the endpoint keeps serving local chat clients.
"Quit Cairn" in the tray menu ends it.  Without a tray, closing the window quits, as before.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QSystemTrayIcon

from engine import Vault
from engine.errors import EnvironmentProblem, VaultError
from ui.context import EndpointInfo
from ui.garbage import MainThreadGarbageCollector
from ui.main_window import MainWindow
from ui.ops import BugReporter, OpRunner
from ui.theme import fixed_icon

log = logging.getLogger(__name__)

NO_DISPLAY_MESSAGE = (
    "No display found. Run `cairn serve` for the headless vault and endpoint, or set QT_QPA_PLATFORM=offscreen."
)
APP_NAME = "Cairn"
SIGNAL_POLL_MS = 200


def has_display(env: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """False on Linux when Qt would find no display and abort the process instead of raising."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return True
    return any(env.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def build_main_window(
    vault: Vault,
    *,
    endpoint_address: str | None,
    token: str,
    endpoint_problem: str = "",
    endpoint_fix: str = "",
    report_bug: BugReporter | None = None,
) -> tuple[MainWindow, OpRunner]:
    """The main window wired to ``vault`` through a new :class:`OpRunner`.

    Closing the window shuts the runner down (joining its threads); the caller still closes the
    vault.
    """
    runner = OpRunner(vault, report_bug=report_bug)
    endpoint = EndpointInfo(address=endpoint_address, token=token, problem=endpoint_problem, fix=endpoint_fix)
    window = MainWindow(runner, endpoint=endpoint, title=f"{APP_NAME} — {vault.paths.root}")
    window.closed.connect(runner.shutdown)
    return window, runner


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


def run_gui(vault_dir: Path | None) -> int:
    """Run the desktop app on the vault in ``vault_dir`` (None: the default); return its status.

    0 after a normal quit, 1 when the vault cannot be opened, 2 when there is no display.
    """
    if not has_display():
        print(NO_DISPLAY_MESSAGE, file=sys.stderr)
        return 2
    from app.runtime import open_vault

    app = _application()
    collector = MainThreadGarbageCollector()
    collector.start()
    try:
        with _quit_on_signals(app) as stop_requested:
            try:
                vault = open_vault(vault_dir)
            except VaultError as exc:
                _show_fatal(exc)
                return 1
            try:
                _run_window(app, vault, stop_requested)
            finally:
                vault.close()
    finally:
        collector.stop()
    log.info("the desktop app stopped cleanly")
    return 0


def _run_window(app: QApplication, vault: Vault, stop_requested: Callable[[], bool]) -> None:
    """Serve the endpoint and show the window until it closes (or a signal asks to stop)."""
    endpoint, info = _start_endpoint(vault)
    window: MainWindow | None = None
    runner: OpRunner | None = None
    tray: TrayIcon | None = None
    try:
        window, runner = build_main_window(
            vault,
            endpoint_address=info.address,
            token=info.token,
            endpoint_problem=info.problem,
            endpoint_fix=info.fix,
        )
        window.closed.connect(app.quit)
        tray = install_tray(window, app)
        window.show()
        log.info("main window shown")
        if not stop_requested():  # a signal before the loop starts: app.quit() alone would be lost
            with _quit_on_window_close(app):
                app.exec()
    finally:
        if tray is not None:
            tray.hide()
            tray.deleteLater()
        if window is not None:
            window.set_close_to_tray(False)
            if window.isVisible():
                window.close()  # a quit by signal still saves the geometry and stops the runner
            window.deleteLater()  # freed by the collector's last pass, on the GUI thread
        if endpoint is not None:
            endpoint.stop()
        if runner is not None:
            runner.shutdown()


def _application() -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setWindowIcon(fixed_icon("cairn"))
    return app


def _start_endpoint(vault: Vault) -> tuple[Any, EndpointInfo]:
    """Start the endpoint if the settings want it; on failure the app runs on without it."""
    from app.runtime import make_endpoint

    token = vault.endpoint_token()
    if not vault.settings.endpoint.enabled:
        return None, EndpointInfo(
            None,
            token,
            "Turned off in settings.",
            "Set endpoint.enabled = true in settings.toml and restart.",
        )
    try:
        server = make_endpoint(vault)
    except EnvironmentProblem as exc:
        log.warning("endpoint not started: %s", exc.message)
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
    try:
        server.start()
    except EnvironmentProblem as exc:
        log.warning("endpoint not started: %s", exc.message)
        server.stop()  # releases the sockets it had bound
        return None, EndpointInfo(None, token, exc.message, exc.fix)
    log.info("endpoint serving at %s", server.address)
    return server, EndpointInfo(server.address, token)


def _show_fatal(error: VaultError) -> None:
    box = QMessageBox(QMessageBox.Icon.Critical, f"{APP_NAME} — the vault could not be opened", error.message)
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
