"""The endpoint's one error shape and the exception handlers that produce it.

Every refusal and failure is answered as JSON ``{"error": {"code", "message", "details"}}``, whether
it comes from the guard (before routing), from FastAPI (unknown route, request validation) or from
the engine (a :class:`~engine.errors.VaultError`).  Nothing here ever puts a stack trace, a request
body or a header into a response or a log line: a log line names the exception type, the error code
and the route template, nothing more, because bodies and paths can carry memory content and headers
carry the token.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from engine.errors import EnvironmentProblem, VaultError

log = logging.getLogger(__name__)

JSON_MEDIA_TYPE = "application/json"

#: Seconds a client should wait after 429 (all slots taken; they free up in well under a second).
RETRY_AFTER_BUSY_S = 1
#: Seconds a client should wait after 503 (the vault is closing, reopening or out of a resource).
RETRY_AFTER_UNAVAILABLE_S = 5

#: Error codes for HTTP statuses raised by the framework itself (routing, methods, …).
CODE_BY_STATUS: Mapping[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    421: "misdirected_request",
    422: "unprocessable",
    429: "too_many_requests",
    500: "internal_error",
    503: "unavailable",
}

_GENERIC_MESSAGES: Mapping[int, str] = {
    404: "Nothing is served at this path.",
    405: "This path does not accept that method.",
}

_INTERNAL_MESSAGE = "Cairn failed while handling this request; it may not have been completed."
_INTERNAL_FIX = "Try again; if it keeps failing, the vault's logs/ folder names the error type."


def error_payload(code: str, message: str, details: Mapping[str, Any] | None = None) -> bytes:
    """The JSON bytes of one error (values that JSON cannot express are written as strings)."""
    body = {"error": {"code": code, "message": message, "details": dict(details or {})}}
    return json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    details: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """A complete error response in the endpoint's shape."""
    return Response(
        content=error_payload(code, message, details),
        status_code=status,
        media_type=JSON_MEDIA_TYPE,
        headers=dict(headers or {}),
    )


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every exception into the endpoint's error shape."""
    app.add_exception_handler(VaultError, _vault_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    # Exception (not a subclass) is what Starlette wires into its outermost error middleware: a bug
    # anywhere, including in another middleware, ends here instead of in the default plain-text 500.
    app.add_exception_handler(Exception, _internal_error)


def _route_template(request: Request) -> str:
    """The matched route's template (``/v6/facts/{fact_id}``), without the values in the path."""
    route = request.scope.get("route")
    template = getattr(route, "path", None)
    return template if isinstance(template, str) else "(no route)"


async def _vault_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, VaultError):  # pragma: no cover - registered for VaultError only
        return await _internal_error(request, exc)
    status, payload, headers = vault_error_answer(exc, request.method, _route_template(request))
    return Response(content=payload, status_code=status, media_type=JSON_MEDIA_TYPE, headers=headers)


#: The HTTP status answering each engine error ``code``.  An error whose own code is not listed answers as its nearest
#: listed ancestor (``extension_unavailable`` as ``environment``); anything unlisted at all is a 500.
HTTP_STATUS: dict[str, int] = {
    "vault_error": 500,
    "user_error": 400,
    "validation_error": 400,
    "not_found": 404,
    "conflict": 409,
    "vault_too_new": 409,
    "vault_damaged": 500,
    "vault_locked": 409,
    "unsupported_file": 415,
    "path_not_allowed": 403,
    "document_quarantined": 422,
    "environment": 503,
    "storage_full": 507,
    "writer_closed": 503,
}


def status_of(exc: VaultError) -> int:
    """The HTTP status answering ``exc``: its class's code, else the nearest ancestor's (see :data:`HTTP_STATUS`)."""
    for cls in type(exc).__mro__:
        code = cls.__dict__.get("code")
        if isinstance(code, str) and code in HTTP_STATUS:
            return HTTP_STATUS[code]
    return 500


def vault_error_answer(exc: VaultError, method: str, route: str) -> tuple[int, bytes, dict[str, str]]:
    """Status, JSON body and headers answering an engine error (logged by type and code, never by content)."""
    status = status_of(exc)
    level = logging.WARNING if status >= 500 else logging.INFO
    log.log(level, "%s %s answered %s (%s)", method, route, status, exc.code)
    headers: dict[str, str] = {}
    if status == 503 or isinstance(exc, EnvironmentProblem):
        headers["Retry-After"] = str(RETRY_AFTER_UNAVAILABLE_S)
    details: dict[str, Any] = {"fix": exc.fix, **exc.details}
    return status, error_payload(exc.code, exc.message, details), headers


def internal_error_answer(exc: BaseException, method: str, route: str) -> bytes:
    """The JSON body of a 500 (logged by the exception's type only)."""
    # The type only: an exception's message can quote memory content or SQL with parameters.
    log.error("%s %s failed with %s", method, route, type(exc).__name__)
    return error_payload("internal_error", _INTERNAL_MESSAGE, {"fix": _INTERNAL_FIX})


async def _validation_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, RequestValidationError):  # pragma: no cover - registered for validation errors only
        return await _internal_error(request, exc)
    payload = validation_answer(exc.errors(), request.method, _route_template(request))
    return Response(content=payload, status_code=400, media_type=JSON_MEDIA_TYPE)


def validation_answer(errors: Sequence[Mapping[str, Any]], method: str, route: str) -> bytes:
    """The 400 ``validation_error`` payload for pydantic's ``errors``, each located as FastAPI locates them
    (``("body", "events", 2, "content")``): the first names the field, all are listed."""
    problems = [_describe_problem(err) for err in errors]
    first = problems[0] if problems else {"field": "request", "in": "request", "message": "invalid request"}
    log.info("%s %s answered 400 (validation_error)", method, route)
    # The offending *input* is left out on purpose: it is the client's own data, maybe personal.
    return error_payload(
        "validation_error",
        f"{first['field']}: {first['message']}",
        {
            "field": first["field"],
            "in": first["in"],
            "errors": problems,
            "fix": "Correct the named field; /openapi.json describes every request.",
        },
    )


def method_not_allowed_answer(allowed: str) -> tuple[bytes, dict[str, str]]:
    """The 405 payload and headers for a path that takes only ``allowed`` (as FastAPI's router answers it)."""
    return error_payload(CODE_BY_STATUS[405], _GENERIC_MESSAGES[405], {"allowed": allowed}), {"Allow": allowed}


def _describe_problem(err: Mapping[str, Any]) -> dict[str, str]:
    """Field (``events[0].content``, no ``body``/``query`` prefix), where it was, pydantic's
    message."""
    loc = tuple(err.get("loc", ()))
    where = str(loc[0]) if loc else "request"
    kind = str(err.get("type", ""))
    if kind == "json_invalid":
        return {
            "field": "body",
            "in": "body",
            "message": "the body is not valid JSON",
            "type": kind,
        }
    field = _field_path(loc[1:]) or where
    return {
        "field": field,
        "in": where,
        "message": str(err.get("msg", "invalid value")),
        "type": kind,
    }


def _field_path(parts: tuple[Any, ...]) -> str:
    """``("events", 2, "content")`` as ``events[2].content``: the spelling the engine uses too."""
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


async def _http_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, StarletteHTTPException):  # pragma: no cover - registered for HTTP exceptions only
        return await _internal_error(request, exc)
    if _unreadable_json(exc):
        return await _validation_error(request, _JSON_INVALID)
    status = exc.status_code
    code = CODE_BY_STATUS.get(status, "http_error")
    message = _GENERIC_MESSAGES.get(status)
    if message is None:
        message = exc.detail if isinstance(exc.detail, str) and exc.detail else "The request was refused."
    details: dict[str, Any] = {}
    if status == 405:
        details["allowed"] = (exc.headers or {}).get("Allow", "")
    return error_response(status, code, message, details=details, headers=exc.headers)


#: A body that is not JSON, as FastAPI itself reports one it could decode as text but not parse.
_JSON_INVALID = RequestValidationError([{"type": "json_invalid", "loc": ("body",), "msg": "JSON decode error"}])


def _unreadable_json(exc: StarletteHTTPException) -> bool:
    """Whether FastAPI refused a JSON body it could not even decode: not UTF-8 (``UnicodeDecodeError``), nested
    deeper than the parser's stack (``RecursionError``) or a number past Python's digit limit (``ValueError``).

    FastAPI answers those with a bare 400 "There was an error parsing the body" (the parser's own error as the
    cause), while JSON it can read but not parse is a validation error naming ``body``.  Both are the same mistake
    to a client, so both get the second answer.
    """
    return exc.status_code == 400 and isinstance(exc.__cause__, ValueError | RecursionError)


async def _internal_error(request: Request, exc: Exception) -> Response:
    payload = internal_error_answer(exc, request.method, _route_template(request))
    return Response(content=payload, status_code=500, media_type=JSON_MEDIA_TYPE)
