"""Documents: upload (multipart file, JSON text, or a local path), list, the tree, delete, and the
quarantine of files that could not be parsed.

``POST /v6/documents`` answers 201 when it created a document, 200 when it replaced one or found
the same content already stored (``unchanged``), and 422 ``document_quarantined`` when the file
could not be parsed: a quarantined upload is no mistake in the request's shape, but it is not in
the vault either, and a 2xx must mean it is (see :mod:`engine.api.uploads`).

A multipart body is streamed: the guard counts it against the body cap as it arrives (413 once it
passes), and the file part is spooled to a temporary file beyond 1 MiB instead of being held in
memory while it arrives.  Parsing runs in the vault's sandbox on a worker thread, never on the
event loop.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import PureWindowsPath
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response, status
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError as PydanticValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import ClientDisconnect

from engine.api.deps import VaultDep
from engine.api.models.common import SQL_INTEGER_LIMIT, Id
from engine.api.models.documents import (
    DocumentDeleted,
    DocumentFormFields,
    DocumentJsonBody,
    DocumentList,
    DocumentOut,
    DocumentTreeOut,
    QuarantineList,
    QuarantineOut,
    SectionOut,
    UploadOut,
)
from engine.api.uploads import Upload, retry, upload_out
from engine.errors import ValidationError

router = APIRouter(prefix="/v6", tags=["documents"])

#: Form fields of a multipart upload besides the file, and the size of each.
_MAX_FORM_FIELDS = 8
_MAX_FIELD_BYTES = 4096
#: Content types the vault can tell nothing from (the parser is then picked by extension alone).
_GENERIC_TYPES = frozenset({"", "application/octet-stream"})

DocumentId = Annotated[Id, Path(description="The document's global id.", examples=[700])]
UserFilter = Annotated[str | None, Query(min_length=1, description="Only this user's (default: every user).")]
_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No document with this id."}}
_UPLOAD_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {
                        "type": "string",
                        "format": "binary",
                        "description": "The file; its name's extension picks the parser.",
                    },
                    "document_id": {
                        "type": "integer",
                        "minimum": 1,
                        "exclusiveMaximum": SQL_INTEGER_LIMIT,
                        "description": "Replace this document's content (its id stays).",
                    },
                    "collection_id": {
                        "type": "integer",
                        "minimum": 1,
                        "exclusiveMaximum": SQL_INTEGER_LIMIT,
                        "description": "Also add it to this collection.",
                    },
                    "project_id": {"type": "string", "description": "Project scope."},
                    "user_id": {"type": "string", "description": "Whose memory (default)."},
                },
            },
            "encoding": {"file": {"contentType": "application/octet-stream"}},
        },
        "application/json": {
            "schema": {"$ref": "#/components/schemas/DocumentJsonBody"},
            "example": {"name": "meeting-notes.md", "content": "# Standup\n\nAna leads billing."},
        },
    },
}
_UPLOAD_RESPONSES: dict[int | str, dict[str, Any]] = {
    201: {"description": "A new document was created."},
    200: {
        "description": "An existing document was replaced, or the same content was already stored (`unchanged`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UploadOut"}}},
    },
    202: {
        "description": "Accepted (`parsing`): the file is large, or `wait=false`; it is read in the "
        "background while the document shows its `reading` progress.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UploadOut"}}},
    },
    404: {"description": "`document_id` or `collection_id` does not exist."},
    415: {
        "description": "No parser reads this type of file (`unsupported_file`, with the "
        "supported extensions), or the body is neither JSON nor multipart."
    },
    422: {
        "description": "`document_quarantined`: the file could not be parsed (broken, encrypted, "
        "too complex, or its parser failed). `details` has the typed `reason` (invalid, "
        "limit, timeout, crash, …), the parser's `detail` and the `quarantine_id`. Nothing "
        "was added to the vault; the file is listed at `GET /v6/documents/quarantine`."
    },
}


@router.post(
    "/documents",
    status_code=status.HTTP_201_CREATED,
    summary="Add or replace a document",
    responses=_UPLOAD_RESPONSES,
    openapi_extra={"requestBody": _UPLOAD_BODY},
)
async def upload_document(
    request: Request,
    response: Response,
    vault: VaultDep,
    wait: Annotated[
        bool | None,
        Query(
            description="true: answer once the file is read (however long it takes); false: answer "
            "at once (202) and read it in the background; unset: in the background when it is larger "
            "than `documents.background_above_bytes` (1 MiB)."
        ),
    ] = None,
) -> UploadOut:
    """Add a document: a file (multipart, part `file`), a text (JSON `{name, content}`), or a
    file on this machine (JSON `{path}`: absolute, a regular file; folders are watched instead).

    A file read before answering is searchable when this answers (`processing`); its
    distillations follow in the background (→ `ready`).  Answers **201** for a new document,
    **200** when `document_id` (or the same path) named one that was replaced or found
    `unchanged`, and **422** `document_quarantined` when the file could not be parsed.  A large
    file is answered **202** `parsing` at once: the document is listed with its `reading`
    progress (`GET /v6/documents/{id}`), becomes `processing` when its text is stored, or
    `failed` with the reason (and a quarantine entry) when it cannot be read.
    """
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    try:
        if media_type == "multipart/form-data":
            upload = await _from_form(request)
        else:
            upload = Upload.of_json(await _json_body(request))
    except ClientDisconnect:
        # The body was cut off (the guard already answered 413) or the client left: no one reads
        # this answer.
        return Response(status_code=status.HTTP_400_BAD_REQUEST)  # type: ignore[return-value]
    upload = replace(upload, background=None if wait is None else not wait)
    result, created = await run_in_threadpool(upload.run, vault)
    if result.status == "parsing":
        response.status_code = status.HTTP_202_ACCEPTED
    elif not created:
        response.status_code = status.HTTP_200_OK
    return upload_out(result)


@router.get("/documents", summary="List documents")
def list_documents(
    vault: VaultDep,
    collection_id: Annotated[Id | None, Query(description="Only the documents of this collection.")] = None,
    project_id: Annotated[str | None, Query(min_length=1, description="Only this project's documents.")] = None,
    user_id: UserFilter = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="At most this many.")] = 1000,
) -> DocumentList:
    """Documents without their trees, most recently updated first."""
    if collection_id is not None:
        vault.collections.get(collection_id)  # a collection that does not exist is a 404
    infos = vault.documents(user_id=user_id, project_id=project_id, collection_id=collection_id, limit=limit)
    return DocumentList(documents=[DocumentOut.of(info) for info in infos])


@router.get("/documents/quarantine", summary="Files that could not be parsed")
def quarantine(vault: VaultDep, user_id: UserFilter = None) -> QuarantineList:
    """Quarantined files with their typed reason, newest first.  A file stays out until it or
    its parser changes; one uploaded by path can be retried."""
    return QuarantineList(quarantine=[QuarantineOut.of(entry) for entry in vault.documents.quarantine(user_id=user_id)])


@router.post(
    "/documents/quarantine/{quarantine_id}/retry",
    status_code=status.HTTP_201_CREATED,
    summary="Parse a quarantined file again",
    responses={
        201: {"description": "The file was read, and a new document created."},
        200: {
            "description": "The file replaced the document already uploaded from its path.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UploadOut"}}},
        },
        400: {"description": "The file is no longer at its path (or it never had one)."},
        404: {"description": "No quarantined file with this id."},
        422: {"description": "`document_quarantined`: it still cannot be parsed."},
    },
)
def retry_quarantined(
    quarantine_id: Annotated[Id, Path(description="The quarantine entry's id.", examples=[731])],
    response: Response,
    vault: VaultDep,
) -> UploadOut:
    """Read the file at its recorded path again, even if neither it nor its parser changed.

    Answers like an upload: 201 with the new document, 200 when it replaced the document of its
    path, 422 `document_quarantined` (with a new quarantine id) when it still fails.
    """
    result, created = retry(vault, quarantine_id)
    if not created:
        response.status_code = status.HTTP_200_OK
    return upload_out(result)


@router.get("/documents/{document_id}", summary="A document and its tree", responses=_NOT_FOUND)
def get_document(document_id: DocumentId, vault: VaultDep) -> DocumentTreeOut:
    """The document with its sections (and their distillations) and spans, in order."""
    tree = vault.documents.get(document_id)
    return DocumentTreeOut(
        document=DocumentOut.of(tree.info),
        sections=[SectionOut.of(section) for section in tree.sections],
    )


@router.delete("/documents/{document_id}", summary="Delete a document", responses=_NOT_FOUND)
def delete_document(document_id: DocumentId, vault: VaultDep) -> DocumentDeleted:
    """Delete the document with its sections, spans, vectors, distillations and collection
    memberships.  (Scoped, receipted deletion of everything learned from it: `POST /v6/forget`
    with `document_id`.)"""
    return DocumentDeleted(document_id=vault.documents.delete(document_id), deleted=True)


async def _json_body(request: Request) -> DocumentJsonBody:
    """The JSON body, validated; errors are the endpoint's 400 naming the field."""
    raw = await request.body()
    if not raw:
        raise ValidationError(
            "body",
            "is empty",
            fix="Send a file as multipart/form-data, or JSON {name, content} or {path}.",
        )
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        # ValueError: not JSON, or not UTF-8 (UnicodeDecodeError is one); RecursionError: nested deeper than the
        # parser's stack (``[`` 100,000 times is 100 kB of valid-looking JSON).  Both are the client's malformed
        # body, answered as FastAPI answers one on every other route.
        raise RequestValidationError(
            [{"type": "json_invalid", "loc": ("body",), "msg": "JSON decode error", "input": {}}]
        ) from None
    try:
        return DocumentJsonBody.model_validate(data)
    except PydanticValidationError as exc:
        raise _request_error(exc) from None


async def _from_form(request: Request) -> Upload:
    """The multipart form: one `file` part and the optional fields."""
    async with request.form(max_files=1, max_fields=_MAX_FORM_FIELDS, max_part_size=_MAX_FIELD_BYTES) as form:
        file: UploadFile | None = None
        fields: dict[str, str] = {}
        for key, value in form.multi_items():
            if key in fields or (key == "file" and file is not None):
                raise ValidationError(key, "is given more than once")
            if isinstance(value, UploadFile):
                if key != "file":
                    raise ValidationError(key, "must be a plain field; the file goes in `file`")
                file = value
            elif key == "file":
                raise ValidationError("file", "must be a file part (with a filename)")
            else:
                fields[key] = value
        if file is None:
            raise ValidationError("file", "is required: send the document as the multipart part named `file`")
        name = PureWindowsPath(file.filename or "").name.strip()  # no folders, either separator
        if not name:
            raise ValidationError("file", "needs a filename (its extension picks the parser, e.g. notes.pdf)")
        try:
            options = DocumentFormFields.model_validate(fields)
        except PydanticValidationError as exc:
            raise _request_error(exc) from None
        data = await file.read()
        mime = (file.content_type or "").split(";", 1)[0].strip().lower()
    return Upload(
        name=name,
        data=data,
        mime=None if mime in _GENERIC_TYPES else mime,
        document_id=options.document_id,
        collection_id=options.collection_id,
        project_id=options.project_id,
        user_id=options.user_id,
    )


def _request_error(exc: PydanticValidationError) -> RequestValidationError:
    """A model's validation error as a request body error (the handler names the field)."""
    return RequestValidationError(
        [{**error, "loc": ("body", *error["loc"])} for error in exc.errors(include_url=False)]
    )
