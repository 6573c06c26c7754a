"""The menu bar, and File → Export / Restore / Backups in the real window: an export written off the GUI thread with
progress, a restore into a new folder offering to open it, the backups listed with a restore, and quitting."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from engine import Vault
from tests.ui.conftest import seed_chat
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.vault_file import BackupsDialog
from ui.views import VIEWS

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def menu_texts(window: MainWindow) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        out[menu_action.text().replace("&", "")] = [a.text() for a in menu.actions() if not a.isSeparator()]
    return out


def test_the_menu_bar_offers_every_file_view_and_help_action(vault: Vault, window_for: WindowFor) -> None:
    window, _runner = window_for(vault)
    menus = menu_texts(window)
    assert menus["File"] == [
        "Import transcripts…",
        "Add documents…",
        "Add a folder…",
        "Export vault…",
        "Restore from a file…",
        "Backups…",
        "Forget…",
        "Quit",
    ]
    assert menus["View"] == [*(spec.title for spec in VIEWS), "Search everywhere (Ctrl+K)"]
    assert menus["Help"] == ["Keyboard shortcuts", "About Cairn"]
    assert window.menu_actions["quit"].shortcut().toString() == "Ctrl+Q"
    assert window.menu_actions["view:documents"].shortcut().toString() == "Ctrl+6"
    window.menu_actions["view:documents"].trigger()
    assert window.current_view_key() == "documents"
    lines = window.show_shortcuts().text().splitlines()
    assert "Ctrl+Q\tQuit" in lines and "Ctrl+K\tSearch everywhere" in lines and "Ctrl+9\tSettings" in lines


def test_about_names_the_version_and_the_vault(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    window, _runner = window_for(vault)
    window.menu_actions["about"].trigger()
    qtbot.waitUntil(
        lambda: window.last_dialog is not None and "About" in window.last_dialog.windowTitle(), timeout=60_000
    )
    assert window.last_dialog is not None
    text = window.last_dialog.text()
    assert str(vault.paths.root) in text and vault.vault_id() in text and "Cairn 0." in text


def test_ctrl_q_quits(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    window, _runner = window_for(vault)
    window.set_close_to_tray(True)  # as with a tray: Quit still quits, it does not hide
    window.show()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=60_000)
    with qtbot.waitSignal(window.closed, timeout=60_000):
        QTest.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
        QTest.keyRelease(window, Qt.Key.Key_Control)


def test_export_then_restore_from_the_file_menu(
    vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_chat(vault)
    assert vault.jobs.wait_idle(60)
    window, _runner = window_for(vault)
    target = tmp_path / "my-export"  # the dialog's name without .zip gets it added
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    with qtbot.waitSignal(window.files.exported, timeout=120_000) as exported:
        window.menu_actions["export"].trigger()
    report = exported.args[0]
    assert Path(report.path) == tmp_path / "my-export.zip" and report.counts["events"] == vault.counts().events
    assert zipfile.ZipFile(report.path).testzip() is None
    assert window.files.outcome is not None and "Exported to" in window.files.outcome.text()
    assert window.files.progress is None  # the progress dialog is closed

    new_folder = tmp_path / "restored"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (report.path, ""))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(new_folder))
    with qtbot.waitSignal(window.files.restored, timeout=120_000) as restored:
        window.menu_actions["restore"].trigger()
    assert restored.args[0].counts["events"] == vault.counts().events
    box = window.files.outcome
    assert box is not None and "Restored into" in box.text()
    assert "Open it now" in [b.text() for b in box.buttons()]
    with Vault.open(new_folder, settings=vault.settings) as again:
        assert again.counts() == vault.counts()

    # restoring into the same folder again is refused, and said in the window, not as a bug
    with qtbot.waitSignal(window.files.failed, timeout=120_000) as failed:
        window.menu_actions["restore"].trigger()
    assert "never overwrites" in failed.args[0]
    assert window.files.outcome is not None and window.files.outcome.icon() == QMessageBox.Icon.Warning


def test_the_backups_dialog_lists_makes_and_restores_backups(
    vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_chat(vault)
    window, _runner = window_for(vault)
    dialog = window.files.show_backups()
    assert isinstance(dialog, BackupsDialog)
    qtbot.waitUntil(lambda: dialog.empty.isVisibleTo(dialog), timeout=60_000)
    dialog.now_button.click()
    qtbot.waitUntil(lambda: len(dialog.backups) == 1, timeout=60_000)
    assert dialog.table.item(0, 2).text() == dialog.backups[0].path
    assert dialog.restore_button.isEnabled()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path / "from-backup"))
    with qtbot.waitSignal(window.files.restored, timeout=120_000) as restored:
        dialog.restore_button.click()
    assert restored.args[0].source_kind == "backup"
    assert (tmp_path / "from-backup" / "vault.db").is_file()
