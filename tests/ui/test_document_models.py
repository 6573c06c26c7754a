"""The document library tree and the section tree, without views: rows, roles, live refresh, drops."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.config import Settings
from engine.documents.model import SectionView, SpanView
from tests.engine.documents.plugin_parsers import GateParser, TestParsers
from tests.ui.documents_support import file_mime, write_broken_pdf, write_note, write_pdf
from ui.models.documents import (
    ALL,
    COLLECTION,
    DOCUMENT,
    DOCUMENT_MIME,
    ID_ROLE,
    KIND_ROLE,
    QUARANTINE,
    QUARANTINED,
    LibraryTreeModel,
)
from ui.models.sections import SectionTreeModel, page_label
from ui.ops import OpRunner

pytestmark = pytest.mark.gui

RunnerFor = Callable[[Vault], OpRunner]


def _titles(model: LibraryTreeModel, parent: QModelIndex | None = None) -> list[str]:
    parent = parent or QModelIndex()
    return [model.index(r, 0, parent).data() for r in range(model.rowCount(parent))]


@pytest.fixture
def library(plugin_vault: Vault, tmp_path: Path) -> dict[str, int]:
    """Two notes, a PDF, a quarantined file and a collection holding one note."""
    folder = tmp_path / "files"
    write_note(folder, "garden.md")
    write_note(folder, "recipes.md", "# Recipes\n\nPancakes need eggs, milk and flour.\n")
    write_pdf(folder, "report.pdf")
    write_broken_pdf(folder)
    last = list(plugin_vault.watcher.ingest_paths([folder]))[-1]
    assert (last.ok, last.quarantined) == (3, 1)
    ids = {d.name: d.id for d in plugin_vault.documents()}
    kitchen = plugin_vault.collections.create("Kitchen")
    plugin_vault.collections.add(kitchen.id, [ids["recipes.md"]])
    return {**ids, "Kitchen": kitchen.id}


def test_the_tree_lists_groups_and_their_documents_with_roles(
    plugin_vault: Vault, library: dict[str, int], runner_for: RunnerFor, qtbot: QtBot
) -> None:
    model = LibraryTreeModel(runner_for(plugin_vault))
    with qtbot.waitSignal(model.loaded, timeout=60_000):
        model.reload()
    assert _titles(model) == ["All documents", "Kitchen", "Quarantined"]
    assert model.columnCount() == 2
    everything = model.group_index(ALL)
    assert _titles(model, everything) == ["garden.md", "recipes.md", "report.pdf"]
    assert model.index(0, 1).data() == "3"  # a group's count in the state column
    kitchen = model.group_index(COLLECTION, library["Kitchen"])
    assert kitchen.data(KIND_ROLE) == COLLECTION and kitchen.data(ID_ROLE) == library["Kitchen"]
    recipe = model.index(0, 0, kitchen)
    assert recipe.data() == "recipes.md"
    assert recipe.data(KIND_ROLE) == DOCUMENT and recipe.data(ID_ROLE) == library["recipes.md"]
    assert model.parent(recipe) == kitchen
    assert model.index(0, 1, kitchen).data() in ("processing", "ready")
    assert "recipes.md" in model.index(0, 0, kitchen).data(Qt.ItemDataRole.ToolTipRole)
    quarantine = model.group_index(QUARANTINE)
    broken = model.index(0, 0, quarantine)
    assert broken.data() == "broken.pdf" and broken.data(KIND_ROLE) == QUARANTINED
    assert model.index(0, 1, quarantine).data() == "invalid"
    assert model.rowCount(recipe) == 0  # leaves have no children
    # documents drag, collections take drops, groups do not drag
    assert model.flags(recipe) & Qt.ItemFlag.ItemIsDragEnabled
    assert model.flags(kitchen) & Qt.ItemFlag.ItemIsDropEnabled
    assert not model.flags(everything) & Qt.ItemFlag.ItemIsDragEnabled
    node = model.node(model.document_index(library["report.pdf"]))
    assert node is not None and node.key == (DOCUMENT, library["report.pdf"], (ALL, None))


def test_the_tree_refreshes_itself_on_document_and_collection_changes(
    plugin_vault: Vault, library: dict[str, int], runner_for: RunnerFor, qtbot: QtBot, tmp_path: Path
) -> None:
    model = LibraryTreeModel(runner_for(plugin_vault))
    with qtbot.waitSignal(model.loaded, timeout=60_000):
        model.reload()
    plugin_vault.documents.upload(path=write_note(tmp_path / "more", "birds.md", "# Birds\n\nRobins."))
    qtbot.waitUntil(lambda: "birds.md" in _titles(model, model.group_index(ALL)), timeout=60_000)
    plugin_vault.collections.rename(library["Kitchen"], "Cooking")
    plugin_vault.collections.add(library["Kitchen"], [library["garden.md"]])
    qtbot.waitUntil(lambda: _titles(model)[1] == "Cooking", timeout=60_000)
    cooking = model.group_index(COLLECTION, library["Kitchen"])
    qtbot.waitUntil(lambda: _titles(model, cooking) == ["garden.md", "recipes.md"], timeout=60_000)
    plugin_vault.documents.delete(library["recipes.md"])
    qtbot.waitUntil(
        lambda: _titles(model, model.group_index(COLLECTION, library["Kitchen"])) == ["garden.md"],
        timeout=60_000,
    )
    assert "recipes.md" not in _titles(model, model.group_index(ALL))


def test_dragging_documents_onto_a_collection_is_announced_not_performed(
    plugin_vault: Vault, library: dict[str, int], runner_for: RunnerFor, qtbot: QtBot, tmp_path: Path
) -> None:
    model = LibraryTreeModel(runner_for(plugin_vault))
    with qtbot.waitSignal(model.loaded, timeout=60_000):
        model.reload()
    garden = model.document_index(library["garden.md"])
    data = model.mimeData([garden])
    assert data.hasFormat(DOCUMENT_MIME) and data.text() == "garden.md"
    kitchen = model.group_index(COLLECTION, library["Kitchen"])
    copy = Qt.DropAction.CopyAction
    assert model.canDropMimeData(data, copy, -1, -1, kitchen)
    assert not model.canDropMimeData(data, copy, -1, -1, model.group_index(ALL))
    with qtbot.waitSignal(model.documents_dropped) as dropped:
        assert model.dropMimeData(data, copy, -1, -1, kitchen)
    assert dropped.args == [library["Kitchen"], [library["garden.md"]]]
    # onto a document inside a collection counts as onto the collection
    with qtbot.waitSignal(model.documents_dropped) as dropped:
        model.dropMimeData(data, copy, -1, -1, model.index(0, 0, kitchen))
    assert dropped.args[0] == library["Kitchen"]
    files = file_mime([tmp_path / "files" / "garden.md"])
    with qtbot.waitSignal(model.files_dropped) as dropped:
        assert model.dropMimeData(files, copy, -1, -1, QModelIndex())
    assert dropped.args == [[str(tmp_path / "files" / "garden.md")], None]
    assert plugin_vault.collections.document_ids(library["Kitchen"]) == [library["recipes.md"]]


def test_sections_nest_by_level_with_spans_under_them(
    plugin_vault: Vault, library: dict[str, int], qtbot: QtBot
) -> None:
    model = SectionTreeModel()
    model.set_tree(plugin_vault.documents.get(library["garden.md"]))
    top = [model.index(r, 0) for r in range(model.rowCount())]
    assert [i.data() for i in top] == ["Garden notes"]
    garden = top[0]
    children = [model.index(r, 0, garden) for r in range(model.rowCount(garden))]
    kinds = [type(model.item(i)) for i in children]
    assert kinds[0] is SpanView  # the section's own text comes first
    titles = [i.data() for i in children if isinstance(model.item(i), SectionView)]
    assert titles == ["Watering", "Harvest"]
    watering = next(i for i in children if i.data() == "Watering")
    nested = [model.index(r, 0, watering).data() for r in range(model.rowCount(watering))]
    assert "Rain barrels" in nested
    barrels = model.index_of_item(
        next(s.id for s in model.tree.sections if s.title == "Rain barrels")  # type: ignore[union-attr]
    )
    assert model.parent(barrels) == watering
    assert model.section_count() == 4
    span = children[0]
    assert span.data().startswith("¶1")
    assert "tomatoes" in span.data(Qt.ItemDataRole.ToolTipRole)


def test_pdf_sections_show_their_pages(plugin_vault: Vault, library: dict[str, int], qtbot: QtBot) -> None:
    tree = plugin_vault.documents.get(library["report.pdf"])
    model = SectionTreeModel()
    model.set_tree(tree)
    pages = {model.index(r, 1).data() for r in range(model.rowCount())} | {
        model.index(r, 1, model.index(p, 0)).data()
        for p in range(model.rowCount())
        for r in range(model.rowCount(model.index(p, 0)))
    }
    assert {"p. 1", "p. 2", "p. 3", "pp. 1–2"} <= pages  # a section running over a page break
    assert page_label(2, 4) == "pp. 2–4" and page_label(3, 3) == "p. 3" and page_label(None, None) == ""


def test_a_pdfs_hard_wrapped_lines_are_joined_back_into_paragraphs() -> None:
    from ui.widgets.document_pane import reflow

    wrapped = (
        "1 Summary\n"
        "Ward 4B is a 28-bed acute medical ward at St Mary's Hospital. In the first quarter of 2026\n"
        "it admitted 412 patients, three per cent more than in the last quarter of 2025, with an\n"
        "average stay of 5.8 days.\n"
        "- a list item stays on its own line\n"
        "| a table | row |"
    )
    assert reflow(wrapped).splitlines() == [
        "1 Summary",
        "Ward 4B is a 28-bed acute medical ward at St Mary's Hospital. In the first quarter of 2026 it admitted "
        "412 patients, three per cent more than in the last quarter of 2025, with an average stay of 5.8 days.",
        "- a list item stays on its own line",
        "| a table | row |",
    ]
    unwrapped = "# Notes\n\nA paragraph on one line.\n\nAnother one."
    assert reflow(unwrapped) == unwrapped  # short lines: nothing was hard-wrapped


def test_a_document_read_in_the_background_shows_its_pages_then_its_state(
    tmp_path: Path, offline_settings: Settings, runner_for: RunnerFor, qtbot: QtBot
) -> None:
    from app.plugins import build_plugin_manager

    plugins = build_plugin_manager()
    plugins.register(TestParsers(GateParser()))
    vault = Vault.open(tmp_path / "gvault", settings=offline_settings, plugins=plugins)
    try:
        model = LibraryTreeModel(runner_for(vault))
        with qtbot.waitSignal(model.loaded, timeout=60_000):
            model.reload()
        gate = tmp_path / "gate"
        payload = (f"{gate}\n" + "\f".join(["Keel.", "Mast.", "Sail.", "Oars."])).encode()
        result = vault.documents.upload(name="boat.gate", data=payload, background=True)
        assert result.document_id is not None

        def state() -> str:
            return str(model.index(0, 1, model.group_index(ALL)).data())

        qtbot.waitUntil(lambda: state() == "reading 0 of 4 pages", timeout=60_000)
        tip = model.index(0, 0, model.group_index(ALL)).data(Qt.ItemDataRole.ToolTipRole)
        assert "Being read in the background: reading 0 of 4 pages." in tip
        gate.touch()
        qtbot.waitUntil(lambda: state() in ("processing", "ready"), timeout=60_000)
    finally:
        vault.close()
