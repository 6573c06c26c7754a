"""GUI test fixtures: UI state in a temp folder, real events, the window as the app composes it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.composition import build_main_window
from engine import Settings, Vault
from engine.store.writer import Tx
from ui.garbage import MainThreadGarbageCollector
from ui.main_window import MainWindow
from ui.ops import OpRunner

TOKEN = "test-token-7f3a9c"
ADDRESS = "http://127.0.0.1:8642"

AddEvent = Callable[..., int]


@pytest.fixture(autouse=True)
def qsettings_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Point every QSettings file at a fresh temp folder: no test touches the real home."""
    folder = tmp_path_factory.mktemp("qsettings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    for fmt in (QSettings.Format.IniFormat, QSettings.Format.NativeFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(folder))
        QSettings.setPath(fmt, QSettings.Scope.SystemScope, str(folder / "system"))
    return folder


@pytest.fixture(autouse=True)
def gc_on_gui_thread(qapp: QApplication) -> Iterator[None]:
    """Collect garbage on the GUI thread only, as the app does: a window collected by the engine's
    writer thread would crash Qt.  Torn down last, after the vault and the windows are gone."""
    collector = MainThreadGarbageCollector()
    collector.start()
    yield
    collector.stop()


@pytest.fixture
def add_event(vault: Vault) -> AddEvent:
    """Insert one real event through the writer and publish ``event.created`` (returns its id)."""

    def add(conversation_id: str = "conv-1", content: str = "hello") -> int:
        def op(tx: Tx) -> int:
            event_id = tx.new_id("event")
            digest = hashlib.sha256(f"{event_id}:{content}".encode()).hexdigest()
            tx.execute(
                "INSERT INTO events(id, user_id, conversation_id, type, role, content, "
                "occurred_at, ingested_at, content_hash, source) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    event_id,
                    "me",
                    conversation_id,
                    "message",
                    "user",
                    content,
                    tx.now,
                    tx.now,
                    digest,
                    "test",
                ),
            )
            tx.emit("event.created", event_id, conversation_id=conversation_id)
            return event_id

        return int(vault.store.write(op))

    return add


@pytest.fixture
def bugs() -> list[tuple[str, str]]:
    """Bug reports collected instead of shown in a dialog."""
    return []


@pytest.fixture
def composed(vault: Vault, qtbot: QtBot, bugs: list[tuple[str, str]]) -> Iterator[tuple[MainWindow, OpRunner]]:
    """The main window exactly as the app composes it, on a real vault; shut down after the test."""
    window, runner = build_main_window(
        vault, endpoint_address=ADDRESS, token=TOKEN, report_bug=lambda s, d: bugs.append((s, d))
    )
    qtbot.addWidget(window)
    try:
        yield window, runner
    finally:
        window.close()
        runner.shutdown()


# -- populated vaults ------------------------------------------------------------------------------
CHAT = (
    ("c1", "user", "Hi there!", "2026-01-01T10:00:00Z"),
    ("c1", "user", "I work as a nurse at St Mary's hospital.", "2026-01-01T10:01:00Z"),
    ("c1", "assistant", "That sounds demanding.", "2026-01-01T10:02:00Z"),
    ("c1", "user", "I live in Paris.", "2026-01-01T10:03:00Z"),
    ("c2", "user", "I live in Berlin.", "2026-01-02T10:03:00Z"),
    ("c2", "user", "My sister Anna loves React.", "2026-01-02T10:04:00Z"),
    ("c2", "user", "My favourite framework is Django.", "2026-01-02T10:05:00Z"),
)
"""A small real chat: a job and its employer, a contradiction (Paris / Berlin), a sister and a preference."""


def seed_chat(vault: Vault) -> list[int]:
    """Ingest :data:`CHAT` through the facade and wait for enrichment; returns the event ids."""
    from engine.events import EventIn

    results = vault.events.ingest(
        [EventIn(conversation_id=conv, role=role, content=text, occurred_at=when) for conv, role, text, when in CHAT]
    )
    assert vault.jobs.wait_idle(120)
    return [r.event_id for r in results]


@pytest.fixture
def chat_vault(vault: Vault) -> Vault:
    """The test vault with :data:`CHAT` ingested and enriched (7 facts, 1 open conflict)."""
    seed_chat(vault)
    return vault


@pytest.fixture
def plugin_vault(tmp_path: Path, offline_settings: Settings) -> Iterator[Vault]:
    """A vault with the built-in plugins (transcript importers), as the app opens it."""
    from app.plugins import build_plugin_manager

    v = Vault.open(tmp_path / "pvault", settings=offline_settings, plugins=build_plugin_manager())
    try:
        yield v
    finally:
        v.close()


@pytest.fixture
def window_for(qtbot: QtBot, bugs: list[tuple[str, str]]) -> Iterator[Callable[[Vault], tuple[MainWindow, OpRunner]]]:
    """Build the app's window on a given vault (shut down after the test); bugs fail the test."""
    made: list[tuple[MainWindow, OpRunner]] = []

    def build(v: Vault) -> tuple[MainWindow, OpRunner]:
        window, runner = build_main_window(
            v, endpoint_address=ADDRESS, token=TOKEN, report_bug=lambda s, d: bugs.append((s, d))
        )
        qtbot.addWidget(window)
        window.resize(1120, 780)
        made.append((window, runner))
        return window, runner

    yield build
    for window, runner in made:
        window.set_close_to_tray(False)
        window.close()
        runner.shutdown()
    assert bugs == []


@pytest.fixture
def runner_for(qtbot: QtBot, bugs: list[tuple[str, str]]) -> Iterator[Callable[[Vault], OpRunner]]:
    """A bare :class:`OpRunner` on a given vault, for testing models without views."""
    made: list[OpRunner] = []

    def build(v: Vault) -> OpRunner:
        runner = OpRunner(v, report_bug=lambda s, d: bugs.append((s, d)))
        made.append(runner)
        return runner

    yield build
    for runner in made:
        runner.shutdown()
    assert bugs == []
