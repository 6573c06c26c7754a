"""``POST /v6/ingest`` and ``POST /v6/recall``: the two hot routes, each answered by one lean ASGI handler.

Chat clients send a single-event ingest on every turn and a recall before every model call, often from many tabs at
once.  Through FastAPI each request went through a dozen ASGI layers (error middleware, exception handlers, routing,
dependency resolution, response models encoded twice) that cost more interpreter time than storing the event.  So
these two routes are not FastAPI routes: a :class:`FastPath` sits inside the guard (Host, Origin, token, content
type, body cap and deadlines are checked as for every route) and answers every request to its path itself —
validate the body as the route's request model, call the vault, encode the answer — including every refusal, in
the endpoint's one error shape: a body that is not JSON or not a valid request is a 400 naming the field, as
FastAPI's validation answers elsewhere (:func:`~engine.api.errors.validation_answer`); a body labelled anything
but JSON (the guard lets multipart through, for uploads) is a 400 naming ``body``; another method is a 405.

The OpenAPI document describes both operations from the same request and answer models
(:mod:`engine.api.openapi`).  :class:`FastIngest` is here; :mod:`engine.api.fast_recall` is the other one.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from pydantic import ValidationError as PydanticValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from engine.api.errors import (
    JSON_MEDIA_TYPE,
    internal_error_answer,
    method_not_allowed_answer,
    validation_answer,
    vault_error_answer,
)
from engine.api.models.events import EventBody, IngestAck
from engine.errors import VaultError
from engine.events import EventIn
from engine.vault import Vault

T = TypeVar("T")

INGEST_PATH = "/v6/ingest"
#: ``source`` of events that arrive over REST (MCP uses ``mcp``).
SOURCE = "api"
#: A body labelled anything but JSON (multipart, say): refused as a validation error naming ``body``.
_NOT_JSON = {"type": "model_attributes_type", "loc": ("body",), "msg": "send the body as JSON (application/json)"}
#: A JSON body that is not an object, as FastAPI words it.
_NOT_AN_OBJECT = {
    "type": "model_attributes_type",
    "loc": ("body",),
    "msg": "Input should be a valid dictionary or object to extract fields from",
}


class FastPath:
    """ASGI middleware answering every request to one ``POST`` route itself (see the module docstring).

    Subclasses say which path (:attr:`path`), how a body becomes the engine's request (:meth:`parse`: pydantic's
    validation error, or a ValueError, is answered 400) and what answers it (:meth:`handle`).  Engine errors are
    answered as the FastAPI routes answer them.
    """

    path = ""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.answered = 0  # requests answered 2xx here (for tests and the load benchmark)

    def parse(self, body: bytes) -> Any:
        """The engine's request for ``body``; raises pydantic's ValidationError or ValueError if it is not one."""
        raise NotImplementedError

    async def handle(self, request: Any) -> tuple[int, bytes]:
        """Status and JSON body answering ``request``."""
        raise NotImplementedError

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a request to :attr:`path`; anything else goes on to the app."""
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        if scope["method"] != "POST":
            payload, headers = method_not_allowed_answer("POST")
            await _answer(send, 405, payload, headers)
            return
        body, ended = await _read_body(receive)
        if not ended:
            return  # the client left, or the guard cut the body off and answered 413/408 itself
        if not _is_json(scope):
            await _answer(send, 400, validation_answer([_NOT_JSON], "POST", self.path), {})
            return
        try:
            request = self.parse(body)
        except PydanticValidationError as exc:
            errors = [_as_body_error(error) for error in exc.errors(include_input=False)]
            await _answer(send, 400, validation_answer(errors, "POST", self.path), {})
            return
        except ValueError as exc:
            problem = {"type": "value_error", "loc": ("body",), "msg": str(exc)}
            await _answer(send, 400, validation_answer([problem], "POST", self.path), {})
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
    """``POST /v6/ingest``: store one event; 202 once it is committed (see the module docstring).

    The event goes to the vault's writer as it arrives; the single events waiting for the writer together are
    written in one merged call (:meth:`~engine.store.writer.Writer.submit_merged`), which is what lets many clients
    be acknowledged at once.  Re-sending the same event (same ``external_id``, or same conversation, role, author,
    content and time) stores nothing new and answers ``duplicate`` with the existing id.
    """

    path = INGEST_PATH

    def __init__(self, app: ASGIApp, vault: Callable[[], Vault]) -> None:
        super().__init__(app)
        #: A zero-argument callable returning the app's vault (set on the app's state after the stack is built).
        self._vault = vault

    def parse(self, body: bytes) -> EventIn:
        """The event of a valid single-event body."""
        return EventBody.model_validate_json(body).to_event(SOURCE)

    async def handle(self, request: EventIn) -> tuple[int, bytes]:
        """Hand the event to the writer; 202 once committed."""
        result = await committed(self._vault().events.submit(request))
        return 202, IngestAck.of(result).model_dump_json().encode("utf-8")


async def committed(future: Future[T]) -> T:
    """Wait on the event loop for a write handed to the vault's writer (a ``concurrent.futures.Future``).

    A client that leaves while its event waits does not take the event with it: what was handed over is written, the
    answer just has nobody to go to (cancelling this wait never cancels the write).
    """
    loop = asyncio.get_running_loop()
    answers = _ANSWERS.get(loop)
    if answers is None:
        answers = _ANSWERS[loop] = _Answers(loop)
    return await answers.wait(future)


class _Answers:
    """The writer's answers for one event loop, handed to it with one wake-up per burst rather than one per request.

    Many clients at once mean many writes settled together (the writer commits them in one transaction); waking the
    loop once for each would cost every request a switch of the interpreter between the writer's thread and the
    loop's.  So settled futures are queued here, and the loop is woken once to answer all that are queued.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._settled: collections.deque[tuple[Future[Any], asyncio.Future[Any]]] = collections.deque()
        self._lock = threading.Lock()
        self._woken = False

    def wait(self, future: Future[T]) -> asyncio.Future[T]:
        """An asyncio future settled like ``future`` (on this loop)."""
        waiting: asyncio.Future[T] = self._loop.create_future()
        future.add_done_callback(lambda done: self._settle_later(done, waiting))
        return waiting

    def _settle_later(self, done: Future[Any], waiting: asyncio.Future[Any]) -> None:
        """On the thread that settled ``done`` (the writer's): queue it, and wake the loop unless it is awake."""
        self._settled.append((done, waiting))
        with self._lock:
            if self._woken:
                return
            self._woken = True
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
            self._loop.call_soon_threadsafe(self._settle)

    def _settle(self) -> None:
        """On the loop: answer everything queued."""
        with self._lock:
            self._woken = False
        while self._settled:
            done, waiting = self._settled.popleft()
            if waiting.done():  # its client left
                continue
            if done.cancelled():
                waiting.cancel()
            elif (error := done.exception()) is not None:
                waiting.set_exception(error)
            else:
                waiting.set_result(done.result())


#: One :class:`_Answers` per event loop (the endpoint has one; tests and embedding apps may run several).
_ANSWERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Answers] = weakref.WeakKeyDictionary()


def _as_body_error(error: Any) -> dict[str, Any]:
    """One of pydantic's errors for the body, located and worded as FastAPI's validation of a body model words it,
    so the endpoint tells one mistake one way on every route."""
    if not error["loc"] and error["type"] == "model_type":  # JSON, but not an object
        return {**error, **_NOT_AN_OBJECT}
    return {**error, "loc": ("body", *error["loc"])}


def _is_json(scope: Scope) -> bool:
    """Whether the request says its body is JSON: one ``Content-Type`` of ``application/json`` (parameters such as a
    charset ignored: JSON is UTF-8, and is read as the bytes it is)."""
    types = [value for name, value in scope["headers"] if name == b"content-type"]
    return len(types) == 1 and types[0].partition(b";")[0].strip().lower() == b"application/json"


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


async def _answer(send: Send, status: int, payload: bytes, headers: dict[str, str]) -> None:
    raw = [
        (b"content-type", JSON_MEDIA_TYPE.encode("ascii")),
        (b"content-length", str(len(payload)).encode("ascii")),
        *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload, "more_body": False})
