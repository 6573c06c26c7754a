"""The Ask view: a recall playground that shows exactly what a chat client would receive.

Pick a conversation (one the vault knows, or type any id), write a query, optionally limit it to a
document or a collection and set the token budget.  The result shows ``llm_context.text`` as the
client receives it (monospace, selectable, with Copy), every block with its part, kind, score,
channels and content, and the routing (mode, predicates, subjects, channels with hits and time,
strategy, time range, degraded).  Recall runs on the reader pool; it records access like any
recall, so asking here warms the facts it finds, as a chat client's question would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontDatabase, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.changes import Change
from engine.documents.model import Collection, DocumentInfo
from engine.events import ConversationInfo
from engine.recall.types import Block, RecallRequest, RecallResult
from ui.context import ViewContext
from ui.format import one_line, plural
from ui.models.rows import Column, RowTableModel
from ui.throttle import Throttle
from ui.widgets.labels import heading_label, secondary_label
from ui.widgets.routing_panel import RoutingPanel
from ui.widgets.tables import EmptyAware, simple_table

CONVERSATION_LIMIT = 200
DOCUMENT_LIMIT = 500
REFRESH_INTERVAL_MS = 1000
MIN_BUDGET, MAX_BUDGET = 100, 32_000
DEFAULT_USER = "default"
FREE_ID = "playground"
"""The conversation asked for when the vault has none yet (any id works)."""
COPIED_MS = 1500


@dataclass(frozen=True, slots=True)
class BlockRow:
    """A block and the part of the answer it belongs to."""

    part: str
    block: Block


@dataclass(frozen=True, slots=True)
class Choices:
    """What the pickers offer."""

    conversations: tuple[ConversationInfo, ...]
    collections: tuple[Collection, ...]
    documents: tuple[DocumentInfo, ...]
    token_budget: int


def load_choices(vault: Vault) -> Choices:
    """Conversations, collections, documents and the default budget (reader pool)."""
    return Choices(
        tuple(vault.conversations(limit=CONVERSATION_LIMIT)),
        tuple(vault.collections()),
        tuple(vault.documents(limit=DOCUMENT_LIMIT)),
        vault.settings.recall.token_budget,
    )


def block_rows(result: RecallResult) -> list[BlockRow]:
    """Background first, then the ranked blocks (answers marked), then working memory."""
    answer = {(b.kind, b.id) for b in result.answer_facts}
    supporting = {(b.kind, b.id) for b in result.supporting_facts}
    rows = [BlockRow("background", b) for b in result.background_context]
    for block in result.blocks:
        key = (block.kind, block.id)
        if key in answer:
            part = "answer"
        elif key in supporting:
            part = "supporting"
        elif block.kind in ("span", "section", "document"):
            part = "document"
        else:
            part = block.kind if block.kind == "conflict" else "ranked"
        rows.append(BlockRow(part, block))
    rows += [BlockRow("working memory", b) for b in result.working_memory]
    return rows


def _block_tooltip(row: BlockRow) -> str:
    block = row.block
    lines = [f"{block.kind} #{block.id} · score {block.score:.4f}", one_line(block.content, 600)]
    for evidence in block.evidence[:3]:
        lines.append(f"“{one_line(evidence.text, 200)}” ({evidence.source_kind} {evidence.source_id})")
    return "\n".join(lines)


BLOCK_COLUMNS: tuple[Column[BlockRow], ...] = (
    Column("Part", lambda r: r.part),
    Column("Kind", lambda r: r.block.kind, lambda r: f"{r.block.kind} #{r.block.id}"),
    Column("Score", lambda r: f"{r.block.score:.3f}", align_right=True),
    Column("Channels", lambda r: ", ".join(r.block.channels)),
    Column("Content", lambda r: one_line(r.block.content, 200), _block_tooltip),
)


class AskView(QWidget):
    """Query, conversation, scope and budget in; context text, blocks and routing out."""

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._show_status = context.show_status
        self._started = False
        self._stale = False
        self._budget_set = False
        self._generation = 0
        self._conversations: list[ConversationInfo] = []
        self._scopes: list[tuple[str, int | None]] = [("vault", None)]
        self.result: RecallResult | None = None
        self.running = False

        self.conversation = QComboBox()
        self.conversation.setEditable(True)
        self.conversation.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.conversation.setMinimumContentsLength(18)
        self.conversation.setToolTip("A conversation of the vault, or type any id")
        line = self.conversation.lineEdit()
        if line is not None:
            line.setPlaceholderText("conversation id")
        self.conversation.setAccessibleName("Conversation")
        self.scope = QComboBox()
        self.scope.addItem("Whole vault")
        self.scope.setMinimumContentsLength(22)
        self.scope.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.scope.setAccessibleName("Document or collection")
        self.scope.setToolTip("Limit document recall to one document or collection")
        self.budget = QSpinBox()
        self.budget.setRange(MIN_BUDGET, MAX_BUDGET)
        self.budget.setSingleStep(100)
        self.budget.setValue(1500)
        self.budget.setSuffix(" tokens")
        self.budget.setAccessibleName("Token budget")
        self.query = QLineEdit()
        self.query.setPlaceholderText("What would the chat client ask? e.g. “Where do I live?”")
        self.query.setAccessibleName("Query")
        self.query.setClearButtonEnabled(True)
        self.query.returnPressed.connect(self.run)
        self.ask_button = QPushButton("Recall")
        self.ask_button.setDefault(True)
        self.ask_button.clicked.connect(self.run)
        self.summary = secondary_label("Ask something to see the context a chat client would get.")

        self.context_text = QPlainTextEdit()
        self.context_text.setObjectName("recallContext")
        self.context_text.setReadOnly(True)
        self.context_text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.context_text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.context_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.context_text.setAccessibleName("Context text for the model")
        self.context_text.setPlaceholderText("llm_context.text appears here.")
        self.tokens_label = secondary_label("")
        self.tokens_label.setWordWrap(False)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the context text exactly as shown")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_context)
        self._copied_timer = QTimer(self)
        self._copied_timer.setSingleShot(True)
        self._copied_timer.setInterval(COPIED_MS)
        self._copied_timer.timeout.connect(lambda: self.copy_button.setText("Copy"))

        self.blocks = RowTableModel(BLOCK_COLUMNS, key=lambda r: (r.part, r.block.kind, r.block.id), parent=self)
        self.block_table = simple_table(self.blocks, stretch=4, name="Blocks", fit=(0, 1, 2, 3))
        self.blocks_caption = heading_label("Blocks", scale=1.0)
        self.routing = RoutingPanel()
        self._choices_throttle = Throttle(REFRESH_INTERVAL_MS, self.refresh_choices, self)
        self._build_layout()
        context.runner.changes_arrived.connect(self._on_changes)

    def _build_layout(self) -> None:
        form = QGridLayout()
        form.setHorizontalSpacing(8)
        form.addWidget(QLabel("Conversation"), 0, 0)
        form.addWidget(self.conversation, 0, 1)
        form.addWidget(QLabel("Documents"), 0, 2)
        form.addWidget(self.scope, 0, 3)
        form.addWidget(QLabel("Budget"), 0, 4)
        form.addWidget(self.budget, 0, 5)
        form.addWidget(QLabel("Query"), 1, 0)
        form.addWidget(self.query, 1, 1, 1, 4)
        form.addWidget(self.ask_button, 1, 5)
        form.setColumnStretch(1, 2)
        form.setColumnStretch(3, 2)

        context_box = QWidget()
        context_column = QVBoxLayout(context_box)
        context_column.setContentsMargins(0, 0, 0, 0)
        context_head = QHBoxLayout()
        context_head.addWidget(heading_label("What the model receives", scale=1.0))
        context_head.addWidget(self.tokens_label, 1, Qt.AlignmentFlag.AlignBottom)
        context_head.addWidget(self.copy_button)
        context_column.addLayout(context_head)
        context_column.addWidget(self.context_text, 1)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.setChildrenCollapsible(False)
        top.addWidget(context_box)
        top.addWidget(self.routing)
        top.setSizes([560, 380])
        blocks_box = QWidget()
        blocks_column = QVBoxLayout(blocks_box)
        blocks_column.setContentsMargins(0, 6, 0, 0)
        blocks_column.addWidget(self.blocks_caption)
        blocks_column.addWidget(EmptyAware(self.block_table, "No blocks yet: run a recall above."), 1)
        body = QSplitter(Qt.Orientation.Vertical)
        body.setChildrenCollapsible(False)
        body.addWidget(top)
        body.addWidget(blocks_box)
        body.setSizes([450, 190])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.addWidget(heading_label("Ask", scale=1.45))
        layout.addWidget(
            secondary_label(
                "Try a recall the way a chat client makes one before calling its model, and see "
                "what it gets back and why."
            )
        )
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addWidget(body, 1)

    # -- the pickers -------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Fill the pickers on first show; catch up on changes made while hidden."""
        super().showEvent(event)
        if not self._started or self._stale:
            self.refresh_choices()

    def refresh_choices(self) -> None:
        """Load the conversations, collections and documents the pickers offer."""
        self._started = True
        self._stale = False
        self._runner.read(load_choices, self._choices_arrived)

    @property
    def choices_loaded(self) -> bool:
        """True once the pickers were filled."""
        return self._budget_set

    def _choices_arrived(self, choices: Choices) -> None:
        typed = self.conversation.currentText()
        self._conversations = list(choices.conversations)
        self.conversation.blockSignals(True)
        self.conversation.clear()
        for info in self._conversations:
            self.conversation.addItem(info.conversation_id)
            self.conversation.setItemData(
                self.conversation.count() - 1,
                f"{plural(info.events, 'turn')}" + (f" · {', '.join(info.authors)}" if info.authors else ""),
                Qt.ItemDataRole.ToolTipRole,
            )
        self.conversation.setEditText(
            typed or (self._conversations[0].conversation_id if self._conversations else FREE_ID)
        )
        self.conversation.blockSignals(False)
        chosen = self._scopes[self.scope.currentIndex()] if self.scope.currentIndex() >= 0 else None
        self._scopes = [("vault", None)]
        self.scope.blockSignals(True)
        self.scope.clear()
        self.scope.addItem("Whole vault")
        for collection in choices.collections:
            self._scopes.append(("collection", collection.id))
            self.scope.addItem(f"Collection: {collection.name} ({collection.documents})")
        for document in choices.documents:
            self._scopes.append(("document", document.id))
            self.scope.addItem(f"Document: {document.name}")
        self.scope.setCurrentIndex(self._scopes.index(chosen) if chosen in self._scopes else 0)
        self.scope.blockSignals(False)
        if not self._budget_set:
            self._budget_set = True
            self.budget.setValue(choices.token_budget)

    def set_scope(self, kind: str, ident: int | None) -> bool:
        """Choose the whole vault (``"vault"``), a ``"collection"`` or a ``"document"``."""
        key = (kind, ident)
        if key not in self._scopes:
            return False
        self.scope.setCurrentIndex(self._scopes.index(key))
        return True

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if not self._started:
            return
        if any(c.type in ("event.created", "collection.changed") or c.type.startswith("document.") for c in changes):
            if self.isVisible():
                self._choices_throttle.trigger()
            else:
                self._stale = True

    # -- recall ------------------------------------------------------------------------------------
    def request(self) -> RecallRequest:
        """The recall request the form describes."""
        conversation = self.conversation.currentText().strip()
        user = next(
            (c.user_id for c in self._conversations if c.conversation_id == conversation),
            DEFAULT_USER,
        )
        kind, ident = self._scopes[max(0, self.scope.currentIndex())]
        return RecallRequest(
            conversation_id=conversation,
            query=self.query.text().strip(),
            user_id=user,
            document_id=ident if kind == "document" else None,
            collection_id=ident if kind == "collection" else None,
            token_budget=self.budget.value(),
        )

    def ask(self, query: str, conversation_id: str | None = None) -> None:
        """Fill in ``query`` (and the conversation) and run the recall."""
        if conversation_id is not None:
            self.conversation.setEditText(conversation_id)
        self.query.setText(query)
        self.run()

    def run(self) -> None:
        """Run the recall the form describes."""
        request = self.request()
        if not request.conversation_id:
            self._show_status("Choose a conversation or type an id: recall is made for one.")
            self.conversation.setFocus()
            return
        self._generation += 1
        generation = self._generation
        self.running = True
        self.ask_button.setEnabled(False)
        self.summary.setText("Recalling…")
        self._runner.read(
            lambda vault: vault.recall(request),
            lambda result: self._arrived(generation, request, result),
            on_error=lambda error: self._failed(generation, error),
        )

    def _arrived(self, generation: int, request: RecallRequest, result: RecallResult) -> None:
        if generation != self._generation:
            return
        self.running = False
        self.ask_button.setEnabled(True)
        self.result = result
        self.context_text.setPlainText(result.llm_context.text)
        self.copy_button.setEnabled(bool(result.llm_context.text))
        budget = request.token_budget or 0
        self.tokens_label.setText(f"≈ {result.llm_context.tokens:,} of {budget:,} tokens")
        rows = block_rows(result)
        self.blocks.set_rows(rows)
        self.blocks_caption.setText(f"Blocks ({len(rows)})")
        self.routing.show_result(result)
        total = result.timings_ms.get("total")
        took = f" in {total:.0f} ms" if total is not None else ""
        routing = result.routing
        degraded = " · degraded" if routing.degraded else ""
        self.summary.setText(
            f"Recalled{took} for “{request.conversation_id}”: {routing.mode} query, "
            f"{routing.strategy} strategy, {plural(len(rows), 'block')}{degraded}."
        )

    def _failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation:
            return
        self.running = False
        self.ask_button.setEnabled(True)
        self.summary.setText(f"Recall failed: {getattr(error, 'message', error)}")
        self._runner.report(error)

    def copy_context(self) -> None:
        """Put the context text on the clipboard."""
        QGuiApplication.clipboard().setText(self.context_text.toPlainText())
        self.copy_button.setText("Copied")
        self._copied_timer.start()
        self._show_status("Context text copied.")
