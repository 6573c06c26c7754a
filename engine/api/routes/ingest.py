"""Getting events in: ``POST /v6/ingest`` (one), ``/v6/ingest/batch`` (many), ``/v6/extract``.

Ingest answers 202 once the event is committed (its enrichment is queued, not done): an
acknowledged event survives a crash.  A batch is one transaction and is validated as a whole
first, so one bad event stores nothing and the 400 names it (``events[3].content``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from engine.api.coalesce import IngestCoalescer
from engine.api.deps import VaultDep
from engine.api.models.events import (
    BatchAck,
    BatchBody,
    EventBody,
    ExtractBody,
    ExtractOut,
    IngestAck,
    StageOut,
)

#: ``source`` of events that arrive over REST (MCP uses ``mcp``).
SOURCE = "api"

router = APIRouter(prefix="/v6", tags=["ingest"])


@router.post(
    "/ingest",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Remember one event",
    responses={400: {"description": "A field is missing or wrong; nothing was stored."}},
)
async def ingest(body: EventBody, request: Request) -> IngestAck:
    """Store one event and queue its enrichment; answered once it is committed.

    Re-sending the same event (same `external_id`, or same conversation, role, author, content
    and time) stores nothing new and answers `duplicate` with the existing id.
    """
    coalescer: IngestCoalescer = request.app.state.ingest
    return IngestAck.of(await coalescer.ingest(body.to_event(SOURCE)))


@router.post(
    "/ingest/batch",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Remember many events at once",
    responses={400: {"description": "An event is invalid (named `events[i].field`); none stored."}},
)
def ingest_batch(body: BatchBody, vault: VaultDep) -> BatchAck:
    """Store a batch of events in one transaction: all of them, or none."""
    results = vault.events.ingest([event.to_event(SOURCE) for event in body.events])
    return BatchAck(event_ids=[r.event_id for r in results], statuses=[r.status for r in results])


@router.post("/extract", summary="Show what the fact pipeline makes of a text")
def extract(body: ExtractBody, vault: VaultDep) -> ExtractOut:
    """Run every pipeline stage on `text` and report what each did.

    Without `learn` nothing is stored (the decide stage is planned against the current facts);
    with `learn=true` the text is stored as an event and learned from at once.
    """
    report = vault.events.extract(
        body.text,
        role=body.role,
        author=body.author,
        occurred_at=body.occurred_at,
        learn=body.learn,
        conversation_id=body.conversation_id,
        user_id=body.user_id,
    )
    return ExtractOut(
        stages=[StageOut.of(stage) for stage in report.stages],
        decisions=[dict(decision) for decision in report.decisions],
        warnings=list(report.warnings),
        learned=report.learned,
        event_id=report.event_id,
        fact_ids=list(report.fact_ids),
    )
