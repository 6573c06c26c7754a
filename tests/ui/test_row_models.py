"""The small models without views: rows of DTOs, watched folders, badges."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtWidgets import QApplication

from engine.config import Settings
from ui.models.rows import KEY_ROLE, ROW_ROLE, Column, RowTableModel
from ui.widgets.setting_editors import setting_specs
from ui.widgets.watched_folders import WatchedFoldersModel

pytestmark = pytest.mark.gui


@dataclass(frozen=True)
class Item:
    id: int
    name: str
    size: int


COLUMNS: tuple[Column[Item], ...] = (
    Column("Name", lambda i: i.name, lambda i: f"called {i.name}"),
    Column("Size", lambda i: str(i.size), align_right=True),
)


def _model() -> RowTableModel[Item]:
    model: RowTableModel[Item] = RowTableModel(COLUMNS, key=lambda i: i.id)
    model.set_rows([Item(1, "one", 10), Item(2, "two", 20), Item(3, "three", 30)])
    return model


def test_columns_roles_and_lookups(qapp: QApplication) -> None:
    model = _model()
    assert (model.rowCount(), model.columnCount()) == (3, 2)
    assert model.rowCount(model.index(0, 0)) == 0
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Size"
    assert model.data(model.index(1, 0)) == "two"
    assert model.data(model.index(1, 0), Qt.ItemDataRole.ToolTipRole) == "called two"
    assert model.data(model.index(1, 1), Qt.ItemDataRole.ToolTipRole) is None
    alignment = model.data(model.index(1, 1), Qt.ItemDataRole.TextAlignmentRole)
    assert alignment & Qt.AlignmentFlag.AlignRight
    assert model.data(model.index(1, 0), Qt.ItemDataRole.TextAlignmentRole) is None
    assert model.data(model.index(2, 1), ROW_ROLE) == Item(3, "three", 30)
    assert model.data(model.index(2, 1), KEY_ROLE) == 3
    assert model.data(QModelIndex()) is None
    assert model.row_of(3) == 2 and model.row_of(9) is None


def test_same_keys_repaint_instead_of_resetting_so_the_selection_stays(qapp: QApplication) -> None:
    model = _model()
    selection = QItemSelectionModel(model)
    selection.select(
        model.index(1, 0),
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    resets: list[bool] = []
    changed: list[tuple[int, int]] = []
    model.modelReset.connect(lambda: resets.append(True))
    model.dataChanged.connect(lambda a, b: changed.append((a.row(), b.row())))
    model.set_rows([Item(1, "one", 11), Item(2, "two", 22), Item(3, "three", 33)])
    assert resets == [] and changed == [(0, 2)]
    assert [i.row() for i in selection.selectedRows()] == [1]
    assert model.data(model.index(1, 1)) == "22"
    model.set_rows([Item(4, "four", 40)])
    assert resets == [True] and model.rowCount() == 1


def test_replace_and_remove_touch_one_row(qapp: QApplication) -> None:
    model = _model()
    changed: list[tuple[int, int]] = []
    removed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda a, b: changed.append((a.row(), b.row())))
    model.rowsRemoved.connect(lambda _p, first, last: removed.append((first, last)))
    assert model.replace(Item(2, "TWO", 2))
    assert changed == [(1, 1)] and model.data(model.index(1, 0)) == "TWO"
    assert not model.replace(Item(7, "seven", 7))
    assert model.remove_key(1)
    assert removed == [(0, 0)] and [i.id for i in model.rows()] == [2, 3]
    assert not model.remove_key(1)


def test_watched_folders_model_edits_globs_and_gives_settings_values(qapp: QApplication) -> None:
    model = WatchedFoldersModel()
    edits: list[bool] = []
    model.edited.connect(lambda: edits.append(True))
    assert model.add_folder("/home/me/notes")
    assert not model.add_folder("/home/me/notes")  # already watched
    assert model.rowCount() == 1 and len(edits) == 1
    include = model.index(0, 1)
    assert "*.md" in model.data(include)
    assert not model.flags(model.index(0, 0)) & Qt.ItemFlag.ItemIsEditable
    assert model.flags(include) & Qt.ItemFlag.ItemIsEditable
    assert model.setData(include, "*.md,  *.txt ,")
    assert model.folders()[0]["include"] == ["*.md", "*.txt"]
    value = model.folders()
    assert Settings().updated({"watch.folders": value}).watch.folders[0].path == "/home/me/notes"
    model.remove_rows([0])
    assert model.folders() == [] and len(edits) == 3


def test_every_described_setting_gets_a_spec_with_its_bounds(qapp: QApplication) -> None:
    specs = {spec.name: spec for spec in setting_specs(Settings())}
    assert specs["endpoint.port"].minimum == 1 and specs["endpoint.port"].maximum == 65535
    assert specs["llm.provider"].choices == ("auto", "ollama", "openai", "simple")
    assert specs["privacy.email"].choices == ("block", "redact", "keep")
    assert specs["llm.timeout_s"].label == "Timeout" and specs["llm.timeout_s"].unit == "s"
    assert specs["llm.ollama_host"].label == "Ollama host"
    assert specs["documents.parse_memory_mb"].unit == "MB"
    assert specs["watch.folders"].value == ()
