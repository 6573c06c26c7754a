"""The People & topics view: the subject workspace — subjects, what is known and understood of each, and how
they overlap.

The list shows the vault owner first ("You"), then the subjects Cairn knows most about.  The chosen
subject's current memories (its slot winners, ``vault.facts.truth``), the recent chat turns that
mention it, the documents that mention it (``vault.subjects.documents``), its neighbours (subjects
sharing memories or turns with it) and its workspace — its summary and tags, its active
understandings (``vault.workspace.get_understandings``), its newest observations and its
neighbourhood (``open_around``, drawn as overlapping circles) — load on the reader pool.

What the view writes goes through the runner's writer: the summary and tags, revisions of an
understanding (which supersede it; its history shows the chain), marks, new observations and new
subjects.  Renaming keeps the old name as an alias; merging folds several subjects into one.  The
Consolidation tab shows what a consolidation pass should look at and runs one; "Workspace
documents…" edits the soul, protocol and orientation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from PySide6.QtCore import QItemSelection, QModelIndex, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.changes import Change
from engine.dto import DocumentMention
from engine.errors import ValidationError, VaultError
from engine.events import DEFAULT_USER, Event
from engine.facts.api import TruthEntry
from engine.subjects import Subject
from engine.workspace.model import Intersection, Neighbour, Observation, Remembered, Understanding
from ui.context import ViewContext
from ui.format import local_time, one_line, percent, plural, subject_label
from ui.models.rows import Column, RowTableModel
from ui.throttle import Throttle
from ui.widgets.consolidation_panel import ConsolidationPanel
from ui.widgets.evidence import speaker_label
from ui.widgets.intersection_dialog import IntersectionDialog
from ui.widgets.labels import heading_label, secondary_label
from ui.widgets.side_tabs import SideTabs
from ui.widgets.tables import EmptyAware, select_only_row, simple_table
from ui.widgets.understandings_pane import UnderstandingsPane
from ui.widgets.venn import VennWidget
from ui.widgets.workspace_documents import WorkspaceDocumentsDialog
from ui.widgets.workspace_items import (
    OBSERVATION_COLUMNS,
    NewSubjectDialog,
    RememberDialog,
    error_label,
    show_refusal,
    split_tags,
)

LIST_LIMIT = 500
MENTIONS = 30
DOCUMENTS = 50
OBSERVATIONS = 50
NEIGHBOURHOOD = 10
REFRESH_INTERVAL_MS = 800
WORKSPACE_CHANGES = ("observation.", "understanding.")

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
    understandings: tuple[Understanding, ...] = ()
    observations: tuple[Observation, ...] = ()
    around: tuple[Neighbour, ...] = ()


def load_detail(vault: Vault, subject_id: int) -> SubjectDetail:
    """A subject with its current memories, recent mentions, documents, neighbours and workspace (reader pool)."""
    subject = vault.subjects.get(subject_id)
    truth = vault.facts.truth(subject=subject.name, user_id=subject.user_id)
    mentions = [
        vault.conversations.event(event_id) for event_id in vault.subjects.event_ids(subject_id, limit=MENTIONS)
    ]
    neighbours = vault.subjects.neighbours(subject_id)
    documents = vault.subjects.documents(subject_id, limit=DOCUMENTS)
    ws = vault.workspace
    names, user = [subject.name], subject.user_id
    try:
        understandings = ws.get_understandings(names, user_id=user)
        observations = ws.observations_of(names, limit=OBSERVATIONS, user_id=user)
        around = ws.open_around(subject.name, limit=NEIGHBOURHOOD, user_id=user)
    except ValidationError:  # a name the workspace does not take (too long): show the rest of the subject
        understandings, observations, around = [], [], []
    return SubjectDetail(
        subject,
        tuple(truth),
        tuple(mentions),
        tuple(neighbours),
        tuple(documents),
        tuple(understandings),
        tuple(observations),
        tuple(around),
    )


def profile_text(subject: Subject) -> tuple[str, str]:
    """A subject's summary and its tags as edited (comma-separated)."""
    return subject.summary, ", ".join(subject.tags)


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
    """Subjects on the left (multi-select); the chosen one's summary, memories, mentions, documents, neighbours,
    understandings, observations and overlaps on the right; the consolidation report in its own tab.

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
        self.intersection_dialog: IntersectionDialog | None = None
        self.documents_dialog: WorkspaceDocumentsDialog | None = None
        self._profile_shown: tuple[int, str, str] | None = None  # subject id, summary, tags as last filled in
        self._profile_saving = False
        self.model = RowTableModel(SUBJECT_COLUMNS, key=lambda s: s.id, parent=self)
        self.truth_model = RowTableModel(TRUTH_COLUMNS, key=lambda t: t.fact.id, parent=self)
        self.mentions_model = RowTableModel(EVENT_COLUMNS, key=lambda e: e.id, parent=self)
        self.neighbours_model = RowTableModel(NEIGHBOUR_COLUMNS, key=lambda n: n[0].id, parent=self)
        self.documents_model = RowTableModel(DOCUMENT_COLUMNS, key=lambda d: d.document_id, parent=self)
        self.observations_model = RowTableModel(OBSERVATION_COLUMNS, key=lambda o: o.id, parent=self)
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
        self.new_button = QPushButton("New subject…")
        self.new_button.setToolTip("Add a person, project, place or topic to the workspace")
        self.new_button.clicked.connect(self.open_new_subject_dialog)
        self.documents_button = QPushButton("Workspace documents…")
        self.documents_button.setToolTip("Edit the soul, protocol and orientation an assistant reads first")
        self.documents_button.clicked.connect(self.open_documents_dialog)

        self.summary_edit = QPlainTextEdit()
        self.summary_edit.setPlaceholderText("What this subject is, in a sentence or two")
        self.summary_edit.setAccessibleName("Summary")
        self.summary_edit.setTabChangesFocus(True)
        self.summary_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 12)
        self.summary_edit.textChanged.connect(self._update_profile_button)
        self.tags_edit = QLineEdit()
        self.tags_edit.setPlaceholderText("Tags, separated by commas")
        self.tags_edit.setAccessibleName("Tags")
        self.tags_edit.textChanged.connect(self._update_profile_button)
        self.save_profile_button = QPushButton("Save")
        self.save_profile_button.setToolTip("Save the summary and tags")
        self.save_profile_button.clicked.connect(self.save_profile)
        self.profile_error = error_label()

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
        self.understandings = UnderstandingsPane(context.runner, context.show_status)
        self.understandings.changed.connect(self._reload_detail)
        self.observations_view = simple_table(self.observations_model, stretch=1, name="Observations", fit=(0, 2, 3, 4))
        self.remember_button = QPushButton("Remember…")
        self.remember_button.setToolTip("Write down an observation about this subject")
        self.remember_button.clicked.connect(self.open_remember_dialog)
        observations_page = QWidget()
        observations_box = QVBoxLayout(observations_page)
        observations_box.setContentsMargins(0, 0, 0, 0)
        observations_box.addWidget(EmptyAware(self.observations_view, "No observation about this subject yet."), 1)
        observations_row = QHBoxLayout()
        observations_row.addWidget(secondary_label("Newest first. Observations are evidence: never edited."), 1)
        observations_row.addWidget(self.remember_button)
        observations_box.addLayout(observations_row)
        self.venn = VennWidget()
        self.venn.intersection_requested.connect(self._open_overlap)
        overlaps_page = QWidget()
        overlaps_box = QVBoxLayout(overlaps_page)
        overlaps_box.setContentsMargins(0, 0, 0, 0)
        overlaps_box.addWidget(self.venn, 1)
        overlaps_box.addWidget(
            secondary_label(
                "Each circle is a subject sharing evidence with this one; the more they share, the more they "
                "overlap. Click an overlap to open what the two share."
            )
        )
        self.tabs = SideTabs()
        self.tabs.addTab(
            EmptyAware(self.truth_view, "No current memories about this subject."),
            "Known",
        )
        self.tabs.addTab(
            EmptyAware(self.mentions_view, "No chat turns mention this subject."),
            "Mentions",
        )
        self.tabs.addTab(
            EmptyAware(self.documents_view, "No document mentions this subject."),
            "Documents",
        )
        self.tabs.addTab(
            EmptyAware(self.neighbours_view, "No other subject shares memories or turns with it."),
            "Neighbours",
        )
        self.understandings_tab = self.tabs.addTab(self.understandings, "Understanding")
        self.observations_tab = self.tabs.addTab(observations_page, "Notes")
        self.overlaps_tab = self.tabs.addTab(overlaps_page, "Overlaps")
        # seven sections, listed down the side (ui/widgets/side_tabs.py): short names, each explained here
        for index, tip in enumerate(
            (
                "What Cairn knows about this subject now",
                "Recent chat turns that mention it",
                "Documents that mention it",
                "Subjects that share memories or turns with it",
                "The consolidated understanding and its history",
                "Observations: the notes written about it",
                "What it shares with other subjects",
            )
        ):
            self.tabs.setTabToolTip(index, tip)

        left = QWidget()
        left_box = QVBoxLayout(left)
        left_box.setContentsMargins(0, 0, 0, 0)
        left_box.addWidget(self.filter_edit)
        left_box.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.rename_button)
        buttons.addWidget(self.merge_button)
        buttons.addStretch(1)
        left_box.addLayout(buttons)
        right = QWidget()
        right_box = QVBoxLayout(right)
        right_box.setContentsMargins(8, 0, 0, 0)
        right_box.addWidget(self.name_label)
        right_box.addWidget(self.about_label)
        profile = QFormLayout()
        profile.setContentsMargins(0, 4, 0, 4)
        profile.addRow("Summary", self.summary_edit)
        tags_row = QHBoxLayout()
        tags_row.addWidget(self.tags_edit, 1)
        tags_row.addWidget(self.save_profile_button)
        profile.addRow("Tags", tags_row)
        right_box.addLayout(profile)
        right_box.addWidget(self.profile_error)
        right_box.addWidget(self.tabs, 1)
        right_box.addWidget(secondary_label("Double-click a memory, a mention, a document or a neighbour to open it."))
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([300, 620])

        self.consolidation = ConsolidationPanel(context.runner, context.show_status)
        self.consolidation.subject_requested.connect(self.show_subject_named)
        self.consolidation.intersection_requested.connect(self.open_intersection)
        self.consolidation.consolidated.connect(lambda _result: self._reload_detail())
        self.pages = QTabWidget()
        self.pages.setDocumentMode(True)
        self.subjects_page = self.pages.addTab(splitter, "Subjects")
        self.consolidation_page = self.pages.addTab(self.consolidation, "Consolidation")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        header = QHBoxLayout()
        header.addWidget(heading_label("People & topics", scale=1.45))
        header.addWidget(self.count_label, 1, Qt.AlignmentFlag.AlignBottom)
        header.addWidget(self.documents_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addLayout(header)
        layout.addWidget(self.pages, 1)
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
        wanted = self._pending_subject
        self.model.set_rows(subjects)  # the same subjects in the same order keep the selection
        if wanted is not None and self.model.row_of(wanted) is None and self._list_stale:
            wanted = None  # not in this list yet: the newer one on its way will have it
        else:
            self._pending_subject = None
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
        # Observations, understandings and marks change the workspace of the subject shown, not the list.
        workspace_changed = any(c.type.startswith(WORKSPACE_CHANGES) for c in changes)
        if not (subjects_changed or memories_changed or documents_changed or workspace_changed):
            return
        if not self.isVisible():
            self._list_stale = self._list_stale or self._started
            return
        if subjects_changed or memories_changed:
            self._list_throttle.trigger()
        if self.detail is not None and (subjects_changed or memories_changed or documents_changed or workspace_changed):
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
        previous = self.detail.subject.id if self.detail is not None else None
        self.detail = detail
        if detail is None:
            self._detail_wanted = None
            self.name_label.setText("Nobody chosen")
            self.about_label.setText("People, projects and topics appear here as memories mention them.")
            for model in (
                self.truth_model,
                self.mentions_model,
                self.documents_model,
                self.neighbours_model,
                self.observations_model,
            ):
                model.set_rows([])
            self.understandings.set_understandings([], subject_changed=True)
            self.venn.set_neighbourhood("", [])
            self._fill_profile(None)
            self._update_workspace_buttons()
            return
        subject = detail.subject
        self.name_label.setText(subject_label(subject.name))
        self._show_about(subject)
        self._fill_profile(subject)
        self.truth_model.set_rows(detail.truth)
        self.mentions_model.set_rows(detail.mentions)
        self.neighbours_model.set_rows(detail.neighbours)
        self.documents_model.set_rows(detail.documents)
        self.understandings.set_understandings(detail.understandings, subject_changed=previous != subject.id)
        self.observations_model.set_rows(detail.observations)
        self.venn.set_neighbourhood(subject.name, detail.around)
        self.tabs.setTabText(0, f"Known ({len(detail.truth)})")
        self.tabs.setTabText(1, f"Mentions ({len(detail.mentions)})")
        self.tabs.setTabText(2, f"Documents ({len(detail.documents)})")
        self.tabs.setTabText(3, f"Neighbours ({len(detail.neighbours)})")
        self.tabs.setTabText(self.understandings_tab, f"Understanding ({len(detail.understandings)})")
        self.tabs.setTabText(self.observations_tab, f"Notes ({len(detail.observations)})")
        self.tabs.setTabText(self.overlaps_tab, f"Overlaps ({len(detail.around)})")
        self._update_workspace_buttons()

    def _show_about(self, subject: Subject) -> None:
        parts = ["the vault owner" if subject.kind == "owner" else subject.kind]
        if subject.aliases:
            parts.append("also called " + ", ".join(subject.aliases))
        parts.append(plural(subject.fact_count, "current memory", "current memories"))
        parts.append(plural(subject.event_count, "mention"))
        if subject.tags:
            parts.append("tags: " + ", ".join(subject.tags))
        if subject.summary:
            parts.append(subject.summary)
        self.about_label.setText(" · ".join(parts))

    def _update_workspace_buttons(self) -> None:
        self.remember_button.setEnabled(self.detail is not None)
        self._update_profile_button()

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

    # -- summary and tags --------------------------------------------------------------------------
    def _fill_profile(self, subject: Subject | None) -> None:
        """Show the subject's summary and tags; what is being edited for the same subject is kept."""
        if subject is None:
            self._profile_shown = None
            self.summary_edit.setPlainText("")
            self.tags_edit.setText("")
            show_refusal(self.profile_error, "")
            return
        summary, tags = profile_text(subject)
        shown = self._profile_shown
        if shown is None or shown[0] != subject.id:
            show_refusal(self.profile_error, "")
            untouched = True
        else:
            untouched = (self.summary_edit.toPlainText(), self.tags_edit.text()) == shown[1:]
        self._profile_shown = (subject.id, summary, tags)
        if untouched:
            if self.summary_edit.toPlainText() != summary:
                self.summary_edit.setPlainText(summary)
            if self.tags_edit.text() != tags:
                self.tags_edit.setText(tags)
        self._update_profile_button()

    def profile_edited(self) -> bool:
        """True when the summary or tags differ from what is saved."""
        shown = self._profile_shown
        return shown is not None and (self.summary_edit.toPlainText(), self.tags_edit.text()) != shown[1:]

    def _update_profile_button(self) -> None:
        self.save_profile_button.setEnabled(
            self.detail is not None and not self._profile_saving and self.profile_edited()
        )

    def save_profile(self) -> None:
        """Save the chosen subject's summary and tags (``update_subject_summary``)."""
        if self.detail is None or self._profile_saving:
            return
        subject = self.detail.subject
        name, user_id = subject.name, subject.user_id
        summary = self.summary_edit.toPlainText()
        tags_text = self.tags_edit.text()
        tags = split_tags(tags_text)
        self._profile_saving = True
        self._update_profile_button()
        show_refusal(self.profile_error, "")
        self._runner.write(
            lambda vault: vault.workspace.update_subject_summary(name, summary, tags=tags, user_id=user_id),
            lambda saved: self._profile_saved(saved, (summary, tags_text)),
            on_error=self._profile_failed,
        )

    def _profile_saved(self, subject: Subject, sent: tuple[str, str]) -> None:
        self._profile_saving = False
        self.model.replace(subject)
        self._show_status(f"Saved the summary and tags of {subject_label(subject.name)}.")
        if self.detail is not None and self.detail.subject.id == subject.id:
            typed = (self.summary_edit.toPlainText(), self.tags_edit.text())
            self.detail = replace(self.detail, subject=subject)
            self._show_about(subject)
            summary, tags = profile_text(subject)
            self._profile_shown = (subject.id, summary, tags)
            if typed == sent:  # nothing typed since: show it as stored (trimmed, tags cleaned)
                self.summary_edit.setPlainText(summary)
                self.tags_edit.setText(tags)
        self._update_profile_button()

    def _profile_failed(self, error: BaseException) -> None:
        self._profile_saving = False
        self._update_profile_button()
        if isinstance(error, VaultError):
            show_refusal(self.profile_error, error.message, error.fix)
        else:
            self._runner.report(error)

    # -- new subjects and observations -------------------------------------------------------------
    def open_new_subject_dialog(self) -> NewSubjectDialog:
        """Ask for the name of a new subject (non-blocking); returns the dialog."""
        dialog = NewSubjectDialog(self._runner, self)
        dialog.saved.connect(self._subject_created)
        self.dialog = dialog
        dialog.open()
        return dialog

    def _subject_created(self, result: tuple[list[Subject], list[str]]) -> None:
        subjects, created = result
        if not subjects:
            return
        subject = subjects[0]
        label = subject_label(subject.name)
        self._show_status(f"Created {label}." if created else f"{label} exists already; it is opened.")
        self.pages.setCurrentIndex(self.subjects_page)
        self.show_subject(subject.id)

    def open_remember_dialog(self) -> RememberDialog | None:
        """Ask for an observation about the chosen subject (non-blocking); returns the dialog."""
        if self.detail is None:
            return None
        dialog = RememberDialog(self._runner, self.detail.subject, self)
        dialog.saved.connect(self._remembered)
        self.dialog = dialog
        dialog.open()
        return dialog

    def _remembered(self, result: Remembered) -> None:
        note = result.observation
        if result.duplicate:
            text = f"Already remembered: the same observation is #{note.id}."
        else:
            text = f"Remembered (#{note.id})."
        if result.subjects_created:
            text += " New subjects: " + ", ".join(result.subjects_created) + "."
        self._show_status(text)
        self._reload_detail()

    # -- intersections, consolidation, workspace documents -----------------------------------------
    def _open_overlap(self, neighbour: str) -> None:
        if self.detail is not None:
            subject = self.detail.subject
            self.open_intersection(subject.name, neighbour, subject.user_id)

    def open_intersection(self, subject_a: str, subject_b: str, user_id: str = DEFAULT_USER) -> None:
        """Open what two subjects share in the intersection dialog."""
        self._runner.read(
            lambda vault: vault.workspace.open_intersection(subject_a, subject_b, user_id=user_id),
            lambda found: self._intersection_arrived(found, user_id),
        )

    def _intersection_arrived(self, found: Intersection, user_id: str) -> None:
        dialog = self.intersection_dialog
        if dialog is None:
            dialog = IntersectionDialog(self)
            dialog.subject_requested.connect(lambda name: self.show_subject_named(name, dialog.property("user")))
            dialog.fact_requested.connect(lambda fact_id: self.navigate_requested.emit("fact", fact_id))
            self.intersection_dialog = dialog
        dialog.setProperty("user", user_id)
        dialog.set_intersection(found)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()

    def show_subject_named(self, name: str, user_id: str = DEFAULT_USER) -> None:
        """Find the subject called ``name`` and show it on the Subjects tab."""
        self.pages.setCurrentIndex(self.subjects_page)
        self._runner.read(
            lambda vault: vault.subjects.find(name, user_id=user_id),
            lambda subject: self.show_subject(subject.id),
        )

    def open_documents_dialog(self) -> WorkspaceDocumentsDialog:
        """Show the soul, protocol and orientation for editing (not modal); returns the dialog."""
        dialog = self.documents_dialog
        if dialog is None:
            dialog = WorkspaceDocumentsDialog(self._runner, self._show_status, parent=self)
            self.documents_dialog = dialog
        else:
            dialog.reload()
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog
