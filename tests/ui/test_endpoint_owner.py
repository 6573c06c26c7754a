"""The desktop app's endpoint port held by someone else: another vault's Cairn, or a program that is no Cairn.

Whatever answers on the port must be this vault's Cairn (the vault id in its health answer) before the status bar or
the Overview call the endpoint serving; otherwise they say who holds the port.  Real vaults, real HTTP on loopback,
real widgets (offscreen).
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from pytestqt.qtbot import QtBot

from app.composition import build_main_window
from app.desktop import BackgroundEndpoint, serve_endpoint
from app.runtime import make_endpoint
from engine import Settings, Vault
from engine.api.server import EndpointServer
from ui.main_window import MainWindow
from ui.views.overview import OverviewView

pytestmark = pytest.mark.gui


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _open(folder: Path, settings: Settings, port: int) -> Vault:
    return Vault.open(folder, settings=settings.updated({"endpoint.port": port}))


def _refused(port: int) -> bool:
    try:
        httpx.get(f"http://127.0.0.1:{port}/v6/health", timeout=2)
    except httpx.ConnectError:
        return True
    except httpx.HTTPError:
        return False
    return False


@pytest.fixture
def port() -> int:
    return _free_port()


@pytest.fixture
def other_cairn(tmp_path: Path, offline_settings: Settings, port: int) -> Iterator[Vault]:
    """Another vault, served on ``port`` (as a second Cairn would be)."""
    other = _open(tmp_path / "other", offline_settings, port)
    server = make_endpoint(other, port)
    server.start()
    try:
        yield other
    finally:
        server.stop()
        other.close()


@pytest.fixture
def other_program(port: int) -> Iterator[None]:
    """A web server that is no Cairn, on ``port``."""

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"hello from another program"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def mine(tmp_path: Path, offline_settings: Settings, port: int) -> Iterator[Vault]:
    """This app's vault, configured for ``port``."""
    vault = _open(tmp_path / "mine", offline_settings, port)
    try:
        yield vault
    finally:
        vault.close()


@pytest.fixture
def window_with_endpoint(qtbot: QtBot) -> Iterator[Callable[[Vault], tuple[MainWindow, BackgroundEndpoint]]]:
    """The window and its background endpoint on the vault's configured port, wired as the app wires them."""
    made: list[tuple[MainWindow, BackgroundEndpoint, object]] = []

    def build(vault: Vault) -> tuple[MainWindow, BackgroundEndpoint]:
        endpoint = BackgroundEndpoint(vault, None)
        window, runner = build_main_window(
            vault, endpoint_address=None, token=endpoint.info.token, endpoint_starting=True
        )
        qtbot.addWidget(window)
        endpoint.ready.connect(window.set_endpoint)
        made.append((window, endpoint, runner))
        return window, endpoint

    yield build
    for window, endpoint, runner in made:
        window.close()
        endpoint.stop()
        runner.shutdown()  # type: ignore[attr-defined]


def _overview(window: MainWindow) -> OverviewView:
    view = window.view("overview")
    assert isinstance(view, OverviewView)
    return view


def _endpoint_finding(qtbot: QtBot, window: MainWindow) -> tuple[str, str]:
    """The Overview's endpoint health check as shown: its status word and its detail."""
    window.show()
    view = _overview(window)
    qtbot.waitUntil(lambda: view.findings.rowCount() > 0, timeout=60_000)
    model = view.findings
    [row] = [r for r in range(model.rowCount()) if model.finding(r).check == "endpoint"]
    return str(model.index(row, 1).data()), str(model.index(row, 2).data())


def test_a_port_held_by_another_vaults_cairn_is_reported_not_ok(
    qtbot: QtBot,
    other_cairn: Vault,
    mine: Vault,
    port: int,
    window_with_endpoint: Callable[[Vault], tuple[MainWindow, BackgroundEndpoint]],
) -> None:
    window, endpoint = window_with_endpoint(mine)
    endpoint.start()
    qtbot.waitUntil(lambda: not window.endpoint.info.starting, timeout=60_000)
    assert endpoint.server is None
    assert window.endpoint_status.text() == "Endpoint port held by another Cairn vault"
    assert f"Port {port} is held by another Cairn, serving a different vault" in window.endpoint_status.toolTip()
    panel = _overview(window).endpoint_panel
    assert f"Port {port} is held by another Cairn" in panel.address_label.text()
    status, detail = _endpoint_finding(qtbot, window)
    assert status != "OK", detail
    assert f"port {port} is held by another Cairn" in detail and other_cairn.vault_id() in detail
    # the other vault's Cairn is untouched: it still answers for its own vault
    health = httpx.get(f"http://127.0.0.1:{port}/v6/health", timeout=5).json()
    assert health["vault_id"] == other_cairn.vault_id() != mine.vault_id()


def test_a_port_held_by_another_program_is_reported_not_ok(
    qtbot: QtBot,
    other_program: None,
    mine: Vault,
    port: int,
    window_with_endpoint: Callable[[Vault], tuple[MainWindow, BackgroundEndpoint]],
) -> None:
    window, endpoint = window_with_endpoint(mine)
    endpoint.start()
    qtbot.waitUntil(lambda: not window.endpoint.info.starting, timeout=60_000)
    assert endpoint.server is None
    assert window.endpoint_status.text() == "Endpoint port held by another program"
    assert f"Port {port} is held by another program" in _overview(window).endpoint_panel.address_label.text()
    status, detail = _endpoint_finding(qtbot, window)
    assert status != "OK" and f"port {port} is used by another program" in detail, detail


def test_an_endpoint_that_answers_for_another_vault_is_stopped_and_reported(
    tmp_path: Path, offline_settings: Settings, mine: Vault
) -> None:
    """Where the system lets a second program bind a port already served (Windows' SO_REUSEADDR, a wildcard listener
    on macOS), binding succeeds and clients reach someone else: the app checks who answers.  Here the server started
    on this vault's behalf answers for another vault, which is what a client would meet on such a port."""
    other = Vault.open(tmp_path / "other", settings=offline_settings)
    built: list[EndpointServer] = []

    def misrouted(_vault: Vault, port: int | None) -> EndpointServer:
        server = make_endpoint(other, port)
        built.append(server)
        return server

    try:
        server, info = serve_endpoint(mine, 0, misrouted, mine.endpoint_token())
        assert server is None and not info.running
        assert info.held_by == "another Cairn vault"
        assert "held by another Cairn" in info.problem and other.vault_id() in info.problem
        assert info.status_text == "Endpoint port held by another Cairn vault"
        assert _refused(built[0].port), "the server that answers for another vault was left serving"
        # this vault's own server passes the same check
        own, own_info = serve_endpoint(mine, 0, make_endpoint, mine.endpoint_token())
        assert own is not None and own_info.running
        own.stop()
    finally:
        other.close()
