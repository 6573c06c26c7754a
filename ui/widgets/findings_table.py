"""The health-check table: ``cairn doctor``'s findings as a Qt model and a view fitting its rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from engine.dto import Finding
from ui.theme import fixed_icon

STATUS_TEXT = {"ok": "OK", "warn": "Warning", "error": "Error"}
STATUS_ICON = {"ok": "status-ok", "warn": "status-warn", "error": "status-error"}

_Index = QModelIndex | QPersistentModelIndex


class FindingsModel(QAbstractTableModel):
    """One row per :class:`~engine.dto.Finding`.

    Columns: 0 check name · 1 status (text, plus a status icon as ``DecorationRole``) · 2 detail · 3
    fix. ``ToolTipRole`` repeats the full text of the detail and fix cells.  Status is shown as
    words next to the icon, never by colour alone.
    """

    HEADERS = ("Check", "Status", "Detail", "Fix")
    STATUS_COLUMN = 1

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._findings: tuple[Finding, ...] = ()
        self._icons: dict[str, QIcon] = {}

    def set_findings(self, findings: Sequence[Finding]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self._findings = tuple(findings)
        self.endResetModel()

    def finding(self, row: int) -> Finding:
        """The finding shown in ``row``."""
        return self._findings[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Number of findings (0 for child indexes: the model is flat)."""
        return 0 if parent.isValid() else len(self._findings)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Four columns."""
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Text, status icon and tooltips."""
        if not index.isValid() or index.row() >= len(self._findings):
            return None
        finding = self._findings[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(finding, column)
        if role == Qt.ItemDataRole.DecorationRole and column == self.STATUS_COLUMN:
            return self._status_icon(finding.status)
        if role == Qt.ItemDataRole.ToolTipRole and column >= 2:
            return self._text(finding, column) or None
        return None

    @staticmethod
    def _text(finding: Finding, column: int) -> str:
        if column == 0:
            return finding.check
        if column == 1:
            text = STATUS_TEXT.get(finding.status, finding.status)
            return f"{text} (essential)" if finding.status == "error" and finding.essential else text
        if column == 2:
            return finding.detail
        return finding.fix

    def _status_icon(self, status: str) -> QIcon | None:
        name = STATUS_ICON.get(status)
        if name is None:
            return None
        if name not in self._icons:
            self._icons[name] = fixed_icon(name)
        return self._icons[name]


class FindingsTable(QTableView):
    """A read-only view of :class:`FindingsModel` whose height fits all its rows.

    It sits inside the overview's scroll area, so a second scroll bar inside the table would only
    get in the way; long detail and fix texts wrap instead of being cut off.
    """

    def __init__(self, model: FindingsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWordWrap(True)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.verticalHeader().hide()
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        # Wrapped rows get taller when columns get narrower, so the rows are fitted again after every
        # column resize too; a reset resizes several columns at once, so the fitting waits for the
        # event loop and happens once (measuring every wrapped cell is not cheap).
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_rows)
        header.sectionResized.connect(self._fit_soon)
        model.modelReset.connect(self._on_reset)
        self._on_reset()

    def _on_reset(self) -> None:
        # An empty "Fix" column would take half the width from the details when all is well.
        model = self.model()
        has_fix = any(model.index(row, 3).data() for row in range(model.rowCount()))
        self.setColumnHidden(3, not has_fix)
        self._fit_soon()

    def _fit_soon(self, *_args: object) -> None:
        self._fit_timer.start()

    @property
    def fitting(self) -> bool:
        """True while the rows wait to be fitted to a change."""
        return self._fit_timer.isActive()

    def fit_rows(self) -> None:
        """Fit each row's height to its wrapped text, and the table's height to its rows."""
        self._fit_timer.stop()
        self.resizeRowsToContents()
        height = self.horizontalHeader().height() + 2 * self.frameWidth()
        for row in range(self.model().rowCount()):
            height += self.rowHeight(row)
        self.setFixedHeight(height)
