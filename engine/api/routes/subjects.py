"""Subjects: the people, projects and topics facts are about; renaming and merging them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from engine.api.deps import VaultDep
from engine.api.models.common import Id
from engine.api.models.subjects import MergeBody, RenameBody, SubjectList, SubjectOut

router = APIRouter(prefix="/v6", tags=["subjects"])

SubjectId = Annotated[Id, Path(description="The subject's global id.", examples=[7])]
_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No subject with this id."}}


@router.get("/subjects", summary="List subjects")
def list_subjects(
    vault: VaultDep,
    q: Annotated[str | None, Query(min_length=1, max_length=256, description="Part of a name or alias.")] = None,
    user_id: Annotated[str | None, Query(min_length=1, description="Only this user's.")] = None,
    limit: Annotated[int, Query(ge=1, le=5000, description="At most this many.")] = 500,
) -> SubjectList:
    """Subjects (merged ones aside): the owner first, then by how much is known about them."""
    subjects = vault.subjects(user_id=user_id, q=q, limit=limit)
    return SubjectList(subjects=[SubjectOut.of(s) for s in subjects])


@router.get("/subjects/{subject_id}", summary="One subject", responses=_NOT_FOUND)
def get_subject(subject_id: SubjectId, vault: VaultDep) -> SubjectOut:
    """A subject with its aliases and counts."""
    return SubjectOut.of(vault.subjects.get(subject_id))


@router.post(
    "/subjects/{subject_id}/rename",
    summary="Rename a subject",
    responses={**_NOT_FOUND, 409: {"description": "The name is taken, or this is the owner."}},
)
def rename_subject(subject_id: SubjectId, body: RenameBody, vault: VaultDep) -> SubjectOut:
    """Rename; the old name becomes an alias, so earlier references still resolve."""
    return SubjectOut.of(vault.subjects.rename(subject_id, body.name))


@router.post(
    "/subjects/{subject_id}/merge",
    summary="Merge subjects into this one",
    responses={**_NOT_FOUND, 409: {"description": "The owner cannot be merged away."}},
)
def merge_subjects(subject_id: SubjectId, body: MergeBody, vault: VaultDep) -> SubjectOut:
    """Fold `merge_ids` into this subject: facts, tags and aliases move; answers the keeper."""
    return SubjectOut.of(vault.subjects.merge(subject_id, body.merge_ids))
