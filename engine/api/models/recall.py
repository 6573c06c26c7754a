"""Models of recall (``POST /v6/recall``): the request and the context it answers.

They mirror :mod:`engine.recall.types` field by field: :class:`RecallBody` is a
:class:`~engine.recall.types.RecallRequest`, :class:`RecallOut` a
:class:`~engine.recall.types.RecallResult`.  The limits repeat the engine's own, so that
``/openapi.json`` states them and a bad field is a 400 naming it before the engine is asked.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.api.models.common import TIME_FORMATS, Id, RequestModel, ResponseModel, UserId
from engine.events import MAX_ID_CHARS
from engine.recall.types import RecallRequest, RecallResult

#: Longest query the engine accepts.
MAX_QUERY_CHARS = 8000
#: Blocks a recall may rank, and the range of the token budget of ``llm_context``.
MAX_LIMIT = 200
MIN_TOKEN_BUDGET = 100
MAX_TOKEN_BUDGET = 32_000

Mode = Literal["broad", "direct", "indirect"]
BlockKind = Literal["fact", "event", "conflict", "episode", "span", "understanding", "section", "document"]

_EVIDENCE_EXAMPLE: dict[str, Any] = {
    "text": "I moved to Lisbon last month",
    "source_kind": "event",
    "source_id": 4101,
    "at": "2026-03-01T09:30:00Z",
    "author": "user",
    "start": 0,
    "end": 28,
}
_BLOCK_EXAMPLE: dict[str, Any] = {
    "kind": "fact",
    "id": 5120,
    "content": "User lives in Lisbon",
    "score": 0.164,
    "source_ids": [5120, 4101],
    "evidence": [_EVIDENCE_EXAMPLE],
    "at": "2026-02-01T00:00:00Z",
    "channels": ["keyword", "predicate", "vector"],
    "meta": {"subject": "user", "predicate": "lives_in", "object": "Lisbon", "injected": True},
}
_TURN_EXAMPLE: dict[str, Any] = {
    "event_id": 4140,
    "role": "user",
    "author": None,
    "content": "Where should I go for dinner tonight?",
    "at": "2026-03-01T10:02:00Z",
    "status": "queued",
}
_ROUTING_EXAMPLE: dict[str, Any] = {
    "mode": "direct",
    "predicates": ["lives_in"],
    "subjects": ["user (vault owner)"],
    "channels": {
        "keyword": {"ran": True, "hits": 12, "ms": 1.9, "note": ""},
        "vector": {"ran": True, "hits": 30, "ms": 4.2, "note": ""},
    },
    "temporal_range": None,
    "strategy": "LOCAL",
    "used_queries": ["where do I live"],
    "engine": "rules",
    "degraded": False,
    "notes": [],
}
_RESULT_EXAMPLE: dict[str, Any] = {
    "llm_context": {
        "text": "Memory context (as of 2026-03-01; cite items by #id).\nFacts:\n- [#5120] User lives in Lisbon",
        "tokens": 24,
    },
    "answer_facts": [_BLOCK_EXAMPLE],
    "supporting_facts": [],
    "background_context": [],
    "blocks": [_BLOCK_EXAMPLE],
    "conversation_history": [_TURN_EXAMPLE],
    "working_memory": [],
    "documents": [],
    "routing": _ROUTING_EXAMPLE,
    "timings_ms": {
        "embed": 0.2,
        "analyse": 3.1,
        "queued": 0.0,
        "channels": 9.4,
        "fuse": 1.8,
        "assemble": 0.5,
        "total": 15.0,
    },
}
_COMPACT_EXAMPLE: dict[str, Any] = {
    "kind": "fact",
    "id": 5120,
    "content": "User lives in Lisbon",
    "score": 0.164,
    "at": "2026-02-01T00:00:00Z",
}
_ROUTING_SUMMARY_EXAMPLE: dict[str, Any] = {
    "mode": "direct",
    "strategy": "LOCAL",
    "subjects": ["user (vault owner)"],
    "predicates": ["lives_in"],
    "degraded": False,
    "notes": [],
}


class RecallBody(RequestModel):
    """What a chat client asks before calling its model: the conversation and its question."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"conversation_id": "chat-2026-03-01", "query": "Where do I live these days?"},
                {
                    "conversation_id": "chat-2026-03-01",
                    "query": "What does the handbook say about leave?",
                    "collection_id": 812,
                    "token_budget": 1500,
                },
            ]
        }
    )

    conversation_id: str = Field(
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="The chat asking; its recent turns and working memory join the context.",
    )
    query: str = Field(
        default="",
        max_length=MAX_QUERY_CHARS,
        description="The question or the latest user turn; empty: background and history only.",
    )
    user_id: UserId = "default"
    project_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="Only memories of this project (and those of no project).",
    )
    document_id: Id | None = Field(default=None, description="Answer from this document (the DOCUMENT strategy).")
    collection_id: Id | None = Field(default=None, description="Answer from the documents of this collection.")
    reference_time: datetime | None = Field(
        default=None,
        description=f"'Now' for the question ({TIME_FORMATS}); anchors 'last week'. Default: the current time.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LIMIT,
        description="Ranked blocks at most (default: recall.limit in settings).",
    )
    token_budget: int | None = Field(
        default=None,
        ge=MIN_TOKEN_BUDGET,
        le=MAX_TOKEN_BUDGET,
        description="Size of `llm_context.text` in tokens at most (default: settings).",
    )

    def to_request(self) -> RecallRequest:
        """The engine's :class:`~engine.recall.types.RecallRequest`."""
        return RecallRequest(
            conversation_id=self.conversation_id,
            query=self.query,
            user_id=self.user_id,
            project_id=self.project_id,
            document_id=self.document_id,
            collection_id=self.collection_id,
            reference_time=self.reference_time,
            limit=self.limit,
            token_budget=self.token_budget,
        )


class EvidenceOut(ResponseModel):
    """Where a block's content comes from: a verbatim quote and its source."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EVIDENCE_EXAMPLE]})

    text: str = Field(description="The quote.")
    source_kind: str = Field(description="event, span or manual.")
    source_id: int | None = Field(description="Global id of the event or span quoted.")
    at: datetime | None = Field(description="When it was said or written (UTC).")
    author: str | None = Field(description="Who said it (a role or a speaker's name).")
    start: int | None = Field(description="Start offset of the quote in its source.")
    end: int | None = Field(description="End offset of the quote in its source.")


class BlockOut(ResponseModel):
    """One ranked item of context."""

    model_config = ConfigDict(json_schema_extra={"examples": [_BLOCK_EXAMPLE]})

    kind: BlockKind = Field(description="What the block is.")
    id: int = Field(description="Global id of the item (`GET /v6/objects/{id}`).")
    content: str = Field(description="The text shown to the model.")
    score: float = Field(description="Fused ranking score (higher ranks first).")
    source_ids: list[int] = Field(description="Ids of the item and what it was drawn from.")
    evidence: list[EvidenceOut] = Field(description="Verbatim quotes backing the content.")
    at: datetime | None = Field(description="When the content became true or was said (UTC).")
    channels: list[str] = Field(description="Retrieval channels that found it.")
    meta: dict[str, Any] = Field(
        description="Kind-specific details: subject/predicate/standing of a fact, document and "
        "section of a span, `injected` when the block is in `llm_context.text`."
    )


class TurnOut(ResponseModel):
    """A turn of the conversation history."""

    model_config = ConfigDict(json_schema_extra={"examples": [_TURN_EXAMPLE]})

    event_id: int = Field(description="The event's global id.")
    role: str = Field(description="user, assistant, system or tool.")
    author: str | None = Field(description="The speaker's name, in multi-party chats.")
    content: str = Field(description="The turn's text.")
    at: datetime = Field(description="When it was said (UTC).")
    status: str = Field(description="The event's enrichment status.")


class ChannelReportOut(ResponseModel):
    """One retrieval channel's contribution."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"ran": True, "hits": 12, "ms": 1.9, "note": ""}]})

    ran: bool = Field(description="Whether the channel ran for this query.")
    hits: int = Field(description="Items it found.")
    ms: float = Field(description="Time it took, in milliseconds.")
    note: str = Field(description="Why it did not run, or what limited it.")


class TimeWindowOut(ResponseModel):
    """A time range named by the query."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "start": "2026-02-23T00:00:00Z",
                    "end": "2026-03-02T00:00:00Z",
                    "expression": "last week",
                }
            ]
        }
    )

    start: datetime = Field(description="Start of the range (UTC).")
    end: datetime = Field(description="End of the range (UTC).")
    expression: str = Field(description="The words of the query that named it.")


class RoutingOut(ResponseModel):
    """How the query was understood and served, for debugging a surprising answer."""

    model_config = ConfigDict(json_schema_extra={"examples": [_ROUTING_EXAMPLE]})

    mode: Mode = Field(description="direct (a named slot), indirect (a description) or broad (no focus).")
    predicates: list[str] = Field(description="Catalog predicates the query asks about.")
    subjects: list[str] = Field(description="Subjects the query names.")
    channels: dict[str, ChannelReportOut] = Field(description="Each retrieval channel's report.")
    temporal_range: TimeWindowOut | None = Field(description="The time range the query names.")
    strategy: str = Field(description="LOCAL (memories), or SECTION, DOCUMENT, COLLECTION for document questions.")
    used_queries: list[str] = Field(description="The query texts the channels searched.")
    engine: str = Field(description="What analysed the query: rules, or the local model.")
    degraded: bool = Field(
        description="True when a part could not run as designed (a model down, a document "
        "still being distilled); the answer is still usable."
    )
    notes: list[str] = Field(description="What degraded, in words.")


class LLMContextOut(ResponseModel):
    """The prompt-ready context."""

    model_config = ConfigDict(json_schema_extra={"examples": [_RESULT_EXAMPLE["llm_context"]]})

    text: str = Field(description="Text to put in front of the model; items cite `#id`.")
    tokens: int = Field(description="Its size in tokens (estimated).")
    items: list[tuple[str, int]] = Field(
        default_factory=list,
        description="The items the text carries, as `[kind, id]` in text order: what the model is shown.",
    )


class RecallOut(ResponseModel):
    """The context for the client's next model call: prompt-ready text and the ranked blocks."""

    model_config = ConfigDict(json_schema_extra={"examples": [_RESULT_EXAMPLE]})

    llm_context: LLMContextOut = Field(description="Prompt-ready text within the token budget.")
    answer_facts: list[BlockOut] = Field(description="Trusted facts that answer the query directly.")
    supporting_facts: list[BlockOut] = Field(description="Further facts that bear on the query.")
    background_context: list[BlockOut] = Field(description="Hot facts about the owner, recalled for every query.")
    blocks: list[BlockOut] = Field(
        description="Every block, in the order the context presents it: a DOCUMENT question's distillations first, "
        "then the "
        "ranked blocks best first (at most `limit`), then context added around them (the episode around a hit, "
        "open conflicts to ask about)."
    )
    conversation_history: list[TurnOut] = Field(description="The conversation's recent turns, oldest first.")
    working_memory: list[BlockOut] = Field(description="Facts learned in this conversation, newest first.")
    documents: list[BlockOut] = Field(
        description="Document blocks (sections, spans, distillations) for document questions."
    )
    routing: RoutingOut = Field(description="How the query was understood and served.")
    timings_ms: dict[str, float] = Field(
        description="Time per recall stage, in milliseconds: embed, analyse, queued (waiting for its turn behind "
        "other recalls), channels, fuse, assemble, and the total."
    )


class CompactBlockOut(ResponseModel):
    """A ranked block without its evidence (the MCP tool's shorter answer)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_COMPACT_EXAMPLE]})

    kind: BlockKind = Field(description="What the block is.")
    id: int = Field(description="Global id (get_object looks it up).")
    content: str = Field(description="The text.")
    score: float = Field(description="Ranking score (higher ranks first).")
    at: datetime | None = Field(description="When it became true or was said (UTC).")


class RoutingSummaryOut(ResponseModel):
    """The essentials of the routing (the MCP tool's shorter answer)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_ROUTING_SUMMARY_EXAMPLE]})

    mode: Mode = Field(description="direct, indirect or broad.")
    strategy: str = Field(description="LOCAL, SECTION, DOCUMENT or COLLECTION.")
    subjects: list[str] = Field(description="Subjects the query names.")
    predicates: list[str] = Field(description="Predicates the query asks about.")
    degraded: bool = Field(description="True when a part could not run as designed.")
    notes: list[str] = Field(description="What degraded, in words.")


class RecallContextOut(ResponseModel):
    """What the MCP tool `recall_context` answers."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "llm_context": _RESULT_EXAMPLE["llm_context"],
                    "blocks": [_COMPACT_EXAMPLE],
                    "routing": _ROUTING_SUMMARY_EXAMPLE,
                }
            ]
        }
    )

    llm_context: LLMContextOut = Field(description="Prompt-ready text; items cite `#id`.")
    blocks: list[CompactBlockOut] = Field(
        description="Every block, in the order the context presents it: a DOCUMENT question's distillations first, "
        "then the "
        "ranked blocks best first (at most `limit`), then context added around them (the episode around a hit, "
        "open conflicts to ask about)."
    )
    routing: RoutingSummaryOut = Field(description="How the query was understood and served.")

    @classmethod
    def of_result(cls, result: RecallResult) -> RecallContextOut:
        """The short answer for one recall result."""
        routing = result.routing
        return cls(
            llm_context=LLMContextOut.of(result.llm_context),
            blocks=[CompactBlockOut.of(block) for block in result.blocks],
            routing=RoutingSummaryOut(
                mode=routing.mode,
                strategy=routing.strategy,
                subjects=list(routing.subjects),
                predicates=list(routing.predicates),
                degraded=routing.degraded,
                notes=list(routing.notes),
            ),
        )
