"""Icons follow the palette (a dark theme gets light line icons), every status icon renders, and icons are
drawn at the device pixels each use asks for (crisp at 2x)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QIcon, QImage, QPalette
from PySide6.QtWidgets import QApplication

from ui.theme import fixed_icon, icon_pixmap, stylesheet, themed_icon
from ui.widgets.findings_table import STATUS_ICON

pytestmark = pytest.mark.gui


def _opaque_colours(name: str, colour: QColor) -> set[str]:
    image = icon_pixmap(name, colour, size=32).toImage()
    return {
        image.pixelColor(x, y).name()
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).alpha() == 255
    }


@pytest.mark.parametrize("colour", ["#ffffff", "#101010"])
def test_line_icons_are_drawn_in_the_colour_asked_for(qapp: QApplication, colour: str) -> None:
    assert _opaque_colours("overview", QColor(colour)) == {colour}


def test_themed_icon_uses_highlighted_text_for_selected_items(qapp: QApplication) -> None:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.WindowText, QColor("#eeeeee"))
    palette.setColor(QPalette.ColorRole.HighlightedText, QColor("#00ff00"))
    icon = themed_icon("overview", palette)
    selected = icon.pixmap(32, 32, QIcon.Mode.Selected).toImage()
    normal = icon.pixmap(32, 32, QIcon.Mode.Normal).toImage()
    opaque = [(x, y) for x in range(32) for y in range(32) if normal.pixelColor(x, y).alpha() == 255]
    assert opaque
    x, y = opaque[0]
    assert normal.pixelColor(x, y).name() == "#eeeeee"
    assert selected.pixelColor(x, y).name() == "#00ff00"


@pytest.mark.parametrize("name", [*STATUS_ICON.values(), "cairn"])
def test_fixed_icons_render(qapp: QApplication, name: str) -> None:
    assert not fixed_icon(name).isNull()
    assert len(_opaque_colours(name, QColor("#000000"))) > 1  # drawn in their own colours


def test_stylesheet_uses_only_palette_colours() -> None:
    text = stylesheet()
    assert "QListWidget#navigation" in text
    assert "#" not in text.replace("QListWidget#", "").replace("QFrame#", "").replace(
        "QScrollArea#", ""
    )  # no hex colours: everything comes from palette(...)
    assert "rgb" not in text.lower()


def _same_pixels(a: QImage, b: QImage) -> bool:
    return a.convertToFormat(QImage.Format.Format_ARGB32) == b.convertToFormat(QImage.Format.Format_ARGB32)


@pytest.mark.parametrize(("logical", "scale"), [(16, 1.0), (20, 2.0), (24, 1.5), (128, 2.0)])
def test_icons_are_drawn_at_the_device_pixels_asked_for(qapp: QApplication, logical: int, scale: float) -> None:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.WindowText, QColor("#123456"))
    pixels = round(logical * scale)
    for icon, colour, name in (
        (themed_icon("memories", palette), QColor("#123456"), "memories"),
        (fixed_icon("cairn"), None, "cairn"),
    ):
        pixmap = icon.pixmap(QSize(logical, logical), scale)
        assert (pixmap.width(), pixmap.height(), pixmap.devicePixelRatio()) == (pixels, pixels, scale)
        # rendered from the SVG at that size, not a 64-pixel picture scaled up or down
        assert _same_pixels(pixmap.toImage(), icon_pixmap(name, colour, pixels).toImage())


def test_icons_offer_every_size_a_platform_asks_for(qapp: QApplication) -> None:
    for icon in (fixed_icon("cairn"), themed_icon("settings", QPalette())):
        sizes = {size.width() for size in icon.availableSizes()}
        assert {16, 22, 32, 48, 64, 128, 256} <= sizes


def test_a_disabled_fixed_icon_is_faded(qapp: QApplication) -> None:
    icon = fixed_icon("status-ok")
    normal = icon.pixmap(QSize(32, 32), 1.0, QIcon.Mode.Normal).toImage()
    disabled = icon.pixmap(QSize(32, 32), 1.0, QIcon.Mode.Disabled).toImage()
    assert 0 < _alpha(disabled) < _alpha(normal) * 0.6


def _alpha(image: QImage) -> int:
    return sum(image.pixelColor(x, y).alpha() for x in range(image.width()) for y in range(image.height()))


def test_a_missing_icon_fails_where_it_is_asked_for(qapp: QApplication) -> None:
    with pytest.raises(FileNotFoundError):
        fixed_icon("no-such-icon")
