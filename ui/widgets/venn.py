"""A subject's neighbourhood drawn as overlapping circles: the subject in the middle, its neighbours around it.

Each neighbour (``vault.workspace.open_around``) is a circle placed around the subject's; how far it reaches into
the subject's circle follows how much the two share — the largest intersection overlaps half of its circle, the
smallest a sliver — so the biggest overlaps are the closest relationships.  Clicking an overlap (or a neighbour's
circle) asks for the intersection itself (:attr:`VennWidget.intersection_requested`).

The geometry is a pure function of the widget's size and the shared counts (:func:`venn_layout`), and the widget
hands it out (:meth:`VennWidget.lobes`), so what is drawn is deterministic and a test can click the middle of an
overlap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from engine.workspace.model import Neighbour
from ui.format import one_line, plural, subject_label

MARGIN = 10.0
CENTRE_SHARE = 0.23
"""The subject's radius as a share of the smaller side of the widget (room is left for the neighbours)."""
NEIGHBOUR_SHARE = 0.62
"""A neighbour's radius as a share of the subject's, when there are few enough to fit."""
MIN_DEPTH = 0.2
MAX_DEPTH = 1.0
"""How deep a neighbour reaches into the subject's circle, in its own radii: the smallest intersection reaches
``MIN_DEPTH``, the largest ``MAX_DEPTH`` (its centre then lies on the subject's rim)."""


@dataclass(frozen=True, slots=True)
class Lobe:
    """One neighbour as drawn: its circle, its overlap with the subject's circle and where the overlap's middle is."""

    name: str
    shared: int
    circle: QRectF
    overlap: QPainterPath
    overlap_centre: QPointF
    overlap_area: float
    label_point: QPointF


def lens_area(big: float, small: float, distance: float) -> float:
    """The area two circles of radii ``big`` and ``small`` share when their centres are ``distance`` apart."""
    if distance >= big + small:
        return 0.0
    if distance <= abs(big - small):
        return math.pi * min(big, small) ** 2
    a = small * small * math.acos((distance**2 + small**2 - big**2) / (2 * distance * small))
    b = big * big * math.acos((distance**2 + big**2 - small**2) / (2 * distance * big))
    c = 0.5 * math.sqrt(
        (-distance + small + big) * (distance + small - big) * (distance - small + big) * (distance + small + big)
    )
    return a + b - c


def venn_layout(
    width: float, height: float, shares: Sequence[int]
) -> tuple[QPointF, float, list[tuple[QPointF, float]]]:
    """Where the circles go in a ``width`` × ``height`` area for neighbours sharing ``shares`` items each.

    Returns the subject's centre and radius, and each neighbour's centre and radius in the order given.  The first
    neighbour sits straight above the subject, the others follow clockwise at equal angles.
    """
    side = max(1.0, min(width, height) - 2 * MARGIN)
    centre = QPointF(width / 2, height / 2)
    radius = side * CENTRE_SHARE
    count = len(shares)
    if count == 0:
        return centre, radius, []
    small = radius * NEIGHBOUR_SHARE
    if count > 2:  # neighbours next to each other must not touch
        small = min(small, radius * math.sin(math.pi / count) * 0.9)
    largest = max(max(shares), 1)
    placed: list[tuple[QPointF, float]] = []
    for index, shared in enumerate(shares):
        fraction = max(0, shared) / largest
        depth = small * (MIN_DEPTH + (MAX_DEPTH - MIN_DEPTH) * fraction)
        distance = radius + small - depth
        angle = -math.pi / 2 + 2 * math.pi * index / count
        placed.append(
            (QPointF(centre.x() + distance * math.cos(angle), centre.y() + distance * math.sin(angle)), small)
        )
    return centre, radius, placed


def _circle(centre: QPointF, radius: float) -> QRectF:
    return QRectF(centre.x() - radius, centre.y() - radius, 2 * radius, 2 * radius)


class VennWidget(QWidget):
    """The chosen subject and its neighbours as overlapping circles.

    Signals:
        intersection_requested(str): the name of the neighbour whose overlap (or circle) was clicked.
    """

    intersection_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._centre_name = ""
        self._neighbours: tuple[Neighbour, ...] = ()
        self._lobes: tuple[Lobe, ...] | None = None
        self._centre_circle = QRectF()
        self._hovered: str | None = None
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(260, 220)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName("Overlaps with other subjects")
        self.setAccessibleDescription("Click an overlap to open what the two subjects share; arrow keys and Enter too.")

    # -- content -----------------------------------------------------------------------------------
    def set_neighbourhood(self, centre: str, neighbours: Sequence[Neighbour]) -> None:
        """Draw ``centre`` (a subject's engine name; empty for none) with its ``neighbours``, largest first."""
        self._centre_name = centre
        self._neighbours = tuple(neighbours)
        self._lobes = None
        if self._hovered not in self.neighbour_names():
            self._hovered = None
        self.update()

    @property
    def centre_name(self) -> str:
        """The subject in the middle (its engine name)."""
        return self._centre_name

    def neighbour_names(self) -> list[str]:
        """The neighbours drawn, in the order they are placed (clockwise from the top)."""
        return [n.name for n in self._neighbours]

    @property
    def highlighted(self) -> str | None:
        """The neighbour under the mouse or chosen with the arrow keys."""
        return self._hovered

    # -- geometry ----------------------------------------------------------------------------------
    def centre_circle(self) -> QRectF:
        """The subject's circle."""
        self._ensure_layout()
        return QRectF(self._centre_circle)

    def lobes(self) -> tuple[Lobe, ...]:
        """Each neighbour's circle and overlap, in :meth:`neighbour_names` order."""
        return self._ensure_layout()

    def overlap_regions(self) -> dict[str, QRectF]:
        """The bounding rectangle of each neighbour's overlap with the subject, by neighbour name."""
        return {lobe.name: lobe.overlap.boundingRect() for lobe in self.lobes()}

    def hit_test(self, point: QPointF) -> str | None:
        """The neighbour whose overlap (first) or circle holds ``point``; None when it falls on neither."""
        lobes = self.lobes()
        for lobe in lobes:
            if lobe.overlap.contains(point):
                return lobe.name
        for lobe in lobes:
            if _inside(lobe.circle, point):
                return lobe.name
        return None

    def _ensure_layout(self) -> tuple[Lobe, ...]:
        if self._lobes is not None:
            return self._lobes
        centre, radius, placed = venn_layout(self.width(), self.height(), [n.shared for n in self._neighbours])
        self._centre_circle = _circle(centre, radius)
        middle = QPainterPath()
        middle.addEllipse(self._centre_circle)
        lobes: list[Lobe] = []
        for neighbour, (where, small) in zip(self._neighbours, placed, strict=True):
            circle = _circle(where, small)
            path = QPainterPath()
            path.addEllipse(circle)
            dx, dy = where.x() - centre.x(), where.y() - centre.y()
            distance = math.hypot(dx, dy) or 1.0
            ux, uy = dx / distance, dy / distance
            depth = radius + small - distance
            middle_of_overlap = radius - depth / 2
            far = distance + small * 0.45
            lobes.append(
                Lobe(
                    name=neighbour.name,
                    shared=neighbour.shared,
                    circle=circle,
                    overlap=middle.intersected(path),
                    overlap_centre=QPointF(centre.x() + ux * middle_of_overlap, centre.y() + uy * middle_of_overlap),
                    overlap_area=lens_area(radius, small, distance),
                    label_point=QPointF(centre.x() + ux * far, centre.y() + uy * far),
                )
            )
        self._lobes = tuple(lobes)
        return self._lobes

    # -- painting ----------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        """The circles follow the widget's size."""
        self._lobes = None
        super().resizeEvent(event)

    def paintEvent(self, _event: QPaintEvent) -> None:
        """The subject's circle, its neighbours', their overlaps, names and shared counts."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        muted = palette.color(QPalette.ColorRole.PlaceholderText)
        accent = palette.color(QPalette.ColorRole.Highlight)
        if not self._centre_name:
            painter.setPen(muted)
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Choose a subject to see what it shares.")
            painter.end()
            return
        lobes = self._ensure_layout()
        centre = self._centre_circle
        painter.setPen(QPen(accent, 2))
        painter.setBrush(_alpha(accent, 45))
        painter.drawEllipse(centre)
        for lobe in lobes:
            painter.setPen(QPen(_alpha(text, 110), 1.2))
            painter.setBrush(_alpha(muted, 40))
            painter.drawEllipse(lobe.circle)
        painter.setPen(Qt.PenStyle.NoPen)
        for lobe in lobes:
            painter.setBrush(_alpha(accent, 190 if lobe.name == self._hovered else 115))
            painter.drawPath(lobe.overlap)
        bold = QFont(self.font())
        bold.setWeight(QFont.Weight.DemiBold)
        painter.setFont(bold)
        painter.setPen(text)
        metrics = painter.fontMetrics()
        name = metrics.elidedText(
            subject_label(self._centre_name), Qt.TextElideMode.ElideRight, int(centre.width() * 0.8)
        )
        painter.drawText(centre, Qt.AlignmentFlag.AlignCenter, name)
        painter.setFont(self.font())
        metrics = painter.fontMetrics()
        for lobe in lobes:
            width = lobe.circle.width() * 1.1
            label = metrics.elidedText(subject_label(lobe.name), Qt.TextElideMode.ElideRight, int(width))
            box = QRectF(
                lobe.label_point.x() - width / 2, lobe.label_point.y() - metrics.height(), width, 2 * metrics.height()
            )
            painter.setPen(text)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, label)
            count = QRectF(
                lobe.overlap_centre.x() - 30, lobe.overlap_centre.y() - metrics.height() / 2, 60, metrics.height()
            )
            painter.setFont(bold)
            painter.drawText(count, Qt.AlignmentFlag.AlignCenter, f"{lobe.shared:,}")
            painter.setFont(self.font())
        if not lobes:
            painter.setPen(muted)
            below = QRectF(0, centre.bottom() + 6, self.width(), metrics.height() * 2)
            painter.drawText(below, Qt.AlignmentFlag.AlignHCenter, "It shares nothing with another subject yet.")
        painter.end()

    # -- interaction -------------------------------------------------------------------------------
    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """Highlight the overlap under the mouse."""
        hit = self.hit_test(event.position())
        if hit != self._hovered:
            self._hovered = hit
            self.setCursor(Qt.CursorShape.PointingHandCursor if hit else Qt.CursorShape.ArrowCursor)
            self.update()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        """Nothing is under the mouse any more."""
        if self._hovered is not None and not self.hasFocus():
            self._hovered = None
            self.update()
        super().leaveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A left click on an overlap or a neighbour asks for the intersection."""
        if event.button() == Qt.MouseButton.LeftButton:
            hit = self.hit_test(event.position())
            if hit is not None:
                self.intersection_requested.emit(hit)
                event.accept()
                return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Arrow keys move between the neighbours; Enter or Space opens the one highlighted."""
        names = self.neighbour_names()
        key = event.key()
        if names and key in (Qt.Key.Key_Right, Qt.Key.Key_Down, Qt.Key.Key_Left, Qt.Key.Key_Up):
            step = 1 if key in (Qt.Key.Key_Right, Qt.Key.Key_Down) else -1
            now = names.index(self._hovered) if self._hovered in names else (-1 if step > 0 else 0)
            self._hovered = names[(now + step) % len(names)]
            self.update()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and self._hovered in names:
            self.intersection_requested.emit(self._hovered)
            return
        super().keyPressEvent(event)

    def event(self, event: QEvent) -> bool:
        """Tooltips: what a neighbour shares with the subject, and their relationship when one is written."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            hit = self.hit_test(QPointF(event.pos()))
            neighbour = next((n for n in self._neighbours if n.name == hit), None)
            if neighbour is None:
                QToolTip.hideText()
                event.ignore()
                return True
            QToolTip.showText(event.globalPos(), neighbour_tooltip(self._centre_name, neighbour), self)
            return True
        return super().event(event)


def neighbour_tooltip(centre: str, neighbour: Neighbour) -> str:
    """What a neighbour's overlap says when hovered."""
    lines = [f"{subject_label(centre)} and {subject_label(neighbour.name)} share {plural(neighbour.shared, 'item')}."]
    if neighbour.relationship is not None:
        lines.append("Relationship: " + one_line(neighbour.relationship.summary, 200))
    if neighbour.summary:
        lines.append(one_line(neighbour.summary, 200))
    lines.append("Click to open what they share.")
    return "\n".join(lines)


def _alpha(colour: QColor, alpha: int) -> QColor:
    tinted = QColor(colour)
    tinted.setAlpha(alpha)
    return tinted


def _inside(circle: QRectF, point: QPointF) -> bool:
    radius = circle.width() / 2
    centre = circle.center()
    return math.hypot(point.x() - centre.x(), point.y() - centre.y()) <= radius
