"""The main window: only real views, state in QSettings, a message bar, a clean close."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QListWidget
from pytestqt.qtbot import QtBot

from app.composition import build_main_window
from app.desktop import TrayIcon
from engine import Vault
from tests.ui.conftest import ADDRESS, TOKEN
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.theme import icon_pixmap
from ui.views import VIEWS
from ui.views.overview import OverviewView

pytestmark = pytest.mark.gui


def test_navigation_lists_exactly_the_real_views(composed: tuple[MainWindow, OpRunner]) -> None:
    window, _runner = composed
    titles = [
        "Overview",
        "Memories",
        "Conflicts",
        "People & topics",
        "Conversations",
        "Documents",
        "Ask",
        "Activity",
        "Settings",
    ]
    assert window.navigation_titles() == titles
    assert [spec.title for spec in VIEWS] == titles
    nav = window.findChild(QListWidget, "navigation")
    assert nav is window.navigation
    assert window.stack.count() == nav.count() == len(VIEWS)
    for row, spec in enumerate(VIEWS):
        item = nav.item(row)
        assert not item.icon().isNull()
        assert item.data(Qt.ItemDataRole.UserRole) == spec.key
        assert window.stack.widget(row) is window.view(spec.key)
    assert isinstance(window.view("overview"), OverviewView)
    assert window.stack.currentWidget() is window.view(window.current_view_key())


def test_window_title_icon_and_status_bar(composed: tuple[MainWindow, OpRunner], vault: Vault) -> None:
    window, _runner = composed
    assert str(vault.paths.root) in window.windowTitle()
    assert not window.windowIcon().isNull()
    assert window.endpoint_status.text() == f"Endpoint {ADDRESS}"


def test_geometry_and_view_survive_a_restart(vault: Vault, qtbot: QtBot, qsettings_dir: Path) -> None:
    first, runner = build_main_window(vault, endpoint_address=ADDRESS, token=TOKEN)
    qtbot.addWidget(first)
    first.show()
    first.setGeometry(QRect(20, 30, 780, 560))
    qtbot.waitUntil(lambda: first.width() == 780 and first.height() == 560, timeout=60_000)
    first.close()
    assert runner.is_shut_down
    ini_files = list(qsettings_dir.rglob("*.ini"))
    assert [p.name for p in ini_files] == ["Cairn.ini"]  # in the test's folder, not the real home
    assert "geometry" in ini_files[0].read_text(encoding="utf-8")

    second, second_runner = build_main_window(vault, endpoint_address=ADDRESS, token=TOKEN)
    qtbot.addWidget(second)
    try:
        assert (second.width(), second.height()) == (780, 560)
        assert second.current_view_key() == "overview"
    finally:
        second.close()
        second_runner.shutdown()


def test_first_start_uses_the_default_size_within_the_screen(
    composed: tuple[MainWindow, OpRunner],
) -> None:
    window, _runner = composed
    available = window.screen().availableGeometry()
    expected = (min(1120, available.width()), min(780, available.height()))
    assert (window.width(), window.height()) == expected


def test_user_errors_show_in_the_message_bar_without_a_dialog(
    composed: tuple[MainWindow, OpRunner], qtbot: QtBot
) -> None:
    window, runner = composed
    window.show()
    assert not window.message_bar.isVisible()
    with qtbot.waitSignal(runner.user_error, timeout=60_000):
        runner.write(lambda vault: vault.update_settings({"endpoint.port": 0}))
    assert window.message_bar.isVisible()
    assert "endpoint.port" in window.message_bar.message
    assert window.message_bar.fix == "Fix: Fix the value or remove it."
    assert "endpoint.port" in window.statusBar().currentMessage()
    window.message_bar.dismiss()
    assert not window.message_bar.isVisible()
    assert window.message_bar.message == ""


def test_bugs_show_in_the_status_bar_and_reach_the_reporter(
    composed: tuple[MainWindow, OpRunner], qtbot: QtBot, bugs: list[tuple[str, str]]
) -> None:
    window, runner = composed
    window.show()
    with qtbot.waitSignal(runner.bug_reported, timeout=60_000):
        runner.read(lambda _vault: dict[str, int]()["absent"])
    assert bugs and bugs[0][0] == "KeyError: 'absent'"
    assert window.statusBar().currentMessage() == "Unexpected error: KeyError: 'absent'"
    assert not window.message_bar.isVisible()  # bugs are not dressed up as user errors


def test_closing_the_window_shuts_the_runner_down_cleanly(composed: tuple[MainWindow, OpRunner], qtbot: QtBot) -> None:
    window, runner = composed
    window.show()
    view = window.view("overview")
    assert isinstance(view, OverviewView)
    qtbot.waitUntil(lambda: view.count_labels["events"].text() == "0", timeout=60_000)
    closed: list[bool] = []
    window.closed.connect(lambda: closed.append(True))
    window.close()
    assert closed == [True]
    assert runner.is_shut_down
    alive = [t.name for t in threading.enumerate() if t.name.startswith(("ui-read", "ui-write"))]
    assert alive == []


def test_window_tray_and_navigation_icons_are_crisp_at_2x(composed: tuple[MainWindow, OpRunner]) -> None:
    window, _runner = composed
    tray = TrayIcon(window)
    for icon in (window.windowIcon(), tray.icon()):
        pixmap = icon.pixmap(QSize(128, 128), 2.0)
        assert (pixmap.width(), pixmap.devicePixelRatio()) == (256, 2.0)
        assert pixmap.toImage() == icon_pixmap("cairn", None, 256).toImage()  # drawn at 256, not 64 scaled up
        assert {16, 22, 256} <= {size.width() for size in icon.availableSizes()}
    text = window.palette().color(QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText)
    for row, spec in enumerate(VIEWS):
        side = window.navigation.iconSize().width()
        pixmap = window.navigation.item(row).icon().pixmap(QSize(side, side), 2.0)
        assert pixmap.width() == side * 2
        assert pixmap.toImage() == icon_pixmap(spec.icon, text, side * 2).toImage(), spec.key
