"""The right-hand panes of the Documents view for a group (all, a collection, quarantine) and for a
quarantined file."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from engine.documents.model import Collection, DocumentInfo, QuarantineEntry
from ui.format import local_time, plural
from ui.models.documents import ALL, COLLECTION, QUARANTINE, Node
from ui.models.rows import Column, RowTableModel
from ui.widgets.document_pane import size_text
from ui.widgets.labels import heading_label, secondary_label, value_label
from ui.widgets.tables import EmptyAware, simple_table

DOCUMENT_COLUMNS: tuple[Column[DocumentInfo], ...] = (
    Column("Name", lambda d: d.name, lambda d: d.path or d.name),
    Column("Status", lambda d: d.status, lambda d: d.status_reason or ""),
    Column("Sections", lambda d: f"{d.sections:,}", align_right=True),
    Column("Spans", lambda d: f"{d.spans:,}", align_right=True),
    Column("Pages", lambda d: f"{d.page_count:,}" if d.page_count else "", align_right=True),
    Column("Updated", lambda d: local_time(d.updated_at)),
)
QUARANTINE_COLUMNS: tuple[Column[QuarantineEntry], ...] = (
    Column("File", lambda q: q.name, lambda q: q.path or q.name),
    Column("Reason", lambda q: q.reason, lambda q: q.detail),
    Column("Size", lambda q: size_text(q.size_bytes), align_right=True),
    Column("Since", lambda q: local_time(q.created_at)),
)
GROUP_TEXT = {
    ALL: (
        "Every document in the vault. Drop files or folders anywhere on the window to add "
        "more; drag documents onto a collection on the left to add them to it."
    ),
    COLLECTION: (
        "Recall can be limited to a collection (collection_id). Drag documents here to add them; "
        "right-click one to remove it. Deleting the collection keeps its documents."
    ),
    QUARANTINE: (
        "Files that crashed, hung or broke a limit while being read. They are kept out and not "
        "retried on their own until the file or its parser changes."
    ),
}


class GroupPane(QWidget):
    """A group's documents (or quarantined files) as a table, with Rename and Delete for collections.

    Signals:
        open_requested(str, int): show the document (``"document"``) or quarantined file
            (``"quarantined"``) with that id.
        rename_requested(int): rename the collection with that id.
        delete_requested(int): delete the collection with that id.
    """

    open_requested = Signal(str, int)
    rename_requested = Signal(int)
    delete_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.node: Node | None = None
        self.title = heading_label("", scale=1.2)
        self.note = secondary_label("")
        self.rename_button = QPushButton("Rename…")
        self.rename_button.clicked.connect(self._on_rename)
        self.delete_button = QPushButton("Delete collection…")
        self.delete_button.clicked.connect(self._on_delete)
        self.documents = RowTableModel(DOCUMENT_COLUMNS, key=lambda d: d.id, parent=self)
        self.quarantined = RowTableModel(QUARANTINE_COLUMNS, key=lambda q: q.id, parent=self)
        self.document_table = simple_table(self.documents, stretch=0, name="Documents", fit=(1, 2, 3, 4, 5))
        self.document_table.doubleClicked.connect(self._open_document)
        self.quarantine_table = simple_table(self.quarantined, stretch=1, name="Quarantined files", fit=(0, 2, 3))
        self.quarantine_table.doubleClicked.connect(self._open_quarantined)
        self.document_holder = EmptyAware(self.document_table, "")
        self.quarantine_holder = EmptyAware(
            self.quarantine_table, "No quarantined files: every file so far could be read."
        )
        self.tables = QStackedWidget()
        self.tables.addWidget(self.document_holder)
        self.tables.addWidget(self.quarantine_holder)

        buttons = QHBoxLayout()
        buttons.addWidget(self.title, 1)
        buttons.addWidget(self.rename_button)
        buttons.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.note)
        layout.addWidget(self.tables, 1)

    def show_group(self, node: Node, children: list[Node]) -> None:
        """Show a group node and the leaves under it."""
        self.node = node
        is_collection = node.kind == COLLECTION
        self.rename_button.setVisible(is_collection)
        self.delete_button.setVisible(is_collection)
        count = len(children)
        if node.kind == QUARANTINE:
            self.title.setText(f"Quarantined ({count:,})")
            self.quarantined.set_rows([c.item for c in children if isinstance(c.item, QuarantineEntry)])
            self.tables.setCurrentIndex(1)
        else:
            self.title.setText(f"{node.title} ({plural(count, 'document')})")
            self.documents.set_rows([c.item for c in children if isinstance(c.item, DocumentInfo)])
            self.document_holder.set_empty_text(
                "No documents in this collection yet: drag some here from “All documents”."
                if is_collection
                else "No documents yet. Drop files or folders onto this window to add them."
            )
            self.tables.setCurrentIndex(0)
        note = GROUP_TEXT[node.kind]
        if isinstance(node.item, Collection) and node.item.description:
            note = f"{node.item.description}\n{note}"
        self.note.setText(note)

    def _open_document(self, index: QModelIndex) -> None:
        self.open_requested.emit("document", self.documents.row_item(index.row()).id)

    def _open_quarantined(self, index: QModelIndex) -> None:
        self.open_requested.emit("quarantined", self.quarantined.row_item(index.row()).id)

    def _on_rename(self) -> None:
        if self.node is not None and self.node.ident is not None:
            self.rename_requested.emit(self.node.ident)

    def _on_delete(self) -> None:
        if self.node is not None and self.node.ident is not None:
            self.delete_requested.emit(self.node.ident)


class QuarantinePane(QWidget):
    """A quarantined file: its typed reason, the parser's message, and Retry.

    Signals:
        retry_requested(int): parse the quarantined file with that id again.
    """

    retry_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry: QuarantineEntry | None = None
        self.title = heading_label("", scale=1.2)
        self.reason = value_label("")
        self.reason.setAccessibleName("Reason")
        self.path = value_label("")
        self.size_label = value_label("")
        self.parser = value_label("")
        self.digest = value_label("")
        self.since = value_label("")
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setAccessibleName("What the parser reported")
        self.detail.setMaximumHeight(self.fontMetrics().lineSpacing() * 8 + 16)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setToolTip("Read the file again now (it must still be at its path)")
        self.retry_button.clicked.connect(self._on_retry)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Reason", self.reason)
        form.addRow("File", self.path)
        form.addRow("Size", self.size_label)
        form.addRow("Parser", self.parser)
        form.addRow("Content hash", self.digest)
        form.addRow("Quarantined", self.since)
        row = QHBoxLayout()
        row.addWidget(self.retry_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(
            secondary_label(
                "This file could not be read safely, so it was kept out of the vault. It is not "
                "tried again on its own until the file or its parser changes."
            )
        )
        layout.addLayout(form)
        layout.addWidget(heading_label("What the parser reported", scale=1.0))
        layout.addWidget(self.detail)
        layout.addLayout(row)
        layout.addStretch(1)

    def show_entry(self, entry: QuarantineEntry) -> None:
        """Show ``entry``."""
        self.entry = entry
        self.title.setText(entry.name)
        self.reason.setText(entry.reason)
        self.path.setText(entry.path or "uploaded (no file to retry from)")
        self.size_label.setText(size_text(entry.size_bytes))
        self.parser.setText(f"{entry.parser} v{entry.parser_version}")
        self.digest.setText(entry.content_hash[:16] + "…")
        self.digest.setToolTip(entry.content_hash)
        self.since.setText(local_time(entry.created_at))
        self.detail.setPlainText(entry.detail)
        self.retry_button.setEnabled(bool(entry.path))
        self.retry_button.setText("Retry")

    def set_retrying(self) -> None:
        """Show that a retry runs."""
        self.retry_button.setEnabled(False)
        self.retry_button.setText("Retrying…")

    def _on_retry(self) -> None:
        if self.entry is not None:
            self.retry_requested.emit(self.entry.id)
