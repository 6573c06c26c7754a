"""``POST /v6/recall`` answered without FastAPI's layers, for the requests they would accept as they are.

Recall is what a chat client sends before every model call.  Besides the ranking itself, each request paid for a
dozen ASGI layers (routing, dependency resolution, exception middleware) and for its answer twice over: the
engine's result copied into the response model (``RecallOut``, validated field by field) and that model encoded
again.  On the benchmark vault under the 70/30 load that was ~1.5 ms of interpreter time per recall in the
endpoint's process, whose interpreter lock every request shares.  This handler sits inside the guard (Host,
Origin, token, content type and body cap are checked as for every route), validates the body as
:class:`~engine.api.models.recall.RecallBody`, calls ``Vault.recall`` on a worker thread and encodes the engine's
:class:`~engine.recall.types.RecallResult` straight to JSON.  ``RecallOut`` has the same fields, types and order
as that result, so the bytes are the route's bytes (a test compares them).

Anything it would answer differently goes to FastAPI untouched, body replayed: a body that is not valid JSON or
not a valid request (FastAPI's 400 names the field), a body not labelled ``application/json`` (multipart, another
charset), any other path or method.  The route stays declared, so the
OpenAPI document describes it; engine errors get the same answer as from the route.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import TypeAdapter
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp

from engine.api.fast_ingest import FastPath
from engine.api.models.recall import RecallBody
from engine.recall.types import RecallRequest, RecallResult
from engine.vault import Vault

RECALL_PATH = "/v6/recall"
_RESULT_JSON: TypeAdapter[RecallResult] = TypeAdapter(RecallResult)


def encode_result(result: RecallResult) -> bytes:
    """The JSON of ``result`` exactly as the route's ``RecallOut`` encodes it."""
    return _RESULT_JSON.dump_json(result)


class FastRecall(FastPath):
    """The fast path for valid recall requests (see the module docstring)."""

    path = RECALL_PATH

    def __init__(self, app: ASGIApp, vault: Callable[[], Vault]) -> None:
        super().__init__(app)
        #: A zero-argument callable returning the app's vault (set on the app's state after the stack is built).
        self._vault = vault

    def parse(self, body: bytes) -> RecallRequest:
        """The engine's request for a valid recall body."""
        return RecallBody.model_validate_json(body).to_request()

    async def handle(self, request: RecallRequest) -> tuple[int, bytes]:
        """Recall on a worker thread (one hand-off for the recall and its encoding, as the route does)."""
        return 200, await run_in_threadpool(_recall_json, self._vault(), request)


def _recall_json(vault: Vault, request: RecallRequest) -> bytes:
    return encode_result(vault.recall(request))
