"""Recall (``POST /v6/recall``): the context a chat client puts in front of its model.

The answer carries the prompt-ready text (``llm_context``, within the token budget) and everything
it was made from: ranked blocks with their evidence, the conversation's recent turns and working
memory, document blocks, and how the query was routed.  Recall reads only; it may lag the newest
events while their enrichment is still queued (DESIGN §4).
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from engine.api.deps import VaultDep
from engine.api.models.recall import RecallBody, RecallOut

router = APIRouter(prefix="/v6", tags=["recall"])


@router.post(
    "/recall",
    summary="Context for the next model call",
    responses={
        400: {"description": "A field is missing or out of range (`details.field` names it)."},
        404: {"description": "`document_id` or `collection_id` does not exist."},
    },
)
async def recall(body: RecallBody, vault: VaultDep) -> RecallOut:
    """Rank what the vault knows for this conversation and query, and write it as prompt-ready
    text within the token budget.

    Name a `document_id` or `collection_id` to answer from documents; otherwise memories
    (facts, turns, episodes) and documents are searched together.
    """
    # One hand-off to a worker thread for the recall and its response model; a plain ``def`` route would take a
    # second one just to re-check the returned model.
    request = body.to_request()
    out: RecallOut = await run_in_threadpool(lambda: RecallOut.of(vault.recall(request)))
    return out
