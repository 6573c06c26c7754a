"""Any object by its global id (``GET /v6/objects/{id}``): every id in a vault is unique."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from engine.api.deps import VaultDep
from engine.api.models.common import Id
from engine.api.models.system import ObjectOut

router = APIRouter(prefix="/v6", tags=["objects"])


@router.get(
    "/objects/{object_id}",
    summary="Any object by global id",
    responses={404: {"description": "No object with this id (or it was forgotten)."}},
)
def get_object(
    object_id: Annotated[Id, Path(description="A global id.", examples=[4101])], vault: VaultDep
) -> ObjectOut:
    """The object's kind and value, shaped like the answer of its own route."""
    return ObjectOut.of_view(vault.get_object(object_id))
