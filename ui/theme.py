"""What the window looks like: palette-tinted icons and the spacing-only style sheet.

Nothing here hard-codes a foreground or background colour for ordinary content.  Line icons are
drawn in ``currentColor`` and rendered in the palette's text colour, so they follow light and dark
themes; status icons carry their own contrast (a white glyph on a coloured disc), so they read on
any background.

Icons are drawn from their SVG at the size and device pixel ratio each use asks for (a 20-pixel
navigation icon on a 2x screen is rendered at 40 pixels, the tray or dock may ask for 256), so they
stay crisp on high-DPI screens; nothing is rendered until it is shown, which keeps start-up quick.
"""

from __future__ import annotations

import functools
from importlib.resources import files

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

ICON_PIXELS = 64  # the default size of :func:`icon_pixmap`
ICON_SIZES = (16, 20, 22, 24, 32, 40, 48, 64, 96, 128, 256)
"""Sizes an icon says it has: platforms pick from these for window, tray and dock icons (any other
size is drawn on demand all the same)."""
DISABLED_OPACITY = 0.4  # icons in their own colours fade when disabled


@functools.cache
def _svg_source(name: str) -> str:
    return files("resources").joinpath("icons", f"{name}.svg").read_text(encoding="utf-8")


def _renderer(name: str, color: QColor | None) -> QSvgRenderer:
    """A renderer of ``resources/icons/<name>.svg`` with ``currentColor`` painted in ``color``.

    Raises:
        FileNotFoundError: there is no such icon.
        ValueError: the file is not an SVG Qt can render.
    """
    source = _svg_source(name)
    if color is not None:
        source = source.replace("currentColor", color.name(QColor.NameFormat.HexRgb))
    renderer = QSvgRenderer(QByteArray(source.encode("utf-8")))
    if not renderer.isValid():
        raise ValueError(f"icon {name!r} is not a valid SVG")
    return renderer


def _render(renderer: QSvgRenderer, pixels: QSize, opacity: float = 1.0) -> QPixmap:
    pixmap = QPixmap(pixels)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setOpacity(opacity)
    renderer.render(painter, QRectF(0, 0, pixels.width(), pixels.height()))
    painter.end()
    return pixmap


def icon_pixmap(name: str, color: QColor | None = None, size: int = ICON_PIXELS) -> QPixmap:
    """Render ``resources/icons/<name>.svg`` to a ``size``-pixel pixmap, painting ``currentColor`` in ``color``.

    Raises:
        FileNotFoundError: there is no such icon.
        ValueError: the file is not an SVG Qt can render.
    """
    return _render(_renderer(name, color), QSize(size, size))


class SvgIconEngine(QIconEngine):
    """Draws an icon from its SVG at exactly the device pixels asked for, one colour per mode.

    ``colors`` maps :class:`QIcon.Mode` to the colour of ``currentColor`` (an icon in its own
    colours passes none, and fades when disabled).  Rendered pixmaps are kept per size, mode and
    scale: lists repaint their icons often.
    """

    def __init__(self, name: str, colors: dict[QIcon.Mode, QColor] | None = None) -> None:
        super().__init__()
        self._name = name
        self._colors = dict(colors or {})
        self._renderers: dict[QIcon.Mode, QSvgRenderer] = {}
        self._cache: dict[tuple[int, int, QIcon.Mode, float], QPixmap] = {}
        _renderer(name, None)  # a missing or broken icon fails here, where it is asked for, not at paint time

    def _renderer_for(self, mode: QIcon.Mode) -> QSvgRenderer:
        key = mode if mode in self._colors else QIcon.Mode.Normal
        if key not in self._renderers:
            self._renderers[key] = _renderer(self._name, self._colors.get(key))
        return self._renderers[key]

    def scaledPixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float) -> QPixmap:
        """The icon for ``size`` device-independent pixels at ``scale`` device pixels per pixel."""
        key = (size.width(), size.height(), mode, scale)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        pixels = QSize(max(1, round(size.width() * scale)), max(1, round(size.height() * scale)))
        fade = mode == QIcon.Mode.Disabled and QIcon.Mode.Disabled not in self._colors
        pixmap = _render(self._renderer_for(mode), pixels, DISABLED_OPACITY if fade else 1.0)
        pixmap.setDevicePixelRatio(scale)
        self._cache[key] = pixmap
        return pixmap

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        """The icon at ``size`` device pixels (callers that know no scale)."""
        return self.scaledPixmap(size, mode, state, 1.0)

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        """Draw into ``rect`` at the painter's device pixel ratio."""
        device = painter.device()
        scale = device.devicePixelRatioF() if device is not None else 1.0
        painter.drawPixmap(rect, self.scaledPixmap(rect.size(), mode, state, scale))

    def availableSizes(self, mode: QIcon.Mode = QIcon.Mode.Normal, state: QIcon.State = QIcon.State.Off) -> list[QSize]:
        """The sizes platforms may choose from (any size can be drawn)."""
        return [QSize(side, side) for side in ICON_SIZES]

    def actualSize(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QSize:
        """Square icons fill the largest square that fits ``size``."""
        side = min(size.width(), size.height())
        return QSize(side, side)

    def iconName(self) -> str:
        """The icon's file name without ``.svg``."""
        return self._name

    def key(self) -> str:
        """What kind of engine this is."""
        return "cairn-svg"

    def clone(self) -> QIconEngine:
        """A copy with the same icon and colours (Qt copies engines when an icon is detached)."""
        return SvgIconEngine(self._name, self._colors)


def themed_icon(name: str, palette: QPalette) -> QIcon:
    """A line icon in the palette's text colour (highlighted-text colour when selected).

    Call again when the palette changes (``QEvent.PaletteChange``): a theme switch changes
    both colours.
    """
    return QIcon(
        SvgIconEngine(
            name,
            {
                QIcon.Mode.Normal: palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText),
                QIcon.Mode.Active: palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText),
                QIcon.Mode.Selected: palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.HighlightedText),
                QIcon.Mode.Disabled: palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText),
            },
        )
    )


def fixed_icon(name: str) -> QIcon:
    """An icon drawn in its own colours (the app icon, status marks)."""
    return QIcon(SvgIconEngine(name))


@functools.cache
def stylesheet() -> str:
    """The window's style sheet (spacing and shape; colours only as ``palette(...)`` references)."""
    return files("resources").joinpath("styles", "main.qss").read_text(encoding="utf-8")
