"""The People & topics view: the subjects memories are about, what is known of each, and merging.

The list shows the vault owner first ("You"), then the subjects Cairn knows most about.  The chosen
subject's current memories (its slot winners, ``vault.facts.truth``), the recent chat turns that
mention it, the documents that mention it (``vault.subjects.documents``) and its neighbours
(subjects sharing memories or turns with it) load on the reader pool.  Renaming keeps the old name
as an alias; merging folds several subjects into one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QItemSelection, QModelIndex, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.changes import Change
from engine.dto import DocumentMention
from engine.events import Event
from engine.facts.api import TruthEntry
from engine.subjects import Subject
from ui.context import ViewContext
from ui.format import local_time, one_line, percent, plural, subject_label
from ui.models.rows import Column, RowTableModel
from ui.throttle import Throttle
from ui.widgets.evidence import speaker_label
from ui.widgets.labels import heading_label, secondary_label
from ui.widgets.tables import EmptyAware, select_only_row, simple_table

LIST_LIMIT = 500
MENTIONS = 30
DOCUMENTS = 50
REFRESH_INTERVAL_MS = 800

SUBJECT_COLUMNS: tuple[Column[Subject], ...] = (
    Column(
        "Name",
        lambda s: subject_label(s.name),
        lambda s: ("Also called: " + ", ".join(s.aliases)) if s.aliases else "",
    ),
    Column("Kind", lambda s: "vault owner" if s.kind == "owner" else s.kind),
    Column("Memories", lambda s: f"{s.fact_count:,}", align_right=True),
    Column("Mentions", lambda s: f"{s.event_count:,}", align_right=True),
)
TRUTH_COLUMNS: tuple[Column[TruthEntry], ...] = (
    Column("Predicate", lambda t: t.predicate),
    Column("Value", lambda t: t.fact.object_text, lambda t: t.fact.statement),
    Column("Standing", lambda t: t.fact.standing),
    Column("Confidence", lambda t: percent(t.fact.confidence), align_right=True),
    Column(
        "Others",
        lambda t: f"{t.alternatives} other" if t.alternatives else "",
        lambda t: "Other values in this slot wait in its history" if t.alternatives else "",
    ),
)
EVENT_COLUMNS: tuple[Column[Event], ...] = (
    Column("When", lambda e: local_time(e.occurred_at)),
    Column("Who", speaker_label),
    Column("Said", lambda e: one_line(e.content), lambda e: e.content),
    Column("Conversation", lambda e: e.conversation_id),
)
DOCUMENT_COLUMNS: tuple[Column[DocumentMention], ...] = (
    Column("Document", lambda d: d.name, lambda d: f"{d.name} ({d.status})"),
    Column("Mentions", lambda d: f"{d.spans:,}" if d.spans else "", align_right=True),
    Column("Memories", lambda d: f"{d.facts:,}" if d.facts else "", align_right=True),
    Column(
        "First mention",
        lambda d: (f"p. {d.page}: " if d.page is not None else "") + one_line(d.excerpt, 120),
        lambda d: d.excerpt,
    ),
)
NEIGHBOUR_COLUMNS: tuple[Column[tuple[Subject, int]], ...] = (
    Column("Subject", lambda n: subject_label(n[0].name)),
    Column("Kind", lambda n: n[0].kind),
    Column("Shared", lambda n: f"{n[1]:,}", align_right=True),
)


@dataclass(frozen=True, slots=True)
class SubjectDetail:
    """Everything the right-hand side shows for one subject."""

    subject: Subject
    truth: tuple[TruthEntry, ...]
    mentions: tuple[Event, ...]
    neighbours: tuple[tuple[Subject, int], ...]
    documents: tuple[DocumentMention, ...] = ()


def load_detail(vault: Vault, subject_id: int) -> SubjectDetail:
    """A subject with its current memories, recent mentions, documents and neighbours (reader pool)."""
    subject = vault.subjects.get(subject_id)
    truth = vault.facts.truth(subject=subject.name, user_id=subject.user_id)
    mentions = [
        vault.conversations.event(event_id) for event_id in vault.subjects.event_ids(subject_id, limit=MENTIONS)
    ]
    neighbours = vault.subjects.neighbours(subject_id)
    documents = vault.subjects.documents(subject_id, limit=DOCUMENTS)
    return SubjectDetail(subject, tuple(truth), tuple(mentions), tuple(neighbours), tuple(documents))


class MergeDialog(QDialog):
    """Asks which of the selected subjects the others are merged into."""

    def __init__(self, subjects: Sequence[Subject], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Merge subjects")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self._subjects = list(subjects)
        self.keeper = QComboBox()
        for subject in self._subjects:
            self.keeper.addItem(subject_label(subject.name), subject.id)
        names = ", ".join(subject_label(s.name) for s in self._subjects)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Merge")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addWidget(secondary_label(f"Merge {names} into one subject. Keep the name:"))
        box.addWidget(self.keeper)
        box.addWidget(secondary_label("The other names become aliases, and their memories and mentions move over."))
        box.addWidget(buttons)

    def keep_id(self) -> int:
        """The id of the subject chosen to keep."""
        return int(self.keeper.currentData())

    def merge_ids(self) -> list[int]:
        """The ids folded into the keeper."""
        keep = self.keep_id()
        return [s.id for s in self._subjects if s.id != keep]


class SubjectsView(QWidget):
    """Subjects on the left (multi-select), the chosen one's memories, mentions, documents and neighbours.

    Signals:
        navigate_requested(str, object): open a memory (``"fact"``), a chat turn (``"event"``), or a
            document at its first mention (``"span"``, or ``"document"`` when no span is known).
    """

    navigate_requested = Signal(str, object)

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._show_status = context.show_status
        self._started = False
        self._list_loading = False
        self._list_stale = False
        self._detail_generation = 0
        self._detail_wanted: int | None = None  # the subject whose detail was last asked for
        self._pending_subject: int | None = None
        self.detail: SubjectDetail | None = None
        self.dialog: QDialog | None = None
        self.model = RowTableModel(SUBJECT_COLUMNS, key=lambda s: s.id, parent=self)
        self.truth_model = RowTableModel(TRUTH_COLUMNS, key=lambda t: t.fact.id, parent=self)
        self.mentions_model = RowTableModel(EVENT_COLUMNS, key=lambda e: e.id, parent=self)
        self.neighbours_model = RowTableModel(NEIGHBOUR_COLUMNS, key=lambda n: n[0].id, parent=self)
        self.documents_model = RowTableModel(DOCUMENT_COLUMNS, key=lambda d: d.document_id, parent=self)
        self._list_throttle = Throttle(REFRESH_INTERVAL_MS, self.refresh, self)
        self._detail_throttle = Throttle(REFRESH_INTERVAL_MS, self._reload_detail, self)

        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter by name or alias…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(lambda _text: self._list_throttle.trigger())
        self.count_label = secondary_label("")
        self.table = simple_table(self.model, stretch=0, name="People and topics", fit=(1, 2, 3), multi=True)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.rename_button = QPushButton("Rename…")
        self.rename_button.setToolTip("Give the subject a new name (the old one stays as an alias)")
        self.rename_button.clicked.connect(self.open_rename_dialog)
        self.merge_button = QPushButton("Merge…")
        self.merge_button.setToolTip("Select two or more subjects that are the same, then merge")
        self.merge_button.clicked.connect(self.open_merge_dialog)

        self.name_label = heading_label("", scale=1.3)
        self.about_label = secondary_label("")
        self.truth_view = simple_table(self.truth_model, stretch=1, name="Current memories", fit=(0, 2, 3, 4))
        self.truth_view.doubleClicked.connect(self._open_truth)
        self.mentions_view = simple_table(self.mentions_model, stretch=2, name="Recent mentions", fit=(0, 1, 3))
        self.mentions_view.doubleClicked.connect(self._open_mention)
        self.neighbours_view = simple_table(self.neighbours_model, stretch=0, name="Neighbours", fit=(1, 2))
        self.neighbours_view.doubleClicked.connect(self._open_neighbour)
        self.documents_view = simple_table(self.documents_model, stretch=3, name="Documents", fit=(0, 1, 2))
        self.documents_view.doubleClicked.connect(self._open_document)
        self.tabs = QTabWidget()
        self.tabs.addTab(
            EmptyAware(self.truth_view, "No current memories about this subject."),
            "What Cairn knows",
        )
        self.tabs.addTab(
            EmptyAware(self.mentions_view, "No chat turns mention this subject."),
            "Recent mentions",
        )
        self.tabs.addTab(
            EmptyAware(self.documents_view, "No document mentions this subject."),
            "Documents",
        )
        self.tabs.addTab(
            EmptyAware(self.neighbours_view, "No other subject shares memories or turns with it."),
            "Neighbours",
        )

        left = QWidget()
        left_box = QVBoxLayout(left)
        left_box.setContentsMargins(0, 0, 0, 0)
        left_box.addWidget(self.filter_edit)
        left_box.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.rename_button)
        buttons.addWidget(self.merge_button)
        buttons.addStretch(1)
        left_box.addLayout(buttons)
        right = QWidget()
        right_box = QVBoxLayout(right)
        right_box.setContentsMargins(8, 0, 0, 0)
        right_box.addWidget(self.name_label)
        right_box.addWidget(self.about_label)
        right_box.addWidget(self.tabs, 1)
        right_box.addWidget(secondary_label("Double-click a memory, a mention, a document or a neighbour to open it."))
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([360, 560])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        header = QHBoxLayout()
        header.addWidget(heading_label("People & topics", scale=1.45))
        header.addWidget(self.count_label, 1, Qt.AlignmentFlag.AlignBottom)
        layout.addLayout(header)
        layout.addWidget(splitter, 1)
        context.runner.changes_arrived.connect(self._on_changes)
        self._show_detail(None)
        self._update_buttons()

    # -- loading -----------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Load on first show; catch up on changes that arrived while hidden."""
        super().showEvent(event)
        if not self._started or self._list_stale:
            self._started = True
            self.refresh()

    def refresh(self) -> None:
        """Load the subject list again (and the chosen subject's detail)."""
        self._started = True
        if self._list_loading:
            self._list_stale = True
            return
        self._list_loading = True
        self._list_stale = False
        query = self.filter_edit.text().strip() or None
        self._runner.read(
            lambda vault: vault.subjects(q=query, limit=LIST_LIMIT),
            self._list_arrived,
            on_error=self._list_failed,
        )

    def _list_arrived(self, subjects: list[Subject]) -> None:
        self._list_loading = False
        keep = self.selected_ids()
        wanted, self._pending_subject = self._pending_subject, None
        self.model.set_rows(subjects)  # the same subjects in the same order keep the selection
        self.count_label.setText(plural(len(subjects), "subject"))
        if wanted is not None:
            keep = [wanted]
        restore = [i for i in keep if self.model.row_of(i) is not None]
        if restore and restore != self.selected_ids():
            self._select_ids(restore, current=wanted)
        elif not restore and self.model.rowCount():
            select_only_row(self.table, 0)
        elif not self.model.rowCount():
            self._show_detail(None)
        if self._list_stale:
            self._list_throttle.trigger()

    def _select_ids(self, ids: Sequence[int], *, current: int | None = None) -> None:
        selection = self.table.selectionModel()
        flags = selection.SelectionFlag
        selection.clearSelection()
        for subject_id in ids:
            row = self.model.row_of(subject_id)
            if row is not None:
                selection.select(self.model.index(row, 0), flags.Select | flags.Rows)
        focus = self.model.row_of(current if current is not None else ids[-1])
        if focus is not None:
            selection.setCurrentIndex(self.model.index(focus, 0), flags.NoUpdate)
            self.table.scrollTo(self.model.index(focus, 0))
            self._on_selection(QItemSelection(), QItemSelection())

    def _list_failed(self, error: BaseException) -> None:
        self._list_loading = False
        self._runner.report(error)

    def _on_changes(self, changes: Sequence[Change]) -> None:
        subjects_changed = any(c.type.startswith("subject.") for c in changes)
        memories_changed = any(c.type.startswith(("memory.", "event.created", "forget.")) for c in changes)
        # A document read, re-read or deleted changes who it mentions, not the list of subjects.
        documents_changed = any(c.type.startswith("document.") for c in changes)
        if not (subjects_changed or memories_changed or documents_changed):
            return
        if not self.isVisible():
            self._list_stale = self._list_stale or self._started
            return
        if subjects_changed or memories_changed:
            self._list_throttle.trigger()
        if (memories_changed or documents_changed) and self.detail is not None:
            self._detail_throttle.trigger()

    # -- selection and detail ----------------------------------------------------------------------
    def selected_ids(self) -> list[int]:
        """The ids of the selected subjects, top to bottom."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [int(self.model.key_at(row)) for row in rows]  # type: ignore[call-overload]

    def selected_subjects(self) -> list[Subject]:
        """The selected subjects, top to bottom."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [self.model.row_item(row) for row in rows]

    def show_subject(self, subject_id: int) -> None:
        """Select ``subject_id`` and show its detail (loading the list first if needed)."""
        row = self.model.row_of(subject_id)
        if row is not None:
            select_only_row(self.table, row)
            self.table.scrollTo(self.model.index(row, 0))
            return
        self._pending_subject = subject_id
        if self.filter_edit.text():
            self.filter_edit.clear()  # the filter hid it
        self.refresh()

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._update_buttons()
        current = self.table.currentIndex()
        subjects = self.selected_subjects()
        if not subjects:
            return
        chosen = next(
            (s for s in subjects if current.isValid() and s.id == self.model.key_at(current.row())),
            subjects[-1],
        )
        if self.detail is None or self.detail.subject.id != chosen.id:
            self._load_detail(chosen.id)

    def _reload_detail(self) -> None:
        # the subject last asked for, not the one on screen: a change arriving while another subject's detail is
        # on its way must not load the previous one again over it
        if self._detail_wanted is not None:
            self._load_detail(self._detail_wanted)
        elif self.selected_ids():
            self._load_detail(self.selected_ids()[-1])

    def _load_detail(self, subject_id: int) -> None:
        self._detail_wanted = subject_id
        self._detail_generation += 1
        generation = self._detail_generation
        self._runner.read(
            lambda vault: load_detail(vault, subject_id),
            lambda detail: self._detail_arrived(generation, detail),
        )

    def _detail_arrived(self, generation: int, detail: SubjectDetail) -> None:
        if generation == self._detail_generation:
            self._show_detail(detail)

    def _show_detail(self, detail: SubjectDetail | None) -> None:
        self.detail = detail
        if detail is None:
            self._detail_wanted = None
            self.name_label.setText("Nobody chosen")
            self.about_label.setText("People, projects and topics appear here as memories mention them.")
            for model in (self.truth_model, self.mentions_model, self.documents_model, self.neighbours_model):
                model.set_rows([])
            return
        subject = detail.subject
        self.name_label.setText(subject_label(subject.name))
        parts = ["the vault owner" if subject.kind == "owner" else subject.kind]
        if subject.aliases:
            parts.append("also called " + ", ".join(subject.aliases))
        parts.append(plural(subject.fact_count, "current memory", "current memories"))
        parts.append(plural(subject.event_count, "mention"))
        if subject.summary:
            parts.append(subject.summary)
        self.about_label.setText(" · ".join(parts))
        self.truth_model.set_rows(detail.truth)
        self.mentions_model.set_rows(detail.mentions)
        self.neighbours_model.set_rows(detail.neighbours)
        self.documents_model.set_rows(detail.documents)
        self.tabs.setTabText(0, f"What Cairn knows ({len(detail.truth)})")
        self.tabs.setTabText(1, f"Recent mentions ({len(detail.mentions)})")
        self.tabs.setTabText(2, f"Documents ({len(detail.documents)})")
        self.tabs.setTabText(3, f"Neighbours ({len(detail.neighbours)})")

    def _update_buttons(self) -> None:
        subjects = self.selected_subjects()
        owner = any(s.kind == "owner" for s in subjects)
        self.rename_button.setEnabled(len(subjects) == 1 and not owner)
        self.merge_button.setEnabled(len(subjects) >= 2)

    def _open_truth(self, index: QModelIndex) -> None:
        entry = self.truth_model.row_item(index.row())
        if isinstance(entry, TruthEntry):
            self.navigate_requested.emit("fact", entry.fact.id)

    def _open_mention(self, index: QModelIndex) -> None:
        event = self.mentions_model.row_item(index.row())
        if isinstance(event, Event):
            self.navigate_requested.emit("event", event.id)

    def _open_document(self, index: QModelIndex) -> None:
        mention = self.documents_model.row_item(index.row())
        if not isinstance(mention, DocumentMention):
            return
        if mention.first_span_id is not None:
            self.navigate_requested.emit("span", mention.first_span_id)
        else:
            self.navigate_requested.emit("document", mention.document_id)

    def _open_neighbour(self, index: QModelIndex) -> None:
        neighbour = self.neighbours_model.row_item(index.row())
        if isinstance(neighbour, tuple):
            self.show_subject(neighbour[0].id)

    # -- rename and merge --------------------------------------------------------------------------
    def open_rename_dialog(self) -> QInputDialog | None:
        """Ask for a new name for the selected subject (non-blocking); returns the dialog."""
        subjects = self.selected_subjects()
        if len(subjects) != 1:
            return None
        subject = subjects[0]
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename")
        dialog.setLabelText(f"New name for {subject_label(subject.name)}:")
        dialog.setTextValue(subject.name)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.textValueSelected.connect(lambda name: self.rename_subject(subject.id, name))
        dialog.finished.connect(dialog.deleteLater)
        self.dialog = dialog
        dialog.open()
        return dialog

    def rename_subject(self, subject_id: int, new_name: str) -> None:
        """Rename a subject (the old name stays as an alias)."""
        name = new_name.strip()
        if not name:
            return
        self._runner.write(
            lambda vault: vault.subjects.rename(subject_id, name),
            self._renamed,
        )

    def _renamed(self, subject: Subject) -> None:
        self._show_status(f"Renamed to {subject.name}.")
        self.model.replace(subject)
        if self.detail is not None and self.detail.subject.id == subject.id:
            self._load_detail(subject.id)

    def open_merge_dialog(self) -> MergeDialog | None:
        """Ask which selected subject to keep, then merge the others into it; returns the dialog."""
        subjects = self.selected_subjects()
        if len(subjects) < 2:
            return None
        dialog = MergeDialog(subjects, self)
        dialog.accepted.connect(lambda: self.merge_subjects(dialog.keep_id(), dialog.merge_ids()))
        dialog.finished.connect(dialog.deleteLater)
        self.dialog = dialog
        dialog.open()
        return dialog

    def merge_subjects(self, keep_id: int, merge_ids: Sequence[int]) -> None:
        """Fold ``merge_ids`` into ``keep_id``."""
        others = [i for i in merge_ids if i != keep_id]
        if not others:
            return
        self._runner.write(
            lambda vault: vault.subjects.merge(keep_id, others),
            lambda subject: self._merged(subject, len(others)),
        )

    def _merged(self, subject: Subject, count: int) -> None:
        self._show_status(f"Merged {plural(count, 'subject')} into {subject_label(subject.name)}.")
        self._pending_subject = subject.id
        self.table.clearSelection()
        self.detail = None
        self.refresh()
