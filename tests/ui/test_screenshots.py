"""Every view on a populated vault, saved as cairn-<view>.png (light) and a dark Memories view.

The assertions check that each view drew real content rather than a blank or loading page.  The
pictures go to the test's own temporary folder; the ones for people to look at (clipped text, empty
panes, contrast) come from ``make screenshots``, which renders the demo vault.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.jobs import enqueue
from tests.ui.conftest import seed_chat
from tests.ui.documents_support import write_note
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views import VIEWS
from ui.views.activity import ActivityView
from ui.views.ask import AskView
from ui.views.conflicts import ConflictsView
from ui.views.conversations import ConversationsView
from ui.views.documents import DocumentsView
from ui.views.memories import MemoriesView
from ui.views.overview import OverviewView
from ui.views.settings import SettingsView
from ui.views.subjects import SubjectsView

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _populate(vault: Vault, tmp_path: Path) -> None:
    seed_chat(vault)
    for name, predicate, value in (
        ("Bruno", "works_as", "baker"),
        ("Cairn project", "has_deadline", "2026-04-01"),
        ("user", "prefers_editor", "Neovim"),
        ("Anna", "lives_in", "Gothenburg"),
    ):
        vault.facts.add(name, predicate, value)
    transcript = tmp_path / "trip.jsonl"
    lines = [
        {"conversation_id": "trip-planning", "role": "user", "content": text, "time": when}
        for text, when in (
            ("We are planning a trip to Lisbon in May.", "2026-03-02T09:00:00Z"),
            ("My partner Sam prefers trains over planes.", "2026-03-02T09:01:00Z"),
        )
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    vault.conversations.import_summary(transcript)
    vault.documents.upload(path=write_note(tmp_path / "docs"))
    vault.store.write(lambda tx: enqueue(tx, "enrich", {"event_id": "broken"}, max_attempts=1))
    assert vault.jobs.wait_idle(120)


def _distinct_colours(image: QImage) -> int:
    step = max(1, image.width() // 200)
    return len({image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)})


def _ready(window: MainWindow, key: str) -> Callable[[], bool]:
    view = window.view(key)
    checks: dict[type, Callable[[], bool]] = {
        MemoriesView: lambda: (
            isinstance(view, MemoriesView)
            and view.detail.fact is not None
            and view.detail.loaded()
            and not view.model.is_loading()
        ),
        ConflictsView: lambda: (
            isinstance(view, ConflictsView)
            and view.side_a.evidence.highlighted_text != ""
            and view.side_b.evidence.highlighted_text != ""
        ),
        SubjectsView: lambda: isinstance(view, SubjectsView) and view.detail is not None,
        ConversationsView: lambda: isinstance(view, ConversationsView) and view.turn_facts.rowCount() > 0,
        ActivityView: lambda: (
            (isinstance(view, ActivityView) and view.stats is not None and view.notices.rowCount()) > 0
        ),
        SettingsView: lambda: isinstance(view, SettingsView) and view.loaded,
        DocumentsView: lambda: isinstance(view, DocumentsView) and view.group_pane.documents.rowCount() > 0,
        AskView: lambda: isinstance(view, AskView) and view.result is not None,
        OverviewView: lambda: (
            isinstance(view, OverviewView)
            and view.count_labels["events"].text() not in ("–", "")
            and view.health_summary.text() != "Checking…"
        ),
    }
    return next(check for kind, check in checks.items() if isinstance(view, kind))


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where this test's pictures are saved."""
    folder = tmp_path / "shots"
    folder.mkdir()
    return folder


def test_every_view_draws_its_content(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path, shots: Path
) -> None:
    _populate(plugin_vault, tmp_path)
    window, _runner = window_for(plugin_vault)
    window.show()
    qtbot.waitExposed(window)
    for spec in VIEWS:
        window.show_view(spec.key)
        view = window.view(spec.key)
        if isinstance(view, AskView):  # a view that shows something once asked
            qtbot.waitUntil(lambda v=view: v.choices_loaded, timeout=60_000)
            view.ask("Where do I live?", "c2")
        qtbot.waitUntil(_ready(window, spec.key), timeout=60_000)
        qtbot.wait(150)  # let the last results paint
        image = window.grab().toImage()
        path = shots / f"cairn-{spec.key}.png"
        assert image.save(str(path))
        assert path.stat().st_size > 10_000
        assert _distinct_colours(image) > 20, spec.key
    settings = window.view("settings")
    assert isinstance(settings, SettingsView)
    for page in settings.page_keys[1:]:
        settings.show_page(page)
        qtbot.wait(50)
        assert window.grab().save(str(shots / f"cairn-settings-{page}.png"))


def test_a_dark_palette_is_followed(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path, shots: Path, qapp: QApplication
) -> None:
    _populate(plugin_vault, tmp_path)
    light = qapp.palette()
    dark = QPalette(light)
    for role, colour in (
        (QPalette.ColorRole.Window, "#202124"),
        (QPalette.ColorRole.WindowText, "#e8eaed"),
        (QPalette.ColorRole.Base, "#17181a"),
        (QPalette.ColorRole.AlternateBase, "#232427"),
        (QPalette.ColorRole.Text, "#e8eaed"),
        (QPalette.ColorRole.Button, "#303134"),
        (QPalette.ColorRole.ButtonText, "#e8eaed"),
        (QPalette.ColorRole.Highlight, "#8ab4f8"),
        (QPalette.ColorRole.HighlightedText, "#202124"),
        (QPalette.ColorRole.PlaceholderText, "#9aa0a6"),
        (QPalette.ColorRole.Mid, "#5f6368"),
        (QPalette.ColorRole.Midlight, "#3c4043"),
        (QPalette.ColorRole.Link, "#8ab4f8"),
    ):
        dark.setColor(role, QColor(colour))
    qapp.setPalette(dark)
    try:
        window, _runner = window_for(plugin_vault)
        window.show()
        window.show_view("memories")
        qtbot.waitUntil(_ready(window, "memories"), timeout=60_000)
        qtbot.wait(150)
        image = window.grab().toImage()
        assert image.save(str(shots / "cairn-memories-dark.png"))
        corner = QColor(image.pixel(image.width() - 5, image.height() // 2))
        assert corner.lightness() < 80  # the window background follows the palette
        view = window.view("memories")
        assert isinstance(view, MemoriesView)
        html = view.detail.evidence.toHtml().lower()
        assert "#8ab4f8" in html  # the quote is marked in the palette's highlight colour
    finally:
        qapp.setPalette(light)
