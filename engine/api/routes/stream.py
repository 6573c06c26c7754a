"""``GET /v6/events/stream``: the change feed as Server-Sent Events (see :mod:`engine.api.sse`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Request

from engine.api.models.common import SQL_INTEGER_LIMIT
from engine.api.sse import EVENT_STREAM_MEDIA_TYPE, EventStreamResponse, StreamHub

STREAM_PATH = "/v6/events/stream"

router = APIRouter(prefix="/v6", tags=["stream"])

_EXAMPLE = (
    'id: 41\nevent: connected\ndata: {"seq":41,"resumed_from":null,"heartbeat_s":15.0}\n\n'
    'id: 42\nevent: event.created\ndata: {"seq":42,"type":"event.created","object_id":4101,'
    '"at":"2026-03-01T09:30:00.120000Z","conversation_id":"chat-7","user_id":"default",'
    '"status":"queued"}\n\n'
    'event: heartbeat\ndata: {"seq":42}\n\n'
)


@router.get(
    "/events/stream",
    summary="Follow every change (Server-Sent Events)",
    response_class=EventStreamResponse,
    status_code=200,
    responses={
        200: {
            "description": "An endless `text/event-stream`: `connected`, then one event per "
            "change (memory.created, memory.updated, memory.superseded, memory.deleted, "
            "memory.restored, conflict.created, conflict.resolved, event.created, "
            "episode.created, job.failed, forget.completed, …), `heartbeat` when idle, and "
            "`reset` when changes were lost (reload, then keep reading).",
            "content": {EVENT_STREAM_MEDIA_TYPE: {"example": _EXAMPLE}},
        }
    },
)
async def event_stream(
    request: Request,
    last_event_id: Annotated[
        int | None,
        Header(
            alias="Last-Event-ID",
            ge=0,
            lt=SQL_INTEGER_LIMIT,
            description="The `id` of the last event received; the missed ones are replayed.",
        ),
    ] = None,
    since: Annotated[
        int | None,
        Query(ge=0, lt=SQL_INTEGER_LIMIT, description="Like Last-Event-ID, for clients that cannot set headers."),
    ] = None,
) -> EventStreamResponse:
    """Stream the vault's changes as they are committed.

    Reconnect with `Last-Event-ID` (browsers' EventSource does it by itself) to receive what was
    missed while disconnected.
    """
    hub: StreamHub = request.app.state.streams
    return hub.response(last_event_id if last_event_id is not None else since)
