"""A document's section tree: sections nested by heading level, each with its spans and tables as leaves.

Built from a :class:`~engine.documents.model.DocumentTree`.  A section whose level is deeper than
the section before it becomes that section's child (an ``##`` under a ``#``); a section's spans come
first under it, then its tables (each kept whole, as recall shows it), then its subsections.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from engine.documents.model import DocumentTree, SectionView, SpanView, TableInSection
from ui.format import one_line

_Index = QModelIndex | QPersistentModelIndex
HEADERS = ("Section", "Pages")


def page_label(first: int | None, last: int | None) -> str:
    """``p. 3`` / ``pp. 3–5`` ("" when the document has no pages)."""
    if first is None:
        return ""
    if last is None or last == first:
        return f"p. {first}"
    return f"pp. {first}–{last}"


@dataclass(slots=True)
class _Entry:
    item: SectionView | SpanView | TableInSection
    parent: int  # index into the entry list; -1 for the root
    row: int
    children: list[int] = field(default_factory=list)


class SectionTreeModel(QAbstractItemModel):
    """Sections and spans of one document.

    Columns: 0 the section title (a span: its number and first words) · 1 its pages.  Roles:
    ``DisplayRole``, ``ToolTipRole`` (a span's text).  :meth:`item` returns the
    :class:`SectionView` or :class:`SpanView` of an index.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._entries: list[_Entry] = []
        self._top: list[int] = []
        self.tree: DocumentTree | None = None

    def set_tree(self, tree: DocumentTree | None) -> None:
        """Show ``tree``'s sections (None: nothing)."""
        self.beginResetModel()
        self.tree = tree
        self._entries, self._top = [], []
        stack: list[tuple[int, int]] = []  # (level, entry) of the open sections
        for section in tree.sections if tree is not None else ():
            while stack and stack[-1][0] >= section.level:
                stack.pop()
            parent = stack[-1][1] if stack else -1
            entry = self._add(section, parent)
            for span in section.spans:
                self._add(span, entry)
            for table in section.tables:
                self._add(table, entry)
            stack.append((section.level, entry))
        self.endResetModel()

    def _add(self, item: SectionView | SpanView | TableInSection, parent: int) -> int:
        siblings = self._top if parent < 0 else self._entries[parent].children
        self._entries.append(_Entry(item, parent, len(siblings)))
        siblings.append(len(self._entries) - 1)
        return len(self._entries) - 1

    def item(self, index: _Index) -> SectionView | SpanView | TableInSection | None:
        """The section, span or table at ``index``."""
        entry = self._entry(index)
        return entry.item if entry is not None else None

    def section_count(self) -> int:
        """How many sections the tree holds."""
        return sum(1 for e in self._entries if isinstance(e.item, SectionView))

    def index_of_item(self, item_id: int) -> QModelIndex:
        """The index of the section or span with ``item_id`` (invalid when not shown; a table's id is not an
        object id, so tables are never looked up by it)."""
        for position, entry in enumerate(self._entries):
            if entry.item.id == item_id and not isinstance(entry.item, TableInSection):
                return self.createIndex(entry.row, 0, position + 1)
        return QModelIndex()

    def _entry(self, index: _Index) -> _Entry | None:
        if not index.isValid():
            return None
        position = int(index.internalId()) - 1
        return self._entries[position] if 0 <= position < len(self._entries) else None

    # -- Qt ----------------------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """Each index carries its entry's position + 1 (0 is never used)."""
        siblings = self._top if not parent.isValid() else self._children_of(parent)
        if not (0 <= row < len(siblings)) or not (0 <= column < len(HEADERS)):
            return QModelIndex()
        return self.createIndex(row, column, siblings[row] + 1)

    def _children_of(self, parent: _Index) -> list[int]:
        entry = self._entry(parent)
        return entry.children if entry is not None else []

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        """The enclosing section (the root for top-level sections)."""
        entry = self._entry(index)
        if entry is None or entry.parent < 0:
            return QModelIndex()
        return self.createIndex(self._entries[entry.parent].row, 0, entry.parent + 1)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Top-level sections, or an entry's children."""
        if not parent.isValid():
            return len(self._top)
        return len(self._children_of(parent)) if parent.column() == 0 else 0

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Title and pages."""
        return len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Title or span text, and pages; a span's text as its tooltip."""
        entry = self._entry(index)
        if entry is None:
            return None
        item = entry.item
        if role == Qt.ItemDataRole.DisplayRole:
            if isinstance(item, TableInSection):
                return "" if index.column() == 1 else f"Table  {table_caption(item)}"
            if index.column() == 1:
                return page_label(item.page_start, item.page_end)
            if isinstance(item, SectionView):
                return item.title or f"Section {item.ordinal + 1}"
            return f"¶{item.ordinal + 1}  {one_line(item.text, 90)}"
        if role == Qt.ItemDataRole.ToolTipRole and isinstance(item, SpanView | TableInSection):
            return one_line(item.text, 600)
        return None


def table_caption(table: TableInSection) -> str:
    """A table's caption on one line, or its first row when it has none."""
    header = table.text[: table.header_chars].strip()
    return one_line(header or table.text.split("\n", 1)[0], 90)
