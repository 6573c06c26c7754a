"""run_gui end to end: no display, a locked vault, runs with and without the endpoint, SIGTERM."""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.gui import NO_DISPLAY_MESSAGE, has_display, run_gui
from engine import Vault
from ui.main_window import MainWindow
from ui.views.overview import OverviewView

pytestmark = pytest.mark.gui

HAS_ENDPOINT = importlib.util.find_spec("engine.api.app") is not None
needs_endpoint = pytest.mark.skipif(not HAS_ENDPOINT, reason="engine.api.app is not available yet")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """What run_gui reads from the environment: no model server, the hashing embedder."""
    monkeypatch.setenv("CAIRN_LLM_PROVIDER", "simple")
    monkeypatch.setenv("CAIRN_EMBEDDER_PROVIDER", "hashing")


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """run_gui sets up the app's logging; put the test process's logging back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _when_window_ready(qapp: QApplication, check: Callable[[MainWindow], None], *, loaded: bool = True) -> list[str]:
    """Once the main window shows, its overview has loaded and its endpoint has started (or failed to), run
    ``check``, then close it."""
    errors: list[str] = []

    def poll() -> None:
        windows = [w for w in qapp.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not windows:
            QTimer.singleShot(30, poll)
            return
        window = windows[0]
        view = window.view("overview")
        assert isinstance(view, OverviewView)
        if loaded and (view.count_labels["events"].text() in ("–", "") or window.endpoint.info.starting):
            QTimer.singleShot(30, poll)
            return
        try:
            check(window)
        except Exception as exc:  # reported after run_gui returns: an exception here would hang exec()
            errors.append(repr(exc))
        finally:
            window.close()

    QTimer.singleShot(30, poll)
    QTimer.singleShot(180_000, qapp.quit)  # a safety net should the window never appear (generous: CI is busy)
    return errors


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({}, "linux", False),
        ({"DISPLAY": ":0"}, "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", True),
        ({"DISPLAY": ""}, "linux", False),
        ({}, "darwin", True),
        ({}, "win32", True),
    ],
)
def test_has_display(env: dict[str, str], platform: str, expected: bool) -> None:
    assert has_display(env, platform) is expected


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is for Linux")
def test_no_display_prints_the_advice_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert run_gui(tmp_path / "vault") == 2
    assert capsys.readouterr().err.strip() == NO_DISPLAY_MESSAGE
    assert not (tmp_path / "vault").exists()  # nothing was opened


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is for Linux")
def test_cairn_without_a_display_exits_2_with_the_message(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run(
        [sys.executable, "-m", "app", "--vault", str(tmp_path / "vault")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert NO_DISPLAY_MESSAGE in result.stderr
    assert "Traceback" not in result.stderr


def test_a_locked_vault_is_explained_and_exits_1(
    vault: Vault, qapp: QApplication, offline_env: None, restore_logging: None
) -> None:
    shown: list[tuple[str, str]] = []

    def close_the_box() -> None:
        box = qapp.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(30, close_the_box)
            return
        shown.append((box.text(), box.informativeText()))
        box.close()

    QTimer.singleShot(30, close_the_box)
    assert run_gui(vault.paths.root) == 1
    assert len(shown) == 1
    text, fix = shown[0]
    assert "already open" in text and str(vault.paths.root) in text
    assert fix.startswith("Fix: ")


def test_runs_and_quits_cleanly_with_the_endpoint_turned_off(
    tmp_path: Path,
    qapp: QApplication,
    offline_env: None,
    restore_logging: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAIRN_ENDPOINT_ENABLED", "false")
    root = tmp_path / "vault"
    seen: dict[str, str] = {}

    def check(window: MainWindow) -> None:
        view = window.view("overview")
        assert isinstance(view, OverviewView)
        seen["address"] = view.endpoint_panel.address_label.text()
        seen["events"] = view.count_labels["events"].text()
        seen["status"] = window.endpoint_status.text()

    errors = _when_window_ready(qapp, check)
    assert run_gui(root) == 0
    assert errors == []
    assert seen == {
        "address": "Turned off in settings.",
        "events": "0",
        "status": "Endpoint not serving",
    }
    assert qapp.quitOnLastWindowClosed()  # the app-wide setting is put back
    with Vault.open(root, settings=None) as reopened:  # the lock was released on quit
        assert reopened.counts().events == 0


@needs_endpoint
def test_runs_with_the_endpoint_and_stops_it_on_quit(
    tmp_path: Path,
    qapp: QApplication,
    offline_env: None,
    restore_logging: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = _free_port()
    monkeypatch.setenv("CAIRN_ENDPOINT_PORT", str(port))
    seen: dict[str, object] = {}

    def check(window: MainWindow) -> None:
        view = window.view("overview")
        assert isinstance(view, OverviewView)
        seen["address"] = view.endpoint_panel.address_label.text()
        seen["health"] = httpx.get(f"http://127.0.0.1:{port}/v6/health", timeout=5).status_code

    errors = _when_window_ready(qapp, check)
    assert run_gui(tmp_path / "vault") == 0
    assert errors == []
    assert seen == {"address": f"http://127.0.0.1:{port}", "health": 200}
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/v6/health", timeout=2)


@needs_endpoint
def test_a_taken_port_is_shown_and_the_app_keeps_running(
    tmp_path: Path,
    qapp: QApplication,
    offline_env: None,
    restore_logging: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen(1)
        port = squatter.getsockname()[1]
        monkeypatch.setenv("CAIRN_ENDPOINT_PORT", str(port))
        seen: dict[str, str] = {}

        def check(window: MainWindow) -> None:
            view = window.view("overview")
            assert isinstance(view, OverviewView)
            seen["address"] = view.endpoint_panel.address_label.text()
            seen["events"] = view.count_labels["events"].text()

        errors = _when_window_ready(qapp, check)
        assert run_gui(tmp_path / "vault") == 0
    assert errors == []
    # Whether the probe of the port got through the squatter's backlog decides which of the two true
    # sentences is shown; either names the port and says the endpoint is not serving.
    assert f"Port {port}" in seen["address"]
    assert "already in use" in seen["address"] or "held by another program" in seen["address"]
    assert seen["events"] == "0"  # the rest of the app works without the endpoint


def test_sigterm_quits_the_real_app_cleanly(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    env = dict(os.environ)
    env.update(
        QT_FATAL_WARNINGS="1",  # any Qt warning on the way out aborts, and fails the test
        QT_QPA_PLATFORM="offscreen",
        CAIRN_LLM_PROVIDER="simple",
        CAIRN_EMBEDDER_PROVIDER="hashing",
        CAIRN_ENDPOINT_PORT=str(_free_port()),
        CAIRN_HOME=str(tmp_path / "home"),
    )
    if not HAS_ENDPOINT:
        env["CAIRN_ENDPOINT_ENABLED"] = "false"
    log = root / "logs" / "cairn.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "--vault", str(root)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (log.exists() and "main window shown" in log.read_text(encoding="utf-8")):
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the app did not start"
            time.sleep(0.05)
        time.sleep(0.1)  # while the first results are being painted: the handler must not break that
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert err == ""
    assert "the desktop app stopped cleanly" in log.read_text(encoding="utf-8")
