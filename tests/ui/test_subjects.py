"""People & topics: the owner first, what is known, mentions, documents, neighbours; rename and merge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from engine import NotFound, Vault
from tests.ui.conftest import seed_chat
from tests.ui.documents_support import fact_from_span, write_note
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.documents import DocumentsView
from ui.views.subjects import SubjectsView
from ui.widgets.tables import select_only_row

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _open(window_for: WindowFor, vault: Vault, qtbot: QtBot) -> tuple[MainWindow, SubjectsView]:
    window, _runner = window_for(vault)
    window.show()
    window.show_view("subjects")
    view = window.view("subjects")
    assert isinstance(view, SubjectsView)
    qtbot.waitUntil(lambda: view.model.rowCount() > 0 and view.detail is not None, timeout=60_000)
    return window, view


def _names(view: SubjectsView) -> list[str]:
    return [str(view.model.data(view.model.index(row, 0))) for row in range(view.model.rowCount())]


def test_the_owner_comes_first_with_what_is_known(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    assert _names(view) == ["You", "Anna"]
    detail = view.detail
    assert detail is not None and detail.subject.kind == "owner"
    assert view.name_label.text() == "You"
    truth = {(t.predicate, t.fact.object_text) for t in view.truth_model.rows()}
    assert ("works_as", "nurse") in truth and ("has_sibling", "Anna") in truth
    lives = [t for t in view.truth_model.rows() if t.predicate == "lives_in"]
    assert len(lives) == 1 and lives[0].alternatives == 1  # the slot's winner, one other value
    assert view.mentions_model.rowCount() == 5
    assert view.tabs.tabText(1) == "Mentions (5)"
    # every section is listed whole, and its page keeps most of the pane (seven sections did not fit as tabs)
    assert view.tabs.count() == 7
    assert view.tabs.list.width() >= view.tabs.label_width()
    assert view.tabs.stack.width() >= 2 * view.tabs.list.width()
    view.tabs.setCurrentIndex(2)
    assert view.tabs.stack.currentIndex() == 2
    assert [n[0].name for n in view.neighbours_model.rows()] == ["Anna"]
    assert not view.rename_button.isEnabled()  # the owner cannot be renamed


def test_rename_keeps_the_old_name_as_an_alias(chat_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    select_only_row(view.table, 1)
    qtbot.waitUntil(lambda: view.detail is not None and view.detail.subject.name == "Anna")
    assert view.rename_button.isEnabled()
    dialog = view.open_rename_dialog()
    assert dialog is not None and dialog.textValue() == "Anna"
    dialog.setTextValue("Anna Karlsson")
    dialog.accept()
    qtbot.waitUntil(lambda: "Anna Karlsson" in _names(view), timeout=60_000)
    qtbot.waitUntil(lambda: view.name_label.text() == "Anna Karlsson", timeout=60_000)
    subject = chat_vault.subjects.find("Anna")  # the old name still finds her
    assert subject.name == "Anna Karlsson" and subject.aliases == ("Anna",)
    assert "also called Anna" in view.about_label.text()


def test_merge_folds_the_selected_subjects_into_the_one_kept(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    chat_vault.facts.add("Annie", "likes", "tea")
    _window, view = _open(window_for, chat_vault, qtbot)
    qtbot.waitUntil(lambda: "Annie" in _names(view), timeout=60_000)
    view.table.selectAll()
    for row in range(view.model.rowCount()):
        if _names(view)[row] == "You":
            view.table.selectionModel().select(
                view.model.index(row, 0),
                view.table.selectionModel().SelectionFlag.Deselect | view.table.selectionModel().SelectionFlag.Rows,
            )
    assert {s.name for s in view.selected_subjects()} == {"Anna", "Annie"}
    assert view.merge_button.isEnabled()
    dialog = view.open_merge_dialog()
    assert dialog is not None
    dialog.keeper.setCurrentIndex(dialog.keeper.findText("Anna"))
    anna_id = dialog.keep_id()
    dialog.accept()
    qtbot.waitUntil(lambda: "Annie" not in _names(view), timeout=60_000)
    qtbot.waitUntil(lambda: view.detail is not None and view.detail.subject.id == anna_id, timeout=60_000)
    kept = chat_vault.subjects.get(anna_id)
    assert "Annie" in kept.aliases and kept.fact_count == 2
    assert {t.fact.object_text for t in view.truth_model.rows()} == {"React", "tea"}
    assert chat_vault.subjects.find("Annie").id == anna_id
    with pytest.raises(NotFound):
        chat_vault.subjects.find("Nobody")


def test_double_clicking_a_memory_opens_it_in_the_memories_view(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, view = _open(window_for, chat_vault, qtbot)
    row = next(r for r, t in enumerate(view.truth_model.rows()) if t.fact.object_text == "nurse")
    fact_id = view.truth_model.row_item(row).fact.id
    view.truth_view.doubleClicked.emit(view.truth_model.index(row, 1))
    assert window.current_view_key() == "memories"
    memories = window.view("memories")
    qtbot.waitUntil(lambda: memories.selected_ids() == [fact_id], timeout=60_000)  # type: ignore[attr-defined]


LETTERS = """# Letters

Anna wrote from Gothenburg about the garden and the rain barrels.

## Later

The user manual of the pump says nothing about it. Anna called again in June.
"""


def test_documents_that_mention_a_subject_are_listed_and_open_at_the_first_mention(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    seed_chat(plugin_vault)
    letters = plugin_vault.documents.upload(path=write_note(tmp_path / "d", "letters.md", LETTERS))
    garden = plugin_vault.documents.upload(path=write_note(tmp_path / "d"))
    barrels = plugin_vault.documents.get(int(garden.document_id or 0)).sections[2].spans[0]
    fact_from_span(plugin_vault, barrels.id, "400 litres", "user", "owns", "two rain barrels")
    window, view = _open(window_for, plugin_vault, qtbot)

    # the owner: the document a memory came from; the word "user" in the letters is not the owner
    qtbot.waitUntil(lambda: [d.name for d in view.documents_model.rows()] == ["garden.md"], timeout=60_000)
    owned = view.documents_model.rows()[0]
    assert (owned.facts, owned.spans, owned.first_span_id) == (1, 0, barrels.id)
    assert view.tabs.tabText(2) == "Documents (1)"

    select_only_row(view.table, _names(view).index("Anna"))
    qtbot.waitUntil(lambda: view.detail is not None and view.detail.subject.name == "Anna", timeout=60_000)
    qtbot.waitUntil(lambda: [d.name for d in view.documents_model.rows()] == ["letters.md"], timeout=60_000)
    mention = view.documents_model.rows()[0]
    assert (mention.document_id, mention.spans, mention.facts) == (letters.document_id, 2, 0)
    assert "Anna wrote from Gothenburg" in mention.excerpt
    assert view.documents_model.data(view.documents_model.index(0, 1)) == "2"
    assert "Anna wrote from Gothenburg" in view.documents_model.data(view.documents_model.index(0, 3))

    plugin_vault.documents.upload(path=write_note(tmp_path / "d", "diary.md", "# Diary\n\nLunch with Anna.\n"))
    qtbot.waitUntil(lambda: view.documents_model.rowCount() == 2, timeout=60_000)  # live, from the change feed
    assert view.tabs.tabText(2) == "Documents (2)"

    row = [d.name for d in view.documents_model.rows()].index("letters.md")
    view.documents_view.doubleClicked.emit(view.documents_model.index(row, 0))
    qtbot.waitUntil(lambda: window.current_view_key() == "documents", timeout=60_000)
    documents = window.view("documents")
    assert isinstance(documents, DocumentsView)
    pane = documents.document_pane
    qtbot.waitUntil(lambda: pane.loaded() and pane.title.text() == "letters.md", timeout=60_000)
    qtbot.waitUntil(
        lambda: getattr(pane.sections.item(pane.section_view.currentIndex()), "id", None) == mention.first_span_id,
        timeout=60_000,
    )


def test_a_change_arriving_while_another_subject_loads_does_not_bring_back_the_previous_one(
    chat_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, chat_vault, qtbot)
    assert view.detail is not None and view.detail.subject.kind == "owner"
    select_only_row(view.table, _names(view).index("Anna"))
    # what a memory change does (through the refresh throttle) before Anna's detail has arrived
    view._reload_detail()
    qtbot.waitUntil(lambda: view.detail is not None and view.detail.subject.name == "Anna", timeout=60_000)
    qtbot.wait(200)  # nothing still on its way replaces it
    assert view.detail is not None and view.detail.subject.name == "Anna"
