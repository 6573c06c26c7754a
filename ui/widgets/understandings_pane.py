"""A subject's active understandings: their text and sources, their history, revising and marking them.

The pane is given the understandings to list (the People & topics view loads them with the rest of the subject);
what it does itself — read a revision chain, revise, mark — goes through the runner, and :attr:`changed` tells the
view to load the subject again once something was written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from engine.workspace.model import Understanding
from ui.format import plural
from ui.models.rows import RowTableModel
from ui.ops import OpRunner
from ui.widgets.labels import secondary_label
from ui.widgets.tables import EmptyAware, select_only_row, simple_table
from ui.widgets.workspace_items import (
    HISTORY_COLUMNS,
    UNDERSTANDING_COLUMNS,
    ReviseDialog,
    Version,
    understanding_html,
    versions,
)


class UnderstandingsPane(QWidget):
    """The understandings table, the chosen one in full, its history, and History / Revise… / Useful / Questionable.

    Signals:
        changed(): an understanding was revised or marked; the subject should be loaded again.
    """

    changed = Signal()

    def __init__(self, runner: OpRunner, show_status: Callable[[str], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._show_status = show_status
        self._wanted: int | None = None  # select this id when it arrives (a revision)
        self._history_generation = 0
        self.history_of: int | None = None  # the understanding whose chain the history table shows
        self.dialog: ReviseDialog | None = None
        self.model = RowTableModel(UNDERSTANDING_COLUMNS, key=lambda u: u.id, parent=self)
        self.history_model = RowTableModel(HISTORY_COLUMNS, key=lambda v: v.understanding.id, parent=self)
        self.table = simple_table(self.model, stretch=1, name="Understandings", fit=(0, 2, 3, 4, 5))
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)
        self.text.setAccessibleName("The chosen understanding")
        self.history_button = QPushButton("History")
        self.history_button.setToolTip("Show every version of this understanding, oldest first")
        self.history_button.clicked.connect(self.show_history)
        self.revise_button = QPushButton("Revise…")
        self.revise_button.setToolTip("Write a new version; this one stays in the history")
        self.revise_button.clicked.connect(self.open_revise_dialog)
        self.useful_button = QPushButton("Useful")
        self.useful_button.setToolTip("Count a use: this understanding helped")
        self.useful_button.clicked.connect(lambda: self.mark(useful=True))
        self.questionable_button = QPushButton("Questionable")
        self.questionable_button.setToolTip(
            "Count a doubt: consolidation looks again at what is doubted more than used"
        )
        self.questionable_button.clicked.connect(lambda: self.mark(useful=False))
        self.history_label = secondary_label("")
        self.history_table = simple_table(self.history_model, stretch=3, name="History", fit=(0, 1, 2, 4))
        self.history_box = QWidget()
        history_layout = QVBoxLayout(self.history_box)
        history_layout.setContentsMargins(0, 0, 0, 0)
        history_layout.addWidget(self.history_label)
        history_layout.addWidget(self.history_table, 1)
        self.history_box.hide()

        buttons = QHBoxLayout()
        for button in (self.history_button, self.revise_button, self.useful_button, self.questionable_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addLayout(buttons)
        lower_layout.addWidget(self.text, 2)
        lower_layout.addWidget(self.history_box, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(
            EmptyAware(self.table, "No understanding of this subject yet: consolidate, or write one through a client.")
        )
        splitter.addWidget(lower)
        splitter.setSizes([160, 320])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self._show_selected()

    # -- content -----------------------------------------------------------------------------------
    def set_understandings(self, understandings: Sequence[Understanding], *, subject_changed: bool) -> None:
        """List ``understandings`` (the same ids keep the selection); a new subject hides the history."""
        if subject_changed:
            self._wanted = None
            self._hide_history()
        self.model.set_rows(understandings)
        wanted = self._wanted
        row = self.model.row_of(wanted) if wanted is not None else None
        if row is not None:
            self._wanted = None
            select_only_row(self.table, row)
        elif self.selected() is None and self.model.rowCount():
            select_only_row(self.table, 0)
        self._show_selected()
        if self.history_of is not None and self.history_box.isVisibleTo(self):
            self._load_history(self.history_of)  # marks and revisions change what the chain shows

    def selected(self) -> Understanding | None:
        """The chosen understanding."""
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.model.row_item(rows[0].row())

    def select(self, understanding_id: int) -> bool:
        """Choose the understanding ``understanding_id``; False when it is not listed."""
        row = self.model.row_of(understanding_id)
        if row is None:
            return False
        select_only_row(self.table, row)
        return True

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._show_selected()
        chosen = self.selected()
        if chosen is not None and self.history_box.isVisibleTo(self) and self.history_of != chosen.id:
            self._load_history(chosen.id)

    def _show_selected(self) -> None:
        chosen = self.selected()
        for button in (self.history_button, self.revise_button, self.useful_button, self.questionable_button):
            button.setEnabled(chosen is not None)
        if chosen is None:
            self.text.setHtml("")
            return
        self.text.setHtml(understanding_html(chosen))

    # -- history -----------------------------------------------------------------------------------
    def show_history(self) -> None:
        """Load the chosen understanding's revision chain, oldest first."""
        chosen = self.selected()
        if chosen is not None:
            self._load_history(chosen.id)

    def _load_history(self, understanding_id: int) -> None:
        self._history_generation += 1
        generation = self._history_generation
        self.history_of = understanding_id
        self._runner.read(
            lambda vault: vault.workspace.understanding_history(understanding_id),
            lambda chain: self._history_arrived(generation, understanding_id, chain),
        )

    def _history_arrived(self, generation: int, understanding_id: int, chain: list[Understanding]) -> None:
        if generation != self._history_generation:
            return
        numbered = versions(chain)
        self.history_model.set_rows(numbered)
        current = next((v for v in numbered if v.current), None)
        where = f"; v{current.number} is current" if current is not None else ""
        self.history_label.setText(
            f"History of #{understanding_id}: {plural(len(numbered), 'version')}, oldest first{where}."
        )
        self.history_box.show()
        if current is not None:
            row = self.history_model.row_of(current.understanding.id)
            if row is not None:
                select_only_row(self.history_table, row)

    def history(self) -> tuple[Version, ...]:
        """The versions the history table shows, oldest first."""
        return self.history_model.rows()

    def _hide_history(self) -> None:
        self._history_generation += 1
        self.history_of = None
        self.history_model.set_rows([])
        self.history_box.hide()

    # -- revise and mark ---------------------------------------------------------------------------
    def open_revise_dialog(self) -> ReviseDialog | None:
        """Ask for the new text and summary of the chosen understanding; returns the dialog."""
        chosen = self.selected()
        if chosen is None:
            return None
        dialog = ReviseDialog(self._runner, chosen, self)
        dialog.saved.connect(lambda revised: self._revised(chosen.id, revised))
        self.dialog = dialog
        dialog.open()
        return dialog

    def _revised(self, old_id: int, revised: Understanding) -> None:
        self._status(f"Revised #{old_id}: version #{revised.id} is current; the old one stays in its history.")
        self._wanted = revised.id
        self._load_history(revised.id)
        self.changed.emit()

    def mark(self, *, useful: bool) -> None:
        """Count a use (``useful``) or a doubt against the chosen understanding."""
        chosen = self.selected()
        if chosen is None:
            return
        ids = [chosen.id]
        self._runner.write(
            lambda vault: vault.workspace.mark(ids, useful=useful),
            lambda result: self._marked(chosen.id, useful, result),
        )

    def _marked(self, understanding_id: int, useful: bool, result: dict[int, str]) -> None:
        outcome = result.get(understanding_id, "")
        if outcome == "understanding":
            self._status(f"Marked #{understanding_id} {'useful' if useful else 'questionable'}.")
        else:
            self._status(f"#{understanding_id} was not marked: {outcome}.")
        self.changed.emit()

    def _status(self, text: str) -> None:
        self._show_status(text)
