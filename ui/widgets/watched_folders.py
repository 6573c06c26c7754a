"""The watched-folders editor: folders with their include and exclude globs (``watch.folders``).

A small editable table model (folder · include · exclude; the globs are edited as comma-separated
text) and a widget with "Add folder…" and "Remove".  Its value is what ``Settings.updated`` takes
for ``watch.folders``: a list of ``{path, include, exclude}`` mappings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.config import WatchedFolder
from ui.widgets.tables import EmptyAware

_Index = QModelIndex | QPersistentModelIndex
HEADERS = ("Folder", "Include", "Exclude")
GLOB_KEYS = ("include", "exclude")


def _globs(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


class WatchedFoldersModel(QAbstractTableModel):
    """One row per watched folder; the include and exclude cells are editable.

    Columns: 0 folder path · 1 include globs · 2 exclude globs (comma-separated text).
    """

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._folders: list[dict[str, Any]] = []

    def set_folders(self, folders: Sequence[Any]) -> None:
        """Show ``folders`` (``WatchedFolder`` objects or their mappings)."""
        self.beginResetModel()
        self._folders = [f.model_dump(mode="json") if isinstance(f, WatchedFolder) else dict(f) for f in folders]
        self.endResetModel()

    def folders(self) -> list[dict[str, Any]]:
        """The folders as ``{path, include, exclude}`` mappings."""
        return [
            {"path": f["path"], "include": list(f["include"]), "exclude": list(f["exclude"])} for f in self._folders
        ]

    def add_folder(self, path: str) -> bool:
        """Add ``path`` with the default globs; False when it is already watched."""
        if any(f["path"] == path for f in self._folders):
            return False
        row = len(self._folders)
        self.beginInsertRows(QModelIndex(), row, row)
        self._folders.append(WatchedFolder.model_validate({"path": path}).model_dump(mode="json"))
        self.endInsertRows()
        self.edited.emit()
        return True

    def remove_rows(self, rows: Sequence[int]) -> None:
        """Stop watching the folders in ``rows``."""
        for row in sorted(set(rows), reverse=True):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._folders[row]
            self.endRemoveRows()
        if rows:
            self.edited.emit()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Number of folders."""
        return 0 if parent.isValid() else len(self._folders)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Three columns."""
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        """The glob cells can be edited; the path cannot (remove and add instead)."""
        base = super().flags(index)
        return base | Qt.ItemFlag.ItemIsEditable if index.column() > 0 else base

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The path, or the globs as comma-separated text."""
        if not index.isValid() or index.row() >= len(self._folders):
            return None
        folder = self._folders[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if index.column() == 0:
                return folder["path"]
            return ", ".join(folder[GLOB_KEYS[index.column() - 1]])
        if role == Qt.ItemDataRole.ToolTipRole:
            return folder["path"] if index.column() == 0 else "Comma-separated patterns, like *.md, *.pdf"
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Store edited globs."""
        if role != Qt.ItemDataRole.EditRole or index.column() == 0 or not index.isValid():
            return False
        self._folders[index.row()][GLOB_KEYS[index.column() - 1]] = _globs(str(value))
        self.dataChanged.emit(index, index)
        self.edited.emit()
        return True


class WatchedFoldersEditor(QWidget):
    """The table and its buttons.  ``edited`` fires on every change."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = WatchedFoldersModel(self)
        self.model.edited.connect(self.edited)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(1, 200)
        self.table.setColumnWidth(2, 200)
        self.table.setMinimumHeight(140)
        self.table.setAccessibleName("Watched folders")
        self.add_button = QPushButton("Add folder…")
        self.add_button.clicked.connect(self.choose_folder)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(
            EmptyAware(
                self.table,
                "No folders watched yet. Documents in a watched folder are kept in step with the vault.",
            )
        )
        box.addLayout(buttons)

    def choose_folder(self) -> None:
        """Ask for a folder and add it."""
        path = QFileDialog.getExistingDirectory(self, "Watch a folder")
        if path:
            self.model.add_folder(path)

    def remove_selected(self) -> None:
        """Stop watching the selected folders."""
        rows = [index.row() for index in self.table.selectionModel().selectedRows()]
        self.model.remove_rows(rows)
