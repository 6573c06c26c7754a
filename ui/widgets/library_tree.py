"""The documents tree of the Documents view: drag and drop, multi-selection and the context menu.

The tree shows a :class:`~ui.models.documents.LibraryTreeModel`.  Documents drag onto collections
and files from the desktop drop anywhere (the model announces both).  The context menu offers what
fits the node under the mouse and the selected documents, and the Del key deletes the selected
documents (or, with only a collection chosen, that collection); both only emit requests, which the
view confirms and carries out on the runner.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTreeView, QWidget

from ui.context import FILE_DROPS_PROPERTY
from ui.format import plural
from ui.models.documents import COLLECTION, DOCUMENT, QUARANTINED, LibraryTreeModel, Node


class LibraryTree(QTreeView):
    """Groups and their documents, with copy-only drag and drop and a context menu.

    Signals:
        remove_requested(int, list): take these documents out of the collection with that id.
        add_requested(int, list): add these documents to the collection with that id.
        delete_requested(list): delete these documents (after asking).
        rename_requested(int): rename the collection with that id.
        delete_collection_requested(int): delete the collection with that id (after asking).
        retry_requested(int): read the quarantined file with that id again.
        new_collection_requested(): make a new collection.
    """

    remove_requested = Signal(int, list)
    add_requested = Signal(int, list)
    delete_requested = Signal(list)
    rename_requested = Signal(int)
    delete_collection_requested = Signal(int)
    retry_requested = Signal(int)
    new_collection_requested = Signal()

    def __init__(self, model: LibraryTreeModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = model
        self.setModel(model)
        self.setAccessibleName("Documents and collections")
        self.setUniformRowHeights(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setDragEnabled(True)
        self.setAcceptDrops(True)
        self.setDropIndicatorShown(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.setDefaultDropAction(Qt.DropAction.CopyAction)
        self.setProperty(FILE_DROPS_PROPERTY, True)  # a drop on a collection ingests into it
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self.delete_selection)

    def current_node(self) -> Node | None:
        """The current node (the last clicked when several are selected)."""
        return self.library.node(self.currentIndex())

    def selected_documents(self) -> list[Node]:
        """The document nodes selected."""
        nodes = [self.library.node(i) for i in self.selectionModel().selectedRows()]
        return [n for n in nodes if n is not None and n.kind == DOCUMENT]

    def delete_selection(self) -> None:
        """Ask to delete the selected documents, or the chosen collection when no document is selected."""
        documents = self.selected_documents()
        if documents:
            self.delete_requested.emit([int(d.ident or 0) for d in documents])
            return
        node = self.current_node()
        if node is not None and node.kind == COLLECTION and node.ident is not None:
            self.delete_collection_requested.emit(node.ident)

    def _context_menu(self, point: QPoint) -> None:
        menu = self.build_context_menu(self.indexAt(point))
        menu.exec(self.viewport().mapToGlobal(point))
        menu.deleteLater()

    def build_context_menu(self, index: QModelIndex) -> QMenu:
        """The menu for the node at ``index`` (and the other selected documents)."""
        menu = QMenu(self)
        node = self.library.node(index)
        if node is not None and node.kind == DOCUMENT:
            self._document_actions(menu, node)
        elif node is not None and node.kind == COLLECTION and node.ident is not None:
            cid = node.ident
            menu.addAction("Rename…", lambda: self.rename_requested.emit(cid))
            menu.addAction("Delete collection…", lambda: self.delete_collection_requested.emit(cid))
        elif node is not None and node.kind == QUARANTINED and node.ident is not None:
            qid = node.ident
            menu.addAction("Retry", lambda: self.retry_requested.emit(qid))
        if not menu.isEmpty():
            menu.addSeparator()
        menu.addAction("New collection…", self.new_collection_requested.emit)
        return menu

    def _document_actions(self, menu: QMenu, node: Node) -> None:
        documents = self.selected_documents()
        if node.key not in {d.key for d in documents}:
            documents = [node]
        ids = [int(d.ident or 0) for d in documents]
        group = node.group
        if group is not None and group[0] == COLLECTION and group[1] is not None:
            collection = self.library.node(self.library.group_index(*group))
            name = collection.title if collection is not None else "the collection"
            cid = group[1]
            menu.addAction(f"Remove from “{name}”", lambda: self.remove_requested.emit(cid, ids))
        targets = [n for n in self.library.group_nodes() if n.kind == COLLECTION]
        if targets:
            add_menu = menu.addMenu("Add to collection")
            for target in targets:
                tid = int(target.ident or 0)
                add_menu.addAction(target.title, partial(self.add_requested.emit, tid, ids))
        menu.addAction(f"Delete {plural(len(ids), 'document')}…", lambda: self.delete_requested.emit(ids))
