"""The fake Ollama's OpenAI compatibility: ``/v1/chat/completions``, ``/v1/models`` and ``/v1/embeddings``.

Real Ollama serves OpenAI's API beside its own (``openai.go`` in its ``middleware``): the same models and replies,
OpenAI's shapes — a chat answer as one ``chat.completion`` object or as server-sent ``chat.completion.chunk`` events
ending with ``data: [DONE]`` over chunked transfer, models listed with ``owned_by: "library"``, and errors as
``{"error": {"message", "type", "param", "code"}}`` (a missing model: 404, type ``api_error``, Ollama's own wording).
The fake answers them from the same queue, responder and vectors as its native routes.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

from tests.fakes.ollama import FakeOllama, _Handler, _HTTPError, fake_embedding

ROUTES = {"/v1/chat/completions": "POST", "/v1/models": "GET", "/v1/embeddings": "POST"}
_CREATED = 1_735_689_600


def serve(handler: _Handler, method: str, path: str, body: Any) -> None:
    """Answer one ``/v1/...`` request on ``handler``'s connection."""
    fake = handler.server.fake
    try:
        if ROUTES.get(path) is None:
            raise _HTTPError(404, "404 page not found")
        if method != ROUTES[path]:
            raise _HTTPError(405, "405 method not allowed")
        if path == "/v1/models":
            data = [{"id": m, "object": "model", "created": _CREATED, "owned_by": "library"} for m in fake.models]
            handler._send_json(200, {"object": "list", "data": data})
            return
        if not isinstance(body, dict):
            raise _HTTPError(400, "invalid request body")
        spec = fake._require_model(body, None, "chat")
        if path == "/v1/embeddings":
            handler._send_json(200, _embeddings(fake, spec.name, body))
        else:
            _chat(handler, fake, str(body["model"]), body)
    except _HTTPError as exc:
        kind = "api_error" if exc.status in (404, 500) else "invalid_request_error"
        handler._send_json(exc.status, {"error": {"message": exc.message, "type": kind, "param": None, "code": None}})


def _chat(handler: _Handler, fake: FakeOllama, model: str, body: dict[str, Any]) -> None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _HTTPError(400, "[] is too short - 'messages'")
    native = {**body, "messages": [{**m, "content": _text(m.get("content"))} for m in messages if isinstance(m, dict)]}
    content = fake._reply_for(native)
    ident = f"chatcmpl-{len(fake.requests)}"
    if not body.get("stream"):
        handler._send_json(
            200,
            {
                "id": ident,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": "fp_ollama",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": len(content.split()), "total_tokens": 1},
            },
        )
        return
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    for piece in re.findall(r"\S+\s*|\s+", content):
        _event(handler, _chunk(ident, model, {"role": "assistant", "content": piece}, None))
    _event(handler, _chunk(ident, model, {"role": "assistant", "content": ""}, "stop"))
    _write(handler, b"data: [DONE]\n\n")
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _chunk(ident: str, model: str, delta: Mapping[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": _CREATED,
        "model": model,
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
    }


def _event(handler: _Handler, payload: Mapping[str, Any]) -> None:
    _write(handler, b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n")


def _write(handler: _Handler, data: bytes) -> None:
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()


def _embeddings(fake: FakeOllama, model: str, body: dict[str, Any]) -> dict[str, Any]:
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise _HTTPError(400, "invalid input type")
    spec = fake.model(model)
    dim = (spec.embedding_dim if spec else None) or fake.embedding_dim
    data = [
        {"object": "embedding", "index": i, "embedding": fake_embedding(t, dim, model)} for i, t in enumerate(texts)
    ]
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": 1, "total_tokens": 1}}
