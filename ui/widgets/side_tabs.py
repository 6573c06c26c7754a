"""Sections listed down the side instead of tabs across the top, for a pane with more sections than fit in a row.

People & topics shows seven sections of a subject, each with its count; as tabs they needed ~750 px where the
detail pane has ~590 at the default window size, so some hid behind scroll arrows.  A list down the side holds any
number, each label whole and readable, and the list is as wide as its longest label.  The calls are
:class:`QTabWidget`'s (``addTab``, ``setTabText``, ``tabText``, ``setTabToolTip``, ``setCurrentIndex``,
``currentIndex``, ``currentChanged``), so the view reads the same.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QListWidget, QListWidgetItem, QStackedWidget, QWidget

#: Room beside the longest label (the item's padding and a possible scroll bar).
PADDING = 40


class SideTabs(QWidget):
    """A list of sections on the left, the chosen section's page on the right."""

    currentChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setObjectName("sideTabs")
        self.list.setAccessibleName("Sections")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setUniformItemSizes(True)
        self.list.setStyleSheet("QListWidget#sideTabs::item { padding: 4px 6px; }")
        self.stack = QStackedWidget()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.list)
        layout.addWidget(self.stack, 1)
        self.list.currentRowChanged.connect(self._on_row)

    def addTab(self, page: QWidget, label: str) -> int:
        """Add a section; returns its index."""
        self.stack.addWidget(page)
        self.list.addItem(QListWidgetItem(label))
        if self.list.currentRow() < 0:
            self.list.setCurrentRow(0)
        self._fit()
        return self.list.count() - 1

    def count(self) -> int:
        """The number of sections."""
        return self.list.count()

    def tabText(self, index: int) -> str:
        """A section's label."""
        item = self.list.item(index)
        return item.text() if item is not None else ""

    def setTabText(self, index: int, text: str) -> None:
        """Relabel a section (the list widens to fit it)."""
        item = self.list.item(index)
        if item is not None:
            item.setText(text)
            self._fit()

    def setTabToolTip(self, index: int, tip: str) -> None:
        """A section's tooltip."""
        item = self.list.item(index)
        if item is not None:
            item.setToolTip(tip)

    def currentIndex(self) -> int:
        """The section shown."""
        return self.list.currentRow()

    def setCurrentIndex(self, index: int) -> None:
        """Show a section."""
        self.list.setCurrentRow(index)

    def widget(self, index: int) -> QWidget | None:
        """A section's page."""
        return self.stack.widget(index)

    def label_width(self) -> int:
        """The width the longest label needs."""
        metrics = self.list.fontMetrics()
        return max((metrics.horizontalAdvance(self.tabText(i)) for i in range(self.count())), default=0)

    def _fit(self) -> None:
        self.list.setFixedWidth(max(110, self.label_width() + PADDING))

    def _on_row(self, row: int) -> None:
        if row >= 0:
            self.stack.setCurrentIndex(row)
            self.currentChanged.emit(row)
