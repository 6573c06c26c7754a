"""Read-only table views set up the same way everywhere, and a placeholder for empty ones."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QAbstractItemModel, QItemSelectionModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStackedWidget,
    QTableView,
    QWidget,
)

from ui.widgets.labels import secondary_label

ROW_PADDING = 10
"""Pixels added to the font's height for a table row."""


def simple_table(
    model: QAbstractItemModel,
    *,
    stretch: int,
    name: str,
    fit: Iterable[int] = (),
    multi: bool = False,
) -> QTableView:
    """A read-only, row-selecting table over ``model``.

    Args:
        model: what it shows.
        stretch: the column that takes the spare width.
        name: its accessible name.
        fit: columns sized to their contents (short values: dates, counts).
        multi: allow selecting several rows.
    """
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(
        QAbstractItemView.SelectionMode.ExtendedSelection if multi else QAbstractItemView.SelectionMode.SingleSelection
    )
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setAlternatingRowColors(True)
    view.setShowGrid(False)
    view.setWordWrap(False)
    rows = view.verticalHeader()
    rows.hide()
    rows.setDefaultSectionSize(view.fontMetrics().height() + ROW_PADDING)  # compact, as in the Memories table
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    for column in fit:
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    view.setAccessibleName(name)
    return view


class EmptyAware(QStackedWidget):
    """Shows ``table``, or a sentence saying why it is empty when its model has no rows."""

    def __init__(self, table: QTableView, empty_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = table
        self.placeholder = secondary_label(empty_text)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.addWidget(table)
        self.addWidget(self.placeholder)
        model = table.model()
        for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved):
            signal.connect(self._update)
        self._update()

    @property
    def showing_placeholder(self) -> bool:
        """True while the empty-state sentence is shown."""
        return self.currentIndex() == 1

    def set_empty_text(self, text: str) -> None:
        """Change the sentence."""
        self.placeholder.setText(text)

    def _update(self, *_args: object) -> None:
        self.setCurrentIndex(0 if self.table.model().rowCount() else 1)


def select_only_row(view: QTableView, row: int) -> None:
    """Make ``row`` the current and only selected row.

    Unlike ``QTableView.selectRow`` this never toggles: in a multi-selection view ``selectRow``
    follows the keyboard modifiers held at the time, so a programmatic selection made while Ctrl is
    down would deselect the row instead.
    """
    model = view.model()
    selection = view.selectionModel()
    if model is None or selection is None or not 0 <= row < model.rowCount():
        return
    flags = QItemSelectionModel.SelectionFlag
    selection.setCurrentIndex(model.index(row, 0), flags.ClearAndSelect | flags.Rows)
