"""The main window: navigation, the chosen view, a message bar and a status bar.

The views come from :data:`ui.views.VIEWS` (one line each).  Geometry and the last view shown are
restored from QSettings.  Colours come from the system palette; the navigation icons are re-tinted
when the palette changes, so a switch between light and dark themes keeps them visible.

Views talk to the window through optional, duck-typed members: a ``badge_changed(int)`` signal puts
a count on the view's navigation item; a ``navigate_requested(kind, id)`` signal opens another view
on an object (see :data:`OPEN_ROUTES`); an ``undo()`` method is what Ctrl+Z calls while the view is
shown.

Keyboard: Ctrl+K focuses the search-everywhere box, Ctrl+1 … Ctrl+9 switch views in navigation
order (the View menu's actions), Ctrl+Z undoes the current view's last undoable action, Ctrl+Q quits.

The menu bar: File (import transcripts, add documents or a folder, export the vault, restore one, backups, forget,
quit),
View (each view, search everywhere) and Help (keyboard shortcuts, About with the version and the vault's path).
Export, restore and backups are :mod:`ui.vault_file`'s.

Files and folders dragged from the desktop onto any part of the window are handed to the view
registered under :data:`FILE_DROP_VIEW` (its ``ingest_paths(paths)``), which is then shown.  Text
fields would otherwise take such a drop as text, so the window claims file drops first, except on
widgets that handle files themselves (those with the ``acceptsFileDrops`` property, such as the
documents tree, where a drop on a collection ingests into it).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import (
    QByteArray,
    QEvent,
    QMimeData,
    QObject,
    QSize,
    Qt,
    QTimer,
    Signal,
    SignalInstance,
)
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QKeyEvent,
    QKeySequence,
    QShortcut,
)
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ui.context import FILE_DROPS_PROPERTY, EndpointInfo, EndpointState, ViewContext, ViewSpec
from ui.forget_dialog import ForgetDialog
from ui.ops import OpRunner
from ui.theme import fixed_icon, stylesheet, themed_icon
from ui.ui_state import ui_settings
from ui.vault_file import VaultFiles
from ui.views import VIEWS
from ui.widgets.message_bar import MessageBar
from ui.widgets.navigation import BadgeDelegate
from ui.widgets.search_everywhere import SearchEverywhere

DEFAULT_SIZE = QSize(1120, 780)
STATUS_TIMEOUT_MS = 8000
BUSY_DELAY_MS = 400  # quick queries finish before this: no flicker of "Working…" on every refresh
NAV_ICON_SIZE = 20

SEARCH_KEYS = "Ctrl+K"
BADGE_ROOM = 30  # width kept free for a count badge on a navigation item
VIEW_SHORTCUTS = 9

OPEN_ROUTES = {
    "fact": ("memories", "show_fact"),
    "subject": ("subjects", "show_subject"),
    "event": ("conversations", "show_event"),
    "conflict": ("conflicts", "select_conflict"),
    "document": ("documents", "select_document"),
    "conversation": ("conversations", "select_conversation"),
    "span": ("documents", "show_span"),
}
"""Object kind → (view key, the view's method that shows such an object by id)."""

FILE_DROP_VIEW = "documents"
"""The view that ingests files dropped on the window."""
_DRAG_EVENTS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop)
_FILTERED_EVENTS = frozenset((*_DRAG_EVENTS, QEvent.Type.ShortcutOverride))

_GEOMETRY_KEY = "main_window/geometry"
_VIEW_KEY = "main_window/view"


class MainWindow(QMainWindow):
    """Cairn's window.  Emits :attr:`closed` after it was closed and its state saved."""

    closed = Signal()
    hidden_to_tray = Signal()

    def __init__(
        self,
        runner: OpRunner,
        *,
        endpoint: EndpointInfo,
        views: Sequence[ViewSpec] = VIEWS,
        title: str = "Cairn",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._runner = runner
        self._specs = tuple(views)
        self._views: dict[str, QWidget] = {}
        self._close_to_tray = False
        self.last_dialog: QMessageBox | None = None  # the last Help box shown (non-modal)
        self.last_forget: ForgetDialog | None = None
        self.setWindowTitle(title)
        self.setWindowIcon(fixed_icon("cairn"))
        self.setStyleSheet(stylesheet())
        self.setMinimumSize(760, 520)
        self.setAcceptDrops(True)

        self.navigation = QListWidget()
        self.navigation.setObjectName("navigation")
        self.navigation.setIconSize(QSize(NAV_ICON_SIZE, NAV_ICON_SIZE))
        self.navigation.setUniformItemSizes(True)
        self.navigation.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.navigation.setAccessibleName("Views")
        self._badges = BadgeDelegate(self.navigation)
        self.navigation.setItemDelegate(self._badges)
        self.search = SearchEverywhere(runner)
        self.search.open_requested.connect(self.open_object)
        self.stack = QStackedWidget()
        self.message_bar = MessageBar()

        self.endpoint = EndpointState(endpoint, self)
        context = ViewContext(runner=runner, endpoint=self.endpoint, show_status=self.show_status)
        for spec in self._specs:
            view = spec.factory(context)
            self._views[spec.key] = view
            self.stack.addWidget(view)
            item = QListWidgetItem(spec.title)
            item.setData(Qt.ItemDataRole.UserRole, spec.key)
            item.setToolTip(spec.tooltip)
            self.navigation.addItem(item)
            self._connect_view(spec.key, view)
        self._tint_navigation_icons()
        self._sidebar_width = self._navigation_width()
        self.navigation.currentRowChanged.connect(self.stack.setCurrentIndex)

        self._build_layout()
        self._build_status_bar()
        runner.user_error.connect(self.show_problem)
        runner.bug_reported.connect(self._on_bug_reported)
        runner.busy_changed.connect(self._on_busy_changed)
        runner.set_dialog_parent(self)
        self._build_shortcuts()
        self._build_menus()
        self._restore_state()
        # The views list, not the search box, starts with the focus: arrow keys move between views, and the
        # search box shows its hint rather than a blinking caret until Ctrl+K or a click.
        self.navigation.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- building ----------------------------------------------------------------------------------
    def _build_layout(self) -> None:
        bar_holder = QVBoxLayout()
        bar_holder.setContentsMargins(12, 10, 12, 0)
        bar_holder.addWidget(self.message_bar)
        right = QVBoxLayout()
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(0)
        right.addLayout(bar_holder)
        right.addWidget(self.stack, 1)
        side = QWidget()
        side.setObjectName("sidebar")
        side.setFixedWidth(self._sidebar_width)
        side_box = QVBoxLayout(side)
        side_box.setContentsMargins(6, 8, 0, 0)
        side_box.setSpacing(4)
        search_row = QHBoxLayout()
        search_row.setContentsMargins(0, 0, 6, 0)
        search_row.addWidget(self.search)
        side_box.addLayout(search_row)
        side_box.addWidget(self.navigation, 1)
        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(side)
        row.addLayout(right, 1)
        self.setCentralWidget(central)

    def _build_status_bar(self) -> None:
        self._busy_label = QLabel("Working…")
        self._busy_label.hide()
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_DELAY_MS)
        self._busy_timer.timeout.connect(self._busy_label.show)
        self.endpoint_status = QLabel()
        self._show_endpoint(self.endpoint.info)
        self.endpoint.changed.connect(self._show_endpoint)
        status = self.statusBar()
        status.addPermanentWidget(self._busy_label)
        status.addPermanentWidget(self.endpoint_status)

    def _show_endpoint(self, endpoint: EndpointInfo) -> None:
        self.endpoint_status.setText(endpoint.status_text)
        if endpoint.starting:
            tip = "Local apps can connect once it has started"
        else:
            tip = endpoint.problem or "Local apps connect here with the token"
        self.endpoint_status.setToolTip(tip)

    def _navigation_width(self) -> int:
        metrics = self.navigation.fontMetrics()
        widest = max((metrics.horizontalAdvance(spec.title) for spec in self._specs), default=0)
        # icon + the item padding of the style sheet + room for a scroll bar should views ever
        # outgrow the height
        return max(180, widest + NAV_ICON_SIZE + 72 + BADGE_ROOM)

    def _build_shortcuts(self) -> None:
        self._shortcuts: list[QShortcut] = []

        def add(sequence: QKeySequence | str, slot: object) -> None:
            shortcut = QShortcut(QKeySequence(sequence), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(slot)
            self._shortcuts.append(shortcut)

        add(SEARCH_KEYS, self.search.focus_search)
        # Text fields on Linux read Ctrl+K as "delete to the end of the line" and would swallow
        # it: the window claims that one key combination first, wherever the focus is.
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)
        # A focused text field keeps Ctrl+Z for its own text: it claims the key first.
        add(QKeySequence(QKeySequence.StandardKey.Undo), self.undo)

    def _build_menus(self) -> None:
        """File, View and Help (see the module docstring); each action is in :attr:`actions` by a short key."""
        self.files = VaultFiles(self, self._runner, self.show_status)
        self.files.quit_requested.connect(self.quit)
        self.menu_actions: dict[str, QAction] = {}
        bar = self.menuBar()

        def act(menu_key: str, key: str, text: str, slot: object, shortcut: str = "", tip: str = "") -> None:
            action = QAction(text, self)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
                action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            if tip:
                action.setStatusTip(tip)
            action.triggered.connect(slot)
            menus[menu_key].addAction(action)
            self.menu_actions[key] = action

        menus = {"file": bar.addMenu("&File"), "view": bar.addMenu("&View"), "help": bar.addMenu("&Help")}
        act("file", "import", "Import transcripts…", lambda: self._view_call("conversations", "choose_file"), "Ctrl+I")
        act("file", "add_documents", "Add documents…", lambda: self._view_call("documents", "choose_files"), "Ctrl+O")
        act("file", "add_folder", "Add a folder…", lambda: self._view_call("documents", "choose_folder"))
        menus["file"].addSeparator()
        act(
            "file",
            "export",
            "Export vault…",
            self.files.choose_export,
            "Ctrl+Shift+E",
            "Write the whole vault to one file in an open format",
        )
        act(
            "file",
            "restore",
            "Restore from a file…",
            lambda: self.files.choose_restore(),
            tip="Make a new vault from an export or a backup",
        )
        act("file", "backups", "Backups…", self.files.show_backups)
        act(
            "file",
            "forget",
            "Forget…",
            lambda: self.forget_dialog(),
            "Ctrl+Shift+Del",
            "Forget a conversation, a document, a project, a time range or a user, with a preview",
        )
        menus["file"].addSeparator()
        act("file", "quit", "Quit", self.quit, "Ctrl+Q", "Stop Cairn: the vault and its endpoint")
        for row, spec in enumerate(self._specs):
            keys = f"Ctrl+{row + 1}" if row < VIEW_SHORTCUTS else ""
            act("view", f"view:{spec.key}", spec.title, lambda _c=False, r=row: self.navigation.setCurrentRow(r), keys)
        menus["view"].addSeparator()
        act("view", "search", f"Search everywhere ({SEARCH_KEYS})", self.search.focus_search)
        act("help", "shortcuts", "Keyboard shortcuts", self.show_shortcuts)
        act("help", "about", "About Cairn", self.show_about)

    def forget_dialog(self, kind: str | None = None, ident: object = None) -> ForgetDialog:
        """The Forget dialog (non-modal), with ``kind``/``ident`` chosen when given."""
        dialog = ForgetDialog(self._runner, self)
        dialog.forgotten.connect(
            lambda receipt: self.show_status(f"Forgotten (receipt {receipt.receipt_id}); Activity keeps the receipt.")
        )
        if kind is not None:
            dialog.choose(kind, ident)
        dialog.show()
        self.last_forget = dialog
        return dialog

    def _view_call(self, key: str, method: str) -> None:
        if key in self._views:
            self.show_view(key)
            getattr(self._views[key], method)()

    def quit(self) -> None:
        """Quit Cairn (not to the tray): the window closes for good, which ends the app."""
        self.set_close_to_tray(False)
        self.close()

    def shortcut_lines(self) -> list[str]:
        """Every keyboard shortcut of the window, as shown by Help → Keyboard shortcuts."""
        lines = [f"{SEARCH_KEYS}\tSearch everywhere", "Ctrl+Z\tUndo the last change in this view"]
        for action in self.menu_actions.values():
            if not action.shortcut().isEmpty():
                text = action.text().replace("…", "")
                lines.append(f"{action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)}\t{text}")
        return lines

    def show_shortcuts(self) -> QMessageBox:
        """A non-modal list of the keyboard shortcuts."""
        box = QMessageBox(QMessageBox.Icon.NoIcon, "Keyboard shortcuts", "\n".join(self.shortcut_lines()))
        box.setParent(self, box.windowFlags())
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        box.show()
        self.last_dialog = box
        return box

    def show_about(self) -> None:
        """Cairn's version and the vault in use (read off the GUI thread)."""
        from engine.version import __version__

        def shown(where: tuple[str, str]) -> None:
            path, vault_id = where
            box = QMessageBox(
                QMessageBox.Icon.Information,
                "About Cairn",
                f"Cairn {__version__} — a private, local memory vault.\n\nVault: {path}\nVault id: {vault_id}",
                QMessageBox.StandardButton.Close,
                self,
            )
            box.setWindowModality(Qt.WindowModality.NonModal)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
            box.show()
            self.last_dialog = box

        self._runner.read(lambda vault: (str(vault.paths.root), vault.vault_id()), shown)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Keep Ctrl+K for search everywhere even while a text field has the focus, and take file
        drops away from text fields (see the module docstring).

        This sees every event of the application, so it asks for the event's type once and lets
        everything else through at once."""
        kind = event.type()
        if kind not in _FILTERED_EVENTS:
            return False
        if (
            kind in _DRAG_EVENTS
            and isinstance(watched, QWidget)
            and watched is not self
            and watched.window() is self
            and isinstance(event, QDropEvent)
            and local_paths(event.mimeData())
            and not _handles_file_drops(watched)
        ):
            self._take_file_drag(event)
            return True
        if (
            kind == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and isinstance(watched, QWidget)
            and watched.window() is self
            and QKeySequence(event.keyCombination()) == QKeySequence(SEARCH_KEYS)
        ):
            return True  # not accepted: the shortcut map, not the text field, gets the key
        return super().eventFilter(watched, event)

    # -- file drops ------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept files and folders from the desktop."""
        self._take_file_drag(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        """Keep accepting them wherever they move over the window."""
        self._take_file_drag(event)

    def dropEvent(self, event: QDropEvent) -> None:
        """Ingest the dropped files and folders."""
        self._take_file_drag(event)

    def _take_file_drag(self, event: QDragMoveEvent | QDropEvent) -> None:
        paths = local_paths(event.mimeData())
        if not paths or FILE_DROP_VIEW not in self._views:
            event.ignore()
            return
        # Always a copy: a file manager deletes what it moved once the drop is accepted.
        event.setDropAction(Qt.DropAction.CopyAction)
        event.accept()
        if event.type() == QEvent.Type.Drop:
            self.ingest_files(paths)

    def ingest_files(self, paths: Sequence[str]) -> bool:
        """Show the documents view and ingest ``paths`` there; False when there is no such view."""
        view = self._views.get(FILE_DROP_VIEW)
        ingest = getattr(view, "ingest_paths", None)
        if view is None or not callable(ingest):
            return False
        self.show_view(FILE_DROP_VIEW)
        ingest(list(paths))
        return True

    def _connect_view(self, key: str, view: QWidget) -> None:
        badge = getattr(view, "badge_changed", None)
        if isinstance(badge, SignalInstance):
            badge.connect(lambda count, k=key: self.set_badge(k, int(count)))
        navigate = getattr(view, "navigate_requested", None)
        if isinstance(navigate, SignalInstance):
            navigate.connect(self.open_object)

    def _tint_navigation_icons(self) -> None:
        for row, spec in enumerate(self._specs):
            self.navigation.item(row).setIcon(themed_icon(spec.icon, self.palette()))

    # -- public ------------------------------------------------------------------------------------
    @property
    def runner(self) -> OpRunner:
        """The runner every view uses."""
        return self._runner

    def navigation_titles(self) -> list[str]:
        """The labels in the navigation, top to bottom."""
        return [self.navigation.item(row).text() for row in range(self.navigation.count())]

    def view(self, key: str) -> QWidget:
        """The view registered under ``key``.

        Raises:
            KeyError: no such view.
        """
        return self._views[key]

    def current_view_key(self) -> str:
        """The key of the view shown."""
        return self._specs[max(0, self.navigation.currentRow())].key

    def show_view(self, key: str) -> None:
        """Switch to the view registered under ``key``."""
        self.navigation.setCurrentRow([spec.key for spec in self._specs].index(key))

    def navigation_badge(self, key: str) -> int:
        """The count shown on ``key``'s navigation item (0: no badge)."""
        return self._badges.count([spec.key for spec in self._specs].index(key))

    def set_badge(self, key: str, count: int) -> None:
        """Show ``count`` on ``key``'s navigation item (0 hides the badge)."""
        row = [spec.key for spec in self._specs].index(key)
        self._badges.set_count(row, count)
        title = self._specs[row].title
        item = self.navigation.item(row)
        item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{title}, {count}" if count else title)
        self.navigation.viewport().update()

    def open_object(self, kind: str, ident: object) -> bool:
        """Show the view for objects of ``kind`` and open ``ident`` there; False if none can."""
        route = OPEN_ROUTES.get(kind)
        if route is None or route[0] not in self._views:
            return False
        key, method = route
        self.show_view(key)
        getattr(self._views[key], method)(ident)
        return True

    def undo(self) -> bool:
        """Undo the shown view's last undoable action (Ctrl+Z); False when there is none."""
        undo = getattr(self.stack.currentWidget(), "undo", None)
        if callable(undo) and undo():
            return True
        self.show_status("Nothing to undo here.")
        return False

    def set_close_to_tray(self, enabled: bool) -> None:
        """With ``enabled``, closing the window hides it (the tray icon keeps the app running)."""
        self._close_to_tray = enabled

    def set_endpoint(self, endpoint: EndpointInfo) -> None:
        """Show the endpoint's new state (its address once it has started, or why it could not)."""
        self.endpoint.set_info(endpoint)

    def show_status(self, text: str) -> None:
        """A transient line in the status bar."""
        self.statusBar().showMessage(text, STATUS_TIMEOUT_MS)

    def show_problem(self, message: str, fix: str = "") -> None:
        """Show a problem the person can fix in the message bar (non-modal)."""
        self.message_bar.show_problem(message, fix)
        self.show_status(message)

    # -- events ------------------------------------------------------------------------------------
    def _on_bug_reported(self, summary: str, _details: str) -> None:
        self.show_status(f"Unexpected error: {summary}")

    def _on_busy_changed(self, busy: bool) -> None:
        if busy:
            self._busy_timer.start()
        else:
            self._busy_timer.stop()
            self._busy_label.hide()

    def changeEvent(self, event: QEvent) -> None:
        """Re-tint icons when the palette changes (a light/dark theme switch)."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and self._views:
            self._tint_navigation_icons()
        super().changeEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Save geometry and the current view, then announce the close (or hide to the tray)."""
        self._save_state()
        if self._close_to_tray:
            event.ignore()
            self.hide()
            self.hidden_to_tray.emit()
            return
        super().closeEvent(event)
        if event.isAccepted():
            app = QApplication.instance()
            if app is not None:
                app.removeEventFilter(self)
            self.closed.emit()

    # -- state -------------------------------------------------------------------------------------
    def _restore_state(self) -> None:
        settings = ui_settings()
        geometry = settings.value(_GEOMETRY_KEY)
        if not (isinstance(geometry, QByteArray) and not geometry.isEmpty() and self.restoreGeometry(geometry)):
            self.resize(self._default_size())
        keys = [spec.key for spec in self._specs]
        saved = settings.value(_VIEW_KEY, "")
        self.navigation.setCurrentRow(keys.index(saved) if saved in keys else 0)

    def _default_size(self) -> QSize:
        """:data:`DEFAULT_SIZE`, shrunk to fit a small screen."""
        screen = self.screen()
        if screen is None:
            return DEFAULT_SIZE
        return DEFAULT_SIZE.boundedTo(screen.availableGeometry().size())

    def _save_state(self) -> None:
        settings = ui_settings()
        settings.setValue(_GEOMETRY_KEY, self.saveGeometry())
        if self._specs:
            settings.setValue(_VIEW_KEY, self.current_view_key())
        settings.sync()


def local_paths(data: QMimeData | None) -> list[str]:
    """The local files and folders a drag carries (empty for anything else)."""
    if data is None or not data.hasUrls():
        return []
    return [url.toLocalFile() for url in data.urls() if url.isLocalFile() and url.toLocalFile()]


def _handles_file_drops(widget: QWidget) -> bool:
    """True when ``widget`` or one of its parents takes file drops itself."""
    current: QWidget | None = widget
    while current is not None:
        if current.property(FILE_DROPS_PROPERTY):
            return True
        if current.isWindow():
            return False
        current = current.parentWidget()
    return False
