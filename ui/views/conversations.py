"""The Conversations view: chats and their turns, episodes with summaries, and transcript import.

Choosing a conversation loads its turns (the last :data:`TURN_LIMIT`) and episodes; choosing a turn
shows it in full with the memories it produced.  "Import transcript…" runs the import on the
runner's writer with a progress bar and Cancel (:class:`~ui.import_task.TranscriptImport`);
:meth:`ConversationsView.import_path` starts one without the file dialog.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QItemSelection, QModelIndex, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.changes import Change
from engine.conversations import ImportProgress
from engine.episodes import Episode
from engine.events import ConversationInfo, Event
from engine.facts.api import STATUSES
from engine.facts.model import Fact
from ui.context import ViewContext
from ui.format import local_time, one_line, percent, plural, subject_label
from ui.import_task import ImportOutcome, TranscriptImport
from ui.models.rows import Column, RowTableModel
from ui.throttle import Throttle
from ui.widgets.evidence import speaker_label
from ui.widgets.labels import heading_label, secondary_label
from ui.widgets.tables import EmptyAware, select_only_row, simple_table

LIST_LIMIT = 1000
TURN_LIMIT = 1000
REFRESH_INTERVAL_MS = 500
TRANSCRIPT_FILTER = "Transcripts (*.json *.jsonl *.ndjson *.txt *.log *.md);;All files (*)"

CONVERSATION_COLUMNS: tuple[Column[ConversationInfo], ...] = (
    Column(
        "Conversation",
        lambda c: c.title or c.conversation_id,
        lambda c: ("With " + ", ".join(c.authors) + " · " if c.authors else "") + c.conversation_id,
    ),
    Column("Turns", lambda c: f"{c.events:,}", align_right=True),
    Column("Last active", lambda c: local_time(c.last_at), lambda c: f"Since {local_time(c.first_at)}"),
)
TURN_COLUMNS: tuple[Column[Event], ...] = (
    Column("When", lambda e: local_time(e.occurred_at)),
    Column("Who", speaker_label, lambda e: f"{e.role} · {e.source}"),
    Column("Said", lambda e: one_line(e.content, 200), lambda e: one_line(e.content, 600)),
)
FACT_COLUMNS: tuple[Column[Fact], ...] = (
    Column("About", lambda f: subject_label(f.subject)),
    Column("Predicate", lambda f: f.predicate),
    Column("Value", lambda f: f.object_text, lambda f: f.statement),
    Column("Standing", lambda f: f.standing),
    Column("Status", lambda f: f.status),
    Column("Confidence", lambda f: percent(f.confidence), align_right=True),
)
EPISODE_COLUMNS: tuple[Column[Episode], ...] = (
    Column("From", lambda e: local_time(e.started_at)),
    Column("To", lambda e: local_time(e.ended_at)),
    Column("Turns", lambda e: str(e.turn_count), align_right=True),
    Column(
        "Summary",
        lambda e: e.summary or ("(open: summarised when it closes)" if e.status == "open" else ""),
        lambda e: e.summary,
    ),
)


def load_conversation(vault: Vault, conversation_id: str) -> tuple[list[Event], list[Episode]]:
    """A conversation's turns (the last :data:`TURN_LIMIT`) and its episodes (reader pool)."""
    return (
        vault.conversations.events(conversation_id, limit=TURN_LIMIT),
        vault.conversations.episodes(conversation_id),
    )


def load_turn_facts(vault: Vault, event_id: int) -> list[Fact]:
    """Every memory a turn produced, whatever became of it since."""
    return vault.facts(event_id=event_id, status=STATUSES, limit=200)


class ConversationsView(QWidget):
    """Conversations, a conversation's turns and episodes, a turn's memories, and import.

    Signals:
        navigate_requested(str, object): open a memory (``"fact"``, id).
    """

    navigate_requested = Signal(str, object)

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._show_status = context.show_status
        self._started = False
        self._stale = False
        self._list_loading = False
        self._conversation_generation = 0
        self._turn_generation = 0
        self._pending_event: int | None = None
        self._pending_conversation: str | None = None
        self.conversation_id: str | None = None
        self.task: TranscriptImport | None = None
        self.last_outcome: ImportOutcome | None = None
        self.conversations = RowTableModel(
            CONVERSATION_COLUMNS, key=lambda c: (c.user_id, c.conversation_id), parent=self
        )
        self.turns = RowTableModel(TURN_COLUMNS, key=lambda e: e.id, parent=self)
        self.turn_facts = RowTableModel(FACT_COLUMNS, key=lambda f: f.id, parent=self)
        self.episodes = RowTableModel(EPISODE_COLUMNS, key=lambda e: e.id, parent=self)
        self._list_throttle = Throttle(REFRESH_INTERVAL_MS, self.refresh, self)
        self._turns_throttle = Throttle(REFRESH_INTERVAL_MS, self._reload_conversation, self)
        self._facts_throttle = Throttle(REFRESH_INTERVAL_MS, self._reload_turn_facts, self)

        self.count_label = secondary_label("")
        self.import_button = QPushButton("Import transcript…")
        self.import_button.setToolTip(
            "ChatGPT or Claude exports, JSON Lines of {role, content, time}, or plain-text logs"
        )
        self.import_button.clicked.connect(self.choose_file)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress_label = QLabel("")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_import)
        self.summary_label = secondary_label("")
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.hide()

        self.list_view = simple_table(self.conversations, stretch=0, name="Conversations", fit=(1, 2))
        self.list_view.selectionModel().selectionChanged.connect(self._on_conversation_chosen)
        self.turns_view = simple_table(self.turns, stretch=2, name="Turns", fit=(0, 1))
        self.turns_view.selectionModel().selectionChanged.connect(self._on_turn_chosen)
        self.turn_text = QTextBrowser()
        self.turn_text.setAccessibleName("Selected turn")
        self.facts_view = simple_table(self.turn_facts, stretch=2, name="Memories from this turn", fit=(0, 1, 3, 4, 5))
        self.facts_view.doubleClicked.connect(self._open_fact)
        self.facts_caption = secondary_label("")
        self.episodes_view = simple_table(self.episodes, stretch=3, name="Episodes", fit=(0, 1, 2))
        self.episodes_view.setWordWrap(True)
        self.conversation_title = heading_label("", scale=1.15)
        self.conversation_note = secondary_label("")

        turn_page = QSplitter(Qt.Orientation.Vertical)
        turn_page.setChildrenCollapsible(False)
        facts_panel = QWidget()
        facts_column = QVBoxLayout(facts_panel)
        facts_column.setContentsMargins(0, 4, 0, 0)
        facts_column.addWidget(self.facts_caption)
        facts_column.addWidget(self.facts_view, 1)
        turn_page.addWidget(self.turn_text)
        turn_page.addWidget(facts_panel)
        turn_page.setSizes([90, 160])
        self.tabs = QTabWidget()
        self.tabs.addTab(turn_page, "Selected turn")
        self.tabs.addTab(
            EmptyAware(
                self.episodes_view,
                "No episodes yet: a conversation is cut into episodes as it goes on.",
            ),
            "Episodes",
        )

        right = QWidget()
        right_box = QVBoxLayout(right)
        right_box.setContentsMargins(8, 0, 0, 0)
        right_box.addWidget(self.conversation_title)
        right_box.addWidget(self.conversation_note)
        detail = QSplitter(Qt.Orientation.Vertical)
        detail.setChildrenCollapsible(False)
        detail.addWidget(self.turns_view)
        detail.addWidget(self.tabs)
        detail.setSizes([330, 250])
        right_box.addWidget(detail, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.list_view)
        splitter.addWidget(right)
        splitter.setSizes([330, 610])

        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress_label)
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        self._progress_widgets = (self.progress_label, self.progress, self.cancel_button)
        for widget in self._progress_widgets:
            widget.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        header = QHBoxLayout()
        header.addWidget(heading_label("Conversations", scale=1.45))
        header.addWidget(self.count_label, 1, Qt.AlignmentFlag.AlignBottom)
        header.addWidget(self.import_button)
        layout.addLayout(header)
        layout.addLayout(progress_row)
        layout.addWidget(self.summary_label)
        layout.addWidget(splitter, 1)
        context.runner.changes_arrived.connect(self._on_changes)
        self._show_turn(None)

    # -- the list ----------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Load on first show; catch up on changes that arrived while hidden."""
        super().showEvent(event)
        if not self._started or self._stale:
            self.refresh()

    def refresh(self) -> None:
        """Load the conversation list again."""
        self._started = True
        self._stale = False
        if self._list_loading:
            self._list_throttle.trigger()
            return
        self._list_loading = True
        self._runner.read(
            lambda vault: vault.conversations(limit=LIST_LIMIT),
            self._list_arrived,
            on_error=self._list_failed,
        )

    def _list_arrived(self, conversations: list[ConversationInfo]) -> None:
        self._list_loading = False
        chosen = self._pending_conversation or self.conversation_id
        self._pending_conversation = None
        self.conversations.set_rows(conversations)
        self.count_label.setText(plural(len(conversations), "conversation"))
        row = self._row_of_conversation(chosen) if chosen else None
        if row is not None:
            if not self.list_view.selectionModel().isRowSelected(row):
                select_only_row(self.list_view, row)
        elif conversations and self.conversation_id is None:
            select_only_row(self.list_view, 0)
        if not conversations:
            self.conversation_title.setText("No conversations yet")
            self.conversation_note.setText(
                "Chat clients add turns through the endpoint; older chats can be imported with “Import transcript…”."
            )

    def _list_failed(self, error: BaseException) -> None:
        self._list_loading = False
        self._runner.report(error)

    def _row_of_conversation(self, conversation_id: str | None) -> int | None:
        for row, info in enumerate(self.conversations.rows()):
            if info.conversation_id == conversation_id:
                return row
        return None

    def select_conversation(self, conversation_id: str) -> None:
        """Show ``conversation_id`` (once the list has it)."""
        row = self._row_of_conversation(conversation_id)
        if row is None:
            self._pending_conversation = conversation_id
            self.refresh()
        else:
            select_only_row(self.list_view, row)

    def show_event(self, event_id: int) -> None:
        """Open the conversation of ``event_id`` with that turn selected."""
        self._pending_event = event_id
        self._runner.read(
            lambda vault: vault.conversations.event(event_id),
            lambda event: self._event_found(event),
        )

    def _event_found(self, event: Event) -> None:
        shown = self.conversation_id == event.conversation_id
        if shown and self.turns.row_of(event.id) is not None:
            self._select_pending_turn()
        else:
            self.select_conversation(event.conversation_id)

    # -- one conversation --------------------------------------------------------------------------
    def _on_conversation_chosen(self, _new: QItemSelection, _old: QItemSelection) -> None:
        rows = self.list_view.selectionModel().selectedRows()
        if not rows:
            return
        info = self.conversations.row_item(rows[0].row())
        if info.conversation_id != self.conversation_id:
            self.conversation_id = info.conversation_id
            self.turns.set_rows([])
            self.episodes.set_rows([])
            self._show_turn(None)
        self.conversation_title.setText(info.title or info.conversation_id)
        self.conversation_title.setToolTip(info.conversation_id)
        people = f" · with {', '.join(info.authors)}" if info.authors else ""
        self.conversation_note.setText(
            f"{plural(info.events, 'turn')} · {local_time(info.first_at)} – {local_time(info.last_at)}{people}"
        )
        self._reload_conversation()

    def _reload_conversation(self) -> None:
        conversation_id = self.conversation_id
        if conversation_id is None:
            return
        self._conversation_generation += 1
        generation = self._conversation_generation
        self._runner.read(
            lambda vault: load_conversation(vault, conversation_id),
            lambda result: self._conversation_arrived(generation, result),
        )

    def _conversation_arrived(self, generation: int, result: tuple[list[Event], list[Episode]]) -> None:
        if generation != self._conversation_generation:
            return
        turns, episodes = result
        self.turns.set_rows(turns)
        self.episodes.set_rows(episodes)
        self.episodes_view.resizeRowsToContents()
        self.tabs.setTabText(1, f"Episodes ({len(episodes)})")
        if self._pending_event is not None:
            self._select_pending_turn()
        elif not self.turns_view.selectionModel().hasSelection() and turns:
            select_only_row(self.turns_view, len(turns) - 1)
            self.turns_view.scrollToBottom()

    def _select_pending_turn(self) -> None:
        event_id, self._pending_event = self._pending_event, None
        row = self.turns.row_of(event_id) if event_id is not None else None
        if row is not None:
            select_only_row(self.turns_view, row)
            self.turns_view.scrollTo(self.turns.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)

    # -- one turn ----------------------------------------------------------------------------------
    def current_turn(self) -> Event | None:
        """The turn shown below the list."""
        rows = self.turns_view.selectionModel().selectedRows()
        return self.turns.row_item(rows[0].row()) if rows else None

    def _on_turn_chosen(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._show_turn(self.current_turn())

    def _show_turn(self, event: Event | None) -> None:
        self._turn_generation += 1
        if event is None:
            self.turn_text.setPlainText("Choose a turn to read it in full and see what it taught.")
            self.turn_facts.set_rows([])
            self.facts_caption.setText("")
            return
        header = f"{speaker_label(event)} · {local_time(event.occurred_at, seconds=True)}"
        self.turn_text.setPlainText(f"{header}\n\n{event.content}")
        self.turn_facts.set_rows([])  # the previous turn's memories are not this one's
        self.facts_caption.setText("Looking for memories from this turn…")
        self._reload_turn_facts()

    def _reload_turn_facts(self) -> None:
        event = self.current_turn()
        if event is None:
            return
        generation = self._turn_generation
        event_id = event.id
        status = event.status
        self._runner.read(
            lambda vault: load_turn_facts(vault, event_id),
            lambda facts: self._turn_facts_arrived(generation, status, facts),
        )

    def _turn_facts_arrived(self, generation: int, status: str, facts: list[Fact]) -> None:
        if generation != self._turn_generation:
            return
        self.turn_facts.set_rows(facts)
        if facts:
            self.facts_caption.setText(
                f"{plural(len(facts), 'memory', 'memories')} from this turn (double-click to open)"
            )
        else:
            self.facts_caption.setText(
                {
                    "queued": "Not processed yet: memories appear once the turn is enriched.",
                    "blocked": "Blocked by the privacy firewall: nothing was learned from it.",
                    "skipped": "System messages are not processed for memory.",
                }.get(status, "No memories came from this turn.")
            )

    def _open_fact(self, index: QModelIndex) -> None:
        fact = self.turn_facts.row_item(index.row())
        if isinstance(fact, Fact):
            self.navigate_requested.emit("fact", fact.id)

    # -- live updates ------------------------------------------------------------------------------
    def _on_changes(self, changes: Sequence[Change]) -> None:
        if not self._started:
            return
        shown = self.conversation_id
        list_changed = turns_changed = facts_changed = False
        for change in changes:
            conversation = change.data.get("conversation_id")
            if change.type == "event.created":
                list_changed = True
                turns_changed = turns_changed or conversation == shown
            elif change.type == "episode.created":
                turns_changed = turns_changed or conversation == shown
            elif change.type.startswith("memory.") and conversation == shown:
                facts_changed = True
            elif change.type == "forget.completed":
                list_changed = turns_changed = True
        if not self.isVisible():
            self._stale = self._stale or list_changed or turns_changed
            return
        if list_changed:
            self._list_throttle.trigger()
        if turns_changed:
            self._turns_throttle.trigger()
        if facts_changed or turns_changed:
            self._facts_throttle.trigger()

    # -- import ------------------------------------------------------------------------------------
    def choose_file(self) -> None:
        """Ask for a transcript file and import it."""
        path, _filter = QFileDialog.getOpenFileName(
            self, "Import a chat transcript", str(Path.home()), TRANSCRIPT_FILTER
        )
        if path:
            self.import_path(Path(path))

    def import_path(self, path: Path) -> TranscriptImport | None:
        """Import the transcript at ``path`` with progress; None while another import runs."""
        if self.task is not None and self.task.running:
            self._show_status("An import is already running.")
            return None
        task = TranscriptImport(self._runner, path, self)
        task.progressed.connect(self._on_progress)
        task.finished.connect(self._on_import_finished)
        task.failed.connect(self._on_import_failed)
        self.task = task
        self.summary_label.hide()
        self.progress.setRange(0, 0)  # busy until the file has been read and counted
        self.progress_label.setText(f"Reading {path.name}…")
        self.cancel_button.setEnabled(True)
        self.import_button.setEnabled(False)
        for widget in self._progress_widgets:
            widget.show()
        task.start()
        return task

    def cancel_import(self) -> None:
        """Stop the running import after its current conversation."""
        if self.task is not None and self.task.running:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self.progress_label.setText("Cancelling after this conversation…")

    def _on_progress(self, progress: ImportProgress) -> None:
        total = max(progress.conversations_total, 1)
        self.progress.setRange(0, total)
        self.progress.setValue(progress.conversations_done)
        self.progress.setFormat(f"%v of {progress.conversations_total:,} conversations")
        current = f": {one_line(progress.current, 60)}" if progress.current else ""
        if not (self.task and self.task.cancel_requested):
            self.progress_label.setText(f"Importing{current}")

    def _on_import_finished(self, outcome: ImportOutcome) -> None:
        self.last_outcome = outcome
        self._end_import(outcome.summary)
        errors = outcome.last.errors if outcome.last else ()
        self.summary_label.setToolTip("\n".join(errors))
        if errors:
            self.summary_label.setText(outcome.summary + "\nFirst error: " + one_line(errors[0], 300))
        self._show_status(outcome.summary)
        self.refresh()

    def _on_import_failed(self, error: BaseException) -> None:
        message = getattr(error, "message", str(error))
        self._end_import(f"Import failed: {message}")

    def _end_import(self, summary: str) -> None:
        for widget in self._progress_widgets:
            widget.hide()
        self.import_button.setEnabled(True)
        self.summary_label.setText(summary)
        self.summary_label.setToolTip("")
        self.summary_label.show()
