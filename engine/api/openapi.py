"""The endpoint's OpenAPI document, served at ``/openapi.json`` and committed as ``docs/openapi.json``.

Regenerate the committed copy with ``python -m engine.api.openapi > docs/openapi.json``; a test fails while the two
differ. The document is built from the routers alone (no vault is opened), and finished here with what FastAPI
cannot know: the two hot routes, answered by lean handlers rather than FastAPI routes
(:mod:`engine.api.fast_ingest`), described from their request and answer models; the endpoint's one error shape for
every refusal the guard and the handlers answer (FastAPI would advertise its own 422 body, which Cairn never sends),
and the MCP transport at ``/mcp``.
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

from engine.api.models.common import ErrorBody
from engine.api.models.documents import DocumentJsonBody
from engine.api.models.events import EventBody, IngestAck
from engine.api.models.recall import RecallBody, RecallOut
from engine.version import __version__

TITLE = "Cairn"
SUMMARY = "The localhost endpoint of a Cairn memory vault."
DESCRIPTION = (
    "REST v6 of a local-first memory vault: ingest events, recall context for a prompt, add "
    "documents and group them in collections, keep folders in sync, read and correct facts, "
    "resolve conflicts, forget with receipts, keep a subject workspace (observations, understandings "
    "revised by supersession, relationships as intersections, sessions that are brought to mind only what is new "
    "to them, consolidation: `/v6/workspace/<verb>`), and follow every "
    "change as Server-Sent Events "
    "(`/v6/events/stream`). The same tools are offered over MCP at `/mcp`.\n\n"
    "Every request needs `Authorization: Bearer <token>` (`cairn token` prints it) except "
    "`GET /v6/health`, must be addressed to the loopback host and port, and may not come from a "
    "web page unless its origin is allowed. Requests that change something send JSON (document "
    "uploads may send multipart/form-data). Errors are `{error: {code, message, details}}`: 400 "
    "for a bad request (`details.field` names the field), 422 only for a well-formed document "
    "upload whose file cannot be parsed (`document_quarantined`). Times are ISO-8601 UTC."
)
PUBLIC_OPERATIONS = frozenset({("get", "/v6/health")})

_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
_ERRORS: dict[str, str] = {
    "400": "Invalid request: `details.field` names the offending field (`events[2].content`).",
    "401": "Missing or wrong bearer token.",
    "403": "Sent from a web page whose origin is not allowed.",
    "408": "The body did not arrive in time (it was trickled, or never finished); the connection is closed.",
    "413": "The body is larger than the endpoint's limit.",
    "415": "A request that changes something must send JSON (or multipart, for uploads).",
    "421": "Not addressed to the loopback host and port of this endpoint.",
    "429": "Too many requests at once; retry after `Retry-After` seconds.",
    "500": "Cairn failed; the vault's logs/ folder names the error type.",
    "503": "The vault is closing; retry after `Retry-After` seconds.",
}
_STATE_CHANGING = frozenset({"post", "put", "patch", "delete"})
#: Models only referenced from a hand-written request body (FastAPI cannot see them).
_REFERENCED_MODELS: tuple[type[BaseModel], ...] = (DocumentJsonBody, EventBody, RecallBody)
#: Answer models of the operations described here rather than by FastAPI (encoded as the answer is sent).
_ANSWER_MODELS: tuple[type[BaseModel], ...] = (IngestAck, RecallOut)


def _lean_operation(
    tag: str,
    summary: str,
    description: str,
    operation_id: str,
    body: type[BaseModel],
    status: str,
    answer: type[BaseModel],
    refusals: dict[str, str],
) -> dict[str, Any]:
    """The path item of a route answered by a lean handler (:mod:`engine.api.fast_ingest`), not by FastAPI."""
    return {
        "post": {
            "tags": [tag],
            "summary": summary,
            "description": description,
            "operationId": operation_id,
            "requestBody": {
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body.__name__}"}}},
                "required": True,
            },
            "responses": {
                status: {
                    "description": "Successful Response",
                    "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{answer.__name__}"}}},
                },
                **{code: {"description": text} for code, text in refusals.items()},
            },
        }
    }


#: ``POST /v6/ingest`` and ``POST /v6/recall``, the two hot routes (:mod:`engine.api.fast_ingest`).
_LEAN_PATHS: dict[str, dict[str, Any]] = {
    "/v6/ingest": _lean_operation(
        "ingest",
        "Remember one event",
        "Store one event and queue its enrichment; answered once it is committed.\n\n"
        "Re-sending the same event (same `external_id`, or same conversation, role, author, content\n"
        "and time) stores nothing new and answers `duplicate` with the existing id.",
        "ingest_v6_ingest_post",
        EventBody,
        "202",
        IngestAck,
        {"400": "A field is missing or wrong; nothing was stored."},
    ),
    "/v6/recall": _lean_operation(
        "recall",
        "Context for the next model call",
        "Rank what the vault knows for this conversation and query, and write it as prompt-ready\n"
        "text within the token budget.\n\n"
        "Name a `document_id` or `collection_id` to answer from documents; otherwise memories\n"
        "(facts, turns, episodes) and documents are searched together.",
        "recall_v6_recall_post",
        RecallBody,
        "200",
        RecallOut,
        {
            "400": "A field is missing or out of range (`details.field` names it).",
            "404": "`document_id` or `collection_id` does not exist.",
        },
    ),
}
#: The path each lean route's item is placed before in the document.
_LEAN_PLACES = {"/v6/ingest": "/v6/ingest/batch", "/v6/recall": "/v6/documents"}
#: FastAPI's own validation answer, which Cairn never sends (validation is a 400).
_FASTAPI_VALIDATION_REF = "#/components/schemas/HTTPValidationError"

_MCP_PATH_ITEM: dict[str, Any] = {
    "post": {
        "tags": ["mcp"],
        "summary": "MCP (streamable HTTP transport)",
        "description": "The Model Context Protocol: JSON-RPC messages of the MCP specification, "
        "answered as JSON or as an event stream. Tools: ingest_event, recall_context, "
        "search_facts, get_object, correct_fact, upload_document, list_collections, forget, "
        "list_conversations, and the subject workspace's verbs (create_subjects, remember, "
        "create_understanding, open_intersection, orient, bring_to_mind, recall, consolidate, "
        "merge_subjects, … : the same names, inputs and answers as "
        "`POST /v6/workspace/<verb>`). Send `Accept: application/json, "
        "text/event-stream`; the same guard applies as everywhere. The same server runs on "
        "stdio with `cairn mcp`.",
        "operationId": "mcp_post",
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {"type": "object"},
                    "example": {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {},
                            "clientInfo": {"name": "my-chat-app", "version": "1.0"},
                        },
                    },
                }
            },
        },
        "responses": {"200": {"description": "The JSON-RPC response (JSON or event stream)."}},
    }
}


def app_metadata() -> dict[str, Any]:
    """Title, version and descriptions shared by the served app and :func:`schema`."""
    return {
        "title": TITLE,
        "version": __version__,
        "summary": SUMMARY,
        "description": DESCRIPTION,
    }


def finish(generated: dict[str, Any]) -> dict[str, Any]:
    """FastAPI's document with Cairn's error responses and the MCP path (a new dict)."""
    doc = copy.deepcopy(generated)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas.update(_error_schemas())
    schemas.update(_referenced_schemas())
    doc["components"]["responses"] = {
        f"Error{status}": {
            "description": text,
            "content": {"application/json": {"schema": _ERROR_REF}},
        }
        for status, text in _ERRORS.items()
    }
    doc["paths"] = _with_lean_paths(doc.get("paths", {}))
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            responses = operation.setdefault("responses", {})
            if _is_fastapi_validation(responses.get("422")):
                del responses["422"]
            for status, entry in responses.items():
                if not status.startswith("2"):  # the route's own refusals (404, 409, …)
                    entry.setdefault("content", {"application/json": {"schema": _ERROR_REF}})
            for status in _error_statuses(method, path, operation):
                responses.setdefault(status, {"$ref": f"#/components/responses/Error{status}"})
            operation["responses"] = dict(sorted(responses.items()))
    doc["paths"]["/mcp"] = copy.deepcopy(_MCP_PATH_ITEM)
    return doc


def _with_lean_paths(paths: dict[str, Any]) -> dict[str, Any]:
    """``paths`` with the lean routes' items, each where its router's other paths are (the document reads by area)."""
    out: dict[str, Any] = {}
    for path, item in paths.items():
        for lean, before in _LEAN_PLACES.items():
            if path == before:
                out[lean] = copy.deepcopy(_LEAN_PATHS[lean])
        out[path] = item
    for lean, item in _LEAN_PATHS.items():
        out.setdefault(lean, copy.deepcopy(item))
    return out


def schema() -> dict[str, Any]:
    """The document, built from the routers without opening a vault."""
    from engine.api.routes import routers  # on use: the routers pull in the engine

    app = FastAPI(**app_metadata(), docs_url=None, redoc_url=None)
    for router in routers():
        app.include_router(router)
    return finish(app.openapi())


def render(document: dict[str, Any]) -> str:
    """The committed file's exact text."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _error_statuses(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    statuses = ["421", "403", "429", "500", "503"]
    if (method, path) not in PUBLIC_OPERATIONS:
        statuses.append("401")
    if operation.get("parameters") or "requestBody" in operation:
        statuses.append("400")
    if method in _STATE_CHANGING:
        statuses += ["408", "413", "415"]
    return statuses


def _is_fastapi_validation(response: dict[str, Any] | None) -> bool:
    if response is None:
        return False
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return bool(schema.get("$ref") == _FASTAPI_VALIDATION_REF)


def _referenced_schemas() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for model in _REFERENCED_MODELS:
        generated = model.model_json_schema(ref_template="#/components/schemas/{model}")
        found.update(generated.pop("$defs", {}))
        found[model.__name__] = generated
    for model in _ANSWER_MODELS:
        generated = model.model_json_schema(ref_template="#/components/schemas/{model}", mode="serialization")
        found.update(generated.pop("$defs", {}))
        found[model.__name__] = generated
    return found


def _error_schemas() -> dict[str, Any]:
    generated = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    definitions = generated.pop("$defs", {})
    return {**definitions, "ErrorBody": generated}


def main() -> None:
    """Print the document (``python -m engine.api.openapi > docs/openapi.json``)."""
    sys.stdout.write(render(schema()))


if __name__ == "__main__":
    main()
