"""Getting events in: ``/v6/ingest/batch`` (many), ``/v6/extract``.

One event (``POST /v6/ingest``, what chat clients send on every turn) is answered by a lean handler, not here:
:mod:`engine.api.fast_ingest`.  Ingest answers 202 once the events are committed (their enrichment is queued, not
done): an acknowledged event survives a crash.  A batch is one transaction and is validated as a whole first, so one
bad event stores nothing and the 400 names it (``events[3].content``).
"""

from __future__ import annotations

from fastapi import APIRouter, status

from engine.api.deps import VaultDep
from engine.api.fast_ingest import SOURCE
from engine.api.models.events import (
    BatchAck,
    BatchBody,
    ExtractBody,
    ExtractOut,
    StageOut,
)

router = APIRouter(prefix="/v6", tags=["ingest"])


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
