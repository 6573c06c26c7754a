"""Ollama-protocol clients in front of an OpenAI-compatible upstream: the common subset, translated.

An app that only speaks Ollama's API (many do) should still work when the user's model server is LM Studio,
llama.cpp, vLLM, LocalAI or Jan.  What both APIs share is translated both ways:

=====================  ===============================  ==================================================
Ollama route           OpenAI request                   answer
=====================  ===============================  ==================================================
``POST /api/chat``     ``POST /chat/completions``       messages (images as data URLs), ``options``
                                                        (temperature, top_p, seed, stop, num_predict →
                                                        max_tokens, penalties), ``format`` (``json`` →
                                                        ``json_object``, a schema → ``json_schema``),
                                                        ``tools``; streamed as Ollama's NDJSON when asked
``POST /api/generate`` ``POST /chat/completions``       ``system`` and ``prompt`` as two messages
``GET /api/tags``      ``GET /models``                  the model ids, with empty details
``POST /api/show``     ``GET /models``                  the model's id and empty details; 404 if unlisted
``POST /api/embed``    ``POST /embeddings``             the vectors, in input order
``GET /api/version``   — (answered here)                :data:`OLLAMA_API_VERSION`
=====================  ===============================  ==================================================

Not translated: tool calls in a reply, ``raw`` and ``context`` of generate, ``keep_alive``, thinking, logprobs;
they are dropped or not produced.  Memory works as for any chat: it is injected into the Ollama-shaped request
before translation and the reply is read from the translated answer.  An upstream error keeps its status; its
message is put in Ollama's ``{"error": "…"}`` so the client's library shows it.
"""

from __future__ import annotations

import json
import time
import typing
from datetime import UTC, datetime
from typing import Any

import httpx
from starlette.types import Receive, Scope, Send

from engine.api.proxy.dialects import ChatKind, json_object, text_of
from engine.api.proxy.wire import (
    CHAT_ROUTES,
    CONNECT_TIMEOUT_S,
    Protocol,
    send_error,
    send_json,
    upstream_headers,
)
from engine.config import ProxySettings


class Relay(typing.Protocol):
    """What translating needs of the proxy (:class:`engine.api.proxy.forward.MemoryProxy` is one): send a request
    upstream and the answer back, prepare a chat turn's memory, and the upstream client.  A protocol, so that the
    translation does not import the module that calls it."""

    async def exchange(
        self,
        method: str,
        url: str,
        body: bytes,
        receive: Receive,
        send: Send,
        settings: ProxySettings,
        protocol: Protocol,
        *,
        turn: Any = None,
        chat: ChatKind | None = None,
        convert: Answer | None = None,
    ) -> None:
        """Forward one request and relay (or convert) its answer."""
        ...

    async def prepare(self, scope: Scope, chat: ChatKind, body: bytes, settings: ProxySettings) -> Any:
        """Record the user's turn and find the memory to inject."""
        ...

    def client(self) -> httpx.AsyncClient:
        """The upstream client of the running loop."""
        ...


#: The Ollama API version whose shapes the translation follows, answered to ``GET /api/version``.
OLLAMA_API_VERSION = "0.12.0"
_JSON = b"application/json; charset=utf-8"
_NDJSON = b"application/x-ndjson"
#: Ollama ``options`` with an OpenAI request field of the same meaning.
_OPTIONS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "seed": "seed",
    "stop": "stop",
    "num_predict": "max_tokens",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
}
_EMPTY_DETAILS: dict[str, Any] = {
    "parent_model": "",
    "format": "",
    "family": "",
    "families": [],
    "parameter_size": "",
    "quantization_level": "",
}


async def forward_translated(
    proxy: Relay, scope: Scope, body: bytes, receive: Receive, send: Send, settings: ProxySettings
) -> None:
    """Answer an Ollama request from an upstream that speaks only OpenAI's API."""

    path: str = scope["path"]
    base = settings.upstream.rstrip("/")
    if path == "/api/version":
        await send_json(send, 200, {"version": OLLAMA_API_VERSION})
        return
    if path == "/api/tags":
        await proxy.exchange("GET", f"{base}/models", b"", receive, send, settings, "ollama", convert=TagsAnswer())
        return
    parsed = json_object(body)
    if parsed is None:
        await send_error(send, "ollama", 400, "invalid request body: expected a JSON object")
        return
    model = str(parsed.get("model") or "")
    if path == "/api/show":
        await _show(proxy, send, settings, model)
        return
    if path == "/api/embed":
        request = embed_request(parsed)
        await proxy.exchange(
            "POST",
            f"{base}/embeddings",
            _encode(request),
            receive,
            send,
            settings,
            "ollama",
            convert=EmbedAnswer(model),
        )
        return
    chat = CHAT_ROUTES[path]
    if not (parsed.get("messages") if chat == "ollama_chat" else parsed.get("prompt")):
        # Ollama's way to load a model ahead of use; an OpenAI server has no such request, and loads on demand.
        loaded = ChatAnswer(chat, model, stream=False)._piece("", done=True)
        await send_json(send, 200, {**loaded, "done_reason": "load"})
        return
    turn = await proxy.prepare(scope, chat, body, settings) if settings.mode != "off" else None
    shaped = json_object(turn.body) if turn is not None else parsed
    request = chat_request(chat, shaped or parsed)
    await proxy.exchange(
        "POST",
        f"{base}/chat/completions",
        _encode(request),
        receive,
        send,
        settings,
        "ollama",
        turn=turn,
        chat=chat,
        convert=ChatAnswer(chat, model, bool(request["stream"])),
    )


async def _show(proxy: Relay, send: Send, settings: ProxySettings, model: str) -> None:
    """``/api/show`` from the upstream's model list: the model's (empty) details, or 404 when it is not listed.

    Answered whole rather than relayed: whether it is a 404 is only known once the list has arrived.
    """

    try:
        response = await proxy.client().get(
            f"{settings.upstream.rstrip('/')}/models",
            headers=upstream_headers(settings),
            timeout=httpx.Timeout(settings.timeout_s, connect=CONNECT_TIMEOUT_S),
        )
    except httpx.HTTPError as exc:
        await send_error(
            send, "ollama", 502, f"Cairn's memory proxy could not reach {settings.upstream} ({type(exc).__name__})"
        )
        return
    data = json_object(response.content)
    if response.status_code != 200:
        await send_error(send, "ollama", response.status_code, _error_message(data, response.content))
        return
    listed = {str(m.get("id")) for m in (data or {}).get("data") or [] if isinstance(m, dict)}
    if model not in listed:
        await send_error(send, "ollama", 404, f'model "{model}" not found')
        return
    await send_json(
        send,
        200,
        {
            "modelfile": "",
            "parameters": "",
            "template": "",
            "details": _EMPTY_DETAILS,
            "model_info": {},
            "capabilities": ["completion"],
            "modified_at": _iso(time.time()),
        },
    )


# -- requests ----------------------------------------------------------------------------------------------------
def chat_request(kind: ChatKind, body: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI chat request for an Ollama chat or generate request."""
    if kind == "ollama_generate":
        messages: list[dict[str, Any]] = []
        if isinstance(body.get("system"), str) and body["system"]:
            messages.append({"role": "system", "content": body["system"]})
        messages.append(_message({"role": "user", "content": body.get("prompt") or "", "images": body.get("images")}))
    else:
        messages = [_message(m) for m in body.get("messages") or [] if isinstance(m, dict)]
    stream = body.get("stream") is not False  # Ollama streams unless told not to; OpenAI the other way round
    request: dict[str, Any] = {"model": body.get("model"), "messages": messages, "stream": stream}
    options = body.get("options")
    if isinstance(options, dict):
        request.update({_OPTIONS[k]: v for k, v in options.items() if k in _OPTIONS and v is not None})
    fmt = body.get("format")
    if fmt == "json":
        request["response_format"] = {"type": "json_object"}
    elif isinstance(fmt, dict):
        request["response_format"] = {"type": "json_schema", "json_schema": {"name": "response", "schema": fmt}}
    if isinstance(body.get("tools"), list) and body["tools"]:
        request["tools"] = body["tools"]  # Ollama took OpenAI's tool format as it is
    return request


def _message(message: dict[str, Any]) -> dict[str, Any]:
    content = text_of(message.get("content"))
    images = message.get("images")
    out: dict[str, Any] = {"role": message.get("role") or "user", "content": content}
    if isinstance(images, list) and images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": content}]
        parts += [
            {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{image}"}}
            for image in images
            if isinstance(image, str)
        ]
        out["content"] = parts
    return out


def embed_request(body: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI embeddings request for an Ollama ``/api/embed`` request."""
    raw = body.get("input")
    request: dict[str, Any] = {"model": body.get("model"), "input": [raw] if isinstance(raw, str) else raw}
    if isinstance(body.get("dimensions"), int):
        request["dimensions"] = body["dimensions"]
    return request


def _encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


# -- answers -----------------------------------------------------------------------------------------------------
class Answer:
    """Turns an OpenAI answer into Ollama's as its bytes arrive (this base: a whole JSON answer, or an error)."""

    def __init__(self) -> None:
        self.ok = False
        self._buffer = b""

    def start(self, status: int, content_type: str) -> bytes:
        """The upstream answered ``status``; returns the translated answer's content type."""
        self.ok = status == 200
        return _JSON

    def feed(self, chunk: bytes) -> bytes:
        """The translated bytes for the next upstream bytes (none until the end, for a whole answer)."""
        self._buffer += chunk
        return b""

    def finish(self) -> bytes:
        """The rest of the translated answer."""
        data = json_object(self._buffer)
        if not self.ok:
            return _encode({"error": _error_message(data, self._buffer)})
        try:
            return _encode(self.whole(data or {}))
        except (KeyError, TypeError, ValueError, AttributeError):
            return _encode({"error": "the upstream's answer could not be translated to Ollama's"})

    def whole(self, data: dict[str, Any]) -> dict[str, Any]:
        """The Ollama answer for the upstream's whole (successful) answer."""
        raise NotImplementedError


class TagsAnswer(Answer):
    """``/models`` → ``/api/tags``."""

    def whole(self, data: dict[str, Any]) -> dict[str, Any]:
        """The upstream's model ids as Ollama's model list, each with empty details."""
        return {"models": [_model_entry(m) for m in data.get("data") or [] if isinstance(m, dict)]}


class EmbedAnswer(Answer):
    """``/embeddings`` → ``/api/embed``."""

    def __init__(self, model: str) -> None:
        super().__init__()
        self.model = model

    def whole(self, data: dict[str, Any]) -> dict[str, Any]:
        """The vectors in the order of the request's inputs, under the model the client asked for."""
        items = sorted((d for d in data.get("data") or [] if isinstance(d, dict)), key=lambda d: int(d["index"]))
        return {"model": self.model, "embeddings": [d["embedding"] for d in items]}


class ChatAnswer(Answer):
    """``/chat/completions`` → ``/api/chat`` or ``/api/generate``: server-sent events become NDJSON lines as they
    arrive, a whole answer one object."""

    def __init__(self, kind: ChatKind, model: str, stream: bool) -> None:
        super().__init__()
        self.kind = kind
        self.model = model
        self.stream = stream
        self.streaming = False
        self._finish_reason = ""
        self._done = False

    def start(self, status: int, content_type: str) -> bytes:
        """As for any answer, and notes whether it streams: a successful event stream is translated line by line."""
        super().start(status, content_type)
        self.streaming = self.ok and content_type.split(";", 1)[0].strip().lower() == "text/event-stream"
        return _NDJSON if self.streaming else _JSON

    def feed(self, chunk: bytes) -> bytes:
        """Streaming: an NDJSON line for each complete event (a part line waits for its rest); else as any answer."""
        if not self.streaming:
            return super().feed(chunk)
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return b"".join(self._event(line.strip()) for line in lines)

    def finish(self) -> bytes:
        """Streaming: the events still buffered and the final ``done`` line, unless ``[DONE]`` sent it already; else
        as for any answer."""
        if not self.streaming:
            return super().finish()
        rest, self._buffer = self._buffer.strip(), b""
        out = self._event(rest) if rest else b""
        return out + self._final() if not self._done else out

    def whole(self, data: dict[str, Any]) -> dict[str, Any]:
        """A whole chat completion as one finished Ollama answer, with its finish reason and token counts."""
        choice = (data.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        usage = data.get("usage") or {}
        answer = self._piece(text_of(message.get("content")), done=True)
        answer["done_reason"] = choice.get("finish_reason") or "stop"
        answer["prompt_eval_count"] = int(usage.get("prompt_tokens") or 0)
        answer["eval_count"] = int(usage.get("completion_tokens") or 0)
        return answer

    def _event(self, line: bytes) -> bytes:
        if not line.startswith(b"data:") or self._done:
            return b""
        payload = line[len(b"data:") :].strip()
        if payload == b"[DONE]":
            return self._final()
        data = json_object(payload)
        choices = data.get("choices") if data else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return b""
        delta = choices[0].get("delta") or {}
        self._finish_reason = choices[0].get("finish_reason") or self._finish_reason
        content = delta.get("content") if isinstance(delta, dict) else None
        if not isinstance(content, str) or not content:
            return b""
        return _encode(self._piece(content, done=False)) + b"\n"

    def _final(self) -> bytes:
        self._done = True
        final = self._piece("", done=True)
        final["done_reason"] = self._finish_reason or "stop"
        return _encode(final) + b"\n"

    def _piece(self, content: str, *, done: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.model, "created_at": _iso(time.time())}
        if self.kind == "ollama_generate":
            out["response"] = content
        else:
            out["message"] = {"role": "assistant", "content": content}
        out["done"] = done
        return out


def _model_entry(model: dict[str, Any]) -> dict[str, Any]:
    name = str(model.get("id", ""))
    created = model.get("created")
    return {
        "name": name,
        "model": name,
        "modified_at": _iso(float(created) if isinstance(created, int | float) else 0.0),
        "size": 0,
        "digest": "",
        "details": _EMPTY_DETAILS,
    }


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _error_message(data: dict[str, Any] | None, raw: bytes) -> str:
    """The message of an OpenAI error body (``{"error": {"message"}}``, ``{"error": "…"}``), else its text."""
    error = data.get("error") if data else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return raw.decode("utf-8", "replace").strip()[:2000] or "the upstream answered an error without a message"
