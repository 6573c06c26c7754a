"""Settings: a typed form from the schema, saved to settings.toml and applied at once where the engine can;
errors by field; Ollama; watched folders; backups."""

from __future__ import annotations

import socket
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QGroupBox, QLabel, QLineEdit, QSpinBox
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.config import describe
from tests.fakes.ollama import FakeOllama
from tests.ui.documents_support import write_note
from ui.format import local_time
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.overview import OverviewView
from ui.views.settings import SettingsView

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _open(window_for: WindowFor, vault: Vault, qtbot: QtBot) -> tuple[MainWindow, SettingsView]:
    window, _runner = window_for(vault)
    window.show()
    window.show_view("settings")
    view = window.view("settings")
    assert isinstance(view, SettingsView)
    qtbot.waitUntil(lambda: view.loaded, timeout=60_000)
    return window, view


def _saved(vault: Vault) -> dict[str, dict[str, object]]:
    path = vault.paths.settings
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_every_setting_gets_an_editor_of_its_type(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, vault, qtbot)
    assert set(view.editors) == {name for name, _value, _text in describe(vault.settings)}
    provider = view.editors["llm.provider"].widget
    assert isinstance(provider, QComboBox)
    assert [provider.itemText(i) for i in range(provider.count())] == ["auto", "ollama", "openai", "simple"]
    assert provider.currentText() == "simple"
    email = view.editors["privacy.email"].widget
    assert isinstance(email, QComboBox) and email.currentText() == "redact"
    port = view.editors["endpoint.port"].widget
    assert isinstance(port, QSpinBox) and (port.minimum(), port.maximum()) == (1, 65535)
    assert isinstance(view.editors["llm.timeout_s"].widget, QDoubleSpinBox)
    assert view.editors["llm.timeout_s"].widget.suffix() == " s"
    assert isinstance(view.editors["endpoint.enabled"].widget, QCheckBox)
    assert isinstance(view.editors["llm.ollama_host"].widget, QLineEdit)
    assert view.editors["llm.ollama_host"].widget.toolTip() == "Address of the local Ollama server."
    key = view.editors["llm.openai_api_key"].widget
    assert isinstance(key, QLineEdit) and key.echoMode() == QLineEdit.EchoMode.PasswordEchoOnEdit
    assert view.editors["llm.ollama_host"].widget.echoMode() == QLineEdit.EchoMode.Normal
    assert view.changes() == {}
    assert not view.save_button.isEnabled()


def test_a_changed_setting_is_saved_to_settings_toml_and_applies_at_once(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, vault, qtbot)
    view.show_page("privacy")
    email = view.editors["privacy.email"].widget
    assert isinstance(email, QComboBox)
    email.setCurrentText("block")
    assert view.changes() == {"privacy.email": "block"}
    assert view.save_button.isEnabled() and view.state_label.text() == "1 unsaved change"
    view.save_button.click()
    qtbot.waitUntil(lambda: vault.settings.privacy.email == "block", timeout=60_000)
    assert _saved(vault)["privacy"]["email"] == "block"
    qtbot.waitUntil(lambda: view.state_label.text().startswith("Saved."), timeout=60_000)
    assert view.state_label.text() == "Saved. The new settings are in effect."
    assert view.changes() == {} and not view.save_button.isEnabled()


def test_model_settings_say_they_need_a_restart(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, vault, qtbot)
    model = view.editors["llm.model"].widget
    assert isinstance(model, QComboBox)
    model.setEditText("qwen3")
    view.editors["llm.model"].edited.emit()
    port = view.editors["endpoint.port"].widget
    assert isinstance(port, QSpinBox)
    port.setValue(9911)
    view.save()
    qtbot.waitUntil(lambda: _saved(vault).get("llm", {}).get("model") == "qwen3", timeout=60_000)
    assert _saved(vault)["endpoint"]["port"] == 9911
    qtbot.waitUntil(lambda: view.state_label.text().startswith("Saved."), timeout=60_000)
    assert view.state_label.text() == ("Saved. Restart Cairn to use the new endpoint and language model settings.")


def test_an_invalid_value_shows_the_engines_message_next_to_it_and_nothing_is_saved(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, vault, qtbot)
    timeout = view.editors["llm.timeout_s"].widget
    assert isinstance(timeout, QDoubleSpinBox)
    timeout.setValue(0)  # the spin box allows 0, the setting must be greater than 0
    phone = view.editors["privacy.phone"].widget
    assert isinstance(phone, QComboBox)
    phone.setCurrentText("keep")
    view.show_page("privacy")
    view.save()
    error = view.error_labels["llm.timeout_s"]
    qtbot.waitUntil(lambda: error.text() != "", timeout=60_000)
    assert error.text() == "Not saved: Input should be greater than 0"
    assert view.pages.currentRow() == view.page_keys.index("models")  # shown where it is
    assert view.state_label.text() == "Nothing was saved: 1 value needs fixing."
    assert not vault.paths.settings.exists() or "phone" not in vault.paths.settings.read_text()
    assert vault.settings.privacy.phone == "redact"
    timeout.setValue(30)  # editing the field clears its message
    assert error.text() == "" and error.isHidden()
    view.save()
    qtbot.waitUntil(lambda: vault.settings.privacy.phone == "keep", timeout=60_000)
    assert _saved(vault)["llm"]["timeout_s"] == 30.0


def test_revert_puts_back_the_saved_values(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, vault, qtbot)
    enabled = view.editors["endpoint.enabled"].widget
    assert isinstance(enabled, QCheckBox) and enabled.isChecked()
    enabled.setChecked(False)
    assert view.changes() == {"endpoint.enabled": False}
    view.revert()
    assert enabled.isChecked() and view.changes() == {}


def test_ollama_not_running_is_said_plainly_and_check_again_lists_its_models(
    vault: Vault, window_for: WindowFor, qtbot: QtBot, fake_ollama: FakeOllama
) -> None:
    _window, view = _open(window_for, vault, qtbot)
    assert view.ollama.status_label.text().startswith("Not checked")  # llm.provider is simple
    host = view.editors["llm.ollama_host"].widget
    assert isinstance(host, QLineEdit)
    dead = f"http://127.0.0.1:{_free_port()}"
    host.setText(dead)
    view.ollama.check()
    qtbot.waitUntil(lambda: "not running" in view.ollama.status_label.text(), timeout=60_000)
    assert view.ollama.status_label.text() == f"Ollama is not running at {dead}."
    assert "Start Ollama" in view.ollama.detail_label.text()

    host.setText(fake_ollama.url)
    view.ollama.check_button.click()
    qtbot.waitUntil(lambda: "is running" in view.ollama.status_label.text(), timeout=60_000)
    assert f"at {fake_ollama.url} with 2 models" in view.ollama.status_label.text()
    model = view.editors["llm.model"].widget
    assert isinstance(model, QComboBox)
    offered = {model.itemText(i) for i in range(model.count())}
    assert "llama3.2:latest" in offered and "nomic-embed-text:latest" in offered
    assert model.currentText() == "llama3.2"  # the typed name is kept
    assert view.changes() == {"llm.ollama_host": fake_ollama.url}


def test_the_token_can_be_copied_and_rotated(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    window, view = _open(window_for, vault, qtbot)
    old = vault.endpoint_token()
    assert view.token_panel.token_field.text() == old
    assert view.token_panel.token_field.echoMode() == QLineEdit.EchoMode.Password
    view.token_panel.copy_button.click()
    assert QGuiApplication.clipboard().text() == old
    box = view.token_panel.ask_rotate()
    assert "refused" in box.text()
    box.button(box.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: view.token_panel.token_field.text() != old, timeout=60_000)
    assert view.token_panel.token_field.text() == vault.endpoint_token() != old
    overview = window.view("overview")
    assert isinstance(overview, OverviewView)
    qtbot.waitUntil(lambda: overview.endpoint_panel.token == vault.endpoint_token(), timeout=60_000)


def test_vault_location_is_shown_and_opens_in_the_file_manager(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, vault, qtbot)
    opened: list[QUrl] = []
    view.location.open_url = lambda url: opened.append(url) or True  # type: ignore[func-returns-value]
    view.show_page("vault")
    assert view.location.path_label.text() == str(vault.paths.root)
    view.location.open_button.click()
    assert [Path(url.toLocalFile()) for url in opened] == [vault.paths.root]


def test_watched_folders_are_saved_as_a_list_with_their_globs(
    vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    _window, view = _open(window_for, vault, qtbot)
    view.show_page("folders")
    notes = tmp_path / "notes"
    notes.mkdir()
    model = view.folders_editor.model
    model.add_folder(str(notes))
    model.setData(model.index(0, 2), ".git, *.tmp")
    assert list(view.changes()) == ["watch.folders"]
    view.save()
    qtbot.waitUntil(lambda: len(vault.settings.watch.folders) == 1, timeout=60_000)
    folder = vault.settings.watch.folders[0]
    assert folder.path == str(notes) and folder.exclude == (".git", "*.tmp")
    saved = _saved(vault)["watch"]["folders"]
    assert isinstance(saved, list) and saved[0]["path"] == str(notes)
    assert saved[0]["exclude"] == [".git", "*.tmp"]
    assert "*.md" in folder.include  # the default globs, not written out


def test_the_editors_of_every_group_on_a_page_line_up(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    window, view = _open(window_for, vault, qtbot)
    window.resize(1200, 800)
    view.show_page("models")
    qtbot.wait(50)
    provider_llm = view.editors["llm.provider"].widget
    provider_embedder = view.editors["embedder.provider"].widget
    left = {w.mapTo(view, w.rect().topLeft()).x() for w in (provider_llm, provider_embedder)}
    assert len(left) == 1  # one label column for the page, whatever each group's longest label


def test_a_folder_added_in_settings_is_watched_at_once_without_a_restart(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    write_note(notes, "a.md", "# A\n\nAlpha.\n")
    _window, view = _open(window_for, plugin_vault, qtbot)
    view.show_page("folders")
    view.folders_editor.model.add_folder(str(notes))
    view.save()
    qtbot.waitUntil(lambda: [str(r.path) for r in plugin_vault.watcher.status()] == [str(notes)], timeout=60_000)
    qtbot.waitUntil(lambda: [d.name for d in plugin_vault.documents()] == ["a.md"], timeout=60_000)
    qtbot.waitUntil(lambda: view.state_label.text().startswith("Saved."), timeout=60_000)
    assert view.state_label.text() == "Saved. The new settings are in effect."
    write_note(notes, "b.md", "# B\n\nBeta.\n")  # watched from now on, not only scanned once
    qtbot.waitUntil(lambda: sorted(d.name for d in plugin_vault.documents()) == ["a.md", "b.md"], timeout=60_000)

    view.folders_editor.table.selectRow(0)
    view.folders_editor.remove_selected()
    view.save()
    qtbot.waitUntil(lambda: plugin_vault.settings.watch.folders == (), timeout=60_000)
    assert plugin_vault.watcher.status() == []
    assert len(plugin_vault.documents()) == 2  # its documents stay


def test_a_folder_the_watcher_refuses_is_not_saved_and_says_why(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    outer = tmp_path / "outer"
    (outer / "inner").mkdir(parents=True)
    plugin_vault.watcher.watch(outer)
    _window, view = _open(window_for, plugin_vault, qtbot)
    view.show_page("folders")
    view.folders_editor.model.add_folder(str(outer / "inner"))
    view.save()
    error = view.error_labels["watch.folders"]
    qtbot.waitUntil(lambda: error.text() != "", timeout=60_000)
    assert error.text().startswith(f"Not saved: {outer / 'inner'} overlaps the watched folder {outer}")
    assert [str(r.path) for r in plugin_vault.watcher.status()] == [str(outer)]  # as it was
    assert [f.path for f in plugin_vault.settings.watch.folders] == [str(outer)]
    assert [f["path"] for f in _saved(plugin_vault)["watch"]["folders"]] == [str(outer)]  # type: ignore[index]

    view.revert()
    view.folders_editor.model.add_folder(str(tmp_path / "gone"))
    view.save()
    qtbot.waitUntil(lambda: error.text() == f"Not saved: {tmp_path / 'gone'} is not a folder", timeout=60_000)
    assert len(plugin_vault.watcher.status()) == 1


def test_each_group_says_truly_when_its_settings_take_effect(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, vault, qtbot)
    notes = {
        group.title(): [label.text() for label in group.findChildren(QLabel) if label.text().startswith("Takes")]
        for group in view.findChildren(QGroupBox)
    }
    at_once = "Takes effect as soon as it is saved."
    at_start = "Takes effect the next time Cairn starts."
    for title in ("Personal data firewall", "Memories", "Recall", "Backups"):
        assert notes[title] == [at_once], title
    for title in ("Embedder", "Vector storage", "Background jobs", "Episodes"):
        assert notes[title] == [at_start], title
    assert notes["Endpoint"] == ["Takes effect the next time Cairn starts, except MCP upload path (at once)."]
    assert notes["Watched folders"] == [
        "Takes effect the next time Cairn starts, except Folders (at once)."
    ]  # the watcher reads its debounce and rescan interval when it starts
    assert notes["Documents"] == [
        "Takes effect the next time Cairn starts, except Max size, Background above, Max sections, Max spans and "
        "Allowed roots (at once)."
    ]  # the parser sandbox reads its limits (times, ceiling, memory, pages) when it starts


def test_backup_settings_apply_at_once_and_back_up_now_lists_the_generations(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, view = _open(window_for, vault, qtbot)
    view.show_page("vault")
    panel = view.backups
    qtbot.waitUntil(lambda: panel.state is not None, timeout=60_000)
    assert panel.last_label.text() == "No backup yet."
    assert panel.model.rowCount() == 0
    generations = view.editors["backups.generations"].widget
    assert isinstance(generations, QSpinBox)
    generations.setValue(2)
    view.save()
    qtbot.waitUntil(lambda: vault.settings.backups.generations == 2, timeout=60_000)
    qtbot.waitUntil(lambda: view.state_label.text() == "Saved. The new settings are in effect.", timeout=60_000)

    for made in (1, 2, 3):
        panel.backup_button.click()
        assert not panel.backup_button.isEnabled()  # one at a time
        qtbot.waitUntil(lambda: panel.backup_button.isEnabled(), timeout=60_000)
        qtbot.waitUntil(lambda made=made: panel.model.rowCount() == min(made, 2), timeout=60_000)
    assert len(vault.backups()) == 2  # the new generations setting is in force without a restart
    newest = vault.backups()[0]
    # after the third, the list already had two rows: wait for it to show the newest, not for a count
    qtbot.waitUntil(lambda: panel.model.data(panel.model.index(0, 3)) == Path(newest.path).name, timeout=60_000)
    assert panel.last_label.text().startswith(f"Last backup: {local_time(newest.created_at)}")
    assert panel.generations_label.text().startswith("2 of 2 generations kept. The next automatic one is due")
    assert window.statusBar().currentMessage().startswith(f"Backed up to {Path(newest.path).name}")
