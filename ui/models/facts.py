"""The facts table's model: every matching id up front, the facts fetched a page at a time.

A vault can hold 100k facts.  Loading them all would take seconds and hundreds of megabytes, so the
model holds only the ordered id list (``vault.facts.ids(filter)``: one cheap query) and fetches the
rows the view actually paints, a page of :data:`PAGE_SIZE` ids at a time
(``vault.facts.get_many``), on the runner's reader pool.  Until its page arrives a row shows a
placeholder.  Fetched facts are cached by id (a bounded cache, oldest out first), so rows survive
inserts and removals above them without a refetch.

Scrolling fast through 100k rows asks for many pages; only the few most recently asked for are
kept waiting (at most :data:`MAX_IN_FLIGHT` run at once), so the screen catches up with where the
person stopped, not with every page flown past.

Live refresh touches only what a change names: ``memory.updated`` for a fact that is loaded
refetches that one row; a change that can add or remove rows (created, deleted, superseded,
restored) reloads the id list and inserts or removes just the rows that differ.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication

from engine import Vault
from engine.changes import Change
from engine.facts.api import FactFilter
from engine.facts.model import Fact
from ui.format import local_time, percent, subject_label
from ui.ops import OpRunner
from ui.throttle import Throttle

_Index = QModelIndex | QPersistentModelIndex

PAGE_SIZE = 128
MAX_IN_FLIGHT = 2
MAX_WAITING = 4  # pages asked for but not yet requested; older ones were scrolled past
MAX_CACHED = 8192  # facts kept in memory (64 pages)
RELOAD_INTERVAL_MS = 400
PLACEHOLDER = "…"

FACT_ROLE = Qt.ItemDataRole.UserRole + 1
"""``data(index, FACT_ROLE)``: the row's :class:`~engine.facts.model.Fact` (None while loading)."""
FACT_ID_ROLE = Qt.ItemDataRole.UserRole + 2
"""``data(index, FACT_ID_ROLE)``: the row's fact id (known before the fact is loaded)."""
LOADING_ROLE = Qt.ItemDataRole.UserRole + 3
"""``data(index, LOADING_ROLE)``: True while the row's page has not arrived."""

COLUMNS = ("Subject", "Predicate", "Value", "Tier", "Standing", "Confidence", "Updated")
SUBJECT, PREDICATE, VALUE, TIER, STANDING, CONFIDENCE, UPDATED = range(len(COLUMNS))
SORT_ORDERS = {SUBJECT: "subject", CONFIDENCE: "confidence", UPDATED: "updated"}
"""Columns the table can be sorted by, and the engine's order for each."""
_NATURAL_ASCENDING = {SUBJECT: True, CONFIDENCE: False, UPDATED: False}

ROW_CHANGES = ("memory.updated",)
LIST_CHANGES = (
    "memory.created",
    "memory.deleted",
    "memory.superseded",
    "memory.restored",
    "forget.completed",
)
CURRENT_STATUSES = ("active", "contested")


def matches_locally(fact: Fact, flt: FactFilter) -> bool:
    """False when ``fact`` visibly no longer fits ``flt`` (the fields checkable without a query).

    Subject aliases and the full-text query need the database, so they count as a match here.
    """
    statuses = (flt.status,) if isinstance(flt.status, str) else flt.status
    return (
        fact.status in (statuses or CURRENT_STATUSES)
        and (flt.tier is None or fact.tier == flt.tier)
        and (flt.standing is None or fact.standing == flt.standing)
        and (flt.predicate is None or fact.predicate == flt.predicate)
    )


class FactTableModel(QAbstractTableModel):
    """The facts matching a :class:`~engine.facts.api.FactFilter`, fetched lazily by id.

    Columns: 0 subject ("You" for the vault owner) · 1 predicate · 2 value · 3 tier (with
    "pinned") · 4 standing · 5 confidence (percent) · 6 updated (local time).  Roles besides
    ``DisplayRole``: ``ToolTipRole`` (the fact's statement), ``TextAlignmentRole``,
    ``ForegroundRole`` (placeholder rows and facts no longer current are subdued), ``FontRole``
    (pinned tiers in bold), :data:`FACT_ROLE`, :data:`FACT_ID_ROLE`, :data:`LOADING_ROLE`.

    Signals:
        ids_loaded(int): the id list was (re)loaded; the number of rows.
        rows_refreshed(list[int]): these fact ids were refetched after a change.
    """

    ids_loaded = Signal(int)
    rows_refreshed = Signal(list)

    def __init__(self, runner: OpRunner, parent: QObject | None = None, *, page_size: int = PAGE_SIZE) -> None:
        super().__init__(parent)
        self._runner = runner
        self._page_size = page_size
        self._filter = FactFilter()
        self._sort_column = UPDATED
        self._ascending = False
        self._ids: list[int] = []
        self._row_of: dict[int, int] = {}
        self._facts: OrderedDict[int, Fact] = OrderedDict()
        self._in_flight: set[int] = set()  # pages (by first row) being fetched
        self._in_flight_ids: set[int] = set()
        self._waiting: OrderedDict[int, None] = OrderedDict()
        self._generation = 0  # bumped by every new id list: late pages of an old list are dropped
        self._ids_loading = False
        self._ids_stale = False
        self._loaded_once = False
        self.requested_pages: list[int] = []
        """Page numbers fetched since the last filter change, in request order (for tests)."""
        self._reload = Throttle(RELOAD_INTERVAL_MS, self.reload_ids, self)
        runner.changes_arrived.connect(self._on_changes)

    # -- the query ---------------------------------------------------------------------------------
    @property
    def fact_filter(self) -> FactFilter:
        """The filter the rows match."""
        return self._filter

    @property
    def loaded(self) -> bool:
        """True once the first id list arrived."""
        return self._loaded_once

    @property
    def sort_column(self) -> int:
        """The column the rows are sorted by."""
        return self._sort_column

    @property
    def ascending(self) -> bool:
        """True when sorted ascending."""
        return self._ascending

    def set_filter(self, flt: FactFilter) -> None:
        """Show the facts matching ``flt`` (the rows are replaced when the ids arrive)."""
        self._filter = flt
        self._start_over()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by subject, confidence or update time (other columns keep the current order)."""
        if column not in SORT_ORDERS:
            return
        ascending = order == Qt.SortOrder.AscendingOrder
        if (column, ascending) == (self._sort_column, self._ascending) and self._loaded_once:
            return
        self._sort_column, self._ascending = column, ascending
        self._start_over()

    def _start_over(self) -> None:
        self.requested_pages = []
        self._waiting.clear()
        self._reload.cancel()
        self.reload_ids(reset=True)

    def reload_ids(self, *, reset: bool = False) -> None:
        """Query the ids again; only rows that differ are inserted or removed (unless ``reset``).

        The comparison with the rows shown runs on the reader pool with the query (:func:`plan_ids`): on a
        100k-fact vault it is tens of milliseconds of Python, which the GUI thread would otherwise spend
        frozen on every batch of new memories.  The GUI thread only applies the plan.
        """
        if self._ids_loading and not reset:
            self._ids_stale = True
            return
        self._ids_loading = True
        self._ids_stale = False
        self._generation += 1
        generation = self._generation
        flt, order = self._filter, SORT_ORDERS[self._sort_column]
        reverse = self._ascending != _NATURAL_ASCENDING[self._sort_column]
        # A copy: the plan is made against exactly these rows (the list itself is edited in place later).
        shown = None if reset or not self._loaded_once else list(self._ids)

        def load(vault: Vault) -> IdsPlan:
            ids = vault.facts.ids(flt, order=order)
            return plan_ids(shown, ids[::-1] if reverse else ids)

        self._runner.read(
            load,
            lambda plan: self._ids_arrived(generation, plan),
            on_error=lambda error: self._ids_failed(generation, error),
        )

    def _ids_arrived(self, generation: int, plan: IdsPlan) -> None:
        if generation != self._generation:
            return
        self._ids_loading = False
        if plan.reset:
            self.beginResetModel()
            self._ids, self._row_of = plan.ids, plan.rows
            self._in_flight.clear()
            self._in_flight_ids.clear()
            self.endResetModel()
        else:
            self._apply(plan)
        self._loaded_once = True
        self.ids_loaded.emit(len(self._ids))
        if self._ids_stale:
            self._reload.trigger()

    def _ids_failed(self, generation: int, error: BaseException) -> None:
        if generation == self._generation:
            self._ids_loading = False
        self._runner.report(error)

    def _apply(self, plan: IdsPlan) -> None:
        """Move to the plan's id list with row removals, a move and insertions only (no O(rows) Python here)."""
        for first, last in reversed(plan.removed):
            self.beginRemoveRows(QModelIndex(), first, last)
            del self._ids[first : last + 1]
            self.endRemoveRows()
        if plan.kept is not None and plan.kept_rows is not None:
            self._reorder(plan.kept, plan.kept_rows)
        for first, last in plan.added:
            self.beginInsertRows(QModelIndex(), first, last)
            self._ids[first:first] = plan.ids[first : last + 1]
            self.endInsertRows()
        self._ids, self._row_of = plan.ids, plan.rows

    def _reorder(self, order: list[int], rows: dict[int, int]) -> None:
        """Put the same ids in a new order, keeping selections on their facts."""
        self.layoutAboutToBeChanged.emit()
        old = self._ids
        self._ids, self._row_of = order, rows
        moved_from = []
        moved_to = []
        for index in self.persistentIndexList():
            if 0 <= index.row() < len(old):
                moved_from.append(QModelIndex(index))
                moved_to.append(self.index(rows[old[index.row()]], index.column()))
        self.changePersistentIndexList(moved_from, moved_to)
        self.layoutChanged.emit()

    # -- rows --------------------------------------------------------------------------------------
    def fact_ids(self) -> list[int]:
        """Every row's fact id, top to bottom."""
        return list(self._ids)

    def fact_id_at(self, row: int) -> int:
        """The id of the fact in ``row``."""
        return self._ids[row]

    def row_of(self, fact_id: int) -> int | None:
        """The row showing ``fact_id`` (None when it is not in the list)."""
        return self._row_of.get(fact_id)

    def fact_at(self, row: int) -> Fact | None:
        """The fact in ``row``, or None while its page loads (asking for the page)."""
        fact = self._facts.get(self._ids[row])
        if fact is None:
            self._want_page(row // self._page_size)
        return fact

    def cached_fact(self, fact_id: int) -> Fact | None:
        """The fact if it is loaded (never fetches)."""
        return self._facts.get(fact_id)

    def is_loading(self) -> bool:
        """True while the id list or a page is being fetched."""
        return self._ids_loading or bool(self._in_flight)

    # -- pages -------------------------------------------------------------------------------------
    def _want_page(self, page: int) -> None:
        first = page * self._page_size
        if first in self._in_flight:
            return
        self._waiting.pop(page, None)
        self._waiting[page] = None  # newest last
        while len(self._waiting) > MAX_WAITING:
            self._waiting.popitem(last=False)
        self._pump()

    def _pump(self) -> None:
        while self._waiting and len(self._in_flight) < MAX_IN_FLIGHT:
            page, _ = self._waiting.popitem(last=True)  # the page asked for last is on screen
            first = page * self._page_size
            ids = [
                fact_id
                for fact_id in self._ids[first : first + self._page_size]
                if fact_id not in self._facts and fact_id not in self._in_flight_ids
            ]
            if not ids:
                continue
            self._fetch(first, ids)
            self.requested_pages.append(page)

    def _fetch(self, first: int, ids: list[int]) -> None:
        self._in_flight.add(first)
        self._in_flight_ids.update(ids)
        self._runner.read(
            lambda vault: vault.facts.get_many(ids),
            lambda facts: self._page_arrived(first, ids, facts),
            on_error=lambda error: self._page_failed(first, ids, error),
        )

    def _page_arrived(self, first: int, ids: list[int], facts: list[Fact]) -> None:
        # Facts are cached by id, so a page that outlived its id list is still worth keeping.
        self._in_flight.discard(first)
        self._in_flight_ids.difference_update(ids)
        self._store(facts)
        self._repaint(fact.id for fact in facts)
        self._pump()

    def _page_failed(self, first: int, ids: list[int], error: BaseException) -> None:
        self._in_flight.discard(first)
        self._in_flight_ids.difference_update(ids)
        self._runner.report(error)

    def _store(self, facts: Iterable[Fact]) -> None:
        for fact in facts:
            self._facts.pop(fact.id, None)
            self._facts[fact.id] = fact
        while len(self._facts) > MAX_CACHED:
            self._facts.popitem(last=False)

    def _repaint(self, fact_ids: Iterable[int]) -> None:
        rows = sorted(row for fact_id in fact_ids if (row := self._row_of.get(fact_id)) is not None)
        last_column = len(COLUMNS) - 1
        for first, last in _runs(rows):
            self.dataChanged.emit(self.index(first, 0), self.index(last, last_column))

    # -- live refresh ------------------------------------------------------------------------------
    def _on_changes(self, changes: Sequence[Change]) -> None:
        if not self._loaded_once:
            return
        refetch: set[int] = set()
        reload_list = False
        for change in changes:
            if change.type.startswith(ROW_CHANGES) and change.object_id is not None:
                if change.object_id in self._facts:
                    refetch.add(change.object_id)
            elif change.type.startswith(LIST_CHANGES):
                reload_list = True
                if change.object_id is not None and change.object_id in self._facts:
                    refetch.add(change.object_id)
            elif change.type == "subject.changed" and change.object_id is not None:
                refetch.update(self._facts_about(change.object_id, change.data.get("merged", ())))
        if refetch:
            self.refresh_facts(refetch)
        if reload_list:
            self._reload.trigger()

    def _facts_about(self, subject_id: int, merged: Iterable[int]) -> set[int]:
        subjects = {subject_id, *merged}
        return {fact.id for fact in self._facts.values() if fact.subject_id in subjects}

    def refresh_facts(self, fact_ids: Iterable[int]) -> None:
        """Refetch these (loaded) facts and repaint their rows only."""
        ids = sorted(set(fact_ids))
        if not ids:
            return
        generation = self._generation
        self._runner.read(
            lambda vault: vault.facts.get_many(ids),
            lambda facts: self._refreshed(generation, ids, facts),
        )

    def _refreshed(self, generation: int, ids: list[int], facts: list[Fact]) -> None:
        self._store(facts)
        gone = any(not matches_locally(fact, self._filter) for fact in facts)
        self._repaint(fact.id for fact in facts)
        if gone and generation == self._generation:
            # Shown subdued (no longer current) until the id list without them arrives.
            self.reload_ids()
        self.rows_refreshed.emit(ids)

    def replace_fact(self, fact: Fact) -> None:
        """Show a fact an operation returned (fresher than the cache) without a query."""
        if fact.id in self._row_of or fact.id in self._facts:
            self._refreshed(self._generation, [fact.id], [fact])

    # -- Qt ----------------------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Number of matching facts (all of them, loaded or not)."""
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Seven columns."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles; sortable columns say so in their tooltip."""
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and section in SORT_ORDERS:
            return f"Click to sort by {COLUMNS[section].lower()}"
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """See the class docstring for the columns and roles."""
        if not index.isValid() or index.row() >= len(self._ids):
            return None
        row, column = index.row(), index.column()
        if role == FACT_ID_ROLE:
            return self._ids[row]
        fact = self.fact_at(row)
        if role == LOADING_ROLE:
            return fact is None
        if role == FACT_ROLE:
            return fact
        if fact is None:
            return self._placeholder(column, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return _cell_text(fact, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return fact.statement
        if role == Qt.ItemDataRole.TextAlignmentRole and column == CONFIDENCE:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and fact.status not in CURRENT_STATUSES:
            return QApplication.palette().brush(QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.FontRole and column == TIER and fact.tier_pinned:
            font = QFont()
            font.setBold(True)
            return font
        return None

    @staticmethod
    def _placeholder(column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return PLACEHOLDER if column in (SUBJECT, VALUE) else ""
        if role == Qt.ItemDataRole.ForegroundRole:
            return QApplication.palette().brush(QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.ToolTipRole:
            return "Loading…"
        return None


def _cell_text(fact: Fact, column: int) -> str:
    if column == SUBJECT:
        return subject_label(fact.subject)
    if column == PREDICATE:
        return fact.predicate
    if column == VALUE:
        return fact.object_text
    if column == TIER:
        return f"{fact.tier} (pinned)" if fact.tier_pinned else fact.tier
    if column == STANDING:
        if fact.status in CURRENT_STATUSES:
            return fact.standing
        return f"{fact.standing}, {fact.status}"
    if column == CONFIDENCE:
        return percent(fact.confidence)
    return local_time(fact.updated_at)


@dataclass(frozen=True, slots=True)
class IdsPlan:
    """How to go from the rows shown to a new id list, worked out off the GUI thread (:func:`plan_ids`).

    ``removed``: runs of rows to remove, in the old numbering · ``kept``/``kept_rows``: the surviving ids in their
    new order (and each one's row) when that order differs, else None · ``added``: runs of rows to insert, in the
    new numbering · ``ids``/``rows``: the new list and each id's row · ``reset``: replace everything instead.
    """

    ids: list[int]
    rows: dict[int, int]
    removed: list[tuple[int, int]] = field(default_factory=list)
    kept: list[int] | None = None
    kept_rows: dict[int, int] | None = None
    added: list[tuple[int, int]] = field(default_factory=list)
    reset: bool = False


def plan_ids(shown: Sequence[int] | None, new: list[int]) -> IdsPlan:
    """The plan from ``shown`` (None: nothing shown yet, reset) to ``new``; runs on a worker thread."""
    rows = {fact_id: row for row, fact_id in enumerate(new)}
    if shown is None:
        return IdsPlan(new, rows, reset=True)
    old_rows = {fact_id: row for row, fact_id in enumerate(shown)}
    removed = _runs([row for row, fact_id in enumerate(shown) if fact_id not in rows])
    survivors = [fact_id for fact_id in shown if fact_id in rows]
    kept = [fact_id for fact_id in new if fact_id in old_rows]
    moved = kept != survivors
    added = _runs([row for row, fact_id in enumerate(new) if fact_id not in old_rows])
    return IdsPlan(
        new,
        rows,
        removed=removed,
        kept=kept if moved else None,
        kept_rows={fact_id: row for row, fact_id in enumerate(kept)} if moved else None,
        added=added,
    )


def _runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted row numbers as inclusive ``(first, last)`` runs of consecutive rows."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and row == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs
