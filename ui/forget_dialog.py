"""Forget, from the window: choose what (a conversation, a document, a project, a time range or everything of a
user), see what will go (a dry run's counts), confirm, and read the receipt.

The dry run and the forget go through the runner's writer (a dry run records its receipt too); the counts shown are
exactly what the forget would remove at that moment.  Changing the choice clears the preview, so the button always
forgets what was previewed.  The receipt stays in the dialog and in Activity's history (:mod:`engine.activity`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from PySide6.QtCore import QDateTime, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.documents.model import DocumentInfo
from engine.events import ConversationInfo
from engine.forget import ForgetScope, Receipt
from ui.ops import OpRunner

SCOPES = (
    ("conversation", "A conversation"),
    ("document", "A document"),
    ("project", "A project"),
    ("time", "A time range"),
    ("user", "Everything of a user"),
)
#: Counts shown in the preview, in this order and these words.
COUNT_WORDS = (
    ("events", "chat turns"),
    ("facts", "memories"),
    ("conflicts", "conflicts"),
    ("episodes", "episodes"),
    ("documents", "documents"),
    ("chunks", "passages"),
    ("subjects", "people and topics"),
    ("understandings", "understandings"),
    ("observations", "observations"),
    ("collections", "collections"),
    ("quarantine", "refused files"),
    ("backups", "backup files (replaced by a fresh one)"),
)


def counts_text(counts: dict[str, int]) -> str:
    """The counts that are not zero, in words (``nothing`` when all are)."""
    parts = [f"{counts[key]:,} {words}" for key, words in COUNT_WORDS if counts.get(key)]
    return ", ".join(parts) if parts else "nothing"


def load_choices(vault: Vault) -> tuple[list[ConversationInfo], list[DocumentInfo]]:
    """Conversations (by title) and documents to choose from (reader pool)."""
    return vault.conversations(limit=500), vault.documents(limit=1000)


class ForgetDialog(QDialog):
    """Choose, preview, confirm, forget.  ``forgotten(Receipt)`` after a forget (GUI thread)."""

    forgotten = Signal(object)
    previewed = Signal(object)

    def __init__(self, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Forget")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        self._runner = runner
        self.preview: Receipt | None = None
        self.receipt: Receipt | None = None
        self._pending: tuple[str, object] | None = None  # a choice made before the lists arrived

        self.scope = QComboBox()
        for key, label in SCOPES:
            self.scope.addItem(label, key)
        self.conversation = QComboBox()
        self.conversation.setAccessibleName("Conversation")
        self.document = QComboBox()
        self.document.setAccessibleName("Document")
        self.project = QLineEdit()
        self.project.setPlaceholderText("project id")
        self.since = QDateTimeEdit(QDateTime.currentDateTime().addDays(-1))
        self.until = QDateTimeEdit(QDateTime.currentDateTime())
        for edit in (self.since, self.until):
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("yyyy-MM-dd HH:mm")
        self.user = QLineEdit("default")
        self.pages = QStackedWidget()
        for widget in (self.conversation, self.document, self.project, self._range_page(), self.user):
            self.pages.addWidget(widget)

        self.preview_label = QLabel("Choose what to forget, then Preview to see what would go.")
        self.preview_label.setWordWrap(True)
        self.preview_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.confirm = QCheckBox("I understand that what is forgotten cannot be brought back")
        self.preview_button = QPushButton("Preview")
        self.forget_button = QPushButton("Forget")
        self.forget_button.setObjectName("destructive")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.preview_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.forget_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)

        form = QFormLayout()
        form.addRow("Forget", self.scope)
        form.addRow("Which", self.pages)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.preview_label)
        layout.addWidget(self.confirm)
        layout.addWidget(buttons)
        self.resize(560, 300)

        self.scope.currentIndexChanged.connect(self._scope_changed)
        for signal in (
            self.conversation.currentIndexChanged,
            self.document.currentIndexChanged,
            self.project.textChanged,
            self.user.textChanged,
            self.since.dateTimeChanged,
            self.until.dateTimeChanged,
        ):
            signal.connect(self._clear_preview)
        self.confirm.toggled.connect(self._update_buttons)
        self.preview_button.clicked.connect(self.run_preview)
        self.forget_button.clicked.connect(self.run_forget)
        self._update_buttons()
        self._runner.read(load_choices, self._fill)

    def _range_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("From", self.since)
        form.addRow("Until", self.until)
        return page

    # -- choosing ----------------------------------------------------------------------------------
    def choose(self, kind: str, ident: object = None) -> None:
        """Preselect a scope (``conversation`` with its id, ``document`` with its id, ``project``, ``user``)."""
        keys = [key for key, _label in SCOPES]
        self.scope.setCurrentIndex(keys.index(kind))
        if kind == "conversation" and ident is not None:
            self._select(self.conversation, ident)
            self._pending = ("conversation", ident)
        elif kind == "document" and ident is not None:
            self._select(self.document, ident)
            self._pending = ("document", ident)
        elif kind == "project" and ident is not None:
            self.project.setText(str(ident))
        elif kind == "user" and ident is not None:
            self.user.setText(str(ident))

    @staticmethod
    def _select(combo: QComboBox, ident: object) -> None:
        index = combo.findData(ident)
        if index >= 0:
            combo.setCurrentIndex(index)

    def _fill(self, choices: tuple[list[ConversationInfo], list[DocumentInfo]]) -> None:
        conversations, documents = choices
        for c in conversations:
            label = c.title or c.conversation_id
            self.conversation.addItem(
                f"{label} — {c.events} turns, last {c.last_at.astimezone():%Y-%m-%d}", c.conversation_id
            )
            self.conversation.setItemData(self.conversation.count() - 1, c.user_id, Qt.ItemDataRole.UserRole + 1)
        for d in documents:
            self.document.addItem(d.name, d.id)
        if self._pending is not None:
            kind, ident = self._pending
            self._select(self.conversation if kind == "conversation" else self.document, ident)
        self._clear_preview()

    def scope_value(self) -> ForgetScope | None:
        """The scope chosen now (None when nothing is chosen yet)."""
        key = self.scope.currentData()
        if key == "conversation":
            if self.conversation.currentIndex() < 0:
                return None
            user = self.conversation.currentData(Qt.ItemDataRole.UserRole + 1) or "default"
            return ForgetScope(user_id=str(user), conversation_id=str(self.conversation.currentData()))
        if key == "document":
            return (
                None if self.document.currentIndex() < 0 else ForgetScope(document_id=int(self.document.currentData()))
            )
        if key == "project":
            text = self.project.text().strip()
            return ForgetScope(project_id=text) if text else None
        if key == "time":
            since = self.since.dateTime().toSecsSinceEpoch()
            until = self.until.dateTime().toSecsSinceEpoch()
            if until <= since:
                return None
            return ForgetScope(since=datetime.fromtimestamp(since, UTC), until=datetime.fromtimestamp(until, UTC))
        text = self.user.text().strip()
        return ForgetScope(user_id=text) if text else None

    def _scope_changed(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        self._clear_preview()

    def _clear_preview(self, *_args: object) -> None:
        self.preview = None
        self.confirm.setChecked(False)
        self.preview_label.setText(
            "Preview to see what would go." if self.scope_value() is not None else "Choose what to forget."
        )
        self._update_buttons()

    def _update_buttons(self, *_args: object) -> None:
        self.preview_button.setEnabled(self.scope_value() is not None)
        self.confirm.setEnabled(self.preview is not None)
        self.forget_button.setEnabled(self.preview is not None and self.confirm.isChecked())

    # -- preview and forget ------------------------------------------------------------------------
    def run_preview(self) -> None:
        """Count what the chosen scope holds (a dry run)."""
        scope = self.scope_value()
        if scope is None:
            return
        dry = replace(scope, dry_run=True)
        self.preview_button.setEnabled(False)
        self._runner.write(lambda vault: vault.forget(dry), lambda receipt: self._previewed(scope, receipt))

    def _previewed(self, scope: ForgetScope, receipt: Receipt) -> None:
        if self.scope_value() != scope:  # the choice changed while counting: this preview is of something else
            self._update_buttons()
            return
        self.preview = receipt
        self.preview_label.setText(f"This would forget {counts_text(receipt.deleted_counts)}.")
        self._update_buttons()
        self.previewed.emit(receipt)

    def run_forget(self) -> None:
        """Forget what was previewed."""
        scope = self.scope_value()
        if scope is None or self.preview is None or not self.confirm.isChecked():
            return
        self.forget_button.setEnabled(False)
        self.preview_button.setEnabled(False)
        self._runner.write(lambda vault: vault.forget(scope), self._forgotten)

    def _forgotten(self, receipt: Receipt) -> None:
        self.receipt = receipt
        self.preview = None
        self.confirm.setChecked(False)
        notes = " ".join(receipt.notes)
        self.preview_label.setText(
            f"Forgotten: {counts_text(receipt.deleted_counts)} (receipt {receipt.receipt_id}). {notes}".strip()
        )
        self._update_buttons()
        self.forgotten.emit(receipt)
        self._runner.read(load_choices, self._refill)

    def _refill(self, choices: tuple[list[ConversationInfo], list[DocumentInfo]]) -> None:
        text = self.preview_label.text()
        self.conversation.clear()
        self.document.clear()
        self._pending = None
        self._fill(choices)
        self.preview_label.setText(text)  # the receipt stays in view
