"""The Documents view: collections and documents, file ingest, quarantine and watched folders.

Left, the library tree (:class:`~ui.models.documents.LibraryTreeModel`: "All documents", the
collections, "Quarantined") above the watched folders; right, the chosen node: a group's table, a
document with its sections, spans and summaries, or a quarantined file with Retry.

Files and folders dropped anywhere on the main window arrive in :meth:`DocumentsView.ingest_paths`
(dropped on a collection in the tree, they go into that collection).  The ingest runs on the
runner's writer (:class:`~ui.ingest_task.PathIngest`) with a progress bar, Cancel and a summary;
drops made meanwhile wait their turn.  Documents dragged onto a collection are added to it; the
context menu removes them, and creates, renames and deletes collections.  The Del key deletes the
selected documents (or the chosen collection) after asking.

A watched folder whose deletions are held (it vanished, or most of its files disappeared at once)
raises a warning that asks before anything is deleted; the navigation badge counts such folders.
Everything refreshes from the change feed: ``document.*`` and ``collection.changed`` reload the
tree, ``watch.*`` the folders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QEvent, QItemSelection, QModelIndex, Qt, Signal
from PySide6.QtGui import QIcon, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from engine import NotFound, Vault
from engine.documents.model import DocumentInfo, QuarantineEntry, UploadResult
from engine.dto import SpanSource
from engine.watching.contract import RootStatus
from ui.context import ViewContext
from ui.format import plural
from ui.ingest_task import IngestOutcome, IngestQueue, PathIngest
from ui.models.documents import (
    ALL,
    COLLECTION,
    DOCUMENT,
    GROUP_ICONS,
    QUARANTINE,
    QUARANTINED,
    STATUS_ICONS,
    LibraryTreeModel,
    Node,
)
from ui.theme import fixed_icon, themed_icon
from ui.widgets.document_pane import DocumentPane
from ui.widgets.ingest_panel import IngestPanel
from ui.widgets.labels import heading_label, secondary_label
from ui.widgets.library_panes import GroupPane, QuarantinePane
from ui.widgets.library_tree import LibraryTree
from ui.widgets.watch_panel import FolderWatching, HeldDeletions, WatchPanel, needs_answer

NodeKey = tuple[str, int | None, tuple[str, int | None] | None]
PANE_NONE, PANE_GROUP, PANE_DOCUMENT, PANE_QUARANTINED = range(4)


class DocumentsView(QWidget):
    """Documents, collections, quarantine, watched folders, and ingest by drag and drop.

    Signals:
        badge_changed(int): watched folders waiting for an answer about deletions.
    """

    badge_changed = Signal(int)

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._show_status = context.show_status
        self._started = False
        self._chosen_key: NodeKey | None = None
        self._pending_key: NodeKey | None = None
        self._pending_after = 0  # the pending node is given up only once a load started after this one arrived
        self._collapsed: set[NodeKey] = {(QUARANTINE, None, None)}
        self._icons: dict[str, QIcon] = {}
        self.question: QMessageBox | None = None
        """The last confirmation asked (deleting documents or a collection)."""

        self.model = LibraryTreeModel(self._runner, self)
        self._set_icons()
        self.model.modelAboutToBeReset.connect(self._remember_state)
        self.model.loaded.connect(self._on_library_loaded)
        self.model.documents_dropped.connect(self.add_to_collection)
        self.model.files_dropped.connect(self._on_files_dropped)
        self.tree = LibraryTree(self.model)
        self.tree.selectionModel().selectionChanged.connect(self._on_node_chosen)
        self.tree.expanded.connect(lambda index: self._collapsed.discard(self._key_at(index)))
        self.tree.collapsed.connect(lambda index: self._collapsed.add(self._key_at(index)))
        self.tree.remove_requested.connect(self.remove_from_collection)
        self.tree.add_requested.connect(self.add_to_collection)
        self.tree.delete_requested.connect(self.ask_delete_documents)
        self.tree.rename_requested.connect(self.ask_rename_collection)
        self.tree.delete_collection_requested.connect(self.ask_delete_collection)
        self.tree.retry_requested.connect(self.retry_quarantined)
        self.tree.new_collection_requested.connect(self.ask_new_collection)

        self.count_label = secondary_label("")
        self.add_files_button = QPushButton("Add files…")
        self.add_files_button.setToolTip("Or drop files and folders anywhere on the window")
        self.add_files_button.clicked.connect(self.choose_files)
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.clicked.connect(self.choose_folder)
        self.new_collection_button = QPushButton("New collection…")
        self.new_collection_button.clicked.connect(self.ask_new_collection)
        self.ingest_panel = IngestPanel()
        self.ingest = IngestQueue(self._runner, self)
        self.ingest_panel.cancel_requested.connect(self.cancel_ingest)
        self.ingest.started.connect(self.ingest_panel.start)
        self.ingest.waiting.connect(self.ingest_panel.set_queued)
        self.ingest.progressed.connect(self.ingest_panel.update_progress)
        self.ingest.finished.connect(self._on_ingest_finished)
        self.ingest.failed.connect(lambda message: self.ingest_panel.show_summary(f"Ingest failed: {message}"))
        self.folders = FolderWatching(self._runner, self._show_status, self)
        self.folders.roots_loaded.connect(self._on_roots)
        self.held = HeldDeletions()
        self.held.confirm_requested.connect(self.folders.confirm_deletions)
        self.held.keep_requested.connect(self.folders.keep_documents)
        self.watch_panel = WatchPanel()
        self.watch_panel.watch_requested.connect(self.folders.watch)
        self.watch_panel.rescan_requested.connect(self.folders.rescan)
        self.watch_panel.unwatch_requested.connect(self.folders.unwatch)

        self.placeholder = secondary_label("Choose a document, a collection or a quarantined file.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.group_pane = GroupPane()
        self.group_pane.open_requested.connect(self._open_leaf)
        self.group_pane.rename_requested.connect(self.ask_rename_collection)
        self.group_pane.delete_requested.connect(self.ask_delete_collection)
        self.document_pane = DocumentPane(self._runner, self.icon)
        self.quarantine_pane = QuarantinePane()
        self.quarantine_pane.retry_requested.connect(self.retry_quarantined)
        self.panes = QStackedWidget()
        for pane in (self.placeholder, self.group_pane, self.document_pane, self.quarantine_pane):
            self.panes.addWidget(pane)

        self._build_layout()
        self.folders.refresh()  # the badge counts held deletions even before the view is shown

    # -- building ----------------------------------------------------------------------------------
    def _set_icons(self) -> None:
        palette = self.palette()
        icons = {name: themed_icon(name, palette) for name in GROUP_ICONS.values()}
        icons.update({name: fixed_icon(name) for name in (*STATUS_ICONS.values(), "status-error")})
        self._icons = icons
        self.model.set_icons(icons)

    def changeEvent(self, event: QEvent) -> None:
        """Re-tint the tree's line icons when the palette changes (a light/dark switch)."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and hasattr(self, "model"):
            self._set_icons()
        super().changeEvent(event)

    def icon(self, name: str) -> QIcon:
        """A tree or status icon by name."""
        return self._icons.get(name) or fixed_icon(name)

    def _build_layout(self) -> None:
        left = QSplitter(Qt.Orientation.Vertical)
        left.setChildrenCollapsible(False)
        left.addWidget(self.tree)
        left.addWidget(self.watch_panel)
        left.setSizes([420, 200])
        right = QWidget()
        right_box = QVBoxLayout(right)
        right_box.setContentsMargins(10, 0, 0, 0)
        right_box.addWidget(self.panes)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([330, 620])
        header = QHBoxLayout()
        header.addWidget(heading_label("Documents", scale=1.45))
        header.addWidget(self.count_label, 1, Qt.AlignmentFlag.AlignBottom)
        header.addWidget(self.add_files_button)
        header.addWidget(self.add_folder_button)
        header.addWidget(self.new_collection_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.addLayout(header)
        layout.addWidget(self.held)
        layout.addWidget(self.ingest_panel)
        layout.addWidget(split, 1)

    # -- loading -----------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Load the library on first show."""
        super().showEvent(event)
        if not self._started:
            self._started = True
            self.model.reload()
            self.folders.refresh()

    def refresh(self) -> None:
        """Load the library and the watched folders again."""
        self._started = True
        self.model.reload()
        self.folders.refresh()

    def _on_roots(self, roots: list[RootStatus]) -> None:
        self.watch_panel.set_roots(roots)
        self.held.set_roots(roots)
        self.badge_changed.emit(sum(1 for r in roots if needs_answer(r)))

    @property
    def watched(self) -> list[RootStatus]:
        """The watched folders as last loaded."""
        return self.folders.roots

    # -- the tree and its selection ----------------------------------------------------------------
    def _key_at(self, index: QModelIndex) -> NodeKey:
        node = self.model.node(index)
        return node.key if node is not None else (ALL, None, None)

    def current_node(self) -> Node | None:
        """The node chosen in the tree (the current one when several are selected)."""
        return self.tree.current_node()

    def _remember_state(self) -> None:
        current = self.tree.currentIndex()
        if current.isValid():
            self._chosen_key = self._key_at(current)

    def _on_library_loaded(self) -> None:
        library = self.model.library
        self.count_label.setText(
            f"{plural(len(library.documents), 'document')} · "
            f"{plural(len(library.collections), 'collection')}"
            + (f" · {len(library.quarantine):,} quarantined" if library.quarantine else "")
        )
        for row, node in enumerate(self.model.group_nodes()):
            if node.key not in self._collapsed:  # new collections open expanded
                self.tree.expand(self.model.index(row, 0))
        index = QModelIndex()
        if self._pending_key is not None:
            index = self.model.index_of(self._pending_key)
            # Loads that started before the request (change-feed reloads of other changes, say) may arrive first
            # without the node; only a load that started after it can say the node is not there.
            if index.isValid() or self.model.load_shown > self._pending_after:
                self._pending_key = None
        wanted = self._chosen_key
        if not index.isValid() and wanted is not None:
            index = self.model.index_of(wanted)
            if not index.isValid() and wanted[2] is not None:
                index = self.model.index_of((*wanted[2], None))  # left its group: show the group
        if not index.isValid():
            index = self.model.group_index(ALL)
        self._select(index)

    def _select(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        if index.parent().isValid():
            self.tree.expand(index.parent())
        self.tree.setCurrentIndex(index)
        self.tree.scrollTo(index)
        self._show_node(self.model.node(index))

    def _on_node_chosen(self, _new: QItemSelection, _old: QItemSelection) -> None:
        self._show_node(self.current_node())

    def _show_node(self, node: Node | None) -> None:
        if node is None:
            self.panes.setCurrentIndex(PANE_NONE)
            return
        self._chosen_key = node.key
        if node.is_group:
            self.group_pane.show_group(node, self.model.children_of(node.kind, node.ident))
            self.panes.setCurrentIndex(PANE_GROUP)
        elif node.kind == DOCUMENT and isinstance(node.item, DocumentInfo):
            pane = self.document_pane
            shown = pane.tree.info if pane.tree is not None else None
            if pane.document_id != node.ident or (shown is not None and shown != node.item):
                pane.show_document(node.ident)  # new, or its status or summaries changed
            self.panes.setCurrentIndex(PANE_DOCUMENT)
        elif node.kind == QUARANTINED and isinstance(node.item, QuarantineEntry):
            self.quarantine_pane.show_entry(node.item)
            self.panes.setCurrentIndex(PANE_QUARANTINED)

    def select_node(self, key: NodeKey) -> None:
        """Choose the node with ``key`` (once the library has it)."""
        index = self.model.index_of(key)
        if index.isValid() and self.model.is_loaded:
            self._select(index)
        else:
            self._pending_key, self._pending_after = key, self.model.loads_started
            self.refresh()  # one load after this request (while one is in flight, the model queues another)

    def select_document(self, document_id: int) -> None:
        """Show a document (under "All documents")."""
        self.select_node((DOCUMENT, document_id, (ALL, None)))

    def show_span(self, span_id: int) -> None:
        """Show the document a span belongs to, with the span chosen in its section tree."""
        self._runner.read(
            lambda vault: vault.documents.span_source(span_id), self._span_found, on_error=self._span_missing
        )

    def _span_missing(self, error: BaseException) -> None:
        if isinstance(error, NotFound):  # deleted or read again since the link was shown
            self._show_status("That passage is no longer in the vault: its document was deleted or read again.")
            return
        self._runner.report(error)

    def _span_found(self, span: SpanSource) -> None:
        self.document_pane.focus_item(span.span_id)
        self.select_document(span.document_id)

    def select_collection(self, collection_id: int) -> None:
        """Show a collection."""
        self.select_node((COLLECTION, collection_id, None))

    def select_quarantined(self, quarantine_id: int) -> None:
        """Show a quarantined file."""
        self.select_node((QUARANTINED, quarantine_id, (QUARANTINE, None)))

    def _open_leaf(self, kind: str, ident: int) -> None:
        if kind == DOCUMENT:
            self.select_document(ident)
        else:
            self.select_quarantined(ident)

    # -- ingest ------------------------------------------------------------------------------------
    def choose_files(self) -> None:
        """Ask for files and ingest them."""
        paths, _filter = QFileDialog.getOpenFileNames(self, "Add documents", str(Path.home()))
        if paths:
            self.ingest_paths(paths)

    def choose_folder(self) -> None:
        """Ask for a folder and ingest what it holds (once; "Watch folder…" keeps it in step)."""
        path = QFileDialog.getExistingDirectory(self, "Add a folder's documents", str(Path.home()))
        if path:
            self.ingest_paths([path])

    def _on_files_dropped(self, paths: list[str], collection_id: int | None) -> None:
        self.ingest_paths(paths, collection_id)

    def ingest_paths(self, paths: Sequence[str | Path], collection_id: int | None = None) -> None:
        """Ingest files and folders (into a collection); waits its turn behind a running ingest."""
        if not self.ingest.submit(paths, collection_id) and self.ingest.running:
            self._show_status(f"Added to the queue: {plural(len(paths), 'item')}.")

    @property
    def task(self) -> PathIngest | None:
        """The running (or last) ingest."""
        return self.ingest.task

    @property
    def last_outcome(self) -> IngestOutcome | None:
        """How the last ingest ended."""
        return self.ingest.last_outcome

    def cancel_ingest(self) -> None:
        """Stop the running ingest after its current file (and drop the waiting ones)."""
        self.ingest.cancel()

    def _on_ingest_finished(self, outcome: IngestOutcome) -> None:
        self.ingest_panel.finish(outcome)
        self._show_status(outcome.summary)
        if outcome.document_ids:
            group = (COLLECTION, outcome.collection_id) if outcome.collection_id else (ALL, None)
            self.select_node((DOCUMENT, outcome.document_ids[0], group))

    # -- collections -------------------------------------------------------------------------------
    def ask_new_collection(self) -> None:
        """Ask for a name and create a collection."""
        name, ok = QInputDialog.getText(self, "New collection", "Name:")
        if ok and name.strip():
            self.create_collection(name)

    def create_collection(self, name: str) -> None:
        """Create a collection called ``name`` and show it."""
        self._runner.write(
            lambda vault: vault.collections.create(name),
            lambda collection: self.select_collection(collection.id),
        )

    def ask_rename_collection(self, collection_id: int) -> None:
        """Ask for a new name."""
        node = self.model.node(self.model.group_index(COLLECTION, collection_id))
        old = node.title if node is not None else ""
        name, ok = QInputDialog.getText(self, "Rename collection", "Name:", text=old)
        if ok and name.strip() and name.strip() != old:
            self.rename_collection(collection_id, name)

    def rename_collection(self, collection_id: int, name: str) -> None:
        """Rename a collection."""
        self._runner.write(
            lambda vault: vault.collections.rename(collection_id, name),
            lambda c: self._show_status(f"Collection renamed to “{c.name}”."),
        )

    def ask_delete_collection(self, collection_id: int) -> QMessageBox:
        """Ask (without blocking), then delete a collection (its documents stay); returns the question."""
        node = self.model.node(self.model.group_index(COLLECTION, collection_id))
        name = node.title if node is not None else "this collection"
        return self._ask(
            "Delete collection",
            f"Delete the collection “{name}”? Its documents stay in the vault.",
            lambda: self.delete_collection(collection_id),
        )

    def _ask(self, title: str, text: str, on_yes: Callable[[], None]) -> QMessageBox:
        """A window-modal Yes/Cancel question that runs ``on_yes`` on Yes.  It does not block: the
        change feed and running ingests keep the window current while it is open."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title,
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.buttonClicked.connect(
            lambda button: on_yes() if box.standardButton(button) == QMessageBox.StandardButton.Yes else None
        )
        box.finished.connect(box.deleteLater)
        self.question = box
        box.open()
        return box

    def delete_collection(self, collection_id: int) -> None:
        """Delete a collection; its documents stay."""
        self._runner.write(
            lambda vault: vault.collections.delete(collection_id),
            lambda _none: self._show_status("Collection deleted; its documents stay."),
        )

    def add_to_collection(self, collection_id: int, document_ids: Sequence[int]) -> None:
        """Add documents to a collection (dropped on it, or from the context menu)."""
        ids = list(document_ids)
        self._runner.write(
            lambda vault: vault.collections.add(collection_id, ids),
            lambda c: self._show_status(f"{plural(len(ids), 'document')} added to “{c.name}”."),
        )

    def remove_from_collection(self, collection_id: int, document_ids: Sequence[int]) -> None:
        """Take documents out of a collection (they stay in the vault)."""
        ids = list(document_ids)
        self._runner.write(
            lambda vault: vault.collections.remove(collection_id, ids),
            lambda c: self._show_status(f"{plural(len(ids), 'document')} removed from “{c.name}”."),
        )

    # -- documents and quarantine ------------------------------------------------------------------
    def ask_delete_documents(self, document_ids: Sequence[int]) -> QMessageBox:
        """Ask (without blocking), then delete documents for good; returns the question."""
        ids = list(document_ids)
        return self._ask(
            "Delete documents",
            f"Delete {plural(len(ids), 'document')} with their sections, spans and summaries? "
            "Files on disk are not touched.",
            lambda: self.delete_documents(ids),
        )

    def delete_documents(self, document_ids: Sequence[int]) -> None:
        """Delete documents (their files on disk stay)."""
        ids = list(document_ids)

        def op(vault: Vault) -> int:
            for document_id in ids:
                vault.documents.delete(document_id)
            return len(ids)

        self._runner.write(op, lambda n: self._show_status(f"{plural(n, 'document')} deleted."))

    def retry_quarantined(self, quarantine_id: int) -> None:
        """Parse a quarantined file again and show what came of it."""
        self.quarantine_pane.set_retrying()
        self._runner.write(
            lambda vault: vault.documents.retry(quarantine_id),
            self._retried,
            on_error=self._retry_failed,
        )

    def _retried(self, result: UploadResult) -> None:
        if result.document_id is not None:
            self._show_status(f"{result.name} was read this time ({result.status}).")
            self.select_document(result.document_id)
        else:
            self._show_status(f"{result.name} is still quarantined: {result.reason}")
            if result.quarantine_id is not None:
                self.select_quarantined(result.quarantine_id)

    def _retry_failed(self, error: BaseException) -> None:
        entry = self.quarantine_pane.entry
        if entry is not None:
            self.quarantine_pane.show_entry(entry)
        self._runner.report(error)
