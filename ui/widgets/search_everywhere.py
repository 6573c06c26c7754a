"""Search everywhere (Ctrl+K): one box that finds memories, people & topics, conversations and documents and
jumps to them.

Typing waits a moment, then one reader-pool query asks the engine for matching subjects (by name
and alias), memories (full-text), conversations (by title or id) and documents (by name); the hits drop down
under the box in a list sized to them (as wide as the longest hit needs, within the window; as tall as their
number, up to :data:`MAX_ROWS`), since the box itself sits in the narrow sidebar.  Choosing one emits
:attr:`SearchEverywhere.open_requested`, and the window opens the right view on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QCompleter, QLineEdit, QWidget

from engine import Vault
from engine.facts.api import FactFilter
from ui.format import one_line, plural, subject_label
from ui.ops import OpRunner
from ui.theme import themed_icon

TYPING_DELAY_MS = 200
SUBJECT_HITS = 6
FACT_HITS = 10
CONVERSATION_HITS = 5
DOCUMENT_HITS = 5
MAX_ROWS = 16
#: The widest the list of hits gets, as a share of the window's width.
MAX_WIDTH_SHARE = 0.8


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: what kind of object, its id, and two lines of text."""

    kind: str  # "subject", "fact", "conversation" or "document"
    object_id: int | str  # a conversation's id is a string
    title: str
    detail: str


def search_everything(vault: Vault, text: str) -> list[SearchHit]:
    """Subjects whose name or alias contains ``text``, then memories matching its words."""
    hits = [
        SearchHit(
            "subject",
            subject.id,
            subject_label(subject.name),
            f"{subject.kind} · {plural(subject.fact_count, 'memory', 'memories')}",
        )
        for subject in vault.subjects(q=text, limit=SUBJECT_HITS)
    ]
    if any(ch.isalnum() for ch in text):
        for fact in vault.facts.page(FactFilter(q=text), limit=FACT_HITS).facts:
            hits.append(SearchHit("fact", fact.id, fact.statement, f"memory · {fact.standing}"))
    for c in vault.conversations(q=text, limit=CONVERSATION_HITS):
        hits.append(
            SearchHit(
                "conversation",
                c.conversation_id,
                c.title or c.conversation_id,
                f"conversation · {plural(c.events, 'turn')}",
            )
        )
    for d in vault.documents(q=text, limit=DOCUMENT_HITS):
        hits.append(SearchHit("document", d.id, d.name, f"document · {d.status}"))
    return hits


class SearchEverywhere(QLineEdit):
    """The search box.

    Signals:
        open_requested(str, object): open this object (``"fact"`` or ``"subject"``, id).
        results_shown(int): the hits for the current text arrived (their number).
    """

    open_requested = Signal(str, object)
    results_shown = Signal(int)

    def __init__(self, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._generation = 0
        self._hits: list[SearchHit] = []
        self.setPlaceholderText("Search  (Ctrl+K)")
        self.setClearButtonEnabled(True)
        self.setAccessibleName("Search everywhere")
        self.setToolTip("Find memories and people & topics (Ctrl+K)")
        self.addAction(themed_icon("search", self.palette()), QLineEdit.ActionPosition.LeadingPosition)
        self._model = QStandardItemModel(self)
        self._completer = QCompleter(self)
        self._completer.setModel(self._model)
        self._completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self._completer.setWidget(self)
        self._completer.activated[QModelIndex].connect(self._on_activated)  # type: ignore[index]
        self._icons = {
            "subject": themed_icon("subjects", self.palette()),
            "fact": themed_icon("memories", self.palette()),
            "conversation": themed_icon("conversations", self.palette()),
            "document": themed_icon("documents", self.palette()),
        }
        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(TYPING_DELAY_MS)
        self._typing.timeout.connect(self.search_now)
        self.textEdited.connect(lambda _text: self._typing.start())

    @property
    def hits(self) -> tuple[SearchHit, ...]:
        """The results shown for the current text."""
        return tuple(self._hits)

    def focus_search(self) -> None:
        """Focus the box and select its text (Ctrl+K)."""
        self.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.selectAll()

    def search_now(self) -> None:
        """Search for the current text without waiting."""
        self._typing.stop()
        text = self.text().strip()
        self._generation += 1
        generation = self._generation
        if not text:
            self._show([], generation)
            return
        self._runner.read(
            lambda vault: search_everything(vault, text),
            lambda hits: self._show(hits, generation),
        )

    def open_hit(self, row: int) -> None:
        """Open the result in ``row`` (as if it were clicked)."""
        if not 0 <= row < len(self._hits):
            return
        hit = self._hits[row]
        self._hide_popup()
        self.clear()
        self._hits = []
        self._model.clear()
        self.open_requested.emit(hit.kind, hit.object_id)

    def popup_visible(self) -> bool:
        """True while the list of hits is open."""
        popup = self._completer.popup()
        return popup is not None and popup.isVisible()

    def _hide_popup(self) -> None:
        popup = self._completer.popup()
        if popup is not None:
            popup.hide()

    def _show(self, hits: Sequence[SearchHit], generation: int) -> None:
        if generation != self._generation:
            return
        self._hits = list(hits)
        self._model.clear()
        for hit in hits:
            text = f"{one_line(hit.title, 70)}  —  {hit.detail}"
            item = QStandardItem(self._icons[hit.kind], text)
            item.setToolTip(hit.title)
            self._model.appendRow(item)
        if hits and self.hasFocus():
            self._completer.setMaxVisibleItems(min(len(hits), MAX_ROWS))
            self._completer.complete(self.popup_rect())
        elif not hits:
            self._hide_popup()
        self.results_shown.emit(len(hits))

    def popup_rect(self) -> QRect:
        """Where the list of hits goes: under the box, as wide as the longest hit needs (never narrower than the
        box, never wider than :data:`MAX_WIDTH_SHARE` of the window)."""
        popup = self._completer.popup()
        metrics = popup.fontMetrics() if popup is not None else self.fontMetrics()
        longest = max(
            (metrics.horizontalAdvance(self._model.item(r).text()) for r in range(self._model.rowCount())), default=0
        )
        scroll = popup.verticalScrollBar().sizeHint().width() if popup is not None else 16
        wanted = longest + popup_icon_room(self) + scroll + 24
        window = self.window()
        ceiling = int(window.width() * MAX_WIDTH_SHARE) if window is not None else wanted
        return QRect(0, 0, max(self.width(), min(wanted, ceiling)), self.height())

    def _on_activated(self, index: QModelIndex) -> None:
        row = index.row()  # the list is unfiltered: its rows are the hits, in order
        if 0 <= row < len(self._hits):
            # The completer writes the item's text into the box right after this signal.
            QTimer.singleShot(0, lambda: self.open_hit(row))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter opens the first hit; Escape clears the box."""
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and self._hits and not self.popup_visible():
            self.open_hit(0)
            return
        if event.key() == Qt.Key.Key_Escape and self.text():
            self.clear()
            self._hits = []
            return
        super().keyPressEvent(event)


def popup_icon_room(widget: QWidget) -> int:
    """Room an item's icon takes in the list (the style's small icon and its margin)."""
    return widget.style().pixelMetric(widget.style().PixelMetric.PM_SmallIconSize) + 8
