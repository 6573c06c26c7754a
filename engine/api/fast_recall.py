"""``POST /v6/recall`` answered by one lean ASGI handler (:class:`~engine.api.fast_ingest.FastPath`).

Recall is what a chat client sends before every model call.  Besides the ranking itself, each request paid for a
dozen ASGI layers and for its answer twice over: the engine's result copied into a response model, validated field
by field, and that model encoded again.  Here the body is validated as :class:`~engine.api.models.recall.RecallBody`,
``Vault.recall`` runs on a worker thread and the engine's :class:`~engine.recall.types.RecallResult` is encoded
straight to JSON.  The OpenAPI document describes the answer as ``RecallOut``, whose fields, types and order are the
result's (a test checks the answer against it).
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
    """The JSON of ``result``: the fields of ``RecallOut``, in its order."""
    return _RESULT_JSON.dump_json(result)


class FastRecall(FastPath):
    """``POST /v6/recall``: the context to put in front of a model, for one question (see the module docstring)."""

    path = RECALL_PATH

    def __init__(self, app: ASGIApp, vault: Callable[[], Vault]) -> None:
        super().__init__(app)
        #: A zero-argument callable returning the app's vault (set on the app's state after the stack is built).
        self._vault = vault

    def parse(self, body: bytes) -> RecallRequest:
        """The engine's request for a valid recall body."""
        return RecallBody.model_validate_json(body).to_request()

    async def handle(self, request: RecallRequest) -> tuple[int, bytes]:
        """Recall on a worker thread (one hand-off for the recall and its encoding)."""
        return 200, await run_in_threadpool(_recall_json, self._vault(), request)


def _recall_json(vault: Vault, request: RecallRequest) -> bytes:
    return encode_result(vault.recall(request))
