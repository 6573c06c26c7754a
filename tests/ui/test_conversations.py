"""Conversations: turns, episodes, a turn's memories, transcript import with progress and cancel."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.conversations import ImportProgress
from tests.ui.conftest import seed_chat
from ui.import_task import ImportOutcome
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.conversations import ConversationsView
from ui.widgets.tables import select_only_row

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _open(window_for: WindowFor, vault: Vault, qtbot: QtBot) -> tuple[MainWindow, OpRunner, ConversationsView]:
    window, runner = window_for(vault)
    window.show()
    window.show_view("conversations")
    view = window.view("conversations")
    assert isinstance(view, ConversationsView)
    return window, runner, view


def _transcript(path: Path, conversations: int, turns: int = 3) -> Path:
    lines = []
    for c in range(conversations):
        for t in range(turns):
            role = "user" if t % 2 == 0 else "assistant"
            text = f"I live in Lyon number {c}." if t == 0 else f"Turn {t} of chat {c}."
            lines.append(
                json.dumps(
                    {
                        "conversation_id": f"imported-{c}",
                        "role": role,
                        "content": text,
                        "time": f"2026-03-{1 + c % 28:02d}T10:{t:02d}:00Z",
                    }
                )
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_conversation_shows_its_turns_episodes_and_what_a_turn_taught(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, _runner, view = _open(window_for, chat_vault, qtbot)
    qtbot.waitUntil(lambda: view.conversations.rowCount() == 2, timeout=60_000)
    assert view.count_label.text() == "2 conversations"
    row = next(r for r, c in enumerate(view.conversations.rows()) if c.conversation_id == "c1")
    select_only_row(view.list_view, row)
    qtbot.waitUntil(lambda: view.turns.rowCount() == 4, timeout=60_000)
    assert [view.turns.data(view.turns.index(r, 1)) for r in range(4)] == [
        "You",
        "You",
        "Assistant",
        "You",
    ]
    assert view.episodes.rowCount() == 1
    assert view.tabs.tabText(1) == "Episodes (1)"
    select_only_row(view.turns_view, 1)
    qtbot.waitUntil(lambda: view.turn_facts.rowCount() == 2, timeout=60_000)
    taught = {(view.turn_facts.row_item(r).predicate, view.turn_facts.row_item(r).object_text) for r in range(2)}
    assert taught == {("works_as", "nurse"), ("works_at", "St Mary's hospital")}
    assert "St Mary's hospital" in view.turn_text.toPlainText()
    assert view.facts_caption.text().startswith("2 memories from this turn")
    select_only_row(view.turns_view, 0)  # "Hi there!" teaches nothing
    qtbot.waitUntil(lambda: view.turn_facts.rowCount() == 0, timeout=60_000)
    qtbot.waitUntil(lambda: view.facts_caption.text() == "No memories came from this turn.", timeout=60_000)


def test_new_turns_of_the_shown_conversation_appear_live(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    from engine.events import EventIn

    _window, _runner, view = _open(window_for, chat_vault, qtbot)
    qtbot.waitUntil(lambda: view.conversation_id == "c2" and view.turns.rowCount() == 3)
    chat_vault.events.ingest(EventIn(conversation_id="c2", content="I also speak Portuguese."))
    qtbot.waitUntil(lambda: view.turns.rowCount() == 4, timeout=60_000)
    chat_vault.events.ingest(EventIn(conversation_id="c3", content="A brand new chat."))
    qtbot.waitUntil(lambda: view.conversations.rowCount() == 3, timeout=60_000)
    assert view.conversation_id == "c2"  # the shown conversation stays shown


def test_importing_a_jsonl_transcript_reports_progress_and_shows_the_conversations(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    path = _transcript(tmp_path / "chats.jsonl", conversations=4)
    _window, _runner, view = _open(window_for, plugin_vault, qtbot)
    seen: list[ImportProgress] = []
    task = view.import_path(path)
    assert task is not None
    assert view.progress.isVisibleTo(view) and view.cancel_button.isVisibleTo(view)
    assert not view.import_button.isEnabled()
    assert view.import_path(path) is None  # one import at a time
    task.progressed.connect(seen.append)
    with qtbot.waitSignal(task.finished, timeout=60_000) as finished:
        pass
    outcome = finished.args[0]
    assert isinstance(outcome, ImportOutcome) and not outcome.cancelled
    assert outcome.last is not None
    assert (outcome.last.conversations_done, outcome.last.events_added) == (4, 12)
    assert [p.conversations_done for p in seen][-1] == 4
    assert view.summary_label.text() == (
        "Imported chats.jsonl (jsonl): 4 conversations — 12 turns added, 0 already there, no errors."
    )
    assert not view.progress.isVisibleTo(view) and view.import_button.isEnabled()
    qtbot.waitUntil(lambda: view.conversations.rowCount() == 4, timeout=60_000)
    assert {c.conversation_id for c in view.conversations.rows()} == {f"imported-{n}" for n in range(4)}
    plugin_vault.jobs.wait_idle()
    assert plugin_vault.counts().events == 12

    again = view.import_path(path)  # the same file again adds nothing
    assert again is not None
    with qtbot.waitSignal(again.finished, timeout=60_000) as second:
        pass
    assert second.args[0].last.duplicates == 12
    assert "0 turns added, 12 already there" in view.summary_label.text()


def test_cancel_stops_between_conversations(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    path = _transcript(tmp_path / "many.jsonl", conversations=20)
    _window, runner, view = _open(window_for, plugin_vault, qtbot)
    gate = threading.Event()
    runner.write(lambda _vault: gate.wait(10))  # the writer is busy: the import waits its turn
    task = view.import_path(path)
    assert task is not None
    view.cancel_import()
    assert view.progress_label.text() == "Cancelling after this conversation…"
    assert not view.cancel_button.isEnabled()
    gate.set()
    with qtbot.waitSignal(task.finished, timeout=60_000) as finished:
        pass
    outcome = finished.args[0]
    assert outcome.cancelled and outcome.last.conversations_done == 0
    assert outcome.last.conversations_total == 20
    assert view.summary_label.text().startswith("Import of many.jsonl cancelled after 0 of 20 conversations")
    assert plugin_vault.counts().events == 0


def test_a_file_that_is_not_a_transcript_is_explained(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "photo.bin"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    window, _runner, view = _open(window_for, plugin_vault, qtbot)
    task = view.import_path(path)
    assert task is not None
    with qtbot.waitSignal(task.failed, timeout=60_000):
        pass
    assert view.summary_label.text().startswith("Import failed: photo.bin is not a transcript")
    assert "photo.bin" in window.message_bar.message
    assert window.message_bar.fix.startswith("Fix: Supported formats:")
    assert view.import_button.isEnabled()


def test_open_in_its_conversation_selects_the_source_turn(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    events = seed_chat(vault)
    window, _runner, _view = _open(window_for, vault, qtbot)
    view = window.view("conversations")
    assert isinstance(view, ConversationsView)
    window.show_view("memories")
    assert window.open_object("event", events[1])  # "I work as a nurse…" in c1
    assert window.current_view_key() == "conversations"
    qtbot.waitUntil(lambda: view.conversation_id == "c1", timeout=60_000)
    qtbot.waitUntil(
        lambda: view.current_turn() is not None and view.current_turn().id == events[1],  # type: ignore[union-attr]
        timeout=60_000,
    )
