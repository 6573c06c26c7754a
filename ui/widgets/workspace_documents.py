"""The workspace's own documents — soul, protocol and orientation — as editable text with a summary each.

Each is an understanding about the workspace rather than a subject (``vault.workspace.get_understandings()`` with no
subject names gives the active ones).  Saving writes a new one with ``create_understanding(kind=…)``, which
supersedes the active one: the earlier versions stay listed under the editor.  An assistant reads these first
(``orient``), the summary being what it keeps when its context is compacted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.changes import Change
from engine.errors import VaultError
from engine.events import DEFAULT_USER
from engine.workspace.model import WORKSPACE_KINDS, Understanding
from ui.format import local_time, plural
from ui.models.rows import RowTableModel
from ui.ops import OpRunner
from ui.widgets.labels import secondary_label
from ui.widgets.tables import simple_table
from ui.widgets.workspace_items import HISTORY_COLUMNS, Version, error_label, show_refusal, versions

DOCUMENTS: dict[str, tuple[str, str]] = {
    "soul": ("Soul", "Who the assistant is for this person: its purpose and what it cares about."),
    "protocol": ("Protocol", "How an assistant works with this vault: the rules it follows when it reads and writes."),
    "orientation": ("Orientation", "Where things stand: what an assistant should know before it starts."),
}


@dataclass(frozen=True, slots=True)
class WorkspaceDocument:
    """One kind's active document (None before the first is written) and its versions, oldest first."""

    kind: str
    current: Understanding | None
    history: tuple[Understanding, ...] = ()


def load_documents(vault: Vault, user_id: str = DEFAULT_USER) -> dict[str, WorkspaceDocument]:
    """The soul, protocol and orientation with their histories (reader pool)."""
    active: dict[str, Understanding] = {}
    for understanding in vault.workspace.get_understandings(user_id=user_id):  # newest first
        active.setdefault(understanding.kind, understanding)
    found: dict[str, WorkspaceDocument] = {}
    for kind in WORKSPACE_KINDS:
        current = active.get(kind)
        chain = tuple(vault.workspace.understanding_history(current.id)) if current is not None else ()
        found[kind] = WorkspaceDocument(kind, current, chain)
    return found


class DocumentEditor(QWidget):
    """One document: its summary, its text, Save, and its earlier versions.

    Signals:
        save_requested(str): Save was pressed (the kind).
    """

    save_requested = Signal(str)

    def __init__(self, kind: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = kind
        self.document: WorkspaceDocument | None = None
        self._loaded = ("", "")  # the summary and text last filled in, to tell edits from stale text
        self.saving = False
        title, about = DOCUMENTS.get(kind, (kind.title(), ""))
        self.summary_edit = QLineEdit()
        self.summary_edit.setPlaceholderText("A line an assistant keeps when its context is compacted")
        self.summary_edit.setAccessibleName(f"{title} summary")
        self.content_edit = QPlainTextEdit()
        self.content_edit.setAccessibleName(f"{title} text")
        self.content_edit.setTabChangesFocus(True)
        self.save_button = QPushButton("Save")
        self.save_button.setToolTip(f"Write this as the current {title.lower()}; the one before stays in its history")
        self.save_button.clicked.connect(lambda: self.save_requested.emit(self.kind))
        self.state_label = secondary_label("Loading…")
        self.error = error_label()
        self.versions_model = RowTableModel(HISTORY_COLUMNS, key=lambda v: v.understanding.id, parent=self)
        self.versions_table = simple_table(self.versions_model, stretch=3, name=f"{title} versions", fit=(0, 1, 2, 4))
        form = QFormLayout()
        form.addRow("Summary", self.summary_edit)
        form.addRow("Text", self.content_edit)
        row = QHBoxLayout()
        row.addWidget(self.state_label, 1)
        row.addWidget(self.save_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.addWidget(secondary_label(about))
        layout.addLayout(form, 3)
        layout.addWidget(self.error)
        layout.addLayout(row)
        layout.addWidget(secondary_label("Versions, oldest first:"))
        layout.addWidget(self.versions_table, 1)

    def values(self) -> tuple[str, str]:
        """The summary and text as typed."""
        return self.summary_edit.text(), self.content_edit.toPlainText()

    @property
    def edited(self) -> bool:
        """True when the fields differ from what was last loaded or saved."""
        return self.values() != self._loaded

    def set_document(self, document: WorkspaceDocument) -> None:
        """Show ``document``; fields being edited keep what was typed."""
        self.document = document
        current = document.current
        fresh = (current.summary, current.content) if current is not None else ("", "")
        if not self.edited:
            self.summary_edit.setText(fresh[0])
            self.content_edit.setPlainText(fresh[1])
        self._loaded = fresh
        self.versions_model.set_rows(versions(document.history))
        if current is None:
            self.state_label.setText("Not written yet.")
        else:
            self.state_label.setText(
                f"Current: #{current.id}, written {local_time(current.created_at)} "
                f"({plural(len(document.history), 'version')})."
            )

    def set_saving(self, saving: bool) -> None:
        """Disable Save while a save is on its way."""
        self.saving = saving
        self.save_button.setEnabled(not saving)
        if saving:
            show_refusal(self.error, "")

    def saved(self, understanding: Understanding) -> None:
        """The fields now hold the current version."""
        self.set_saving(False)
        self._loaded = (understanding.summary, understanding.content)
        self.state_label.setText(f"Saved as #{understanding.id}.")

    def refused(self, message: str, fix: str = "") -> None:
        """Show why the engine did not save; the fields keep what was typed."""
        self.set_saving(False)
        show_refusal(self.error, message, fix)

    @property
    def error_text(self) -> str:
        """What the engine refused, as shown."""
        return self.error.text() if self.error.isVisibleTo(self) else ""

    def version_rows(self) -> tuple[Version, ...]:
        """The versions listed, oldest first."""
        return self.versions_model.rows()


class WorkspaceDocumentsDialog(QDialog):
    """Soul, protocol and orientation, one tab each; not modal, and it follows changes made elsewhere."""

    def __init__(
        self,
        runner: OpRunner,
        show_status: Callable[[str], None],
        *,
        user_id: str = DEFAULT_USER,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Workspace documents")
        self._runner = runner
        self._show_status = show_status
        self._user_id = user_id
        self._generation = 0
        self.loaded = False
        self.documents: dict[str, WorkspaceDocument] = {}
        self.editors = {kind: DocumentEditor(kind) for kind in WORKSPACE_KINDS}
        self.tabs = QTabWidget()
        for kind, editor in self.editors.items():
            editor.save_requested.connect(self.save)
            self.tabs.addTab(editor, DOCUMENTS.get(kind, (kind.title(), ""))[0])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(
            secondary_label(
                "What an assistant reads first when it starts a session. Saving writes a new version; "
                "the earlier ones stay in the history."
            )
        )
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self.resize(self.fontMetrics().averageCharWidth() * 100, self.fontMetrics().height() * 34)
        runner.changes_arrived.connect(self._on_changes)
        self.reload()

    def editor(self, kind: str) -> DocumentEditor:
        """The tab of ``kind`` (``soul``, ``protocol`` or ``orientation``)."""
        return self.editors[kind]

    def reload(self) -> None:
        """Read the three documents again."""
        self._generation += 1
        generation = self._generation
        user_id = self._user_id
        self._runner.read(lambda vault: load_documents(vault, user_id), lambda found: self._arrived(generation, found))

    def _arrived(self, generation: int, found: dict[str, WorkspaceDocument]) -> None:
        if generation != self._generation:
            return
        self.documents = found
        for kind, document in found.items():
            self.editors[kind].set_document(document)
        self.loaded = True

    def save(self, kind: str) -> None:
        """Write the edited ``kind`` as its current document (superseding the active one)."""
        editor = self.editors[kind]
        if editor.saving:
            return
        summary, content = editor.values()
        user_id = self._user_id
        editor.set_saving(True)
        self._runner.write(
            lambda vault: vault.workspace.create_understanding(content, summary=summary, kind=kind, user_id=user_id),
            lambda written: self._saved(kind, written),
            on_error=lambda error: self._failed(kind, error),
        )

    def _saved(self, kind: str, written: Understanding) -> None:
        self.editors[kind].saved(written)
        self._show_status(f"Saved the {DOCUMENTS.get(kind, (kind, ''))[0].lower()} (#{written.id}).")
        self.reload()

    def _failed(self, kind: str, error: BaseException) -> None:
        if isinstance(error, VaultError):
            self.editors[kind].refused(error.message, error.fix)
        else:
            self.editors[kind].set_saving(False)
            self._runner.report(error)

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if self.isVisible() and any(c.type.startswith("understanding.") for c in changes):
            self.reload()
