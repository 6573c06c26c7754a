"""The Memories view on a real vault: filters, evidence, history, actions, bulk, undo, add."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QTextBrowser
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.facts.api import FactFilter
from engine.facts.model import Fact
from tests.ui.conftest import seed_chat
from tests.ui.documents_support import fact_from_span, write_pdf
from ui.main_window import MainWindow
from ui.models.facts import TIER, VALUE
from ui.ops import OpRunner
from ui.views.documents import DocumentsView
from ui.views.memories import MemoriesView

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _open(window_for: WindowFor, vault: Vault, qtbot: QtBot) -> tuple[MainWindow, MemoriesView]:
    window, _runner = window_for(vault)
    window.show()
    window.show_view("memories")
    view = window.view("memories")
    assert isinstance(view, MemoriesView)
    qtbot.waitUntil(lambda: view.model.loaded and view.model.rowCount() > 0, timeout=60_000)
    return window, view


def _value_at(view: MemoriesView, row: int) -> str:
    return str(view.model.data(view.model.index(row, VALUE)))


def _fact(vault: Vault, value: str) -> Fact:
    return next(f for f in vault.facts(status=None, limit=500) if f.object_text == value)


def _select(qtbot: QtBot, view: MemoriesView, fact_id: int) -> None:
    assert view.select_fact(fact_id)
    qtbot.waitUntil(lambda: view.detail.fact is not None and view.detail.fact.id == fact_id, timeout=60_000)
    qtbot.waitUntil(view.detail.loaded, timeout=60_000)


def test_lists_the_memories_and_filters_them(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    assert view.model.rowCount() == 7
    assert view.count_label.text() == "7 memories"
    qtbot.waitUntil(lambda: _value_at(view, 0) != "…", timeout=60_000)
    assert {_value_at(view, row) for row in range(7)} == {
        "nurse",
        "St Mary's hospital",
        "Paris",
        "Berlin",
        "Anna",
        "React",
        "Django",
    }
    view.filters.subject.setEditText("Anna")
    view.filters.apply_now()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=60_000)
    assert view.count_label.text() == "1 memory match"
    view.filters.clear()
    qtbot.waitUntil(lambda: view.model.rowCount() == 7, timeout=60_000)
    view.filters.search.setText("Django")
    view.filters.apply_now()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=60_000)
    qtbot.waitUntil(lambda: _value_at(view, 0) == "Django", timeout=60_000)
    view.filters.clear()
    view.filters.standing.setCurrentText("challenged")  # the two sides of the conflict
    qtbot.waitUntil(lambda: view.model.rowCount() == 2, timeout=60_000)
    view.filters.tier.setCurrentText("cold")
    qtbot.waitUntil(lambda: view.table_stack.currentIndex() == 1, timeout=60_000)
    assert view.empty_label.text() == "No memories match these filters."


def test_the_detail_follows_the_list_when_a_filter_drops_the_memory_shown(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    nurse, django = _fact(chat_vault, "nurse"), _fact(chat_vault, "Django")
    _select(qtbot, view, nurse.id)
    view.filters.search.setText("Django")  # the memory shown does not match
    view.filters.apply_now()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=60_000)
    qtbot.waitUntil(lambda: view.detail.fact is not None and view.detail.fact.id == django.id, timeout=60_000)
    assert view.selected_ids() == [django.id]
    view.filters.search.setText("no such words anywhere")
    view.filters.apply_now()
    qtbot.waitUntil(lambda: view.table_stack.currentIndex() == 1, timeout=60_000)
    qtbot.waitUntil(lambda: view.detail.fact is None, timeout=60_000)
    view.filters.clear()  # back to all: the list holds the first memory again, and the detail shows one of them
    qtbot.waitUntil(lambda: view.model.rowCount() == 7, timeout=60_000)
    qtbot.waitUntil(lambda: view.detail.fact is not None, timeout=60_000)
    assert view.detail.fact is not None and view.selected_ids() == [view.detail.fact.id]


def test_the_detail_highlights_the_quote_inside_its_chat_turn(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    sister = _fact(chat_vault, "Anna")
    _select(qtbot, view, sister.id)
    evidence = view.detail.evidence
    assert evidence.highlighted_text == "My sister Anna loves React."
    text = evidence.toPlainText()
    # the turn with its neighbours, in order
    assert text.index("I live in Berlin.") < text.index("My sister Anna") < text.index("Django")
    assert view.detail.title.text() == sister.statement
    assert view.detail.fields["subject"].text() == "You"
    assert view.detail.buttons["edit"].isVisibleTo(view.detail)
    assert not view.detail.buttons["restore"].isVisibleTo(view.detail)


def test_a_memory_added_by_hand_says_so_and_editing_it_keeps_two_versions(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    seed_chat(vault)
    window, view = _open(window_for, vault, qtbot)
    dialog = view.open_add_dialog()
    dialog.subject.setEditText("Bruno")
    dialog.predicate.setEditText("works_as")
    dialog.value.setText("baker")
    dialog.accept()
    qtbot.waitUntil(lambda: view.model.rowCount() == 8, timeout=60_000)
    qtbot.waitUntil(
        lambda: view.detail.fact is not None and view.detail.fact.object_text == "baker",
        timeout=60_000,
    )
    added = view.detail.fact
    assert added is not None and added.subject == "Bruno"
    qtbot.waitUntil(view.detail.loaded, timeout=60_000)
    assert "Added by hand" in view.detail.evidence.toPlainText()

    edit = view.open_edit_dialog(added.id)
    assert edit is not None and edit.value.text() == "baker"
    edit.value.setText("pastry chef")
    edit.accept()
    qtbot.waitUntil(
        lambda: view.detail.fact is not None and view.detail.fact.object_text == "pastry chef",
        timeout=60_000,
    )
    qtbot.waitUntil(lambda: view.detail.history.rowCount() == 2, timeout=60_000)
    versions = view.detail.history.rows()
    assert [v.object_text for v in versions] == ["baker", "pastry chef"]
    assert [v.status for v in versions] == ["superseded", "active"]
    assert view.detail.tabs.tabText(1) == "History (2)"
    assert vault.facts.get(added.id).status == "superseded"
    qtbot.waitUntil(lambda: view.model.row_of(added.id) is None, timeout=60_000)  # left the list
    assert window.message_bar.isHidden()


def test_delete_key_deletes_the_selection_and_ctrl_z_brings_it_back(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, view = _open(window_for, chat_vault, qtbot)
    nurse = _fact(chat_vault, "nurse")
    _select(qtbot, view, nurse.id)
    view.table.setFocus()
    qtbot.waitUntil(view.table.hasFocus, timeout=60_000)
    QTest.keyClick(view.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: chat_vault.facts.get(nurse.id).status == "deleted", timeout=60_000)
    qtbot.waitUntil(lambda: view.model.row_of(nurse.id) is None, timeout=60_000)
    assert view.can_undo()
    QTest.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    QTest.keyRelease(window, Qt.Key.Key_Control)  # QTest leaves Ctrl "held" otherwise
    qtbot.waitUntil(lambda: chat_vault.facts.get(nurse.id).status == "active", timeout=60_000)
    qtbot.waitUntil(lambda: view.model.row_of(nurse.id) is not None, timeout=60_000)
    assert not view.can_undo()
    assert not window.undo()  # nothing left: says so instead of doing something else
    assert window.statusBar().currentMessage() == "Nothing to undo here."


def test_bulk_actions_apply_to_every_selected_row(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    view.table.selectAll()
    ids = view.selected_ids()
    assert len(ids) == 7
    assert view.bulk_buttons["pin_hot"].isVisibleTo(view)
    assert view.selection_label.text() == "7 selected"
    view.bulk_buttons["pin_hot"].click()
    qtbot.waitUntil(
        lambda: all(f.tier == "hot" and f.tier_pinned for f in chat_vault.facts.get_many(ids)),
        timeout=60_000,
    )
    qtbot.waitUntil(
        lambda: all(view.model.data(view.model.index(row, TIER)) == "hot (pinned)" for row in range(7)),
        timeout=60_000,
    )
    view.table.clearSelection()
    for row in (0, 1):
        view.table.selectionModel().select(
            view.model.index(row, 0),
            view.table.selectionModel().SelectionFlag.Select | view.table.selectionModel().SelectionFlag.Rows,
        )
    two = view.selected_ids()
    view.act_on_selection("useful")
    qtbot.waitUntil(lambda: all(f.useful_count == 1 for f in chat_vault.facts.get_many(two)), timeout=60_000)
    view.act_on_selection("delete")
    qtbot.waitUntil(lambda: view.model.rowCount() == 5, timeout=60_000)
    assert view.undo()
    qtbot.waitUntil(lambda: view.model.rowCount() == 7, timeout=60_000)


def test_approve_brings_a_memory_out_of_quarantine(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    django = _fact(chat_vault, "Django")
    while chat_vault.facts.get(django.id).standing != "quarantine":
        chat_vault.facts.mark(django.id, "questionable")
    _window, view = _open(window_for, chat_vault, qtbot)
    view.filters.standing.setCurrentText("quarantine")
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=60_000)
    _select(qtbot, view, django.id)
    assert view.detail.buttons["approve"].isVisibleTo(view.detail)
    view.detail.buttons["approve"].click()
    qtbot.waitUntil(lambda: chat_vault.facts.get(django.id).standing == "fact", timeout=60_000)
    qtbot.waitUntil(lambda: view.model.rowCount() == 0, timeout=60_000)  # no longer quarantined
    assert view.detail.fact is not None and view.detail.fact.standing == "fact"


def test_retract_and_restore_from_the_detail_pane(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    react = _fact(chat_vault, "React")
    _select(qtbot, view, react.id)
    view.detail.buttons["retract"].click()
    qtbot.waitUntil(lambda: chat_vault.facts.get(react.id).status == "retracted", timeout=60_000)
    qtbot.waitUntil(lambda: view.model.row_of(react.id) is None, timeout=60_000)
    anna = _fact(chat_vault, "Anna")
    _select(qtbot, view, anna.id)
    view.detail.buttons["delete"].click()
    qtbot.waitUntil(lambda: chat_vault.facts.get(anna.id).status == "deleted", timeout=60_000)
    qtbot.waitUntil(lambda: view.model.row_of(anna.id) is None, timeout=60_000)
    qtbot.waitUntil(lambda: view.detail.fact is not None, timeout=60_000)
    assert view.detail.fact is not None and view.detail.fact.id != anna.id  # the next one
    view.filters.status.setCurrentText("deleted")
    qtbot.waitUntil(lambda: view.model.fact_ids() == [anna.id], timeout=60_000)
    _select(qtbot, view, anna.id)
    assert view.detail.buttons["restore"].isVisibleTo(view.detail)
    assert not view.detail.buttons["delete"].isVisibleTo(view.detail)
    view.detail.buttons["restore"].click()
    qtbot.waitUntil(lambda: chat_vault.facts.get(anna.id).status == "active", timeout=60_000)
    qtbot.waitUntil(lambda: view.model.rowCount() == 0, timeout=60_000)  # no longer deleted


def test_show_fact_clears_filters_that_hide_it(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    view.filters.subject.setEditText("Anna")
    view.filters.apply_now()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=60_000)
    nurse = _fact(chat_vault, "nurse")
    view.show_fact(nurse.id)
    qtbot.waitUntil(lambda: view.model.rowCount() == 7, timeout=60_000)
    qtbot.waitUntil(lambda: view.selected_ids() == [nurse.id], timeout=60_000)
    assert view.filters.is_default()
    assert chat_vault.facts.ids(FactFilter(subject="Anna")) != []


def _click_link(qtbot: QtBot, browser: QTextBrowser, text: str) -> None:
    """Click the link whose text is ``text`` in ``browser``, as a person would."""
    found = browser.document().find(text)
    assert not found.isNull(), text
    cursor = QTextCursor(found)
    cursor.setPosition(found.selectionStart() + 1)
    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=browser.cursorRect(cursor).center())


def test_a_memory_from_a_document_shows_its_span_with_the_quote_section_and_page(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    upload = plugin_vault.documents.upload(path=write_pdf(tmp_path / "p", "report.pdf"))
    tree = plugin_vault.documents.get(int(upload.document_id or 0))
    section = next(s for s in tree.sections if s.page_start == 2 and s.level == 2 and s.spans)
    span = section.spans[0]
    # the body starts after the section's heading (a span may open with headings folded into it)
    titled = span.text.find(section.title)
    body = titled + len(section.title) + 1 if titled >= 0 else 0
    first_line_end = span.text.index("\n", span.text.index("\n", body) + 1)  # the quote runs over a line break
    quote = span.text[first_line_end - 20 : first_line_end + 25]
    fact = fact_from_span(plugin_vault, span.id, quote, "Bruno", "works_as", "archivist")
    window, view = _open(window_for, plugin_vault, qtbot)
    _select(qtbot, view, fact.id)
    evidence = view.detail.evidence
    assert evidence.highlighted_text == quote
    text = evidence.toPlainText()
    parent = [s for s in tree.sections if s.ordinal < section.ordinal and s.level == 1][-1]
    assert text.startswith("report.pdf")
    assert f"{parent.title} › {section.title} · p. 2 · ¶{span.ordinal + 1}" in text
    assert " ".join(quote.split()) in text  # the PDF's hard wrap inside the quote is reflowed
    assert "no longer" not in text and "Documents view once" not in text
    html = evidence.toHtml().lower()
    assert evidence.palette().color(QPalette.ColorRole.Highlight).name() in html  # marked, as in chat turns
    assert view.detail.fields["source"].text() == "from a document; read by rules"

    _click_link(qtbot, evidence, "open in Documents")
    documents = window.view("documents")
    assert isinstance(documents, DocumentsView)
    qtbot.waitUntil(lambda: window.current_view_key() == "documents", timeout=60_000)
    qtbot.waitUntil(lambda: documents.document_pane.loaded(), timeout=60_000)
    assert documents.document_pane.title.text() == "report.pdf"
    pane = documents.document_pane
    qtbot.waitUntil(lambda: pane.sections.item(pane.section_view.currentIndex()) == span, timeout=60_000)
    assert quote.split()[0] in pane.detail.toPlainText()


def _press_ctrl_z(qtbot: QtBot, window: MainWindow, view: MemoriesView) -> None:
    window.activateWindow()  # back from the edit dialog
    qtbot.waitUntil(window.isActiveWindow, timeout=60_000)
    view.table.setFocus()  # a focused text field would take Ctrl+Z for its own text
    qtbot.waitUntil(view.table.hasFocus, timeout=60_000)
    QTest.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    QTest.keyRelease(window, Qt.Key.Key_Control)  # QTest leaves Ctrl "held" otherwise


def test_ctrl_z_takes_back_an_edit_then_the_delete_before_it(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, view = _open(window_for, chat_vault, qtbot)
    assert not view.undo_button.isVisibleTo(view)
    anna = _fact(chat_vault, "Anna")
    _select(qtbot, view, anna.id)
    view.detail.buttons["delete"].click()
    qtbot.waitUntil(lambda: chat_vault.facts.get(anna.id).status == "deleted", timeout=60_000)
    nurse = _fact(chat_vault, "nurse")
    _select(qtbot, view, nurse.id)
    dialog = view.open_edit_dialog(nurse.id)
    assert dialog is not None
    dialog.value.setText("midwife")
    dialog.accept()
    qtbot.waitUntil(lambda: view.detail.fact is not None and view.detail.fact.object_text == "midwife", timeout=60_000)
    edited = view.detail.fact
    assert edited is not None and chat_vault.facts.get(nurse.id).status == "superseded"
    assert view.undo_button.isVisibleTo(view)
    assert view.undo_button.toolTip() == f"Undo the edit of “{nurse.statement}” (Ctrl+Z)"

    _press_ctrl_z(qtbot, window, view)
    qtbot.waitUntil(lambda: chat_vault.facts.get(nurse.id).status == "active", timeout=60_000)
    assert chat_vault.facts.get(edited.id).status == "retracted"  # kept in the history, not erased
    qtbot.waitUntil(lambda: view.detail.fact is not None and view.detail.fact.id == nurse.id, timeout=60_000)
    qtbot.waitUntil(lambda: view.model.row_of(nurse.id) is not None, timeout=60_000)
    assert view.model.row_of(edited.id) is None
    assert window.statusBar().currentMessage() == (
        f"Undid the edit of “{nurse.statement}”: “nurse” is back; "
        "the corrected version stays in its history, retracted."
    )
    assert view.undo_text() == "the delete of 1 memory"  # the next Ctrl+Z, named before it is pressed
    assert view.undo_button.toolTip() == "Undo the delete of 1 memory (Ctrl+Z)"

    _press_ctrl_z(qtbot, window, view)
    qtbot.waitUntil(lambda: chat_vault.facts.get(anna.id).status == "active", timeout=60_000)
    qtbot.waitUntil(
        lambda: window.statusBar().currentMessage() == "Undid the delete of 1 memory: 1 memory restored.",
        timeout=60_000,
    )
    assert not view.can_undo() and not view.undo_button.isVisibleTo(view)


def test_an_edit_changed_since_is_not_undone_and_the_reason_is_given(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, view = _open(window_for, chat_vault, qtbot)
    berlin = _fact(chat_vault, "Berlin")  # one side of an open conflict: the edit settles it
    view.edit_fact(berlin.id, value="Hamburg")
    qtbot.waitUntil(lambda: view.can_undo(), timeout=60_000)
    assert view.undo()
    qtbot.waitUntil(lambda: chat_vault.facts.get(berlin.id).status == "active", timeout=60_000)
    qtbot.waitUntil(
        lambda: window.statusBar().currentMessage().endswith("The conflict the edit settled stays settled."),
        timeout=60_000,
    )
    assert chat_vault.conflicts(status="open") == []  # said, not silently reopened

    paris = _fact(chat_vault, "Paris")
    view.edit_fact(paris.id, value="Lyon")
    qtbot.waitUntil(lambda: view.can_undo(), timeout=60_000)
    lyon = _fact(chat_vault, "Lyon")
    chat_vault.facts.delete(lyon.id)  # changed elsewhere (another window, the endpoint) before Ctrl+Z
    assert window.undo()
    qtbot.waitUntil(
        lambda: (
            window.statusBar().currentMessage()
            == f"Cannot undo the edit of “{paris.statement}”: the corrected version is deleted now."
        ),
        timeout=60_000,
    )
    assert chat_vault.facts.get(paris.id).status == "superseded"  # nothing else was undone instead
    assert chat_vault.facts.get(lyon.id).status == "deleted"
    assert not view.can_undo()


def test_demote_unpin_and_questionable_from_the_detail_pane(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    nurse = _fact(chat_vault, "nurse")
    assert (nurse.tier, nurse.tier_pinned) == ("hot", False)
    _select(qtbot, view, nurse.id)
    buttons = view.detail.buttons
    assert buttons["demote"].isVisibleTo(view.detail) and not buttons["unpin"].isVisibleTo(view.detail)
    buttons["demote"].click()
    qtbot.waitUntil(lambda: chat_vault.facts.get(nurse.id).tier == "warm", timeout=60_000)
    assert chat_vault.facts.get(nurse.id).tier_pinned  # kept there: the rules would lift it back
    qtbot.waitUntil(lambda: view.detail.fields["tier"].text() == "warm, pinned", timeout=60_000)
    qtbot.waitUntil(
        lambda: view.model.data(view.model.index(view.model.row_of(nurse.id) or 0, TIER)) == "warm (pinned)"
    )
    assert buttons["unpin"].isVisibleTo(view.detail)

    buttons["unpin"].click()
    qtbot.waitUntil(lambda: not chat_vault.facts.get(nurse.id).tier_pinned, timeout=60_000)
    qtbot.waitUntil(lambda: not buttons["unpin"].isVisibleTo(view.detail), timeout=60_000)
    assert not view.detail.fields["tier"].text().endswith("pinned")

    before = chat_vault.facts.get(nurse.id)
    buttons["questionable"].click()
    qtbot.waitUntil(lambda: chat_vault.facts.get(nurse.id).questionable_count == 1, timeout=60_000)
    after = chat_vault.facts.get(nurse.id)
    assert after.importance < before.importance and after.confidence <= before.confidence
    qtbot.waitUntil(lambda: "questionable 1×" in view.detail.fields["usage"].text(), timeout=60_000)


def test_the_predicate_filter_keeps_only_that_kind_of_memory(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    predicate = view.filters.predicate
    qtbot.waitUntil(lambda: predicate.findText("lives_in") >= 0, timeout=60_000)  # offered from the catalog
    predicate.setFocus()
    QTest.keyClicks(predicate.lineEdit(), "lives_in")  # applied after the typing pause, no Enter needed
    qtbot.waitUntil(lambda: view.model.rowCount() == 2, timeout=60_000)
    qtbot.waitUntil(lambda: {_value_at(view, row) for row in range(2)} == {"Paris", "Berlin"}, timeout=60_000)
    assert view.count_label.text() == "2 memories match"
    assert view.model.fact_filter.predicate == "lives_in"
    predicate.lineEdit().clear()
    view.filters.apply_now()
    qtbot.waitUntil(lambda: view.model.rowCount() == 7, timeout=60_000)
