"""``POST /v6/ingest`` answered without FastAPI's layers, for the requests they would accept as they are.

Single-event ingest is what chat clients send on every turn, often from many tabs at once, and each request went
through a dozen ASGI layers (error middleware, exception handlers, body-limit middleware, routing, dependency
resolution, response encoding) that cost more interpreter time than storing the event.  This handler sits inside
the guard (Host, Origin, token, content type and body cap are checked as for every route) and does exactly what
the FastAPI route does — validate the body as :class:`~engine.api.models.events.EventBody`, hand the event to the
:class:`~engine.api.coalesce.IngestCoalescer`, answer 202 with an :class:`IngestAck` — and nothing else.

Anything it would answer differently goes to FastAPI untouched, body replayed: a body that is not valid JSON or
not a valid event (FastAPI's 400 names the field), any other path or method.  So does a body not labelled
``application/json`` (with at most ``charset=utf-8``): the guard lets multipart through for uploads, and FastAPI
refuses JSON sent as multipart, so the handler must not take it either — both ways in answer alike.

The route stays declared in FastAPI, so the OpenAPI document describes it, and engine errors are answered with
the same handler output.  What every such fast path shares (the path and content-type tests, reading and
replaying the body, the error answers) is :class:`FastPath`; :mod:`engine.api.fast_recall` is the other one.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError as PydanticValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engine.api.coalesce import IngestCoalescer
from engine.api.errors import JSON_MEDIA_TYPE, internal_error_answer, vault_error_answer
from engine.api.models.events import EventBody, IngestAck
from engine.api.routes.ingest import SOURCE
from engine.errors import VaultError
from engine.events import EventIn

INGEST_PATH = "/v6/ingest"


class FastPath:
    """ASGI middleware answering one ``POST`` route itself for the bodies its request model accepts.

    Subclasses say which path (:attr:`path`), how a body becomes the engine's request (:meth:`parse`: a pydantic
    or value error sends the request, body replayed, to FastAPI, whose 400 names the field) and what answers it
    (:meth:`handle`).  Engine errors are answered as the routes answer them.
    """

    path = ""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.answered = 0  # requests answered here (for tests and the load benchmark)

    def parse(self, body: bytes) -> Any:
        """The engine's request for ``body``; raises pydantic's ValidationError or ValueError if it is not one."""
        raise NotImplementedError

    async def handle(self, request: Any) -> tuple[int, bytes]:
        """Status and JSON body answering ``request``."""
        raise NotImplementedError

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a JSON ``POST`` to :attr:`path` here when :meth:`parse` takes its body; the rest goes to the app."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        body, ended = await _read_body(receive)
        if not ended:
            return  # the client left, or the guard cut the body off and answered 413 itself
        try:
            request = self.parse(body)
        except (PydanticValidationError, ValueError):
            await self.app(scope, _replay(body, receive), send)
            return
        try:
            status, payload = await self.handle(request)
        except VaultError as exc:
            status, payload, headers = vault_error_answer(exc, "POST", self.path)
            await _answer(send, status, payload, headers)
            return
        except Exception as exc:
            await _answer(send, 500, internal_error_answer(exc, "POST", self.path), {})
            return
        self.answered += 1
        await _answer(send, status, payload, {})


class FastIngest(FastPath):
    """The fast path for valid single-event ingests (see the module docstring)."""

    path = INGEST_PATH

    def __init__(self, app: ASGIApp, coalescer: Any) -> None:
        super().__init__(app)
        #: A zero-argument callable returning the app's coalescer (it is created after the middleware stack).
        self._coalescer = coalescer

    def parse(self, body: bytes) -> EventIn:
        """The event of a valid single-event body."""
        return EventBody.model_validate_json(body).to_event(SOURCE)

    async def handle(self, request: EventIn) -> tuple[int, bytes]:
        """Store the event with the others arriving now; 202 once committed."""
        coalescer: IngestCoalescer = self._coalescer()
        result = await coalescer.ingest(request)
        return 202, IngestAck.of(result).model_dump_json().encode("utf-8")


def _is_json(scope: Scope) -> bool:
    """Whether the request says its body is JSON in UTF-8: one ``Content-Type``, ``application/json``, and no
    parameter but an optional ``charset=utf-8``.

    The handler parses bytes as UTF-8 JSON whatever the label says, so it takes only what is labelled that way and
    hands everything else (multipart, another charset, a second Content-Type) to FastAPI, which answers as the
    route does.  The guard has already refused types that are neither JSON nor multipart (415).
    """
    types = [value for name, value in scope["headers"] if name == b"content-type"]
    if len(types) != 1:
        return False
    media_type, _, parameters = types[0].partition(b";")
    if media_type.strip().lower() != b"application/json":
        return False
    if not parameters.strip():
        return True
    name, equals, value = parameters.partition(b"=")
    charset = value.strip().strip(b'"').lower()
    return bool(equals) and name.strip().lower() == b"charset" and charset in (b"utf-8", b"utf8")


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The whole request body, and whether it arrived complete (False: a disconnect came first)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"", False
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the already-read body once, then whatever the client sends next."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _answer(send: Send, status: int, payload: bytes, headers: dict[str, str]) -> None:
    raw = [
        (b"content-type", JSON_MEDIA_TYPE.encode("ascii")),
        (b"content-length", str(len(payload)).encode("ascii")),
        *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload, "more_body": False})
