"""Facts: list and search, read, add by hand, correct, delete and restore, and the slot truth.

Nothing here loses history: PATCH writes a new version that supersedes the old one (``history``
walks the chain), DELETE is soft (``restore`` undoes it), ``retract`` brings back the version a
wrong fact replaced.  Every change is published on the change feed (``memory.*``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, status

from engine.api.deps import VaultDep
from engine.api.models.common import Id
from engine.api.models.facts import (
    FactCreate,
    FactEdit,
    FactList,
    FactOut,
    FactPage,
    SignalBody,
    Standing,
    Tier,
    TierBody,
    TruthList,
    TruthOut,
)
from engine.errors import ValidationError
from engine.facts.api import STATUSES, FactFilter

router = APIRouter(prefix="/v6", tags=["facts"])

FactId = Annotated[Id, Path(description="The fact's global id.", examples=[5120])]
Limit = Annotated[int, Query(ge=1, le=1000, description="Facts per page.")]
UserFilter = Annotated[str | None, Query(min_length=1, description="Only this user's facts (default: every user).")]

_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No fact with this id."}}
_CONFLICT: dict[int | str, dict[str, Any]] = {409: {"description": "The fact is not in a state that allows this."}}


@router.get("/facts", summary="List and search facts")
def list_facts(
    vault: VaultDep,
    subject: Annotated[str | None, Query(min_length=1, description="Subject name or alias.", examples=["user"])] = None,
    predicate: Annotated[
        str | None, Query(min_length=1, description="Catalog predicate.", examples=["lives_in"])
    ] = None,
    tier: Annotated[Tier | None, Query(description="hot, warm or cold.")] = None,
    standing: Annotated[Standing | None, Query(description="Trust band.")] = None,
    fact_status: Annotated[
        str | None,
        Query(
            alias="status",
            description="Comma-separated statuses (default: active,contested; with `as_of`: "
            "whatever was current then).",
            examples=["active,contested"],
        ),
    ] = None,
    q: Annotated[str | None, Query(min_length=1, max_length=500, description="Full-text search words.")] = None,
    conversation_id: Annotated[
        str | None, Query(min_length=1, description="Only facts learned in this conversation.")
    ] = None,
    as_of: Annotated[
        datetime | None,
        Query(description="The facts that were current at this time (ISO-8601 or epoch)."),
    ] = None,
    user_id: UserFilter = None,
    limit: Limit = 100,
    cursor: Annotated[str | None, Query(min_length=1, description="`next_cursor` of the previous page.")] = None,
) -> FactPage:
    """A page of facts, most recently changed first (cursor pagination, stable under writes)."""
    flt = FactFilter(
        user_id=user_id,
        subject=subject,
        predicate=predicate,
        tier=tier,
        standing=standing,
        status=_statuses(fact_status),
        q=q,
        conversation_id=conversation_id,
        as_of=as_of,
    )
    page = vault.facts.page(flt, limit=limit, cursor=cursor)
    return FactPage(facts=[FactOut.of(f) for f in page.facts], next_cursor=page.next_cursor)


@router.post(
    "/facts",
    status_code=status.HTTP_201_CREATED,
    summary="Add a memory by hand",
    responses={409: {"description": "That memory is already stored."}},
)
def add_fact(body: FactCreate, vault: VaultDep) -> FactOut:
    """Add a fact (source `manual`); it is mapped, matched and decided like a learned one."""
    fact = vault.facts.add(
        body.subject,
        body.predicate,
        body.object_text,
        user_id=body.user_id,
        project_id=body.project_id,
    )
    return FactOut.of(fact)


@router.get("/facts/superseded", summary="Facts replaced by newer versions")
def superseded_facts(vault: VaultDep, user_id: UserFilter = None, limit: Limit = 100) -> FactList:
    """Superseded facts, most recent first."""
    return FactList(facts=[FactOut.of(f) for f in vault.facts.superseded(user_id=user_id, limit=limit)])


@router.get("/facts/{fact_id}", summary="One fact", responses=_NOT_FOUND)
def get_fact(fact_id: FactId, vault: VaultDep) -> FactOut:
    """A fact in any status."""
    return FactOut.of(vault.facts.get(fact_id))


@router.patch("/facts/{fact_id}", summary="Correct a fact", responses={**_NOT_FOUND, **_CONFLICT})
def edit_fact(fact_id: FactId, body: FactEdit, vault: VaultDep) -> FactOut:
    """Write a corrected version; the old one is superseded (and kept in the history).

    Answers the new version.  Only current facts (active or contested) can be corrected.
    """
    fact = vault.facts.edit(fact_id, object_text=body.object_text, predicate=body.predicate, subject=body.subject)
    return FactOut.of(fact)


@router.delete("/facts/{fact_id}", summary="Delete a fact (soft)", responses=_NOT_FOUND)
def delete_fact(fact_id: FactId, vault: VaultDep) -> FactOut:
    """Hide the fact everywhere; `restore` undoes it.  Scoped, permanent removal is `forget`."""
    return FactOut.of(vault.facts.delete(fact_id))


@router.post(
    "/facts/{fact_id}/restore",
    summary="Undo a delete",
    responses={**_NOT_FOUND, **_CONFLICT},
)
def restore_fact(fact_id: FactId, vault: VaultDep) -> FactOut:
    """Bring back a soft-deleted fact."""
    return FactOut.of(vault.facts.restore(fact_id))


@router.post(
    "/facts/{fact_id}/retract",
    summary="The fact was wrong",
    responses={**_NOT_FOUND, **_CONFLICT},
)
def retract_fact(fact_id: FactId, vault: VaultDep) -> FactOut:
    """Retract the fact and bring back the version it replaced, if any."""
    return FactOut.of(vault.facts.retract(fact_id))


@router.post("/facts/{fact_id}/approve", summary="Vouch for a fact", responses=_NOT_FOUND)
def approve_fact(fact_id: FactId, vault: VaultDep) -> FactOut:
    """Make a quarantined or candidate fact a trusted, manual one (recall may then inject it)."""
    return FactOut.of(vault.facts.approve(fact_id))


@router.post("/facts/{fact_id}/tier", summary="Pin or unpin a tier", responses=_NOT_FOUND)
def set_tier(fact_id: FactId, body: TierBody, vault: VaultDep) -> FactOut:
    """Pin the fact to a tier (hot: always recalled), or unpin it (`pinned: false`)."""
    return FactOut.of(vault.facts.set_tier(fact_id, body.tier, pinned=body.pinned))


@router.post("/facts/{fact_id}/signal", summary="Mark useful or questionable", responses=_NOT_FOUND)
def signal_fact(fact_id: FactId, body: SignalBody, vault: VaultDep) -> FactOut:
    """Record a utility signal; it moves the fact's importance and confidence."""
    return FactOut.of(vault.facts.mark(fact_id, body.signal))


@router.get("/facts/{fact_id}/history", summary="A fact's versions", responses=_NOT_FOUND)
def fact_history(fact_id: FactId, vault: VaultDep) -> FactList:
    """The version chain through this fact, oldest first."""
    return FactList(facts=[FactOut.of(f) for f in vault.facts.history(fact_id)])


@router.get("/truth", summary="Current slot winners")
def truth(
    vault: VaultDep,
    subject: Annotated[str | None, Query(min_length=1, description="Only this subject.", examples=["user"])] = None,
    user_id: UserFilter = None,
) -> TruthList:
    """One winner per single-valued slot, and every live value of multi-valued predicates."""
    entries = vault.facts.truth(subject=subject, user_id=user_id)
    return TruthList(
        truth=[
            TruthOut(
                subject=e.subject,
                predicate=e.predicate,
                cardinality=e.cardinality,
                fact=FactOut.of(e.fact),
                alternatives=e.alternatives,
            )
            for e in entries
        ]
    )


def _statuses(value: str | None) -> tuple[str, ...] | None:
    """``active,contested`` as a tuple, every name checked (the 400 names the `status` field)."""
    if value is None:
        return None
    names = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [name for name in names if name not in STATUSES]
    if not names or unknown:
        raise ValidationError("status", f"must be one or more of {', '.join(STATUSES)}")
    return names
