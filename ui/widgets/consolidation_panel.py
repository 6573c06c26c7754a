"""What consolidation should look at next (``vault.workspace.consolidation_report``), and "Consolidate now".

A consolidation pass turns each subject's new evidence into an understanding, and each pair's shared evidence into
a relationship.  The report lists what waits for one: subjects with evidence and no understanding, understandings
with newer evidence, pairs sharing much with no relationship written, pairs whose summaries look alike although they
share little (perhaps one subject under two names), observations no understanding cites, and items doubted more
often than used.  Each row opens its subject, or the intersection of its pair.

"Consolidate now" runs ``vault.workspace.consolidate()`` on the writer and says what the pass wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QItemSelection, QModelIndex, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from engine import Vault
from engine.changes import Change
from engine.errors import NotFound
from engine.events import DEFAULT_USER
from engine.workspace.consolidate import PassResult
from engine.workspace.model import ConsolidationReport
from ui.format import one_line, percent, plural, subject_label
from ui.models.rows import Column, RowTableModel
from ui.ops import OpRunner
from ui.throttle import Throttle
from ui.widgets.labels import heading_label, secondary_label, value_label
from ui.widgets.tables import EmptyAware, simple_table
from ui.widgets.workspace_items import kind_label, subjects_text

REFRESH_INTERVAL_MS = 1500
WATCHED = ("observation.", "understanding.", "subject.", "memory.", "fact.", "forget.")

NEEDS_UNDERSTANDING = "Needs an understanding"
STALE = "Stale understanding"
NEEDS_SYNTHESIS = "Pair needs synthesis"
LOOK_ALIKE = "Look alike"
UNLINKED = "Unlinked observation"
QUESTIONABLE = "Questionable"


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One thing the report asks to look at, with the subject or pair it opens."""

    section: str
    item: str
    why: str
    subject: str | None = None
    pair: tuple[str, str] | None = None
    object_id: int | None = None
    full_text: str = ""

    @property
    def key(self) -> tuple[str, str, int | None]:
        """Stable across refreshes: the section, the item and its id."""
        return (self.section, self.item, self.object_id)


@dataclass(frozen=True, slots=True)
class ReportState:
    """The report and its rows."""

    report: ConsolidationReport
    rows: tuple[ReportRow, ...]


REPORT_COLUMNS: tuple[Column[ReportRow], ...] = (
    Column("Needs", lambda r: r.section),
    Column("Item", lambda r: r.item, lambda r: r.full_text or r.item),
    Column("Why", lambda r: r.why, lambda r: r.why),
)


def _about(subjects: Sequence[str]) -> tuple[str | None, tuple[str, str] | None]:
    """The subject (one) or pair (two) a row opens."""
    if len(subjects) == 2:
        return subjects[0], (subjects[0], subjects[1])
    return (subjects[0] if subjects else None), None


def load_report(vault: Vault, user_id: str = DEFAULT_USER) -> ReportState:
    """The consolidation report, each id looked up so its row can say what it is (reader pool)."""
    ws = vault.workspace
    report = ws.consolidation_report(user_id=user_id)
    rows: list[ReportRow] = []
    for name, count in report.subjects_needing_understanding:
        rows.append(
            ReportRow(
                NEEDS_UNDERSTANDING,
                subject_label(name),
                f"{plural(count, 'item')} of evidence and no understanding yet",
                subject=name,
            )
        )
    for understanding_id in report.stale_understandings:
        try:
            stale = ws.understanding(understanding_id)
        except NotFound:
            continue  # revised or forgotten since the report was read
        subject, pair = _about(stale.subjects)
        rows.append(
            ReportRow(
                STALE,
                one_line(stale.summary, 100),
                f"{kind_label(stale.kind)} #{stale.id} about {subjects_text(stale.subjects)}: newer evidence came in",
                subject=subject,
                pair=pair,
                object_id=stale.id,
                full_text=stale.content,
            )
        )
    for a, b, shared in report.intersections_needing_synthesis:
        rows.append(
            ReportRow(
                NEEDS_SYNTHESIS,
                f"{subject_label(a)} & {subject_label(b)}",
                f"{plural(shared, 'shared item')} and no relationship written",
                subject=a,
                pair=(a, b),
            )
        )
    for a, b, similarity in report.dense_intersections:
        rows.append(
            ReportRow(
                LOOK_ALIKE,
                f"{subject_label(a)} & {subject_label(b)}",
                f"summaries {percent(similarity)} alike though they share little: the same subject?",
                subject=a,
                pair=(a, b),
            )
        )
    for observation_id in report.unlinked_observations:
        try:
            note = ws.observation(observation_id)
        except NotFound:
            continue
        subject, pair = _about(note.subjects)
        rows.append(
            ReportRow(
                UNLINKED,
                one_line(note.content, 100),
                f"#{note.id} about {subjects_text(note.subjects)}: no understanding cites it",
                subject=subject,
                pair=pair,
                object_id=note.id,
                full_text=note.content,
            )
        )
    for object_id, kind in report.questionable:
        try:
            if kind == "understanding":
                doubted = ws.understanding(object_id)
                text, subjects = doubted.summary, doubted.subjects
            elif kind == "observation":
                seen = ws.observation(object_id)
                text, subjects = seen.content, seen.subjects
            else:
                fact = vault.facts.get(object_id)
                text, subjects = fact.statement, (fact.subject,)
        except NotFound:
            continue
        subject, pair = _about(subjects)
        rows.append(
            ReportRow(
                QUESTIONABLE,
                one_line(text, 100),
                f"{kind} #{object_id}: marked questionable more often than useful",
                subject=subject,
                pair=pair,
                object_id=object_id,
                full_text=text,
            )
        )
    return ReportState(report, tuple(rows))


def report_summary(report: ConsolidationReport) -> str:
    """The report in a line: the generation and what waits."""
    pending = report.pending_subjects
    waiting = (
        f"{plural(pending, 'subject')} with evidence newer than the last pass"
        if pending
        else "no subject has evidence newer than the last pass"
    )
    return f"Generation {report.generation:,} · {waiting}."


def pass_text(result: PassResult) -> str:
    """What a consolidation pass wrote, in a sentence or two."""
    parts = []
    if result.subjects_written:
        parts.append("understandings of " + subjects_text(result.subjects_written))

    if result.relationships_written:
        pairs = ", ".join(f"{subject_label(a)} & {subject_label(b)}" for a, b in result.relationships_written)
        parts.append(("relationship " if len(result.relationships_written) == 1 else "relationships ") + pairs)
    text = f"Generation {result.generation:,}: " + ("wrote " + "; ".join(parts) if parts else "nothing new to write")
    text += "."
    if result.unchanged:
        text += f" {plural(result.unchanged, 'understanding')} already said the same."
    text += f" Written by {result.writer}."
    if result.warnings:
        text += " " + " ".join(result.warnings)
    return text


class ConsolidationPanel(QWidget):
    """The report as a table, with Consolidate now, Refresh, Open subject and Open intersection.

    Signals:
        subject_requested(str): open the subject (engine name) of a row.
        intersection_requested(str, str): open what a pair shares.
        consolidated(object): a pass finished (its :class:`~engine.workspace.consolidate.PassResult`).
    """

    subject_requested = Signal(str)
    intersection_requested = Signal(str, str)
    consolidated = Signal(object)

    def __init__(
        self,
        runner: OpRunner,
        show_status: Callable[[str], None],
        *,
        user_id: str = DEFAULT_USER,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._runner = runner
        self._show_status = show_status
        self._user_id = user_id
        self._loading = False
        self._stale = False
        self._started = False
        self.consolidating = False
        self.state: ReportState | None = None
        self.last_pass: PassResult | None = None
        self.model = RowTableModel(REPORT_COLUMNS, key=lambda r: r.key, parent=self)
        self._throttle = Throttle(REFRESH_INTERVAL_MS, self.refresh, self)
        self.summary_label = secondary_label("Loading the report…")
        self.result_label = value_label("")
        self.result_label.hide()
        self.consolidate_button = QPushButton("Consolidate now")
        self.consolidate_button.setToolTip(
            "Write an understanding for every subject, and a relationship for every pair, whose evidence changed"
        )
        self.consolidate_button.clicked.connect(self.consolidate_now)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.open_subject_button = QPushButton("Open subject")
        self.open_subject_button.clicked.connect(self.open_selected_subject)
        self.open_pair_button = QPushButton("Open intersection")
        self.open_pair_button.clicked.connect(self.open_selected_intersection)
        self.table = simple_table(self.model, stretch=1, name="Consolidation report", fit=(0, 2))
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.table.doubleClicked.connect(self._open_row)

        top = QHBoxLayout()
        top.addWidget(heading_label("Consolidation", scale=1.15))
        top.addWidget(self.summary_label, 1, Qt.AlignmentFlag.AlignBottom)
        top.addWidget(self.refresh_button)
        top.addWidget(self.consolidate_button)
        actions = QHBoxLayout()
        actions.addWidget(self.open_subject_button)
        actions.addWidget(self.open_pair_button)
        actions.addStretch(1)
        actions.addWidget(secondary_label("Double-click a row to open its pair, or its subject."))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.result_label)
        layout.addWidget(EmptyAware(self.table, "Nothing waits for consolidation."), 1)
        layout.addLayout(actions)
        runner.changes_arrived.connect(self._on_changes)
        self._update_buttons()

    # -- the report --------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Load on first show; catch up on changes that arrived while hidden."""
        super().showEvent(event)
        if not self._started or self._stale:
            self.refresh()

    def refresh(self) -> None:
        """Read the report again."""
        self._started = True
        if self._loading:
            self._stale = True
            return
        self._loading = True
        self._stale = False
        user_id = self._user_id
        self._runner.read(lambda vault: load_report(vault, user_id), self._arrived, on_error=self._failed)

    def _arrived(self, state: ReportState) -> None:
        self._loading = False
        self.state = state
        self.model.set_rows(state.rows)
        self.summary_label.setText(report_summary(state.report))
        self._update_buttons()
        if self._stale:
            self._throttle.trigger()

    def _failed(self, error: BaseException) -> None:
        self._loading = False
        self.summary_label.setText("The report could not be read.")
        self._runner.report(error)

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if not any(c.type.startswith(WATCHED) for c in changes):
            return
        if not self.isVisible():
            self._stale = self._stale or self._started
            return
        self._throttle.trigger()

    def rows(self) -> tuple[ReportRow, ...]:
        """The rows shown."""
        return self.model.rows()

    # -- consolidate -------------------------------------------------------------------------------
    def consolidate_now(self) -> None:
        """Run a consolidation pass on the writer, then say what it wrote."""
        if self.consolidating:
            return
        self.consolidating = True
        self.consolidate_button.setEnabled(False)
        self.result_label.setText("Consolidating…")
        self.result_label.show()
        user_id = self._user_id
        self._runner.write(
            lambda vault: vault.workspace.consolidate(user_id=user_id),
            self._consolidated,
            on_error=self._not_consolidated,
        )

    def _consolidated(self, result: PassResult) -> None:
        self.consolidating = False
        self.consolidate_button.setEnabled(True)
        self.last_pass = result
        text = pass_text(result)
        self.result_label.setText(text)
        self._show_status(text)
        self.consolidated.emit(result)
        self.refresh()

    def _not_consolidated(self, error: BaseException) -> None:
        self.consolidating = False
        self.consolidate_button.setEnabled(True)
        self.result_label.setText("The pass did not finish; see the message above.")
        self._runner.report(error)

    # -- opening rows ------------------------------------------------------------------------------
    def selected_row(self) -> ReportRow | None:
        """The chosen row."""
        rows = self.table.selectionModel().selectedRows()
        return self.model.row_item(rows[0].row()) if rows else None

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        row = self.selected_row()
        self.open_subject_button.setEnabled(row is not None and row.subject is not None)
        self.open_pair_button.setEnabled(row is not None and row.pair is not None)

    def open_selected_subject(self) -> None:
        """Open the chosen row's subject (the first of a pair)."""
        row = self.selected_row()
        if row is not None and row.subject is not None:
            self.subject_requested.emit(row.subject)

    def open_selected_intersection(self) -> None:
        """Open what the chosen row's pair shares."""
        row = self.selected_row()
        if row is not None and row.pair is not None:
            self.intersection_requested.emit(*row.pair)

    def _open_row(self, index: QModelIndex) -> None:
        row = self.model.row_item(index.row())
        if row.pair is not None:
            self.intersection_requested.emit(*row.pair)
        elif row.subject is not None:
            self.subject_requested.emit(row.subject)
