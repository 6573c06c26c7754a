"""The Documents view on a real vault: drops from the desktop, collections, quarantine, watched folders."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit, QMessageBox
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.documents.ingest import IngestProgress
from engine.documents.model import TableInSection
from tests.plugins.parser_pdf import statement_pdf
from tests.ui.documents_support import (
    drag_and_drop,
    file_mime,
    write_broken_pdf,
    write_note,
    write_pdf,
)
from ui.main_window import MainWindow
from ui.models.documents import ALL, COLLECTION, DOCUMENT, QUARANTINED
from ui.ops import OpRunner
from ui.views.documents import PANE_DOCUMENT, PANE_QUARANTINED, DocumentsView
from ui.widgets.document_pane import DocumentPane

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _documents(window: MainWindow) -> DocumentsView:
    view = window.view("documents")
    assert isinstance(view, DocumentsView)
    return view


def _names(view: DocumentsView, group: tuple[str, int | None] = (ALL, None)) -> list[str]:
    return [node.title for node in view.model.children_of(*group)]


def test_files_dropped_on_the_window_are_ingested_with_a_summary(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("memories")
    folder = tmp_path / "desk"
    dropped = [
        write_note(folder / "notes"),  # a folder: walked
        write_pdf(folder, "report.pdf"),
        write_broken_pdf(folder),
    ]
    dropped[0] = dropped[0].parent
    (folder / "notes" / "ignored.bin").write_bytes(b"\x00\x01")  # not a supported kind: not collected
    entered, accepted = drag_and_drop(window, file_mime(dropped), QPointF(600, 400))
    assert entered and accepted
    view = _documents(window)
    assert window.current_view_key() == "documents"  # the drop brings the view forward
    qtbot.waitUntil(lambda: view.last_outcome is not None, timeout=60_000)
    outcome = view.last_outcome
    assert outcome is not None and not outcome.cancelled
    assert outcome.counts == {
        "ok": 2,
        "degraded": 0,
        "quarantined": 1,
        "unchanged": 0,
        "skipped": 0,
        "failed": 0,
    }
    summary = view.ingest_panel.summary
    assert "2 ok" in summary and "1 quarantined" in summary and "0 failed" in summary
    assert view.ingest_panel.problems.isVisible()
    assert "broken.pdf: quarantined (invalid" in view.ingest_panel.problems.toPlainText()
    assert not view.ingest_panel.in_progress
    qtbot.waitUntil(lambda: _names(view) == ["garden.md", "report.pdf"], timeout=60_000)
    assert [n.title for n in view.model.children_of("quarantine")] == ["broken.pdf"]
    # the first new document is shown, with its sections
    qtbot.waitUntil(lambda: view.document_pane.loaded(), timeout=60_000)
    assert view.panes.currentIndex() == PANE_DOCUMENT
    assert view.document_pane.sections.section_count() == 4
    assert sorted(d.name for d in plugin_vault.documents()) == ["garden.md", "report.pdf"]


def test_a_file_dropped_on_a_text_field_is_ingested_not_pasted(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("memories")
    field = window.search
    assert isinstance(field, QLineEdit) and field.acceptDrops()
    note = write_note(tmp_path / "one", "plan.md", "# Plan\n\nBuy seeds in March.\n")
    entered, accepted = drag_and_drop(field, file_mime([note]), QPointF(10, 10))
    assert entered and accepted
    assert field.text() == ""  # not inserted as text
    view = _documents(window)
    qtbot.waitUntil(lambda: view.last_outcome is not None, timeout=60_000)
    assert view.last_outcome is not None and view.last_outcome.counts["ok"] == 1
    qtbot.waitUntil(lambda: _names(view) == ["plan.md"], timeout=60_000)


def test_a_drag_without_files_is_refused(plugin_vault: Vault, window_for: WindowFor) -> None:
    window, _runner = window_for(plugin_vault)
    window.show()
    from PySide6.QtCore import QMimeData

    text = QMimeData()
    text.setText("just words")
    entered, accepted = drag_and_drop(window, text, QPointF(300, 300))
    assert not entered and not accepted
    assert _documents(window).task is None


def test_documents_dropped_on_a_collection_are_added_and_can_be_removed(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    garden = plugin_vault.documents.upload(path=write_note(tmp_path / "f"))
    shed = plugin_vault.documents.upload(path=write_note(tmp_path / "f", "shed.md", "# Shed\n\nTools.\n"))
    kitchen = plugin_vault.collections.create("Kitchen")
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    qtbot.waitUntil(lambda: view.model.is_loaded and len(_names(view)) == 2, timeout=60_000)
    model = view.model
    target = model.group_index(COLLECTION, kitchen.id)
    source = model.document_index(int(garden.document_id or 0))
    view.tree.scrollTo(target)
    rect = view.tree.visualRect(target)
    assert rect.isValid()
    data = model.mimeData([source])
    entered, accepted = drag_and_drop(view.tree.viewport(), data, QPointF(rect.center()))
    assert entered and accepted
    qtbot.waitUntil(
        lambda: plugin_vault.collections.document_ids(kitchen.id) == [garden.document_id],
        timeout=60_000,
    )
    group = (COLLECTION, kitchen.id)
    qtbot.waitUntil(lambda: _names(view, group) == ["garden.md"], timeout=60_000)
    assert _names(view) == ["garden.md", "shed.md"]  # still in "All documents": a copy, not a move

    # the context menu of the document inside the collection removes it from there
    inside = model.index_of((DOCUMENT, garden.document_id, group))
    menu = view.tree.build_context_menu(inside)
    labels = [a.text() for a in menu.actions()]
    assert "Remove from “Kitchen”" in labels and "New collection…" in labels
    next(a for a in menu.actions() if a.text() == "Remove from “Kitchen”").trigger()
    qtbot.waitUntil(lambda: plugin_vault.collections.document_ids(kitchen.id) == [], timeout=60_000)
    qtbot.waitUntil(lambda: _names(view, group) == [], timeout=60_000)
    assert shed.document_id is not None


def test_collections_are_created_renamed_and_deleted_keeping_documents(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    doc = plugin_vault.documents.upload(path=write_note(tmp_path / "f"))
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    view.create_collection("Garden")
    qtbot.waitUntil(lambda: [c.name for c in plugin_vault.collections()] == ["Garden"], timeout=60_000)
    collection = plugin_vault.collections()[0]
    qtbot.waitUntil(
        lambda: view.current_node() is not None and view.current_node().key == (COLLECTION, collection.id, None),  # type: ignore[union-attr]
        timeout=60_000,
    )
    assert view.group_pane.isVisible() and view.group_pane.rename_button.isVisible()
    view.add_to_collection(collection.id, [int(doc.document_id or 0)])
    view.rename_collection(collection.id, "Allotment")
    qtbot.waitUntil(lambda: view.group_pane.title.text() == "Allotment (1 document)", timeout=60_000)
    view.delete_collection(collection.id)
    qtbot.waitUntil(lambda: plugin_vault.collections() == [], timeout=60_000)
    qtbot.waitUntil(lambda: [n.kind for n in view.model.group_nodes()] == ["all", "quarantine"], timeout=60_000)
    assert [d.id for d in plugin_vault.documents()] == [doc.document_id]


def test_a_quarantined_file_shows_its_reason_and_can_be_retried(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    broken = write_broken_pdf(tmp_path / "q", "minutes.pdf")
    held = plugin_vault.documents.upload(path=broken)
    assert held.status == "quarantined" and held.quarantine_id is not None
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    view.select_quarantined(held.quarantine_id)
    qtbot.waitUntil(lambda: view.panes.currentIndex() == PANE_QUARANTINED, timeout=60_000)
    pane = view.quarantine_pane
    assert pane.title.text() == "minutes.pdf"
    assert pane.reason.text() == "invalid"
    assert "PDF" in pane.detail.toPlainText()
    assert pane.retry_button.isEnabled()
    current = view.current_node()
    assert current is not None and current.kind == QUARANTINED

    write_pdf(tmp_path / "q", "minutes.pdf", pages=2)  # the file was repaired meanwhile
    pane.retry_button.click()
    qtbot.waitUntil(lambda: [d.name for d in plugin_vault.documents()] == ["minutes.pdf"], timeout=60_000)
    qtbot.waitUntil(lambda: view.panes.currentIndex() == PANE_DOCUMENT, timeout=60_000)
    qtbot.waitUntil(lambda: view.document_pane.loaded(), timeout=60_000)
    assert view.document_pane.title.text() == "minutes.pdf"
    assert plugin_vault.documents.quarantine() == []
    qtbot.waitUntil(lambda: view.model.children_of("quarantine") == [], timeout=60_000)


def _document_pane(vault: Vault, window_for: WindowFor, qtbot: QtBot, document_id: int) -> DocumentPane:
    """The Documents view's pane showing ``document_id``, loaded."""
    window, _runner = window_for(vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    view.select_document(document_id)
    qtbot.waitUntil(view.document_pane.loaded, timeout=60_000)
    return view.document_pane


def test_the_document_pane_shows_status_summaries_sections_and_spans(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    doc = plugin_vault.documents.upload(path=write_pdf(tmp_path / "p", "report.pdf"))
    assert plugin_vault.jobs.wait_idle(120)  # distillations made
    pane = _document_pane(plugin_vault, window_for, qtbot, int(doc.document_id or 0))
    assert pane.status_label.text().startswith("Ready")
    assert "3 pages" in pane.meta_label.text() and "pdf parser" in pane.meta_label.text()
    assert pane.summary.toPlainText().strip() not in ("", "No summary.", "Being summarised…")
    detail = pane.detail.toPlainText()
    assert "Section summary" in detail and "Spans" in detail and "p. 1" in detail
    span_index = pane.sections.index(0, 0, pane.sections.index(0, 0))
    pane.section_view.setCurrentIndex(span_index)
    assert "characters" in pane.detail.toPlainText() and "¶1" in pane.detail.toPlainText()


def test_the_document_pane_lists_a_statement_as_one_table_and_shows_it_whole(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    doc = plugin_vault.documents.upload(name="harbor.pdf", data=statement_pdf())
    pane = _document_pane(plugin_vault, window_for, qtbot, int(doc.document_id or 0))
    model = pane.sections
    leaves = [
        model.index(r, 0, model.index(p, 0))
        for p in range(model.rowCount())
        for r in range(model.rowCount(model.index(p, 0)))
    ]
    tables = [i for i in leaves if isinstance(model.item(i), TableInSection)]
    [row] = [i.data() for i in tables]  # the caption on one line
    assert row.startswith("Table  Harbor Company and Subsidiaries Consolidated Statement of Cash Flows")
    pane.section_view.setCurrentIndex(tables[0])
    shown = pane.detail.toPlainText()
    assert "(Millions) 2018 2017 2016" in shown and "Zephyrine rebates received 1,999 (497) 3,189" in shown
    assert "shown whole to a model" in shown


def test_a_vanished_watched_folder_asks_before_deleting(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    kept_root, gone_root = tmp_path / "usb-stick", tmp_path / "old-share"
    for root in (kept_root, gone_root):
        write_note(root, "a.md", "# A\n\nAlpha notes.\n")
        write_note(root, "b.md", "# B\n\nBeta notes.\n")
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    view.folders.watch(kept_root)
    view.folders.watch(gone_root)
    qtbot.waitUntil(lambda: len(plugin_vault.documents()) == 4, timeout=60_000)
    qtbot.waitUntil(
        lambda: [r.state for r in view.watched] == ["ok", "ok"] and view.watch_panel.roots.rowCount() == 2,
        timeout=60_000,
    )
    assert not view.held.isVisible()
    shutil.rmtree(kept_root)
    shutil.rmtree(gone_root)
    qtbot.waitUntil(lambda: len(view.held.banners()) == 2, timeout=60_000)
    assert window.navigation_badge("documents") == 2
    assert view.held.isVisible()
    gone = view.held.banner_for(gone_root.resolve())
    kept = view.held.banner_for(kept_root.resolve())
    assert gone is not None and kept is not None
    assert gone.delete_button.text() == "Delete 2 documents whose files are gone"
    assert kept.keep_button.text() == "Keep them"
    assert "is gone" in kept.message.text() and "Nothing is deleted unless you say so" in kept.message.text()
    assert len(plugin_vault.documents()) == 4  # nothing deleted while the question is open

    kept.keep_button.click()
    qtbot.waitUntil(lambda: view.held.banner_for(kept_root.resolve()) is None, timeout=60_000)
    assert len(plugin_vault.documents()) == 4
    gone.delete_button.click()
    qtbot.waitUntil(lambda: len(plugin_vault.documents()) == 2, timeout=60_000)
    assert {Path(d.path or "").parent for d in plugin_vault.documents()} == {kept_root.resolve()}
    qtbot.waitUntil(lambda: not view.held.isVisible(), timeout=60_000)
    qtbot.waitUntil(lambda: window.navigation_badge("documents") == 0, timeout=60_000)
    qtbot.waitUntil(lambda: _names(view) == ["a.md", "b.md"], timeout=60_000)
    assert {r.state for r in view.watched} == {"vanished"}
    assert "folder gone" in {view.watch_panel.roots.index(r, 1).data() for r in range(2)}


def test_watched_folders_are_added_rescanned_and_removed(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    write_note(root, "a.md", "# A\n\nAlpha.\n")
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    view.folders.watch(root)
    qtbot.waitUntil(lambda: [r.state for r in view.watched] == ["ok"], timeout=60_000)
    qtbot.waitUntil(lambda: view.watch_panel.chosen_path() == str(root.resolve()), timeout=60_000)
    assert "added" in view.watch_panel.detail.text() or "unchanged" in view.watch_panel.detail.text()
    write_note(root, "b.md", "# B\n\nBeta.\n")
    view.watch_panel.rescan_button.click()
    qtbot.waitUntil(lambda: len(plugin_vault.documents()) == 2, timeout=60_000)
    qtbot.waitUntil(lambda: _names(view) == ["a.md", "b.md"], timeout=60_000)
    view.watch_panel.remove_button.click()
    qtbot.waitUntil(lambda: view.watched == [], timeout=60_000)
    assert plugin_vault.watcher.status() == []
    assert len(plugin_vault.documents()) == 2  # documents stay when a folder is no longer watched
    assert plugin_vault.settings.watch.folders == ()


def test_the_delete_key_deletes_the_selected_documents_after_asking(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    folder = tmp_path / "desk"
    ids = {
        name: int(plugin_vault.documents.upload(path=write_note(folder, name, f"# {name}\n\nText.\n")).document_id or 0)
        for name in ("a.md", "b.md", "c.md")
    }
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    qtbot.waitUntil(lambda: _names(view) == ["a.md", "b.md", "c.md"], timeout=60_000)
    selection = view.tree.selectionModel()
    selection.clearSelection()
    for name in ("a.md", "b.md"):
        index = view.model.index_of((DOCUMENT, ids[name], (ALL, None)))
        selection.select(index, selection.SelectionFlag.Select | selection.SelectionFlag.Rows)
    view.tree.setFocus()
    qtbot.waitUntil(view.tree.hasFocus, timeout=60_000)

    QTest.keyClick(view.tree, Qt.Key.Key_Delete)
    question = view.question
    assert isinstance(question, QMessageBox) and question.isVisible()
    assert question.text().startswith("Delete 2 documents with their sections")
    assert question.defaultButton() is question.button(QMessageBox.StandardButton.Cancel)
    question.button(QMessageBox.StandardButton.Cancel).click()
    assert view.question is question and len(plugin_vault.documents()) == 3  # asked, and nothing happened

    QTest.keyClick(view.tree, Qt.Key.Key_Delete)
    assert view.question is not None and view.question is not question
    view.question.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: [d.name for d in plugin_vault.documents()] == ["c.md"], timeout=60_000)
    qtbot.waitUntil(lambda: _names(view) == ["c.md"], timeout=60_000)
    assert (folder / "a.md").exists() and (folder / "b.md").exists()  # files on disk are not touched
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "2 documents deleted.", timeout=60_000)


def test_the_delete_key_on_a_collection_deletes_it_and_keeps_its_documents(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    doc = plugin_vault.documents.upload(path=write_note(tmp_path / "f"))
    shelf = plugin_vault.collections.create("Shelf")
    plugin_vault.collections.add(shelf.id, [int(doc.document_id or 0)])
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    view.select_collection(shelf.id)
    qtbot.waitUntil(lambda: getattr(view.current_node(), "key", None) == (COLLECTION, shelf.id, None), timeout=60_000)
    view.tree.setFocus()
    qtbot.waitUntil(view.tree.hasFocus, timeout=60_000)
    QTest.keyClick(view.tree, Qt.Key.Key_Delete)
    assert view.question is not None and "“Shelf”" in view.question.text()
    view.question.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: plugin_vault.collections() == [], timeout=60_000)
    assert [d.id for d in plugin_vault.documents()] == [doc.document_id]


def test_cancel_stops_a_running_folder_ingest_after_the_files_in_hand(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    folder = tmp_path / "archive"
    for number in range(120):
        write_note(folder, f"note-{number:03}.md", f"# Note {number}\n\nThe {number}th note of the archive.\n")
    window, _runner = window_for(plugin_vault)
    window.show()
    window.show_view("documents")
    view = _documents(window)
    panel = view.ingest_panel
    seen: list[int] = []

    def cancel_once_under_way(progress: IngestProgress, _cancelling: bool) -> None:
        seen.append(progress.done)
        if progress.done >= 1 and panel.cancel_button.isEnabled():
            panel.cancel_button.click()  # as a person would, once files are being read

    view.ingest.progressed.connect(cancel_once_under_way)
    view.ingest_paths([folder])
    assert panel.in_progress and panel.cancel_button.isVisible()
    qtbot.waitUntil(lambda: view.last_outcome is not None, timeout=30_000)
    outcome = view.last_outcome
    assert outcome is not None and outcome.cancelled and outcome.last is not None
    assert 1 <= outcome.last.done < outcome.last.total == 120
    assert any(done >= 1 for done in seen)
    assert panel.summary.startswith(f"Ingest of archive cancelled after {outcome.last.done} of 120 files")
    assert not panel.in_progress
    # every file read before Cancel is in the vault whole; none after it
    assert len(plugin_vault.documents()) == outcome.counts["ok"] == outcome.last.done
    assert all(d.spans > 0 for d in plugin_vault.documents())


def test_a_link_to_a_passage_that_is_gone_says_so(plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    window, _runner = window_for(plugin_vault)
    window.show()
    assert window.open_object("span", 999_999)
    qtbot.waitUntil(
        lambda: (
            window.statusBar().currentMessage()
            == "That passage is no longer in the vault: its document was deleted or read again."
        ),
        timeout=60_000,
    )
    assert window.message_bar.isHidden()  # a plain note, not an error to fix
