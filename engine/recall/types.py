"""The recall request and its answer (DESIGN §5 and §8): typed, frozen, JSON-friendly."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Mode = Literal["broad", "direct", "indirect"]
BlockKind = Literal["fact", "event", "conflict", "episode", "span", "understanding", "section", "document"]


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """What a chat client asks for before calling its model."""

    conversation_id: str
    query: str = ""
    user_id: str = "default"
    project_id: str | None = None
    document_id: int | None = None
    collection_id: int | None = None
    reference_time: datetime | str | float | None = None
    limit: int | None = None
    token_budget: int | None = None


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where a block's content comes from: a verbatim quote and its source."""

    text: str
    source_kind: str  # event | span | manual
    source_id: int | None
    at: datetime | None = None
    author: str | None = None
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True, slots=True)
class Block:
    """One ranked item of context."""

    kind: BlockKind
    id: int
    content: str
    score: float
    source_ids: tuple[int, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    at: datetime | None = None
    channels: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChannelReport:
    """One channel's contribution: whether it ran, how many hits, how long it took."""

    ran: bool
    hits: int
    ms: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A resolved time range of the query."""

    start: datetime
    end: datetime
    expression: str


@dataclass(frozen=True, slots=True)
class Routing:
    """How the query was understood and served (for debugging a surprising answer)."""

    mode: Mode
    predicates: tuple[str, ...]
    subjects: tuple[str, ...]
    channels: dict[str, ChannelReport]
    temporal_range: TimeWindow | None
    strategy: str
    used_queries: tuple[str, ...]
    engine: str
    degraded: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LLMContext:
    """The prompt-ready text, its size in tokens (estimated), and the items it carries.

    ``items`` names each item line of the text as ``(kind, id)`` in text order, so that what the model was shown can
    be judged item by item (the LoCoMo benchmark's context precision) without parsing the text.
    """

    text: str
    tokens: int
    items: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Turn:
    """A turn of the conversation history."""

    event_id: int
    role: str
    author: str | None
    content: str
    at: datetime
    status: str


@dataclass(frozen=True, slots=True)
class RecallResult:
    """The answer to a recall request."""

    llm_context: LLMContext
    answer_facts: tuple[Block, ...]
    supporting_facts: tuple[Block, ...]
    background_context: tuple[Block, ...]
    blocks: tuple[Block, ...]
    conversation_history: tuple[Turn, ...]
    working_memory: tuple[Block, ...]
    documents: tuple[Block, ...]
    routing: Routing
    timings_ms: dict[str, float]
