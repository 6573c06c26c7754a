"""``make screenshots``: the demo vault and the per-view captures with something chosen in each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from bench.common import DEFAULT_LOCOMO
from bench.demo_vault import ensure, load
from bench.desktop.capture import SMALL_LIMIT, Scene, capture_views
from engine import Vault
from tests.ui.conftest import seed_chat
from tests.ui.documents_support import write_pdf
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views import VIEWS
from ui.views.ask import AskView
from ui.views.documents import PANE_DOCUMENT, DocumentsView
from ui.views.memories import MemoriesView

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def test_every_view_is_captured_with_something_chosen(
    plugin_vault: Vault, window_for: WindowFor, qtbot: QtBot, tmp_path: Path
) -> None:
    seed_chat(plugin_vault)
    plugin_vault.documents.upload(path=write_pdf(tmp_path / "docs", "report.pdf"))
    assert plugin_vault.jobs.wait_idle(120)
    window, _runner = window_for(plugin_vault)
    window.resize(1200, 800)
    window.show()
    scene = Scene(person="Anna", conversation="c2", question="Where do I live?")
    written = capture_views(window, plugin_vault, tmp_path / "shots", scene=scene, small=tmp_path / "small")
    shots = sorted((tmp_path / "shots").glob("*.png"))
    assert [p.name for p in shots] == [f"{n:02d}-{spec.key}.png" for n, spec in enumerate(VIEWS, start=1)]
    assert all(QImage(str(p)).width() == 1200 for p in shots)
    small = sorted((tmp_path / "small").glob("*.png"))
    assert [p.name for p in small] == ["ask.png", "memories.png"]
    assert all(0 < p.stat().st_size <= SMALL_LIMIT for p in small)
    assert len(written) == len(VIEWS) + 2
    memories = window.view("memories")
    assert isinstance(memories, MemoriesView) and memories.detail.fact is not None
    assert memories.detail.fact.subject == "Anna"
    documents = window.view("documents")
    assert isinstance(documents, DocumentsView) and documents.panes.currentIndex() == PANE_DOCUMENT
    assert "Section summary" in documents.document_pane.detail.toPlainText()
    ask = window.view("ask")
    assert isinstance(ask, AskView) and ask.result is not None
    assert "Berlin" in ask.context_text.toPlainText()


@pytest.mark.skipif(not DEFAULT_LOCOMO.is_dir(), reason="the LoCoMo development data is not here")
def test_the_demo_vault_is_built_once_and_reused(tmp_path: Path) -> None:
    demo = ensure(tmp_path / "demo", DEFAULT_LOCOMO, conversations=1)
    assert demo.conversations == ["26.json"]
    assert demo.events > 400 and demo.facts > 50 and demo.open_conflicts == 1
    assert len(demo.document_ids) == 3 and len(demo.quarantine_ids) == 1
    assert load(tmp_path / "demo") == demo
    assert ensure(tmp_path / "demo", DEFAULT_LOCOMO, conversations=1) == demo  # reused, not rebuilt
    with Vault.open(demo.vault, start_workers=False) as vault:
        assert vault.settings.llm.provider == "simple"  # saved, so the app opens it the same way
        assert [c.name for c in vault.collections()] == ["Reports"]
        assert [str(r.path) for r in vault.watcher.status()] == [str(Path(demo.documents).resolve())]
        assert {"desk", "phone"} <= {c.conversation_id for c in vault.conversations()}
