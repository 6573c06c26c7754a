"""The Memories view: every fact, filtered and searched, with its evidence, history and actions.

The table is a :class:`~ui.models.facts.FactTableModel` (lazy: ids first, rows by the page), so a
vault of 100k facts opens and scrolls as fast as one of ten.  Actions run on the runner's writer,
for the fact in the detail pane or for every selected row; their results update the rows at once,
and the change feed updates anything else showing the same facts.  Ctrl+Z (or the Undo button)
takes back the last delete or edit (:mod:`ui.fact_undo` says which actions can be undone and why).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QItemSelection, QModelIndex, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.changes import Change
from engine.facts.model import Fact
from ui.context import ViewContext
from ui.fact_actions import ActionResult, action_message, run_action
from ui.fact_undo import UndoOutcome, UndoStack, UndoStep, undo_step
from ui.format import plural
from ui.models.facts import (
    COLUMNS,
    CONFIDENCE,
    PREDICATE,
    STANDING,
    SUBJECT,
    TIER,
    UPDATED,
    VALUE,
    FactTableModel,
)
from ui.throttle import Throttle
from ui.widgets.fact_detail import FactDetail
from ui.widgets.fact_dialog import FactDialog
from ui.widgets.fact_filters import FactFilterBar
from ui.widgets.labels import heading_label, secondary_label
from ui.widgets.tables import ROW_PADDING, select_only_row

BULK_ACTIONS = (
    ("delete", "Delete"),
    ("restore", "Restore"),
    ("approve", "Approve"),
    ("pin_hot", "Pin to hot"),
    ("demote", "Demote"),
    ("useful", "Useful"),
    ("questionable", "Questionable"),
)
COLUMN_WIDTHS = {
    SUBJECT: 110,
    PREDICATE: 150,
    TIER: 90,
    STANDING: 100,
    CONFIDENCE: 85,
    UPDATED: 125,
}
CHOICES_INTERVAL_MS = 2000
UNDO_DEPTH = 20  # deletes and edits that Ctrl+Z can take back, most recent first
EMPTY_VAULT_TEXT = (
    "No memories yet. They appear as chat clients send turns and transcripts are imported "
    "(Conversations → Import transcript…), or add one by hand."
)
EMPTY_FILTER_TEXT = "No memories match these filters."


class MemoriesView(QWidget):
    """Facts: filter bar, lazy table, detail pane, bulk actions, add by hand, undo of deletes and edits.

    Signals:
        navigate_requested(str, object): open another view on an object (``"event"`` or ``"span"``, id).
    """

    navigate_requested = Signal(str, object)

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._show_status = context.show_status
        self.undo_stack = UndoStack(UNDO_DEPTH)
        self._pending_select: int | None = None
        self._filtered = False  # the list being loaded follows a filter the person changed
        self._wanted_detail: int | None = None
        self._choices: tuple[list[str], list[str]] = ([], [])
        self._started = False
        self.dialog: FactDialog | None = None
        self.model = FactTableModel(context.runner, self)
        self.model.ids_loaded.connect(self._on_ids_loaded)
        self.model.rows_refreshed.connect(self._on_rows_refreshed)
        self._choices_throttle = Throttle(CHOICES_INTERVAL_MS, self._load_choices, self)

        self.filters = FactFilterBar()
        self.filters.filter_changed.connect(self._on_filter_changed)
        self.count_label = secondary_label("")
        self.add_button = QPushButton("Add memory…")
        self.add_button.setToolTip("Write down something Cairn should remember")
        self.add_button.clicked.connect(self.open_add_dialog)
        self.undo_button = QPushButton("Undo")
        self.undo_button.clicked.connect(self.undo)
        self.table = self._build_table()
        self.empty_label = secondary_label(EMPTY_VAULT_TEXT)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.table_stack = QStackedWidget()
        self.table_stack.addWidget(self.table)
        self.table_stack.addWidget(self.empty_label)
        self.detail = FactDetail(context.runner)
        self.detail.action_requested.connect(self._on_detail_action)
        self.detail.fact_activated.connect(self._show_version)
        self.detail.event_activated.connect(lambda event_id: self.navigate_requested.emit("event", event_id))
        self.detail.span_activated.connect(lambda span_id: self.navigate_requested.emit("span", span_id))
        self.selection_label = QLabel("")
        self.bulk_buttons: dict[str, QPushButton] = {}

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(8)
        header = QHBoxLayout()
        header.addWidget(heading_label("Memories", scale=1.45))
        header.addWidget(self.count_label, 1, Qt.AlignmentFlag.AlignBottom)
        header.addWidget(self.undo_button)
        header.addWidget(self.add_button)
        layout.addLayout(header)
        layout.addWidget(self.filters)
        # Seven columns need the full width; the detail sits below the table.
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        left = QWidget()
        left_box = QVBoxLayout(left)
        left_box.setContentsMargins(0, 0, 0, 0)
        left_box.addWidget(self.table_stack, 1)
        left_box.addLayout(self._build_bulk_bar())
        splitter.addWidget(left)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([330, 330])
        layout.addWidget(splitter, 1)

        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self.delete_selection)
        context.runner.changes_arrived.connect(self._on_changes)
        self._update_selection_actions()
        self._update_undo()

    # -- building ----------------------------------------------------------------------------------
    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setAlternatingRowColors(True)
        table.setShowGrid(False)
        table.setWordWrap(False)
        table.setAccessibleName("Memories")
        rows = table.verticalHeader()
        rows.hide()
        # Fixed heights let the view place row 90,000 without measuring the rows above it.
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(table.fontMetrics().height() + ROW_PADDING)
        header = table.horizontalHeader()
        header.setHighlightSections(False)
        header.setStretchLastSection(False)
        for column in range(len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(VALUE, QHeaderView.ResizeMode.Stretch)
        for column, width in COLUMN_WIDTHS.items():
            table.setColumnWidth(column, width)
        header.setSortIndicator(UPDATED, Qt.SortOrder.DescendingOrder)
        header.setSortIndicatorShown(True)
        header.sortIndicatorChanged.connect(self._on_sort_requested)
        table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        table.selectionModel().currentRowChanged.connect(self._on_current_changed)
        return table

    def _build_bulk_bar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.setSpacing(6)
        bar.addWidget(self.selection_label, 1)
        for key, text in BULK_ACTIONS:
            button = QPushButton(text)
            button.clicked.connect(lambda _checked=False, k=key: self.act_on_selection(k))
            self.bulk_buttons[key] = button
            bar.addWidget(button)
        self.bulk_buttons["delete"].setToolTip("Delete the selected memories (Del; Ctrl+Z undoes)")
        return bar

    # -- loading -----------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Load on first show: a view never opened costs nothing at start-up."""
        super().showEvent(event)
        self._start()

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        self.model.set_filter(self.filters.current_filter())
        self._load_choices()

    def _load_choices(self) -> None:
        def load(vault: Vault) -> tuple[list[str], list[str]]:
            subjects = [s.name for s in vault.subjects(limit=500)]
            return subjects, [spec.name for spec in vault.catalog]

        self._runner.read(load, self._choices_arrived)

    def _choices_arrived(self, choices: tuple[list[str], list[str]]) -> None:
        self._choices = choices
        self.filters.set_choices(*choices)

    def _on_filter_changed(self, flt: object) -> None:
        if self._started and flt != self.model.fact_filter:
            self._filtered = True  # the next list is the person's new choice: the detail follows it
            self.model.set_filter(flt)  # type: ignore[arg-type]

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if self._started and any(c.type.startswith("subject.") for c in changes):
            self._choices_throttle.trigger()

    def _on_ids_loaded(self, count: int) -> None:
        filtered = not self.filters.is_default()
        noun = plural(count, "memory", "memories")
        self.count_label.setText(f"{noun} match" if filtered else noun)
        self.empty_label.setText(EMPTY_FILTER_TEXT if filtered else EMPTY_VAULT_TEXT)
        self.table_stack.setCurrentIndex(0 if count else 1)
        if self._pending_select is not None:
            fact_id, self._pending_select = self._pending_select, None
            self.select_fact(fact_id)
        elif self._filtered:
            self._filtered = False
            self._follow_the_list(count)
        elif count and not self.table.currentIndex().isValid() and self.detail.fact is None:
            # a reload after a change (an approve that takes a memory out of the filter, say) keeps the detail on
            # what was acted on, so its outcome stays in view
            select_only_row(self.table, 0)
        self._update_selection_actions()

    def _follow_the_list(self, count: int) -> None:
        """After the person filtered the list, the detail shows a memory of the list: the one it
        showed if the list still holds it (selected at its new place), else the first; none when the list is empty.
        A filter that drops the shown memory must not leave it on screen as if it matched."""
        shown = self.detail.fact
        row = self.model.row_of(shown.id) if shown is not None else None
        if row is not None:
            if self.table.currentIndex().row() != row or self.selected_ids() != [shown.id]:  # type: ignore[union-attr]
                select_only_row(self.table, row)
            return
        if not count:
            self.detail.show_fact(None)
            return
        select_only_row(self.table, 0)
        # the current index may have stayed at row 0 through the reset, so no change is announced: show it here
        self._on_current_changed(self.model.index(0, 0), QModelIndex())

    def _on_rows_refreshed(self, fact_ids: list[int]) -> None:
        shown = self.detail.fact
        if shown is not None and shown.id in fact_ids:
            fresh = self.model.cached_fact(shown.id)
            if fresh is not None:
                self.detail.update_if_shown(fresh)

    # -- selection ---------------------------------------------------------------------------------
    def selected_ids(self) -> list[int]:
        """The ids of the selected rows, top to bottom."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [self.model.fact_id_at(row) for row in rows]

    def select_fact(self, fact_id: int) -> bool:
        """Select and show the row of ``fact_id``; False when it is not in the list."""
        row = self.model.row_of(fact_id)
        if row is None:
            return False
        select_only_row(self.table, row)
        self.table.scrollTo(self.model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def show_fact(self, fact_id: int) -> None:
        """Open ``fact_id``: select it (clearing filters that hide it) and show its detail."""
        self._start()
        if self.select_fact(fact_id):
            return
        self._load_into_detail(fact_id)
        self._pending_select = fact_id  # selected when the (unfiltered) ids arrive
        if not self.filters.is_default():
            self.filters.clear()

    def _on_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._update_selection_actions()

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        fact_id = self.model.fact_id_at(current.row())
        fact = self.model.cached_fact(fact_id)
        if fact is not None:
            self._wanted_detail = fact_id
            self.detail.show_fact(fact)
        else:
            self._load_into_detail(fact_id)

    def _load_into_detail(self, fact_id: int) -> None:
        self._wanted_detail = fact_id
        self._runner.read(lambda vault: vault.facts.get(fact_id), self._detail_arrived)

    def _detail_arrived(self, fact: Fact) -> None:
        if fact.id == self._wanted_detail:  # the person may have moved on meanwhile
            self.detail.show_fact(fact)

    def _show_version(self, fact_id: int) -> None:
        if not self.select_fact(fact_id):
            self._load_into_detail(fact_id)

    def _update_selection_actions(self) -> None:
        count = len(self.table.selectionModel().selectedRows())
        self.selection_label.setText(f"{count} selected" if count > 1 else "")
        for button in self.bulk_buttons.values():
            button.setVisible(count > 1)

    def _on_sort_requested(self, column: int, order: Qt.SortOrder) -> None:
        if column in (SUBJECT, CONFIDENCE, UPDATED):
            self.model.sort(column, order)
            return
        # Only some columns can be sorted by the engine: put the indicator back.
        header = self.table.horizontalHeader()
        header.blockSignals(True)
        header.setSortIndicator(
            self.model.sort_column,
            Qt.SortOrder.AscendingOrder if self.model.ascending else Qt.SortOrder.DescendingOrder,
        )
        header.blockSignals(False)

    # -- actions -----------------------------------------------------------------------------------
    def act_on_selection(self, key: str) -> None:
        """Run a bulk action on every selected memory."""
        ids = self.selected_ids()
        if ids:
            self.act(key, ids)

    def delete_selection(self) -> None:
        """Delete the selected memories (the Del key)."""
        self.act_on_selection("delete")

    def act(self, key: str, fact_ids: Sequence[int]) -> None:
        """Run action ``key`` on ``fact_ids`` on the writer; the results update their rows."""
        ids = tuple(fact_ids)
        before: dict[int, str] = {}
        for fact_id in ids:
            cached = self.model.cached_fact(fact_id)
            if cached is not None:
                before[fact_id] = cached.status
        self._runner.write(
            lambda vault: run_action(vault, key, ids),
            lambda result: self._action_done(key, ids, before, result),
        )

    def _action_done(self, key: str, ids: tuple[int, ...], before: dict[int, str], result: ActionResult) -> None:
        facts, problems = result
        for fact in facts:
            self.model.replace_fact(fact)
            self.detail.update_if_shown(fact)
        if key == "delete":
            deleted = tuple(f.id for f in facts if before.get(f.id) != "deleted")
            if deleted:
                self.undo_stack.push(UndoStep.delete(deleted))
                self._update_undo()
        message = action_message(key, len(facts))
        if problems:
            message += f" {len(problems)} could not be changed: {problems[0]}"
        self._show_status(message)

    def _on_detail_action(self, key: str, fact_id: int) -> None:
        if key == "edit":
            self.open_edit_dialog(fact_id)
        else:
            self.act(key, [fact_id])

    # -- undo --------------------------------------------------------------------------------------
    def can_undo(self) -> bool:
        """True when there is a delete or an edit to take back."""
        return bool(self.undo_stack)

    def undo_text(self) -> str:
        """What Ctrl+Z would take back ("" when nothing)."""
        step = self.undo_stack.peek()
        return step.text if step is not None else ""

    def undo(self) -> bool:
        """Take back the last delete or edit (Ctrl+Z); False when there is nothing to undo."""
        step = self.undo_stack.pop()
        if step is None:
            return False
        self._update_undo()
        self._runner.write(lambda vault: undo_step(vault, step), self._undo_done)
        return True

    def _undo_done(self, outcome: UndoOutcome) -> None:
        for fact in outcome.facts:
            self.model.replace_fact(fact)
            self.detail.update_if_shown(fact)
        if outcome.undone:
            self.model.reload_ids()
            if outcome.step.kind == "edit" and outcome.facts:
                self._pending_select = self._wanted_detail = outcome.facts[0].id
                self.detail.show_fact(outcome.facts[0])
        self._show_status(outcome.message)

    def _update_undo(self) -> None:
        text = self.undo_text()
        self.undo_button.setVisible(bool(text))
        self.undo_button.setToolTip(f"Undo {text} (Ctrl+Z)" if text else "")

    # -- add and edit ------------------------------------------------------------------------------
    def open_add_dialog(self) -> FactDialog:
        """Open the "Add a memory" dialog (non-blocking); returns it."""
        return self._open_dialog(None, self.add_memory_from_dialog)

    def open_edit_dialog(self, fact_id: int) -> FactDialog | None:
        """Open the correction dialog for ``fact_id`` (the fact shown in the detail pane)."""
        fact = self.detail.fact if self.detail.fact and self.detail.fact.id == fact_id else None
        fact = fact or self.model.cached_fact(fact_id)
        if fact is None:
            return None
        return self._open_dialog(fact, lambda: self.edit_from_dialog(fact_id))

    def _open_dialog(self, fact: Fact | None, on_accept: Callable[[], None]) -> FactDialog:
        subjects, predicates = self._choices
        dialog = FactDialog(subjects=subjects, predicates=predicates, fact=fact, parent=self)
        dialog.accepted.connect(on_accept)
        dialog.finished.connect(dialog.deleteLater)
        self.dialog = dialog
        dialog.open()
        return dialog

    def add_memory_from_dialog(self) -> None:
        """Add what the open dialog holds."""
        if self.dialog is not None:
            values = self.dialog.values()
            self.add_memory(values.subject, values.predicate, values.value)

    def edit_from_dialog(self, fact_id: int) -> None:
        """Save the open dialog as a new version of ``fact_id``."""
        if self.dialog is not None:
            values = self.dialog.values()
            self.edit_fact(fact_id, value=values.value, predicate=values.predicate, subject=values.subject)

    def add_memory(self, subject: str, predicate: str, value: str) -> None:
        """Add a memory by hand (``vault.facts.add``) and show it."""
        self._runner.write(
            lambda vault: vault.facts.add(subject, predicate, value),
            self._added,
        )

    def _added(self, fact: Fact) -> None:
        self._show_status(f"Added: {fact.statement}")
        self._pending_select = self._wanted_detail = fact.id
        self.detail.show_fact(fact)
        self.model.reload_ids()

    def edit_fact(
        self,
        fact_id: int,
        *,
        value: str | None = None,
        predicate: str | None = None,
        subject: str | None = None,
    ) -> None:
        """Correct a fact: the engine stores a new version and keeps the old one in the history."""
        kwargs: dict[str, Any] = {"object_text": value, "predicate": predicate, "subject": subject}

        def edit(vault: Vault) -> tuple[Fact, Fact]:
            before = vault.facts.get(fact_id)
            return before, vault.facts.edit(fact_id, **kwargs)

        self._runner.write(edit, lambda result: self._edited(*result))

    def _edited(self, before: Fact, fact: Fact) -> None:
        self.undo_stack.push(UndoStep.edit(before, fact))
        self._update_undo()
        self._show_status(f"Saved a new version: {fact.statement}. Ctrl+Z takes it back.")
        self._pending_select = self._wanted_detail = fact.id
        self.detail.show_fact(fact)
        self.model.reload_ids()
