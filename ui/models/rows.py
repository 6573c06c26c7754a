"""A table model over a short list of DTOs, described by its columns (conflicts, subjects, jobs …).

The lists these models hold are small (a conversation's turns, open conflicts, parked jobs), so
they are loaded whole; the facts table, which can hold 100k rows, has its own lazy model
(:mod:`ui.models.facts`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

T = TypeVar("T")
_Index = QModelIndex | QPersistentModelIndex

ROW_ROLE = Qt.ItemDataRole.UserRole + 1
"""``data(index, ROW_ROLE)``: the DTO shown in the index's row.

From Python, prefer :meth:`RowTableModel.row_item`: reading a role back through Qt
(``index.data(role)``) converts an unset value to ``None`` in a way that, in PySide6 6.12, drops a
reference to ``None`` each time."""
KEY_ROLE = Qt.ItemDataRole.UserRole + 2
"""``data(index, KEY_ROLE)``: the row's key (usually the DTO's id)."""


@dataclass(frozen=True, slots=True)
class Column(Generic[T]):
    """One column: its title, the text of a cell, and optionally a tooltip and an alignment."""

    title: str
    text: Callable[[T], str]
    tooltip: Callable[[T], str] | None = None
    align_right: bool = False


class RowTableModel(QAbstractTableModel, Generic[T]):
    """Rows of DTOs of one type, with columns given as :class:`Column` objects.

    Roles: ``DisplayRole`` (the column's text), ``ToolTipRole`` (the column's tooltip, if any),
    ``TextAlignmentRole`` (numbers right-aligned), :data:`ROW_ROLE` and :data:`KEY_ROLE`.
    """

    def __init__(
        self,
        columns: Sequence[Column[T]],
        key: Callable[[T], Hashable],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._columns = tuple(columns)
        self._key = key
        self._rows: list[T] = []

    # -- content -----------------------------------------------------------------------------------
    def set_rows(self, rows: Sequence[T]) -> None:
        """Show ``rows``.  The same keys in the same order only repaint (selection is kept)."""
        new = list(rows)
        if [self._key(r) for r in new] == [self._key(r) for r in self._rows]:
            self._rows = new
            if new:
                self.dataChanged.emit(self.index(0, 0), self.index(len(new) - 1, len(self._columns) - 1))
            return
        self.beginResetModel()
        self._rows = new
        self.endResetModel()

    def rows(self) -> tuple[T, ...]:
        """Every row's DTO, top to bottom."""
        return tuple(self._rows)

    def row_item(self, row: int) -> T:
        """The DTO in ``row``."""
        return self._rows[row]

    def key_at(self, row: int) -> Hashable:
        """The key of ``row``."""
        return self._key(self._rows[row])

    def row_of(self, key: Hashable) -> int | None:
        """The row holding the DTO with ``key`` (None when not shown)."""
        for row, item in enumerate(self._rows):
            if self._key(item) == key:
                return row
        return None

    def replace(self, item: T) -> bool:
        """Put ``item`` in place of the row with the same key; False when there is none."""
        row = self.row_of(self._key(item))
        if row is None:
            return False
        self._rows[row] = item
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(self._columns) - 1))
        return True

    def remove_key(self, key: Hashable) -> bool:
        """Drop the row with ``key``; False when there is none."""
        row = self.row_of(key)
        if row is None:
            return False
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._rows[row]
        self.endRemoveRows()
        return True

    # -- Qt ----------------------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Number of rows (0 under a valid parent: the model is flat)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Number of columns."""
        return 0 if parent.isValid() else len(self._columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._columns[section].title
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """See the class docstring for the roles."""
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        item = self._rows[index.row()]
        column = self._columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(item)
        if role == Qt.ItemDataRole.ToolTipRole and column.tooltip is not None:
            return column.tooltip(item) or None
        if role == Qt.ItemDataRole.TextAlignmentRole and column.align_right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == ROW_ROLE:
            return item
        if role == KEY_ROLE:
            return self._key(item)
        return None
