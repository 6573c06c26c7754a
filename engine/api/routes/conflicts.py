"""Conflicts: contradictions between facts, and resolving them (one wins, or both are kept)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query

from engine.api.deps import VaultDep
from engine.api.models.common import Id
from engine.api.models.facts import ConflictList, ConflictOut, ResolveBody

router = APIRouter(prefix="/v6", tags=["conflicts"])


@router.get("/conflicts", summary="List conflicts")
def list_conflicts(
    vault: VaultDep,
    conflict_status: Annotated[
        Literal["open", "resolved", "all"],
        Query(alias="status", description="open (default), resolved, or all."),
    ] = "open",
    user_id: Annotated[str | None, Query(min_length=1, description="Only this user's conflicts.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many.")] = 200,
) -> ConflictList:
    """Conflicts with both sides, newest first."""
    views = vault.conflicts(status=None if conflict_status == "all" else conflict_status, user_id=user_id, limit=limit)
    return ConflictList(conflicts=[ConflictOut.of(view) for view in views])


@router.post(
    "/conflicts/{conflict_id}/resolve",
    summary="Resolve a conflict",
    responses={
        404: {"description": "No conflict with this id."},
        409: {"description": "The conflict is already resolved."},
    },
)
def resolve_conflict(
    conflict_id: Annotated[Id, Path(description="The conflict's global id.")],
    body: ResolveBody,
    vault: VaultDep,
) -> ConflictOut:
    """`winner_id` wins (the other side is retired to cold, history kept), or null keeps both."""
    return ConflictOut.of(vault.conflicts.resolve(conflict_id, body.winner_id))
