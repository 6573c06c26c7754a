"""Models of events and conversations: ingest (single and batch), extract, conversations, episodes.

The field limits repeat the engine's own (``engine.events``) so that ``/openapi.json`` states them;
the engine still validates everything itself, and a test keeps the two in step.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.api.models.common import TIME_FORMATS, RequestModel, ResponseModel, UserId
from engine.events import MAX_CONTENT_CHARS, MAX_ID_CHARS, EventIn

Role = Literal["user", "assistant", "system", "tool"]
EventType = Literal["message", "tool_call", "app_event", "observation"]
IngestStatus = Literal["queued", "duplicate", "blocked", "skipped"]

#: Events accepted in one batch request (one write transaction).
MAX_BATCH_EVENTS = 1000

_EVENT_EXAMPLE: dict[str, Any] = {
    "id": 4101,
    "user_id": "default",
    "project_id": None,
    "conversation_id": "chat-2026-03-01",
    "type": "message",
    "role": "user",
    "author": None,
    "content": "I moved to Lisbon last month and I work as a nurse now.",
    "occurred_at": "2026-03-01T09:30:00Z",
    "valid_time": None,
    "ingested_at": "2026-03-01T09:30:00.120000Z",
    "metadata": {},
    "source": "api",
    "external_id": None,
    "status": "enriched",
    "episode_id": 4100,
}
_EPISODE_EXAMPLE: dict[str, Any] = {
    "id": 4100,
    "user_id": "default",
    "conversation_id": "chat-2026-03-01",
    "started_at": "2026-03-01T09:30:00Z",
    "ended_at": "2026-03-01T10:02:00Z",
    "turn_count": 12,
    "summary": "2026-03-01: user: I moved to Lisbon last month and I work as a nurse now.",
    "status": "summarized",
    "summarizer": "extractive",
    "first_event_id": 4101,
    "last_event_id": 4140,
}

_CONVERSATION_EXAMPLE: dict[str, Any] = {
    "conversation_id": "chat-2026-03-01",
    "title": "Moving to Lisbon",
    "user_id": "default",
    "events": 12,
    "first_at": "2026-03-01T09:30:00Z",
    "last_at": "2026-03-01T10:02:00Z",
    "authors": [],
}

_STATUS_HELP = (
    "queued: stored, enrichment queued · duplicate: already stored, the existing id is returned · "
    "blocked: stored but withheld from memory by the privacy firewall · skipped: stored, not "
    "processed for memory (system messages)"
)


class EventBody(RequestModel):
    """One event to remember: a chat turn, a tool call, an app event or an observation."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "conversation_id": "chat-2026-03-01",
                    "role": "user",
                    "content": "I moved to Lisbon last month and I work as a nurse now.",
                    "occurred_at": "2026-03-01T09:30:00Z",
                }
            ]
        }
    )

    conversation_id: str = Field(
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="The chat this event belongs to; groups events into episodes and history.",
    )
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS, description="The text of the event.")
    role: Role = Field(default="user", description="Who produced it; system messages are not learned.")
    type: EventType = Field(default="message", description="What kind of event it is.")
    occurred_at: datetime | None = Field(default=None, description=f"When it happened ({TIME_FORMATS}); default: now.")
    valid_time: datetime | None = Field(
        default=None,
        description=f"When the content became true in the world, if different ({TIME_FORMATS}).",
    )
    author: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="The speaker's name in multi-party transcripts; facts are then about them.",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Free-form JSON kept with the event (at most 32 KiB)."
    )
    user_id: UserId = "default"
    project_id: str | None = Field(
        default=None, min_length=1, max_length=MAX_ID_CHARS, description="Optional project scope."
    )
    external_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="The client's own id for the event; re-sending the same id is a no-op.",
    )

    def to_event(self, source: str) -> EventIn:
        """The engine's :class:`~engine.events.EventIn`, stamped with where it came from, and with its arrival time
        when the client gave no ``occurred_at`` (as the vault would stamp it; done here, the event need not be
        copied to be stamped later)."""
        return EventIn(
            conversation_id=self.conversation_id,
            content=self.content,
            role=self.role,
            type=self.type,
            occurred_at=self.occurred_at if self.occurred_at is not None else time.time(),
            valid_time=self.valid_time,
            author=self.author,
            metadata=dict(self.metadata),
            user_id=self.user_id,
            project_id=self.project_id,
            external_id=self.external_id,
            source=source,
        )


class IngestAck(ResponseModel):
    """The acknowledgement of one event: it is committed to disk when this answer is sent."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"event_id": 4101, "status": "queued"}]})

    event_id: int = Field(description="The event's global id (`GET /v6/objects/{id}`).")
    status: IngestStatus = Field(description=_STATUS_HELP)


class BatchBody(RequestModel):
    """Several events stored in one transaction: all of them, or (on any invalid event) none."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "events": [
                        {"conversation_id": "chat-7", "role": "user", "content": "My name is Ana."},
                        {"conversation_id": "chat-7", "role": "assistant", "content": "Hi Ana!"},
                    ]
                }
            ]
        }
    )

    events: list[EventBody] = Field(min_length=1, max_length=MAX_BATCH_EVENTS, description="The events, in order.")


class BatchAck(ResponseModel):
    """The acknowledgement of a batch: one id and one status per event, in request order."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"event_ids": [4102, 4103], "statuses": ["queued", "queued"]}]}
    )

    event_ids: list[int] = Field(description="The events' global ids, in request order.")
    statuses: list[IngestStatus] = Field(description=_STATUS_HELP)


class ExtractBody(RequestModel):
    """A text to run through the fact pipeline."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"text": "I prefer Vue over React these days.", "learn": False}]}
    )

    text: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS, description="The text.")
    role: Role = Field(default="user", description="Who said it (decides how much it is trusted).")
    author: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="The speaker, if not the owner.",
    )
    occurred_at: datetime | None = Field(
        default=None,
        description=f"When it was said ({TIME_FORMATS}); anchors 'next week' and similar.",
    )
    learn: bool = Field(
        default=False,
        description="false: a dry run that stores nothing; true: store the text as an event "
        "(source `extract`) and learn from it at once.",
    )
    conversation_id: str = Field(
        default="extract",
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="Conversation of the stored event (with learn=true).",
    )
    user_id: UserId = "default"


class StageOut(ResponseModel):
    """What one pipeline stage did."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"stage": "classify", "summary": "1 of 1 segments kept", "details": {}, "ms": 0.2}]
        }
    )

    stage: str = Field(description="The stage: firewall, classify, extract, map, gate, … decide.")
    summary: str = Field(description="One line saying what happened.")
    details: dict[str, Any] = Field(description="Structured details of the stage (JSON).")
    ms: float = Field(description="Time the stage took, in milliseconds.")


class ExtractOut(ResponseModel):
    """The per-stage trace of one text through the pipeline."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "stages": [{"stage": "extract", "summary": "1 proposition", "details": {}, "ms": 0.4}],
                    "decisions": [{"decision": "CREATE", "statement": "User prefers Vue"}],
                    "warnings": [],
                    "learned": False,
                    "event_id": None,
                    "fact_ids": [],
                }
            ]
        }
    )

    stages: list[StageOut] = Field(description="Every stage, in pipeline order.")
    decisions: list[dict[str, Any]] = Field(
        description="The decide stage's verdict per proposition (CREATE, UPDATE, MERGE, NOOP, …)."
    )
    warnings: list[str] = Field(description="Degradations (e.g. the model was unavailable).")
    learned: bool = Field(description="True when the text was stored (learn=true).")
    event_id: int | None = Field(description="The stored event (learn=true), else null.")
    fact_ids: list[int] = Field(description="Facts stored or touched (learn=true).")


class EventOut(ResponseModel):
    """A stored event: immutable evidence."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EVENT_EXAMPLE]})

    id: int = Field(description="Global id.")
    user_id: str = Field(description="Owner of the event.")
    project_id: str | None = Field(description="Project scope, if any.")
    conversation_id: str = Field(description="The conversation it belongs to.")
    type: str = Field(description="message, tool_call, app_event or observation.")
    role: str = Field(description="user, assistant, system or tool.")
    author: str | None = Field(description="Speaker in multi-party transcripts.")
    content: str = Field(description="The stored text (after the privacy firewall).")
    occurred_at: datetime = Field(description="When it happened (UTC).")
    valid_time: datetime | None = Field(description="When the content became true (UTC).")
    ingested_at: datetime = Field(description="When Cairn stored it (UTC).")
    metadata: dict[str, Any] = Field(description="Client metadata (plus `pii` findings, if any).")
    source: str = Field(description="Where it came from: api, mcp, gui, import:<format>, …")
    external_id: str | None = Field(description="The client's own id, if given.")
    status: str = Field(description="queued, enriched, blocked or skipped.")
    episode_id: int | None = Field(description="The episode the event belongs to.")


class EventsPage(ResponseModel):
    """A window of a conversation's events, oldest first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"events": [_EVENT_EXAMPLE], "next_before_id": None}]})

    events: list[EventOut] = Field(description="Events in time order.")
    next_before_id: int | None = Field(
        description="Pass as `before_id` to page further back; null when nothing is older."
    )


class ConversationOut(ResponseModel):
    """A conversation: the events sharing a conversation id."""

    model_config = ConfigDict(json_schema_extra={"examples": [_CONVERSATION_EXAMPLE]})

    conversation_id: str = Field(description="The conversation id clients send with events.")
    title: str = Field(description="The title its export gave it (empty when none).")
    user_id: str = Field(description="Owner of the conversation.")
    events: int = Field(description="How many events it holds.")
    first_at: datetime = Field(description="Time of the first event (UTC).")
    last_at: datetime = Field(description="Time of the latest event (UTC).")
    authors: list[str] = Field(description="Named speakers (multi-party transcripts).")


class ConversationList(ResponseModel):
    """Conversations, most recently active first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"conversations": [_CONVERSATION_EXAMPLE]}]})

    conversations: list[ConversationOut] = Field(description="The conversations.")


class EpisodeOut(ResponseModel):
    """A conversation segment and its summary."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EPISODE_EXAMPLE]})

    id: int = Field(description="Global id.")
    user_id: str = Field(description="Owner.")
    conversation_id: str = Field(description="The conversation it is part of.")
    started_at: datetime = Field(description="Time of its first turn (UTC).")
    ended_at: datetime = Field(description="Time of its last turn (UTC).")
    turn_count: int = Field(description="Turns in the segment.")
    summary: str = Field(description="The summary (empty until the segment is closed).")
    status: str = Field(description="open, closed or summarized.")
    summarizer: str | None = Field(description="What wrote the summary (extractive or a model).")
    first_event_id: int | None = Field(description="Its first event.")
    last_event_id: int | None = Field(description="Its last event.")


class EpisodeList(ResponseModel):
    """Episodes, newest first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"episodes": [_EPISODE_EXAMPLE]}]})

    episodes: list[EpisodeOut] = Field(description="The episodes.")


class CloseOut(ResponseModel):
    """The result of closing a conversation's open episode."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"conversation_id": "chat-7", "closed": 1}]})

    conversation_id: str = Field(description="The conversation.")
    closed: int = Field(description="Episodes closed now (0 when none was open); each is queued for its summary.")
