"""Collections: named groups of documents that recall can be pointed at (``collection_id``).

Deleting a collection, or removing a document from it, never deletes a document.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, status

from engine.api.deps import VaultDep
from engine.api.models.common import Id
from engine.api.models.documents import (
    CollectionCreate,
    CollectionDeleted,
    CollectionDetail,
    CollectionList,
    CollectionMembers,
    CollectionOut,
    CollectionRename,
)
from engine.vault import Vault

router = APIRouter(prefix="/v6", tags=["collections"])

CollectionId = Annotated[Id, Path(description="The collection's global id.", examples=[812])]
_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No collection with this id."}}
_TAKEN: dict[int | str, dict[str, Any]] = {409: {"description": "The user already has a collection with this name."}}


@router.post(
    "/collections",
    status_code=status.HTTP_201_CREATED,
    summary="Create a collection",
    responses=_TAKEN,
)
def create_collection(body: CollectionCreate, vault: VaultDep) -> CollectionDetail:
    """A new, empty collection."""
    created = vault.collections.create(body.name, description=body.description, user_id=body.user_id)
    return _detail(vault, created.id)


@router.get("/collections", summary="List collections")
def list_collections(
    vault: VaultDep,
    user_id: Annotated[str | None, Query(min_length=1, description="Only this user's (default: every user).")] = None,
) -> CollectionList:
    """Collections by name, with how many documents each holds."""
    return CollectionList(collections=[CollectionOut.of(c) for c in vault.collections(user_id=user_id)])


@router.get("/collections/{collection_id}", summary="A collection", responses=_NOT_FOUND)
def get_collection(collection_id: CollectionId, vault: VaultDep) -> CollectionDetail:
    """The collection with the ids of its documents, most recently added first."""
    return _detail(vault, collection_id)


@router.patch(
    "/collections/{collection_id}",
    summary="Rename a collection",
    responses={**_NOT_FOUND, **_TAKEN},
)
def rename_collection(collection_id: CollectionId, body: CollectionRename, vault: VaultDep) -> CollectionDetail:
    """Give the collection a new name (unique per user, regardless of letter case)."""
    vault.collections.rename(collection_id, body.name)
    return _detail(vault, collection_id)


@router.delete("/collections/{collection_id}", summary="Delete a collection", responses=_NOT_FOUND)
def delete_collection(collection_id: CollectionId, vault: VaultDep) -> CollectionDeleted:
    """Delete the collection; its documents stay in the vault."""
    vault.collections.delete(collection_id)
    return CollectionDeleted(collection_id=collection_id, deleted=True)


@router.post(
    "/collections/{collection_id}/documents",
    summary="Add documents to a collection",
    responses={
        400: {"description": "A document belongs to another user (`document_ids`)."},
        404: {"description": "No such collection, or no such document."},
    },
)
def add_documents(collection_id: CollectionId, body: CollectionMembers, vault: VaultDep) -> CollectionDetail:
    """Add the documents (already members are fine); all of them, or none on an error."""
    vault.collections.add(collection_id, body.document_ids)
    return _detail(vault, collection_id)


@router.delete(
    "/collections/{collection_id}/documents/{document_id}",
    summary="Remove a document from a collection",
    responses={404: {"description": "No such collection, or no such document."}},
)
def remove_document(
    collection_id: CollectionId,
    document_id: Annotated[Id, Path(description="The document's global id.", examples=[700])],
    vault: VaultDep,
) -> CollectionDetail:
    """Take the document out of the collection; the document itself stays in the vault."""
    vault.collections.remove(collection_id, [document_id])
    return _detail(vault, collection_id)


def _detail(vault: Vault, collection_id: int) -> CollectionDetail:
    collection = vault.collections.get(collection_id)
    return CollectionDetail(
        **CollectionOut.of(collection).model_dump(),
        document_ids=vault.collections.document_ids(collection_id),
    )
