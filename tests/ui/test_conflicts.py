"""The Conflicts view: both sides with evidence, keep one or both, and the live navigation badge."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.events import EventIn
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.conflicts import ConflictsView

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _open(window_for: WindowFor, vault: Vault, qtbot: QtBot) -> tuple[MainWindow, ConflictsView]:
    window, _runner = window_for(vault)
    window.show()
    window.show_view("conflicts")
    view = window.view("conflicts")
    assert isinstance(view, ConflictsView)
    qtbot.waitUntil(lambda: view.loaded, timeout=60_000)
    return window, view


def test_both_sides_show_their_evidence_and_keeping_one_drops_the_badge(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, view = _open(window_for, chat_vault, qtbot)
    assert window.navigation_badge("conflicts") == 1
    assert view.count_label.text() == "1 open conflict"
    conflict = view.current_conflict()
    assert conflict is not None and conflict.predicate == "lives_in"
    assert view.side_a.value.text() == conflict.fact_a.object_text
    assert view.side_b.value.text() == conflict.fact_b.object_text
    qtbot.waitUntil(lambda: view.side_a.evidence.highlighted_text != "", timeout=60_000)
    qtbot.waitUntil(lambda: view.side_b.evidence.highlighted_text != "", timeout=60_000)
    assert {view.side_a.evidence.highlighted_text, view.side_b.evidence.highlighted_text} == {
        "I live in Paris.",
        "I live in Berlin.",
    }
    assert "without a change cue" in view.reason_label.text()

    berlin = conflict.fact_b if conflict.fact_b.object_text == "Berlin" else conflict.fact_a
    keep = view.side_b if berlin is conflict.fact_b else view.side_a
    keep.keep_button.click()
    qtbot.waitUntil(lambda: window.navigation_badge("conflicts") == 0, timeout=60_000)
    resolved = chat_vault.conflicts.get(conflict.id)
    assert resolved.status == "resolved" and resolved.winner_id == berlin.id
    assert chat_vault.facts.get(berlin.id).status == "active"
    assert chat_vault.conflicts() == []
    assert view.stack.currentIndex() == 1  # the empty state
    assert "No open conflicts" in view.empty_label.text()


def test_keep_both_leaves_both_memories_current(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    window, view = _open(window_for, chat_vault, qtbot)
    conflict = view.current_conflict()
    assert conflict is not None
    view.keep_both_button.click()
    qtbot.waitUntil(lambda: view.open_count == 0, timeout=60_000)
    sides = chat_vault.facts.get_many([conflict.fact_a.id, conflict.fact_b.id])
    assert {f.status for f in sides} == {"active"}
    assert chat_vault.conflicts.get(conflict.id).winner_id is None
    assert window.navigation_badge("conflicts") == 0


def test_the_badge_follows_new_conflicts_live_even_while_the_view_is_hidden(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, _runner = window_for(vault)
    window.show()
    window.show_view("overview")
    view = window.view("conflicts")
    assert isinstance(view, ConflictsView)
    qtbot.waitUntil(lambda: view.loaded, timeout=60_000)
    assert window.navigation_badge("conflicts") == 0
    vault.events.ingest(
        [
            EventIn(conversation_id="x", content="I live in Rome.", occurred_at="2026-02-01"),
            EventIn(conversation_id="y", content="I live in Oslo.", occurred_at="2026-02-02"),
        ]
    )
    qtbot.waitUntil(lambda: window.navigation_badge("conflicts") == 1, timeout=60_000)
    assert window.current_view_key() == "overview"
    item = window.navigation.item(2)
    assert item.data(Qt.ItemDataRole.AccessibleTextRole) == "Conflicts, 1"  # read out too


def test_the_queue_is_as_tall_as_its_few_conflicts_and_the_sides_get_the_rest(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, view = _open(window_for, chat_vault, qtbot)
    window.resize(1200, 800)
    qtbot.waitUntil(lambda: view.side_a.isVisible(), timeout=60_000)
    queue, sides = view.splitter.sizes()
    row = view.table.verticalHeader().defaultSectionSize()
    assert queue < 4 * row  # one conflict: a header, a row and a little slack
    assert sides > 6 * queue
