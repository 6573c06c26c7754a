"""Icons follow the palette (a dark theme gets light line icons); every status icon renders."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QIcon, QPalette
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
