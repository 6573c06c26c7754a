"""The document library as a two-level tree: groups (all, collections, quarantine) and their items.

Top level, in order: "All documents", one node per collection (by name), "Quarantined".  Under
"All documents" every document; under a collection its documents; under "Quarantined" the files
that could not be parsed.  A document in two collections appears three times (once under "All
documents"), as in a mail client's folders: the nodes are views of the same document.

The whole library loads in one read (:func:`load_library`: documents, collections, quarantine) and
reloads, throttled, when the change feed reports ``document.*`` or ``collection.changed``.

Drag and drop: document nodes can be dragged (MIME type :data:`DOCUMENT_MIME`, a JSON list of
ids) and dropped on a collection (:attr:`LibraryTreeModel.documents_dropped`); files from the
desktop (``text/uri-list``) can be dropped anywhere, on a collection to ingest them into it
(:attr:`LibraryTreeModel.files_dropped`).  Only copying is offered: a "move" would let a file
manager delete the files it dragged, and let the view remove the dragged rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QIcon

from engine import Vault
from engine.changes import Change
from engine.documents.model import Collection, DocumentInfo, QuarantineEntry, ReadProgress
from ui.format import local_time, plural
from ui.ops import OpRunner
from ui.throttle import Throttle

_Index = QModelIndex | QPersistentModelIndex

ALL = "all"
COLLECTION = "collection"
QUARANTINE = "quarantine"
DOCUMENT = "document"
QUARANTINED = "quarantined"
GROUP_KINDS = (ALL, COLLECTION, QUARANTINE)

KIND_ROLE = Qt.ItemDataRole.UserRole + 1
"""``data(index, KIND_ROLE)``: the node's kind (:data:`ALL`, :data:`COLLECTION`, … )."""
ID_ROLE = Qt.ItemDataRole.UserRole + 2
"""``data(index, ID_ROLE)``: the collection, document or quarantine id (None for the two fixed
groups)."""

DOCUMENT_MIME = "application/x-cairn-document-ids"
URI_MIME = "text/uri-list"
DOCUMENT_LIMIT = 5000
REFRESH_INTERVAL_MS = 400
HEADERS = ("Name", "State")
STATUS_WORDS = {
    "processing": "processing",
    "ready": "ready",
    "degraded": "degraded",
    "failed": "failed",
}
STATUS_ICONS = {
    "processing": "status-busy",
    "ready": "status-ok",
    "degraded": "status-warn",
    "failed": "status-error",
}
GROUP_ICONS = {ALL: "library", COLLECTION: "collection", QUARANTINE: "quarantine"}


def reading_words(progress: ReadProgress) -> str:
    """A background read in a few words: ``reading 40 of 180 pages`` (``reading…`` before the pages are counted)."""
    if progress.pages_total:
        return f"reading {progress.pages_read:,} of {progress.pages_total:,} pages"
    return "reading…"


@dataclass(frozen=True, slots=True)
class Library:
    """Everything the tree shows, loaded in one read."""

    documents: tuple[DocumentInfo, ...]
    collections: tuple[Collection, ...]
    quarantine: tuple[QuarantineEntry, ...]


def load_library(vault: Vault) -> Library:
    """Documents (by name), collections (by name) and quarantined files (reader pool)."""
    documents = sorted(vault.documents(limit=DOCUMENT_LIMIT), key=lambda d: (d.name.casefold(), d.id))
    return Library(tuple(documents), tuple(vault.collections()), tuple(vault.documents.quarantine()))


@dataclass(frozen=True, slots=True)
class Node:
    """One node of the tree.

    ``ident`` is the collection, document or quarantine id (None for "All documents" and
    "Quarantined"); ``item`` the DTO; ``group`` the ``(kind, ident)`` of the group a leaf sits in.
    """

    kind: str
    ident: int | None
    item: DocumentInfo | Collection | QuarantineEntry | None = None
    group: tuple[str, int | None] | None = None

    @property
    def key(self) -> tuple[str, int | None, tuple[str, int | None] | None]:
        """Identifies the node across reloads."""
        return (self.kind, self.ident, self.group)

    @property
    def is_group(self) -> bool:
        """True for the top-level nodes."""
        return self.kind in GROUP_KINDS

    @property
    def title(self) -> str:
        """The name shown."""
        if self.kind == ALL:
            return "All documents"
        if self.kind == QUARANTINE:
            return "Quarantined"
        return getattr(self.item, "name", "")


def _local_paths(data: QMimeData) -> list[str]:
    return [url.toLocalFile() for url in data.urls() if url.isLocalFile() and url.toLocalFile()]


def document_ids_of(data: QMimeData) -> list[int]:
    """The document ids a drag carries (empty when it carries none)."""
    if not data.hasFormat(DOCUMENT_MIME):
        return []
    try:
        raw = json.loads(bytes(data.data(DOCUMENT_MIME).data()).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return []
    return [int(x) for x in raw if isinstance(x, int)] if isinstance(raw, list) else []


class LibraryTreeModel(QAbstractItemModel):
    """Groups and their documents or quarantined files; see the module docstring.

    Columns: 0 name (with a status or group icon) · 1 state (a document's status, a group's count,
    a quarantined file's reason).  Roles: ``DisplayRole``, ``DecorationRole`` (column 0, once
    :meth:`set_icons` was given icons), ``ToolTipRole``, :data:`KIND_ROLE`, :data:`ID_ROLE`.

    Signals:
        loaded(): a load (the first or a refresh) was applied.
        documents_dropped(int, list): document ids dropped on the collection with that id.
        files_dropped(list, object): local paths dropped on the tree, and the collection id they
            were dropped on (None elsewhere).
    """

    loaded = Signal()
    documents_dropped = Signal(int, list)
    files_dropped = Signal(list, object)

    def __init__(self, runner: OpRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._library = Library((), (), ())
        self._groups: list[Node] = []
        self._children: list[list[Node]] = []
        self._icons: dict[str, QIcon] = {}
        self._loading = False
        self._loaded_once = False
        #: Loads started so far, and the number of the one shown: a view waiting for a node it just created
        #: knows when a load that started after the creation has arrived.
        self.loads_started = 0
        self.load_shown = 0
        self._throttle = Throttle(REFRESH_INTERVAL_MS, self.reload, self)
        self._rebuild()
        runner.changes_arrived.connect(self._on_changes)

    # -- loading -----------------------------------------------------------------------------------
    @property
    def library(self) -> Library:
        """What is shown."""
        return self._library

    @property
    def is_loaded(self) -> bool:
        """True once the first load arrived."""
        return self._loaded_once

    @property
    def is_loading(self) -> bool:
        """True while a load is in flight."""
        return self._loading

    def reload(self) -> None:
        """Load the library again (a load already in flight is followed by one more)."""
        if self._loading:
            self._throttle.trigger()
            return
        self._loading = True
        self.loads_started += 1
        number = self.loads_started
        self._runner.read(load_library, lambda library: self._arrived(library, number), on_error=self._failed)

    def _arrived(self, library: Library, number: int) -> None:
        self._loading = False
        self.load_shown = number
        self.set_library(library)

    def _failed(self, error: BaseException) -> None:
        self._loading = False
        self._runner.report(error)

    def set_library(self, library: Library) -> None:
        """Show ``library`` (a reset: views restore their selection through :meth:`index_of`)."""
        self.beginResetModel()
        self._library = library
        self._rebuild()
        self.endResetModel()
        self._loaded_once = True
        self.loaded.emit()

    def _rebuild(self) -> None:
        lib = self._library
        groups = [Node(ALL, None)]
        children = [[Node(DOCUMENT, d.id, d, (ALL, None)) for d in lib.documents]]
        for collection in lib.collections:
            groups.append(Node(COLLECTION, collection.id, collection))
            children.append(
                [
                    Node(DOCUMENT, d.id, d, (COLLECTION, collection.id))
                    for d in lib.documents
                    if collection.id in d.collection_ids
                ]
            )
        groups.append(Node(QUARANTINE, None))
        children.append([Node(QUARANTINED, q.id, q, (QUARANTINE, None)) for q in lib.quarantine])
        self._groups, self._children = groups, children

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if self._loaded_once and any(c.type.startswith("document.") or c.type == "collection.changed" for c in changes):
            self._throttle.trigger()

    def set_icons(self, icons: dict[str, QIcon]) -> None:
        """Icons by name (``library``, ``collection``, ``quarantine``, ``status-ok`` …)."""
        self._icons = dict(icons)
        if self._groups:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._groups) - 1, 0), [Qt.ItemDataRole.DecorationRole]
            )

    # -- lookup ------------------------------------------------------------------------------------
    def node(self, index: _Index) -> Node | None:
        """The node at ``index`` (None for the invisible root)."""
        if not index.isValid():
            return None
        group = int(index.internalId())
        if group == 0:
            return self._groups[index.row()] if index.row() < len(self._groups) else None
        children = self._children[group - 1] if group - 1 < len(self._children) else []
        return children[index.row()] if index.row() < len(children) else None

    def group_index(self, kind: str, ident: int | None = None) -> QModelIndex:
        """The top-level node of a group (invalid when there is no such group)."""
        for row, node in enumerate(self._groups):
            if node.kind == kind and node.ident == ident:
                return self.index(row, 0)
        return QModelIndex()

    def index_of(self, key: tuple[str, int | None, tuple[str, int | None] | None]) -> QModelIndex:
        """The index of the node with :attr:`Node.key` ``key`` (invalid when it is gone)."""
        kind, ident, group = key
        if group is None:
            return self.group_index(kind, ident)
        parent = self.group_index(*group)
        if not parent.isValid():
            return QModelIndex()
        for row, node in enumerate(self._children[parent.row()]):
            if node.kind == kind and node.ident == ident:
                return self.index(row, 0, parent)
        return QModelIndex()

    def document_index(self, document_id: int, group: tuple[str, int | None] = (ALL, None)) -> QModelIndex:
        """A document's node under ``group`` (default: "All documents")."""
        return self.index_of((DOCUMENT, document_id, group))

    def children_of(self, kind: str, ident: int | None = None) -> list[Node]:
        """The leaves under a group."""
        index = self.group_index(kind, ident)
        return list(self._children[index.row()]) if index.isValid() else []

    def group_nodes(self) -> list[Node]:
        """The top-level nodes in order."""
        return list(self._groups)

    def find_document(self, document_id: int) -> DocumentInfo | None:
        """The loaded document with ``document_id``."""
        for document in self._library.documents:
            if document.id == document_id:
                return document
        return None

    # -- Qt: structure -----------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        """Top-level nodes carry id 0; a leaf carries its group's row + 1."""
        if column < 0 or column >= len(HEADERS) or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0) if row < len(self._groups) else QModelIndex()
        if parent.internalId() != 0 or parent.row() >= len(self._children):
            return QModelIndex()
        if row >= len(self._children[parent.row()]):
            return QModelIndex()
        return self.createIndex(row, column, parent.row() + 1)

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        """A leaf's group; the root for groups."""
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(int(index.internalId()) - 1, 0, 0)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Groups at the top, their leaves below, nothing under a leaf."""
        if not parent.isValid():
            return len(self._groups)
        if parent.internalId() != 0 or parent.column() != 0:
            return 0
        return len(self._children[parent.row()]) if parent.row() < len(self._children) else 0

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        """Name and state."""
        return len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Column titles."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    # -- Qt: content -------------------------------------------------------------------------------
    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """See the class docstring for the roles."""
        node = self.node(index)
        if node is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return node.title if index.column() == 0 else self._state_text(node, index)
        if role == Qt.ItemDataRole.DecorationRole and index.column() == 0:
            return self._icons.get(self._icon_name(node))
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(node) or None
        if role == KIND_ROLE:
            return node.kind
        if role == ID_ROLE:
            return node.ident
        return None

    def _state_text(self, node: Node, index: _Index) -> str:
        if node.is_group:
            return f"{self.rowCount(index.sibling(index.row(), 0)):,}"
        if isinstance(node.item, DocumentInfo):
            if node.item.reading is not None:
                return reading_words(node.item.reading)
            return STATUS_WORDS.get(node.item.status, node.item.status)
        if isinstance(node.item, QuarantineEntry):
            return node.item.reason
        return ""

    @staticmethod
    def _icon_name(node: Node) -> str:
        if node.is_group:
            return GROUP_ICONS[node.kind]
        if isinstance(node.item, DocumentInfo):
            return STATUS_ICONS.get(node.item.status, "status-warn")
        return "status-error"

    def _tooltip(self, node: Node) -> str:
        item = node.item
        if isinstance(item, DocumentInfo):
            lines = [item.path or item.name, f"{item.status} · updated {local_time(item.updated_at)}"]
            if item.reading is not None:
                lines.append(f"Being read in the background: {reading_words(item.reading)}.")
            if item.status_reason:
                lines.append(item.status_reason)
            return "\n".join(lines)
        if isinstance(item, QuarantineEntry):
            return f"{item.path or item.name}\n{item.reason}: {item.detail}"
        if isinstance(item, Collection):
            text = f"{plural(item.documents, 'document')}. Drop documents here to add them."
            return f"{item.description}\n{text}" if item.description else text
        if node.kind == QUARANTINE:
            return "Files that could not be read safely; they are not retried on their own."
        return "Every document in the vault. Drop files or folders anywhere to add more."

    # -- Qt: drag and drop -------------------------------------------------------------------------
    def flags(self, index: _Index) -> Qt.ItemFlag:
        """Documents drag; collections (and the empty area) take drops."""
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        node = self.node(index)
        if node is None:
            return Qt.ItemFlag.NoItemFlags
        if node.kind == DOCUMENT:
            return base | Qt.ItemFlag.ItemIsDragEnabled | Qt.ItemFlag.ItemIsDropEnabled
        return base | Qt.ItemFlag.ItemIsDropEnabled

    def supportedDragActions(self) -> Qt.DropAction:
        """Copy only: adding to a collection never takes a document out of anything."""
        return Qt.DropAction.CopyAction

    def supportedDropActions(self) -> Qt.DropAction:
        """Copy only (see the module docstring)."""
        return Qt.DropAction.CopyAction

    def mimeTypes(self) -> list[str]:
        """Document ids, and files from the desktop."""
        return [DOCUMENT_MIME, URI_MIME]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        """The dragged documents' ids (and their names as text)."""
        ids: list[int] = []
        names: list[str] = []
        for index in indexes:
            node = self.node(index)
            if node is not None and node.kind == DOCUMENT and node.ident not in ids:
                ids.append(int(node.ident or 0))
                names.append(node.title)
        data = QMimeData()
        data.setData(DOCUMENT_MIME, json.dumps(ids).encode("utf-8"))
        data.setText("\n".join(names))
        return data

    def target_collection(self, parent: _Index) -> int | None:
        """The collection a drop on ``parent`` goes to: the collection, or a document's collection."""
        node = self.node(parent)
        if node is None:
            return None
        if node.kind == COLLECTION:
            return node.ident
        if node.kind == DOCUMENT and node.group is not None and node.group[0] == COLLECTION:
            return node.group[1]
        return None

    def canDropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: _Index) -> bool:
        """Documents onto a collection; files anywhere."""
        if _local_paths(data):
            return True
        return bool(document_ids_of(data)) and self.target_collection(parent) is not None

    def dropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: _Index) -> bool:
        """Announce the drop; the view carries it out on the runner."""
        if action == Qt.DropAction.IgnoreAction:
            return True
        collection = self.target_collection(parent)
        paths = _local_paths(data)
        if paths:
            self.files_dropped.emit(paths, collection)
            return True
        ids = document_ids_of(data)
        if ids and collection is not None:
            self.documents_dropped.emit(collection, ids)
            return True
        return False
