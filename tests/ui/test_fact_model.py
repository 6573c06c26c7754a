"""The lazy facts model without a view: ids first, rows by the page, refresh of touched rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from pytestqt.qtbot import QtBot

from engine import Settings, Vault
from engine.facts.api import FactFilter
from engine.facts.model import Fact
from ui.models.facts import (
    CONFIDENCE,
    FACT_ID_ROLE,
    FACT_ROLE,
    LOADING_ROLE,
    PAGE_SIZE,
    PLACEHOLDER,
    PREDICATE,
    SUBJECT,
    TIER,
    VALUE,
    FactTableModel,
    plan_ids,
)
from ui.ops import OpRunner

pytestmark = pytest.mark.gui

FACTS = 300
PEOPLE = 12


@pytest.fixture(scope="module")
def many_facts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    """300 hand-added facts about 12 people (plus the owner's): enough for three pages."""
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    vault = Vault.open(tmp_path_factory.mktemp("many") / "vault", settings=settings)
    try:
        for n in range(FACTS):
            vault.facts.add(f"Person {n % PEOPLE}", f"custom_trait_{n}", f"value {n}")
        yield vault
    finally:
        vault.close()


def _loaded(qtbot: QtBot, model: FactTableModel, flt: FactFilter | None = None) -> None:
    with qtbot.waitSignal(model.ids_loaded, timeout=60_000):
        model.set_filter(flt or FactFilter())


def _row_loaded(qtbot: QtBot, model: FactTableModel, row: int) -> Fact:
    model.data(model.index(row, VALUE))  # asks for the page
    qtbot.waitUntil(lambda: model.cached_fact(model.fact_id_at(row)) is not None, timeout=60_000)
    fact = model.data(model.index(row, 0), FACT_ROLE)
    assert isinstance(fact, Fact)
    return fact


def test_ids_come_first_and_rows_show_placeholders_until_their_page_arrives(
    many_facts: Vault, runner_for: Callable[[Vault], OpRunner], qtbot: QtBot
) -> None:
    model = FactTableModel(runner_for(many_facts))
    assert model.rowCount() == 0
    _loaded(qtbot, model)
    assert model.rowCount() == FACTS
    assert model.columnCount() == 7
    assert model.requested_pages == []  # nothing painted, nothing fetched
    first = model.index(0, VALUE)
    assert model.data(first, FACT_ID_ROLE) == many_facts.facts.ids(FactFilter())[0]
    assert model.data(first) == PLACEHOLDER
    assert model.data(first, LOADING_ROLE) is True
    assert model.data(first, Qt.ItemDataRole.ToolTipRole) == "Loading…"
    fact = _row_loaded(qtbot, model, 0)
    assert model.data(first) == fact.object_text == f"value {FACTS - 1}"  # newest first
    assert model.data(first, LOADING_ROLE) is False
    assert model.data(model.index(0, SUBJECT)) == "Person 11"
    assert model.data(model.index(0, PREDICATE)) == fact.predicate
    assert model.data(model.index(0, CONFIDENCE)).endswith("%")
    assert model.data(first, Qt.ItemDataRole.ToolTipRole) == fact.statement
    assert model.requested_pages == [0]
    assert model.headerData(VALUE, Qt.Orientation.Horizontal) == "Value"


def test_only_the_pages_asked_for_are_fetched(
    many_facts: Vault, runner_for: Callable[[Vault], OpRunner], qtbot: QtBot
) -> None:
    model = FactTableModel(runner_for(many_facts))
    _loaded(qtbot, model)
    deep = FACTS - 10  # the last page
    _row_loaded(qtbot, model, deep)
    assert model.requested_pages == [deep // PAGE_SIZE]
    loaded = [row for row in range(FACTS) if model.cached_fact(model.fact_id_at(row))]
    assert loaded == list(range(2 * PAGE_SIZE, FACTS))  # that page, nothing above it
    for row in (2 * PAGE_SIZE, FACTS - 1):  # the same page again: no second fetch
        model.data(model.index(row, VALUE))
    _row_loaded(qtbot, model, 5)
    assert model.requested_pages == [2, 0]
    assert model.cached_fact(model.fact_id_at(PAGE_SIZE + 1)) is None  # page 1 never asked for


def test_filters_narrow_the_ids(many_facts: Vault, runner_for: Callable[[Vault], OpRunner], qtbot: QtBot) -> None:
    model = FactTableModel(runner_for(many_facts))
    _loaded(qtbot, model, FactFilter(subject="Person 3"))
    assert model.rowCount() == FACTS // PEOPLE
    assert {_row_loaded(qtbot, model, row).subject for row in range(model.rowCount())} == {"Person 3"}
    _loaded(qtbot, model, FactFilter(q="value 42"))
    assert model.data(model.index(0, VALUE)) == PLACEHOLDER
    values = {_row_loaded(qtbot, model, row).object_text for row in range(model.rowCount())}
    assert "value 42" in values
    _loaded(qtbot, model, FactFilter(tier="cold"))
    assert model.rowCount() == 0


def test_sorting_asks_the_engine_for_another_order(
    many_facts: Vault, runner_for: Callable[[Vault], OpRunner], qtbot: QtBot
) -> None:
    model = FactTableModel(runner_for(many_facts))
    _loaded(qtbot, model)
    newest_first = model.fact_ids()
    with qtbot.waitSignal(model.ids_loaded, timeout=60_000):
        model.sort(SUBJECT, Qt.SortOrder.AscendingOrder)
    assert model.fact_ids() == many_facts.facts.ids(FactFilter(), order="subject")
    with qtbot.waitSignal(model.ids_loaded, timeout=60_000):
        model.sort(SUBJECT, Qt.SortOrder.DescendingOrder)
    assert model.fact_ids() == many_facts.facts.ids(FactFilter(), order="subject")[::-1]
    model.sort(TIER, Qt.SortOrder.AscendingOrder)  # not sortable: nothing happens
    assert not model.is_loading()
    with qtbot.waitSignal(model.ids_loaded, timeout=60_000):
        model.sort(9 - 3, Qt.SortOrder.DescendingOrder)  # "Updated"
    assert model.fact_ids() == newest_first


@pytest.fixture
def small(vault: Vault) -> Vault:
    for n in range(5):
        vault.facts.add("Ada", f"custom_note_{n}", f"note {n}")
    return vault


def test_an_updated_fact_refreshes_only_its_row(
    small: Vault, runner_for: Callable[[Vault], OpRunner], qtbot: QtBot
) -> None:
    runner = runner_for(small)
    model = FactTableModel(runner)
    _loaded(qtbot, model)
    _row_loaded(qtbot, model, 0)
    target = model.fact_id_at(2)
    before = model.cached_fact(target)
    assert before is not None
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom: changed.append((top.row(), bottom.row())))
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    with qtbot.waitSignal(model.rows_refreshed, timeout=60_000) as refreshed:
        small.facts.set_tier(target, "hot", pinned=True)  # memory.updated for that fact only
    assert refreshed.args == [[target]]
    assert changed == [(2, 2)]
    assert resets == []
    assert model.requested_pages == [0]  # no page was fetched again
    assert model.data(model.index(2, TIER)) == "hot (pinned)"
    font = model.data(model.index(2, TIER), Qt.ItemDataRole.FontRole)
    assert font.bold()


def test_deleted_and_added_facts_remove_and_insert_rows_without_a_reset(
    small: Vault, runner_for: Callable[[Vault], OpRunner], qtbot: QtBot
) -> None:
    model = FactTableModel(runner_for(small))
    _loaded(qtbot, model)
    ids = model.fact_ids()
    resets: list[bool] = []
    removed: list[tuple[int, int]] = []
    inserted: list[tuple[int, int]] = []
    model.modelReset.connect(lambda: resets.append(True))
    model.rowsRemoved.connect(lambda _p, first, last: removed.append((first, last)))
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    small.facts.delete(ids[1])
    qtbot.waitUntil(lambda: model.rowCount() == 4, timeout=60_000)
    assert removed == [(1, 1)]
    assert model.fact_ids() == [ids[0], *ids[2:]]
    added = small.facts.add("Ada", "custom_note_new", "a new note")
    qtbot.waitUntil(lambda: model.rowCount() == 5, timeout=60_000)
    assert inserted == [(0, 0)]  # newest first
    assert model.fact_id_at(0) == added.id
    assert resets == []


def test_a_fact_that_leaves_the_filter_leaves_the_table(
    small: Vault, runner_for: Callable[[Vault], OpRunner], qtbot: QtBot
) -> None:
    model = FactTableModel(runner_for(small))
    _loaded(qtbot, model, FactFilter(tier="warm"))
    assert model.rowCount() == 5
    _row_loaded(qtbot, model, 0)
    first = model.fact_id_at(0)
    small.facts.set_tier(first, "hot", pinned=True)
    qtbot.waitUntil(lambda: model.row_of(first) is None, timeout=60_000)
    assert model.rowCount() == 4


def test_placeholder_rows_never_return_data_for_a_bad_index(
    small: Vault, runner_for: Callable[[Vault], OpRunner], qtbot: QtBot
) -> None:
    model = FactTableModel(runner_for(small))
    _loaded(qtbot, model)
    assert model.data(QModelIndex()) is None
    assert model.data(model.index(99, 0)) is None
    assert model.rowCount(model.index(0, 0)) == 0


def test_the_module_scoped_vault_is_its_own(many_facts: Vault, tmp_path: Path) -> None:
    # Guard for the fixture above: tests that change facts use their own vault, not this one.
    assert many_facts.counts().active_facts == FACTS
    assert tmp_path not in many_facts.paths.root.parents


def _apply_plan(shown: list[int], new: list[int]) -> list[int]:
    """Replay a plan the way the model does: removals, then the move, then insertions."""
    plan = plan_ids(shown, new)
    rows = list(shown)
    for first, last in reversed(plan.removed):
        del rows[first : last + 1]
    if plan.kept is not None:
        assert sorted(plan.kept) == sorted(rows)
        rows = list(plan.kept)
    for first, last in plan.added:
        rows[first:first] = new[first : last + 1]
    assert plan.rows == {fact_id: row for row, fact_id in enumerate(new)}
    return rows


@pytest.mark.parametrize(
    ("shown", "new"),
    [
        ([5, 4, 3, 2, 1], [7, 6, 5, 4, 3, 2, 1]),  # new memories on top: one insertion, nothing moves
        ([5, 4, 3, 2, 1], [5, 3, 1]),  # two leave
        ([5, 4, 3, 2, 1], [2, 9, 5, 4, 3, 1]),  # one updated to the top, one new in between
        ([1, 2, 3], [3, 2, 1]),  # reversed
        ([], [1, 2]),
        ([1, 2], []),
    ],
)
def test_the_id_plan_turns_the_shown_rows_into_the_new_list(shown: list[int], new: list[int]) -> None:
    assert _apply_plan(shown, new) == new


def test_the_id_plan_for_new_memories_on_top_is_one_insertion() -> None:
    shown = list(range(100_000, 0, -1))
    plan = plan_ids(shown, [100_002, 100_001, *shown])
    assert plan.removed == [] and plan.kept is None and plan.added == [(0, 1)]
    assert not plan.reset
    assert plan_ids(None, [3, 2, 1]).reset  # nothing shown yet: a reset
