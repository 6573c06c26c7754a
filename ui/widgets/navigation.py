"""The navigation list's item delegate: a count badge (open conflicts, say) at the right of an item.

The badge is drawn in the palette's highlight colours (inverted on the selected item), so it stays
readable in light and dark themes, and it carries a number rather than relying on colour.

The counts live in the delegate rather than in item data: reading item data back from Qt turns an
unset value into ``None`` through a conversion that, in PySide6 6.12, releases a reference to
``None`` it never took, and a paint handler doing that on every repaint would eventually crash
the interpreter.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

BADGE_MARGIN = 8

_Index = QModelIndex | QPersistentModelIndex


class BadgeDelegate(QStyledItemDelegate):
    """Paints the item as usual, then its row's count (if any) in a rounded pill."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._counts: dict[int, int] = {}

    def count(self, row: int) -> int:
        """The number shown on ``row`` (0: no badge)."""
        return self._counts.get(row, 0)

    def set_count(self, row: int, count: int) -> None:
        """Show ``count`` on ``row`` (0 hides the badge); the caller repaints the view."""
        self._counts[row] = max(0, count)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        """The normal item, plus the badge."""
        super().paint(painter, option, index)
        count = self._counts.get(index.row(), 0)
        if not count:
            return
        text = str(count) if count < 1000 else "999+"
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        background = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Highlight)
        foreground = palette.color(QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.HighlightedText)
        metrics = option.fontMetrics
        height = metrics.height() + 2
        width = max(height, metrics.horizontalAdvance(text) + 12)
        rect = option.rect
        badge = QRectF(
            rect.right() - BADGE_MARGIN - width,
            rect.center().y() - height / 2 + 0.5,
            width,
            height,
        )
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(background)
        painter.drawRoundedRect(badge, height / 2, height / 2)
        painter.setPen(foreground)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()
