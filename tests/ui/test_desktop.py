"""Desktop manners: view shortcuts, search everywhere (Ctrl+K), and the tray icon's two paths."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QSystemTrayIcon
from pytestqt.qtbot import QtBot

from app.desktop import TrayIcon, install_tray
from app.gui import run_gui
from engine import Vault
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views import VIEWS
from ui.views.memories import MemoriesView
from ui.views.subjects import SubjectsView

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _activate(qtbot: QtBot, window: MainWindow) -> None:
    window.show()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=60_000)


def _press(qtbot: QtBot, window: MainWindow, key: Qt.Key) -> None:
    QTest.keyClick(window, key, Qt.KeyboardModifier.ControlModifier)
    QTest.keyRelease(window, Qt.Key.Key_Control)  # QTest leaves Ctrl "held" otherwise


def test_ctrl_and_a_number_switches_views_in_navigation_order(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, _runner = window_for(vault)
    _activate(qtbot, window)
    assert len(VIEWS) == 9  # one shortcut per view, Ctrl+1 … Ctrl+9
    keys = [Qt.Key.Key_1 + n for n in range(len(VIEWS))]
    for spec, key in reversed(list(zip(VIEWS, keys, strict=True))):
        _press(qtbot, window, Qt.Key(key))
        assert window.current_view_key() == spec.key
    assert window.current_view_key() == "overview"
    _press(qtbot, window, Qt.Key.Key_9)
    assert window.current_view_key() == "settings"
    _press(qtbot, window, Qt.Key.Key_6)
    assert window.current_view_key() == "documents"
    _press(qtbot, window, Qt.Key.Key_7)
    assert window.current_view_key() == "ask"


def test_search_everywhere_finds_a_memory_and_jumps_to_it(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, _runner = window_for(chat_vault)
    _activate(qtbot, window)
    memories = window.view("memories")
    assert isinstance(memories, MemoriesView)
    window.show_view("memories")
    memories.filters.search.setFocus()  # a text field that reads Ctrl+K as "delete to the end"
    memories.filters.search.setText("keep me")
    memories.filters.search.setCursorPosition(0)
    qtbot.waitUntil(memories.filters.search.hasFocus, timeout=60_000)
    _press(qtbot, window, Qt.Key.Key_K)
    assert window.search.hasFocus()
    assert memories.filters.search.text() == "keep me"
    QTest.keyClicks(window.search, "nurse")
    with qtbot.waitSignal(window.search.results_shown, timeout=60_000):
        pass
    hits = window.search.hits
    assert ("fact", "User works as nurse") in [(h.kind, h.title) for h in hits]
    QTest.keyClick(window.search, Qt.Key.Key_Escape)  # close the list of hits …
    if not window.search.text():
        QTest.keyClicks(window.search, "nurse")
        with qtbot.waitSignal(window.search.results_shown, timeout=60_000):
            pass
    window.search.open_hit(0)  # … and open the first
    assert window.current_view_key() == "memories"
    view = window.view("memories")
    assert isinstance(view, MemoriesView)
    qtbot.waitUntil(lambda: view.selected_ids() == [hits[0].object_id], timeout=60_000)
    assert window.search.text() == ""


def test_search_everywhere_finds_people_by_name(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    window, _runner = window_for(chat_vault)
    window.show()
    window.search.setText("ann")
    window.search.search_now()
    qtbot.waitUntil(lambda: bool(window.search.hits), timeout=60_000)
    anna = window.search.hits[0]
    assert (anna.kind, anna.title) == ("subject", "Anna")
    assert anna.detail.startswith("person")
    window.search.open_hit(0)
    assert window.current_view_key() == "subjects"
    view = window.view("subjects")
    assert isinstance(view, SubjectsView)
    qtbot.waitUntil(lambda: view.detail is not None and view.detail.subject.name == "Anna", timeout=60_000)


def test_without_a_system_tray_closing_the_window_quits_as_before(
    vault: Vault, window_for: WindowFor, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: False))
    window, runner = window_for(vault)
    assert install_tray(window) is None
    window.show()
    closed: list[bool] = []
    window.closed.connect(lambda: closed.append(True))
    window.close()
    assert closed == [True] and runner.is_shut_down


def test_with_a_tray_closing_hides_the_window_and_quit_ends_the_app(
    vault: Vault,
    window_for: WindowFor,
    qtbot: QtBot,
    qapp: QApplication,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))
    window, runner = window_for(vault)
    tray = install_tray(window, qapp)
    assert isinstance(tray, TrayIcon)
    try:
        assert [a.text() for a in tray.menu.actions() if a.text()] == ["Show Cairn", "Quit Cairn"]
        window.show()
        qtbot.waitExposed(window)
        closed: list[bool] = []
        window.closed.connect(lambda: closed.append(True))
        with qtbot.waitSignal(window.hidden_to_tray, timeout=60_000):
            window.close()
        assert not window.isVisible() and closed == []
        assert not runner.is_shut_down  # the vault keeps working for the endpoint
        done: list[int] = []
        runner.read(lambda v: v.counts().events, done.append)
        qtbot.waitUntil(lambda: done == [0], timeout=60_000)
        tray.show_action.trigger()
        assert window.isVisible()
        tray.quit_action.trigger()
        assert closed == [True] and runner.is_shut_down
        assert not window.isVisible()
    finally:
        tray.hide()
        tray.deleteLater()


def test_ctrl_k_is_kept_from_text_fields_that_would_delete_with_it(
    vault: Vault, window_for: WindowFor, qapp: QApplication
) -> None:
    # Linux desktops bind Ctrl+K in text fields to "delete to the end of the line" (the
    # offscreen platform binds nothing, so the filter's answer is checked directly).
    window, _runner = window_for(vault)
    field = window.view("memories").findChild(QLineEdit)
    assert field is not None

    def override(key: Qt.Key) -> QKeyEvent:
        return QKeyEvent(QEvent.Type.ShortcutOverride, key, Qt.KeyboardModifier.ControlModifier)

    assert window.eventFilter(field, override(Qt.Key.Key_K)) is True
    assert window.eventFilter(field, override(Qt.Key.Key_J)) is False
    other = QLineEdit()  # another window's field keeps its keys
    assert window.eventFilter(other, override(Qt.Key.Key_K)) is False
    other.deleteLater()


def test_the_real_app_keeps_running_in_the_tray_until_quit_from_it(
    tmp_path: Path,
    qapp: QApplication,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))
    monkeypatch.setenv("CAIRN_LLM_PROVIDER", "simple")
    monkeypatch.setenv("CAIRN_EMBEDDER_PROVIDER", "hashing")
    monkeypatch.setenv("CAIRN_ENDPOINT_ENABLED", "false")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    seen: dict[str, bool] = {}

    def close_the_window() -> None:
        windows = [w for w in qapp.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not windows:
            QTimer.singleShot(30, close_the_window)
            return
        windows[0].close()
        QTimer.singleShot(300, lambda: still_running(windows[0]))

    def still_running(window: MainWindow) -> None:
        seen["hidden"] = not window.isVisible()
        seen["runner alive"] = not window.runner.is_shut_down
        trays = qapp.findChildren(TrayIcon)
        seen["one tray"] = len(trays) == 1
        trays[0].quit_action.trigger()

    QTimer.singleShot(30, close_the_window)
    QTimer.singleShot(180_000, qapp.quit)  # a safety net should the window never appear (generous: CI is busy)
    try:
        assert run_gui(tmp_path / "vault") == 0
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)
    assert seen == {"hidden": True, "runner alive": True, "one tray": True}
    with Vault.open(tmp_path / "vault", settings=None) as reopened:  # the lock was released
        assert reopened.counts().events == 0


def test_the_views_list_has_the_focus_at_start_not_the_search_box(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, _runner = window_for(vault)
    _activate(qtbot, window)
    qtbot.waitUntil(window.navigation.hasFocus, timeout=60_000)
    assert not window.search.hasFocus()  # its hint shows, not a blinking caret
    _press(qtbot, window, Qt.Key.Key_K)
    assert window.search.hasFocus()


def test_search_everywhere_finds_conversations_by_title_and_documents_by_name_in_a_list_sized_to_them(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    from engine.conversations import set_title
    from tests.ui.conftest import seed_chat

    chat_vault = plugin_vault
    seed_chat(chat_vault)
    chat_vault.store.write(lambda tx: set_title(tx, "default", "c1", "Planning the harvest festival", "test"))
    chat_vault.documents.upload(name="harvest-festival-budget.md", text="# Budget\n\nStalls, music and lights.\n")
    window, _runner = window_for(chat_vault)
    _activate(qtbot, window)
    window.search.focus_search()
    QTest.keyClicks(window.search, "harvest festival")
    window.search.search_now()
    qtbot.waitUntil(lambda: len(window.search.hits) >= 1, timeout=60_000)
    kinds = {(h.kind, h.title) for h in window.search.hits}
    assert ("conversation", "Planning the harvest festival") in kinds
    window.search.setText("harvest-festival")
    window.search.search_now()
    qtbot.waitUntil(lambda: any(h.kind == "document" for h in window.search.hits), timeout=60_000)
    rect = window.search.popup_rect()
    assert window.search.width() < rect.width() <= int(window.width() * 0.8)  # wider than the sidebar's box
    window.search.setText("harvest festival")
    window.search.search_now()
    qtbot.waitUntil(lambda: any(h.kind == "conversation" for h in window.search.hits), timeout=60_000)
    row = [h.kind for h in window.search.hits].index("conversation")
    window.search.open_hit(row)
    assert window.current_view_key() == "conversations"
    view = window.view("conversations")
    qtbot.waitUntil(lambda: view.conversation_title.text() == "Planning the harvest festival", timeout=60_000)
