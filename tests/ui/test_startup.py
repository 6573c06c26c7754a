"""Start-up order: the vault opened on its own thread, the endpoint started after the window's first paint."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import httpx
import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app import desktop
from app.composition import VaultOpening, build_main_window
from app.desktop import BackgroundEndpoint, StartingWindow, collect_after_first_paint
from app.gui import collection_paused
from app.runtime import make_endpoint
from engine import Settings, Vault
from engine.api.server import EndpointServer
from engine.errors import EnvironmentProblem, VaultLocked
from tests.ui.conftest import ADDRESS, TOKEN
from ui.first_paint import AfterFirstPaint, FirstPaint
from ui.garbage import MainThreadGarbageCollector
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.overview import OverviewView
from ui.views.settings import SettingsView

pytestmark = pytest.mark.gui

PROBLEM = "Port 8642 on 127.0.0.1 is already in use, so the endpoint cannot start."
FIX = "Stop the other program, or choose another port."


def _refused(address: str) -> bool:
    try:
        httpx.get(f"{address}/v6/health", timeout=2)
    except httpx.ConnectError:
        return True
    except (httpx.ReadError, httpx.RemoteProtocolError, httpx.TimeoutException):
        return False  # reset while it shuts down: ask again until the port is closed
    return False


def _overview(window: MainWindow) -> OverviewView:
    view = window.view("overview")
    assert isinstance(view, OverviewView)
    return view


def _settings(qtbot: QtBot, window: MainWindow) -> SettingsView:
    view = window.view("settings")
    assert isinstance(view, SettingsView)
    view.load()  # as on its first show, without showing (and so painting) the window
    qtbot.waitUntil(lambda: view.loaded, timeout=60_000)
    return view


def _fixes(window: MainWindow) -> list[str]:
    panel = _overview(window).endpoint_panel
    return [label.text() for label in panel.findChildren(QLabel) if label.text().startswith("Fix:")]


def _starting(vault: Vault, qtbot: QtBot) -> StartingWindow:
    """The app's start-up window on a vault that is open already (the garbage collection left to the tests)."""
    starting = StartingWindow(VaultOpening(vault.paths.root, lambda: vault), None, port=0)
    qtbot.addWidget(starting.window)
    qtbot.waitUntil(lambda: starting.endpoint is not None, timeout=60_000)
    return starting


@pytest.fixture
def started(qtbot: QtBot) -> Iterator[Callable[..., tuple[MainWindow, OpRunner, BackgroundEndpoint]]]:
    """A window with a background endpoint wired as :class:`app.desktop.StartingWindow` wires it, with the
    server factory given (its start is up to the test); the endpoint and the runner stopped after the test."""
    made: list[tuple[MainWindow, OpRunner, BackgroundEndpoint]] = []

    def build(
        vault: Vault, make_server: Callable[[Vault, int | None], EndpointServer]
    ) -> tuple[MainWindow, OpRunner, BackgroundEndpoint]:
        endpoint = BackgroundEndpoint(vault, 0, make_server=make_server)
        window, runner = build_main_window(
            vault, endpoint_address=None, token=endpoint.info.token, endpoint_starting=True
        )
        qtbot.addWidget(window)
        endpoint.ready.connect(window.set_endpoint)
        made.append((window, runner, endpoint))
        return window, runner, endpoint

    yield build
    for window, runner, endpoint in made:
        window.close()
        endpoint.stop()
        runner.shutdown()


def test_the_window_shows_the_endpoint_starting_then_its_address(vault: Vault, qtbot: QtBot) -> None:
    starting = _starting(vault, qtbot)
    window, endpoint = starting.window, starting.endpoint
    assert endpoint is not None
    try:
        settings = _settings(qtbot, window)
        assert window.endpoint_status.text() == "Endpoint starting…"
        assert _overview(window).endpoint_panel.address_label.text() == "Starting…"
        assert settings.token_panel.serving_label.text() == "Starting…"
        assert _fixes(window) == []
        assert not endpoint.started  # nothing is painted yet: the endpoint waits for the window

        window.show()
        qtbot.waitUntil(lambda: endpoint.info.running, timeout=60_000)
        address = endpoint.info.address
        assert address is not None and endpoint.server is not None
        assert window.endpoint_status.text() == f"Endpoint {address}"
        assert _overview(window).endpoint_panel.address_label.text() == address
        assert settings.token_panel.serving_label.text() == address
        assert _overview(window).endpoint_panel.token == vault.endpoint_token() == endpoint.info.token
        assert httpx.get(f"{address}/v6/health", timeout=5).status_code == 200
    finally:
        window.close()
        starting.stop()
    assert endpoint.server is None
    assert _refused(address)


def test_a_window_that_is_never_painted_still_gets_its_endpoint(
    vault: Vault, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(desktop, "START_ANYWAY_MS", 50)
    starting = _starting(vault, qtbot)
    try:
        qtbot.waitUntil(lambda: starting.endpoint is not None and starting.endpoint.info.running, timeout=60_000)
        assert not starting.window.isVisible()
        assert starting.window.endpoint_status.text() == f"Endpoint {starting.endpoint.info.address}"
    finally:
        starting.window.close()
        starting.stop()


def test_closing_the_window_before_the_endpoint_is_up_stops_it(
    vault: Vault, qtbot: QtBot, started: Callable[..., tuple[MainWindow, OpRunner, BackgroundEndpoint]]
) -> None:
    gate = threading.Event()
    built: list[EndpointServer] = []

    def slow(v: Vault, port: int | None) -> EndpointServer:
        gate.wait(10)  # still loading when the window closes
        server = make_endpoint(v, port)
        built.append(server)
        return server

    window, _runner, endpoint = started(vault, slow)
    endpoint.start()
    qtbot.waitUntil(lambda: endpoint.started, timeout=60_000)
    window.close()
    threading.Timer(0.2, gate.set).start()
    endpoint.stop()  # waits for the start to end, then stops what it started
    assert len(built) == 1
    assert endpoint.server is None
    assert _refused(built[0].address)
    qtbot.wait(50)  # the start's outcome, queued meanwhile, is not shown: the app is stopping
    assert window.endpoint_status.text() == "Endpoint starting…"


def test_an_endpoint_still_starting_when_shut_down_gives_up_is_stopped_once_up(
    vault: Vault, qtbot: QtBot, started: Callable[..., tuple[MainWindow, OpRunner, BackgroundEndpoint]]
) -> None:
    gate = threading.Event()
    built: list[EndpointServer] = []

    def stuck(v: Vault, port: int | None) -> EndpointServer:
        gate.wait(10)
        server = make_endpoint(v, port)
        built.append(server)
        return server

    _window, _runner, endpoint = started(vault, stuck)
    endpoint.start()
    endpoint.stop(timeout=0.05)  # the start is still stuck: shut-down does not wait for ever
    gate.set()
    qtbot.waitUntil(lambda: bool(built) and _refused(built[0].address), timeout=60_000)
    assert endpoint.server is None


def test_an_endpoint_that_cannot_start_shows_its_problem_and_fix_everywhere(
    vault: Vault, qtbot: QtBot, started: Callable[..., tuple[MainWindow, OpRunner, BackgroundEndpoint]]
) -> None:
    def taken(_v: Vault, _port: int | None) -> EndpointServer:
        raise EnvironmentProblem(PROBLEM, fix=FIX)

    window, _runner, endpoint = started(vault, taken)
    settings = _settings(qtbot, window)
    endpoint.start()
    qtbot.waitUntil(lambda: not window.endpoint.info.starting, timeout=60_000)
    assert endpoint.server is None
    assert window.endpoint_status.text() == "Endpoint not serving"
    assert window.endpoint_status.toolTip() == PROBLEM
    assert _overview(window).endpoint_panel.address_label.text() == PROBLEM
    assert _fixes(window) == [f"Fix: {FIX}"]
    assert settings.token_panel.serving_label.text() == PROBLEM
    assert _overview(window).endpoint_panel.token == vault.endpoint_token()  # `cairn serve` uses the same token


def test_an_unexpected_failure_to_start_is_logged_and_shown(
    vault: Vault,
    qtbot: QtBot,
    started: Callable[..., tuple[MainWindow, OpRunner, BackgroundEndpoint]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(_v: Vault, _port: int | None) -> EndpointServer:
        raise RuntimeError("boom")

    window, _runner, endpoint = started(vault, broken)
    endpoint.start()
    qtbot.waitUntil(lambda: not window.endpoint.info.starting, timeout=60_000)
    assert _overview(window).endpoint_panel.address_label.text() == "The endpoint could not start (boom)."
    assert _fixes(window) == ["Fix: See the log in the vault's logs/ folder."]
    assert any(record.exc_info and "boom" in str(record.exc_info[1]) for record in caplog.records)


def test_an_endpoint_turned_off_never_starts(tmp_path: Path, offline_settings: Settings, qtbot: QtBot) -> None:
    settings = offline_settings.updated({"endpoint.enabled": False})
    off = Vault.open(tmp_path / "off", settings=settings)
    starting = _starting(off, qtbot)
    window, endpoint = starting.window, starting.endpoint
    assert endpoint is not None
    try:
        window.show()
        qtbot.waitUntil(lambda: _overview(window).count_labels["events"].text() == "0", timeout=60_000)
        endpoint.start()
        assert not endpoint.started
        assert window.endpoint_status.text() == "Endpoint not serving"
        assert _overview(window).endpoint_panel.address_label.text() == "Turned off in settings."
        assert _fixes(window) == ["Fix: Set endpoint.enabled = true in settings.toml and restart."]
    finally:
        window.close()
        starting.stop()
    assert off.closed


def test_the_vault_opens_on_its_own_thread(tmp_path: Path, offline_settings: Settings) -> None:
    threads: list[str] = []

    def open_here() -> Vault:
        threads.append(threading.current_thread().name)
        return Vault.open(tmp_path / "vault", settings=offline_settings)

    opening = VaultOpening(tmp_path / "vault", open_here)
    vault = opening.result()
    try:
        assert threads == ["vault-open"]
        opening.abandon()  # claimed: not closed behind the caller's back
        assert not vault.closed
    finally:
        vault.close()


def test_a_vault_nobody_claimed_is_closed(tmp_path: Path, offline_settings: Settings) -> None:
    opening = VaultOpening(tmp_path / "vault", lambda: Vault.open(tmp_path / "vault", settings=offline_settings))
    opening.abandon()
    with Vault.open(tmp_path / "vault", settings=offline_settings) as again:  # the lock was released
        assert again.counts().events == 0


def test_what_opening_raised_is_raised_by_result(vault: Vault, offline_settings: Settings) -> None:
    opening = VaultOpening(vault.paths.root, lambda: Vault.open(vault.paths.root, settings=offline_settings))
    with pytest.raises(VaultLocked):
        opening.result()
    opening.abandon()  # nothing to close


def test_collection_is_paused_for_the_start_up_and_restored_after() -> None:
    was_enabled = gc.isenabled()  # off here: the GUI tests collect on the GUI thread
    gc.enable()
    try:
        with collection_paused():
            assert not gc.isenabled()
            gc.freeze()
            assert gc.get_freeze_count() > 0
        assert gc.isenabled()
        assert gc.get_freeze_count() == 0
    finally:
        if not was_enabled:
            gc.disable()


def test_an_action_after_the_first_paint_runs_once_the_window_is_drawn(vault: Vault, qtbot: QtBot) -> None:
    window, runner = build_main_window(vault, endpoint_address=ADDRESS, token=TOKEN)
    qtbot.addWidget(window)
    ran: list[float | None] = []
    painted = FirstPaint(window)
    after = AfterFirstPaint(window, lambda: ran.append(painted.at))
    try:
        qtbot.wait(50)
        assert ran == [] and not after.done  # not shown, not painted: nothing yet
        window.show()
        qtbot.waitUntil(lambda: after.done, timeout=60_000)
        assert ran == [painted.at] and painted.at is not None  # after the paint began, not before
        window.update()
        qtbot.wait(50)
        assert len(ran) == 1  # once
    finally:
        window.close()
        runner.shutdown()


def test_an_action_after_the_first_paint_runs_by_its_deadline_if_never_painted(vault: Vault, qtbot: QtBot) -> None:
    window, runner = build_main_window(vault, endpoint_address=ADDRESS, token=TOKEN)
    qtbot.addWidget(window)
    ran: list[str] = []
    after = AfterFirstPaint(window, lambda: ran.append("ran"), at_the_latest_ms=30)
    try:
        qtbot.waitUntil(lambda: after.done, timeout=60_000)
        assert ran == ["ran"] and not window.isVisible()
    finally:
        window.close()
        runner.shutdown()


def test_the_collector_takes_over_once_the_window_is_painted(vault: Vault, qtbot: QtBot) -> None:
    window, runner = build_main_window(vault, endpoint_address=ADDRESS, token=TOKEN)
    qtbot.addWidget(window)
    collector = MainThreadGarbageCollector()
    collect_after_first_paint(window, collector)
    try:
        qtbot.wait(50)
        assert not collector.active and gc.get_freeze_count() == 0
        window.show()
        qtbot.waitUntil(lambda: collector.active, timeout=60_000)
        assert gc.get_freeze_count() > 0  # what start-up made is set aside
    finally:
        collector.stop()
        gc.unfreeze()
        window.close()
        runner.shutdown()


def test_the_window_is_built_while_the_vault_opens_and_queries_wait_for_it(
    tmp_path: Path, offline_settings: Settings, qtbot: QtBot
) -> None:
    gate = threading.Event()
    root = tmp_path / "vault"

    def slow_open() -> Vault:
        gate.wait(10)
        return Vault.open(root, settings=offline_settings)

    opening = VaultOpening(root, slow_open)
    window, runner = build_main_window(opening, endpoint_address=None, token="", endpoint_starting=True)
    qtbot.addWidget(window)
    try:
        assert str(root) in window.windowTitle()
        counted = runner.read(lambda v: v.counts().events)  # waits on a reader thread, not here
        qtbot.wait(50)
        assert not counted.done() and not opening.future.done()
        gate.set()
        vault = opening.result()
        assert counted.result(timeout=10) == 0
        with qtbot.waitSignal(runner.changes_arrived, timeout=60_000):  # the change feed is followed
            vault.update_settings({"episodes.idle_gap_minutes": 45})
    finally:
        window.close()
        runner.shutdown()
        opening.abandon()
        if opening.future.done() and not opening.future.exception():
            opening.future.result().close()


def test_the_window_is_painted_before_the_vault_is_open_then_gets_its_endpoint(
    tmp_path: Path, offline_settings: Settings, qtbot: QtBot
) -> None:
    gate = threading.Event()
    root = tmp_path / "vault"

    def slow_open() -> Vault:
        gate.wait(10)  # the integrity check of a large vault, say
        return Vault.open(root, settings=offline_settings)

    opening = VaultOpening(root, slow_open)
    collector = MainThreadGarbageCollector()
    starting = StartingWindow(opening, collector, port=0)
    window = starting.window
    qtbot.addWidget(window)
    try:
        painted = FirstPaint(window)
        window.show()
        qtbot.waitUntil(lambda: painted.at is not None, timeout=60_000)
        assert starting.vault is None and not opening.future.done()
        assert str(root) in window.windowTitle()
        assert window.endpoint_status.text() == "Endpoint starting…"
        assert _overview(window).count_labels["events"].text() == "–"
        with qtbot.waitSignal(starting.vault_opened, timeout=60_000):
            gate.set()
        vault = starting.vault
        assert vault is not None and starting.endpoint is not None
        assert _overview(window).endpoint_panel.token == vault.endpoint_token()
        qtbot.waitUntil(lambda: _overview(window).count_labels["events"].text() == "0", timeout=60_000)
        qtbot.waitUntil(lambda: starting.endpoint is not None and starting.endpoint.info.running, timeout=60_000)
        assert window.endpoint_status.text() == f"Endpoint {starting.endpoint.info.address}"
        qtbot.waitUntil(lambda: collector.active, timeout=60_000)
    finally:
        window.close()
        starting.stop()
        collector.stop()
        gc.unfreeze()
    assert vault.closed


def test_a_vault_that_cannot_open_is_reported_and_the_window_stops(
    vault: Vault, offline_settings: Settings, qtbot: QtBot
) -> None:
    root = vault.paths.root  # open here: locked
    opening = VaultOpening(root, lambda: Vault.open(root, settings=offline_settings))
    starting = StartingWindow(opening, MainThreadGarbageCollector())
    qtbot.addWidget(starting.window)
    try:
        with qtbot.waitSignal(starting.vault_failed, timeout=60_000) as failed:
            pass
        assert isinstance(failed.args[0], VaultLocked) and starting.error is failed.args[0]
        assert starting.runner.is_shut_down and starting.vault is None and starting.endpoint is None
    finally:
        starting.stop()


def test_stopping_before_the_vault_is_open_closes_it_once_open(
    tmp_path: Path, offline_settings: Settings, qtbot: QtBot
) -> None:
    gate = threading.Event()
    root = tmp_path / "vault"

    def slow_open() -> Vault:
        gate.wait(10)
        return Vault.open(root, settings=offline_settings)

    opening = VaultOpening(root, slow_open)
    starting = StartingWindow(opening, MainThreadGarbageCollector())
    qtbot.addWidget(starting.window)
    starting.window.show()
    starting.window.close()  # closed at once, the vault still opening
    threading.Timer(0.1, gate.set).start()
    starting.stop()
    with Vault.open(root, settings=offline_settings) as again:  # closed and its lock released
        assert again.counts().events == 0


def test_queries_on_a_vault_that_cannot_open_fail_with_its_error(qtbot: QtBot) -> None:
    failed: Future[Vault] = Future()
    runner = OpRunner(failed)
    errors: list[BaseException] = []
    try:
        runner.read(lambda v: v.counts(), on_error=errors.append)
        failed.set_exception(VaultLocked("This vault is already open in another Cairn.", fix="Close the other one."))
        qtbot.waitUntil(lambda: bool(errors), timeout=60_000)
        assert isinstance(errors[0], VaultLocked)
    finally:
        runner.shutdown()
