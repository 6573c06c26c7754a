"""Forgetting: scoped, complete, receipted deletion (``POST /v6/forget``) and its receipts.

The body must name the user: an empty body forgetting everything would be one typo away from
wiping the vault.  ``dry_run`` counts without deleting (and still leaves a receipt).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from engine.api.deps import VaultDep
from engine.api.models.common import Id
from engine.api.models.system import ForgetBody, ReceiptOut
from engine.forget import ForgetScope

router = APIRouter(prefix="/v6", tags=["forget"])


@router.post("/forget", summary="Forget a scope, completely")
def forget(body: ForgetBody, vault: VaultDep) -> ReceiptOut:
    """Delete everything in the scope and everything derived from it; answer the receipt.

    Derived data goes too: facts from those events, their conflicts, episodes, vectors,
    full-text entries, subjects nothing mentions any more, queued jobs and (by default) backups.
    """
    scope = ForgetScope(
        user_id=body.user_id,
        conversation_id=body.conversation_id,
        project_id=body.project_id,
        document_id=body.document_id,
        since=body.since,
        until=body.until,
        dry_run=body.dry_run,
        purge_backups=body.purge_backups,
    )
    return ReceiptOut.of(vault.forget(scope))


@router.get(
    "/forget/receipts/{receipt_id}",
    summary="A forget receipt",
    responses={404: {"description": "No receipt with this id."}},
)
def receipt(receipt_id: Annotated[Id, Path(description="The receipt's global id.")], vault: VaultDep) -> ReceiptOut:
    """The scope and counts of an earlier forget or dry run."""
    return ReceiptOut.of(vault.receipt(receipt_id))
