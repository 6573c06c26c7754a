"""Conversations, their events and episodes; closing the open episode on demand.

Conversation ids are the clients' own strings and may contain ``/``, so the path parameter takes
the rest of the path up to the final segment (``/v6/conversations/team/standup/events``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from engine.api.deps import VaultDep
from engine.api.models.common import Id
from engine.api.models.events import (
    CloseOut,
    ConversationList,
    ConversationOut,
    EpisodeList,
    EpisodeOut,
    EventOut,
    EventsPage,
)
from engine.errors import NotFound

router = APIRouter(prefix="/v6", tags=["conversations"])

ConversationId = Annotated[str, Path(description="The conversation id the events were sent with.", examples=["chat-7"])]
UserFilter = Annotated[str | None, Query(min_length=1, description="Only this user's.")]


@router.get("/conversations", summary="List conversations")
def list_conversations(
    vault: VaultDep,
    user_id: UserFilter = None,
    limit: Annotated[int, Query(ge=1, le=5000, description="At most this many.")] = 500,
) -> ConversationList:
    """Conversations, most recently active first."""
    infos = vault.conversations(user_id=user_id, limit=limit)
    return ConversationList(conversations=[ConversationOut.of(info) for info in infos])


@router.get(
    "/conversations/{conversation_id:path}/events",
    summary="A conversation's events",
    responses={404: {"description": "The conversation has no events."}},
)
def conversation_events(
    conversation_id: ConversationId,
    vault: VaultDep,
    user_id: UserFilter = None,
    limit: Annotated[int, Query(ge=1, le=5000, description="At most this many events.")] = 200,
    before_id: Annotated[Id | None, Query(description="Only events before this one (`next_before_id`).")] = None,
) -> EventsPage:
    """The latest `limit` events (before `before_id`), in time order."""
    events = vault.conversations.events(conversation_id, user_id=user_id, limit=limit, before_id=before_id)
    if not events and before_id is None:
        raise NotFound("conversation", conversation_id)
    return EventsPage(
        events=[EventOut.of(e) for e in events],
        next_before_id=events[0].id if len(events) == limit else None,
    )


@router.post("/conversations/{conversation_id:path}/close", summary="Close the open episode")
def close_conversation(conversation_id: ConversationId, vault: VaultDep, user_id: UserFilter = None) -> CloseOut:
    """Close the conversation's open segment now; its summary is queued."""
    closed = vault.conversations.close_episodes(conversation_id, user_id=user_id)
    return CloseOut(conversation_id=conversation_id, closed=closed)


@router.get("/episodes", summary="List episodes")
def list_episodes(
    vault: VaultDep,
    conversation_id: Annotated[
        str | None, Query(min_length=1, description="Only this conversation's episodes.")
    ] = None,
    user_id: UserFilter = None,
    limit: Annotated[int, Query(ge=1, le=5000, description="At most this many.")] = 500,
) -> EpisodeList:
    """Episodes (summarised conversation segments), newest first."""
    episodes = vault.conversations.episodes(conversation_id, user_id=user_id, limit=limit)
    return EpisodeList(episodes=[EpisodeOut.of(e) for e in episodes])
